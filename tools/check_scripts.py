"""The site's own scripts parse: ``node --check`` on each ``.js`` and ``.mjs``
file under the folders given (make lint runs it on ``_static``), before any
browser test loads them.

Each script that does not parse is one line ``path:LINE: KB099 …`` with
node's message, printed plain (kb.core.log.plain): node quotes the failing
line of the script, which a pull request writes, and that line must not
become a line of the CI log of its own (``::error …::``). The exit status
is 1 if any script does not parse.

Each file goes to node as one argument after ``--``: no shell sees its name.

Run:  python tools/check_scripts.py _static
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from kb.core.log import clipped, plain

SUFFIXES = (".js", ".mjs")
# node's report of a syntax error: "<path>:<line>" on its first line
WHERE = re.compile(r":(\d+)\s*$")
# node's name for the error, with its message ("SyntaxError: Unexpected token ':'")
ERROR = re.compile(r"^\w*Error\b.*$", re.M)


def scripts(folders: list[str]) -> list[Path]:
    found = []
    for folder in folders:
        for top, dirs, files in os.walk(folder):
            dirs.sort()
            found += [Path(top, name) for name in sorted(files) if name.endswith(SUFFIXES)]
    return found


def problem(path: Path) -> str | None:
    proc = subprocess.run(
        ["node", "--experimental-default-type=module", "--check", "--", str(path)],
        capture_output=True,
        text=True,
        errors="replace",
    )
    if proc.returncode == 0:
        return None
    report = proc.stderr or proc.stdout
    first = report.splitlines()[0] if report else ""
    line = WHERE.search(first)
    error = ERROR.search(report)
    what = clipped(error[0], 300) if error else "node could not read it"
    return f"{path}:{line[1] if line else 1}: KB099 the script does not parse ({what}); fix it before a browser loads it"


def main(argv: list[str]) -> int:
    bad = [p for p in map(problem, scripts(argv)) if p]
    for line in bad:
        print(plain(line), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
