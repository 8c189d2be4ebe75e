"""A build starts from nothing a pull request can plant in the build folders.

The doctree folder holds what one build hands to the next: Sphinx's
environment (a pickle: loading it runs whatever code it names), the pages
that warned last time (``kb.guard.rebuild_failed``), the assets that passed
the HTML guard (``kb.guard.html``), make's stamp of a finished build. CI
builds a fresh clone, so these exist there only if the pull request commits
them, and then the build would trust them: make would skip a build its
stamp calls done, and publish the committed output folder as it is.

So ``KB059`` names each file git tracks in the output or doctree folder, and
the build stops before Sphinx loads its environment (``config-inited``).
``make html`` runs the same check first (``python -m
kb.guard.committed_build FOLDER``), since with a committed stamp it would
not start Sphinx at all. Outside a git checkout (a source archive) no file
is tracked, and there is nothing to check.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from sphinx.util import logging

from kb.guard.silent_loss import BuildStopped
from kb.guard.untrusted import shown

logger = logging.getLogger(__name__)

MESSAGE = (
    "KB059 a file of the build folder is committed to the repository, and the "
    "build would trust it: remove it from git (git rm --cached <file>) and keep "
    "the build folder in .gitignore"
)


def tracked(folder: Path) -> list[Path]:
    """The files git tracks under ``folder`` (none outside a checkout)."""
    if not folder.is_dir():
        return []  # a checkout has every file it tracks
    try:
        proc = subprocess.run(
            ["git", "ls-files", "-z", "--", "."], cwd=folder, capture_output=True, timeout=120, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return []  # no git: no checkout to ask
    if proc.returncode != 0:
        return []  # not inside a git work tree
    return [folder / name for name in proc.stdout.decode("utf-8", "replace").split("\0") if name]


def on_config_inited(app, config) -> None:
    folders = [Path(f).resolve() for f in (app.outdir, app.doctreedir)]
    found = dict.fromkeys(path for folder in folders for path in tracked(folder))
    for path in found:
        logger.warning(
            MESSAGE,
            location=f"{shown(path)}:1",
            type="kb",
            subtype="committed-build",
        )
    if found:
        raise BuildStopped


def main(argv: list[str]) -> int:
    """``python -m kb.guard.committed_build FOLDER…``: the same check, for make."""
    status = 0
    for folder in map(Path, argv):
        for path in tracked(folder.resolve()):
            print(f"{shown(path)}:1: {MESSAGE}", file=sys.stderr)
            status = 2
    return status


def setup(app) -> dict[str, Any]:
    # before any other handler of the event: nothing of the build state is read yet
    app.connect("config-inited", on_config_inited, priority=100)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
