"""Chinese copywriting lint for the pages (autocorrect): CJK/Latin spacing, punctuation.

Reports ``path:line: KB030 …`` for each line autocorrect would change, and
exits 1 if there is any. Code blocks are left alone (autocorrect's Markdown
mode skips them). Fix a page in place with ``--fix``.

Run:  python tools/lint_copy.py docs [--fix]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import autocorrect_py
from kb.core.log import plain

# Lines printed at most (a page's text is quoted: escaped, workflow commands broken up)
MAX_SHOWN = 200


def lint(path: Path) -> list[str]:
    result = autocorrect_py.lint_for(path.read_text(encoding="utf-8"), "markdown")
    return [
        f"{path}:{line.line}: KB030 copywriting: {line.old.strip()!r} → {line.new.strip()!r}"
        for line in result.lines
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--fix", action="store_true")
    args = parser.parse_args(argv)
    files = [f for p in args.paths for f in (sorted(p.rglob("*.md")) if p.is_dir() else [p])]
    problems = []
    for path in files:
        if args.fix:
            text = path.read_text(encoding="utf-8")
            path.write_text(autocorrect_py.format_for(text, "markdown"), encoding="utf-8")
        problems += lint(path)
    for line in problems[:MAX_SHOWN]:
        print(plain(line))
    if len(problems) > MAX_SHOWN:
        print(f"… and {len(problems) - MAX_SHOWN:,} more")
    print(f"{len(files)} files, {len(problems)} copywriting problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
