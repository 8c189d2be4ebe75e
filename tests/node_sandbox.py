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


@functools.cache
def permission_flag() -> str:
    """``--permission`` (Node 22 and later), or ``--experimental-permission`` (Node 20)."""
    for flag in ("--permission", "--experimental-permission"):
        ok = subprocess.run(["node", flag, "-e", "0"], capture_output=True, env={"PATH": os.environ["PATH"]})
        if ok.returncode == 0:
            return flag
    raise RuntimeError("this Node has no permission model (Node 20 or later is needed)")


def run_node(
    args: list[str], reads: list[Path], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """``node args`` in the repository, reading only ``reads`` (files or folders)."""
    allowed = [f"--allow-fs-read={p}{os.sep if Path(p).is_dir() else ''}" for p in reads]
    return subprocess.run(
        ["node", permission_flag(), *allowed, "--experimental-default-type=module", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], **(env or {})},
    )
