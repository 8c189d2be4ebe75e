"""Node for the site's own scripts under test, with as few rights as Node gives.

The modules under ``_static/`` are a pull request's files like any page: a
test that imports them in Node runs them on the CI machine. So Node runs
them under its permission model: it may read only the folders named (never
``.git/``, where the checkout keeps its token), and write no file, start no
program and no worker; its environment holds only ``PATH``. (Node's
permission model does not cover the network; with no secret in the
environment and no file of the machine to read, there is nothing to send.)
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What the site scripts' tests (tests/js) read: the scripts, the tests, and the
# files of cases shared with pytest
SITE_SCRIPT_READS = [
    ROOT / "_static",
    ROOT / "tests/js",
    ROOT / "tests/calc_cases.yaml",
    ROOT / "tools/kb/calc/specs.json",
]


@functools.cache
def permission_flag() -> str:
    """``--permission`` (Node 22 and later), or ``--experimental-permission`` (Node 20)."""
    for flag in ("--permission", "--experimental-permission"):
        ok = subprocess.run(["node", flag, "-e", "0"], capture_output=True, env={"PATH": os.environ["PATH"]})
        if ok.returncode == 0:
            return flag
    raise RuntimeError("this Node has no permission model (Node 20 or later is needed)")


def links_in(paths: list[Path]) -> list[Path]:
    """The symbolic links among ``paths`` and inside the folders among them:
    Node's permission model follows a link out of an allowed folder (``root ->
    /`` would open the machine to the script; review 19)."""
    found = []
    for path in map(Path, paths):
        if path.is_symlink():
            found.append(path)
        elif path.is_dir():
            for folder, dirs, files in os.walk(path):
                found += [Path(folder) / name for name in dirs + files if (Path(folder) / name).is_symlink()]
    return found


def run_node(
    args: list[str], reads: list[Path], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """``node args`` in the repository, reading only ``reads`` (files or folders,
    none of them a link or holding one: then Node is not run at all)."""
    if links := links_in(reads):
        raise AssertionError(
            f"{links[0]}: a symbolic link where the tests run scripts in Node, which would follow it "
            "out of the folder; not run (the build refuses links too, KB011)"
        )
    allowed = [f"--allow-fs-read={p}{os.sep if Path(p).is_dir() else ''}" for p in reads]
    return subprocess.run(
        ["node", permission_flag(), *allowed, "--experimental-default-type=module", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], **(env or {})},
    )
