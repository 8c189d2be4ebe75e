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
``make html`` runs the same check first (``python -P -m
kb.guard.committed_build FOLDER``: -P, so that a committed ``kb/`` at the
top cannot stand in for this module), since with a committed stamp it
would not start Sphinx at all. The way to the folders counts too: a
committed ``_build`` that is a symbolic link or a file is refused. Inside a
checkout, git must be able to list its files: when it cannot (another
user's checkout without ``safe.directory``, no git), that is KB059 too.
Outside a checkout (a source archive) nothing is tracked, and there is
nothing to check.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

# make runs this module on every `make html` (main), before Sphinx: what
# only a found problem or a Sphinx build needs is imported there (kb.guard.untrusted
# and its imports take 0.3 s)

MESSAGE = (
    "KB059 a file of the build folder is committed to the repository, and the "
    "build would trust it: remove it from git (git rm --cached <file>) and keep "
    "the build folder in .gitignore"
)
NO_GIT = (
    "KB059 git cannot list the files of this checkout ({why}), so the build "
    "cannot tell whether its build folder was committed; fix git (for a "
    "checkout owned by another user: git config --global --add safe.directory "
    "<checkout>)"
)


def in_checkout(start: Path) -> bool:
    """Whether ``start`` is inside a git checkout (a ``.git`` above it)."""
    return any((d / ".git").exists() for d in (start, *start.parents))


def git(args: list[str], cwd: Path) -> subprocess.CompletedProcess | None:
    """``git ARGS`` in ``cwd``; None when git does not run."""
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError):
        return None


def _why(proc: subprocess.CompletedProcess | None) -> str:
    if proc is None:
        return "git did not run"
    lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[0] if lines else f"exit status {proc.returncode}"


def committed(folder: Path, start: Path) -> tuple[list[Path], str | None]:
    """(the files git tracks in ``folder``, on the way to it from the
    checkout's top, or as a symbolic link leading to it; and why git could
    not tell, if so).

    ``start`` is a folder of the checkout (conf.py's). Outside a checkout (no
    ``.git`` above it: a source archive) nothing is tracked. A committed
    ``_build`` that is a link (Sphinx follows it to wherever it points) or a
    file is itself a tracked file on the way."""
    start = Path(os.path.abspath(start))
    if not in_checkout(start):
        return [], None
    top = git(["rev-parse", "--show-toplevel"], start)
    if top is None or top.returncode != 0:
        return [], _why(top)
    root = Path(top.stdout.decode("utf-8", "replace").strip()).resolve()
    listed = git(["ls-files", "-s", "-z"], root)
    if listed is None or listed.returncode != 0:
        return [], _why(listed)
    way = Path(os.path.abspath(folder)).resolve()
    inside = way.relative_to(root).as_posix() if way.is_relative_to(root) else None
    found = []
    for entry in listed.stdout.decode("utf-8", "replace").split("\0"):
        if not entry:
            continue
        info, _, name = entry.partition("\t")
        path = root / name
        if (
            inside is not None
            and inside != "."
            and (name == inside or name.startswith(inside + "/") or inside.startswith(name + "/"))
        ):
            found.append(path)  # in the folder, or a file where a folder on the way should be
        elif info.startswith("120000 ") and (path.resolve() == way or path.resolve() in way.parents):
            found.append(path)  # a link that leads to it
    return found, None


def _shown(path: Path) -> str:
    from kb.guard.untrusted import shown

    return shown(path)


def problems(folders: list[Path], start: Path) -> list[tuple[str, str]]:
    """(location, message) for each committed file and each folder git could not list."""
    found: dict[str, str] = {}
    for folder in folders:
        files, why = committed(folder, start)
        if why is not None:
            found.setdefault(f"{_shown(folder)}:1", NO_GIT.format(why=why))
        for path in files:
            found.setdefault(f"{_shown(path)}:1", MESSAGE)
    return list(found.items())


def on_config_inited(app, config) -> None:
    from kb.core.log import getLogger
    from kb.guard.silent_loss import BuildStopped

    found = problems([Path(app.outdir), Path(app.doctreedir)], Path(app.confdir))
    for location, message in found:
        getLogger(__name__).warning(message, location=location, type="kb", subtype="committed-build")
    if found:
        raise BuildStopped


def main(argv: list[str]) -> int:
    """``python -P -m kb.guard.committed_build FOLDER…``: the same check, for
    make, run from the checkout."""
    found = problems([Path(f) for f in argv], Path.cwd())
    if not found:
        return 0
    from kb.core.log import plain

    for location, message in found[:MAX_SHOWN]:
        print(plain(f"{location}: {message}"), file=sys.stderr)
    if len(found) > MAX_SHOWN:
        print(f"… and {len(found) - MAX_SHOWN:,} more files like those above", file=sys.stderr)
    return 2


# Lines main() prints at most: a pull request may commit any number of files.
MAX_SHOWN = 20


def setup(app) -> dict[str, Any]:
    # before any other handler of the event: nothing of the build state is read yet
    app.connect("config-inited", on_config_inited, priority=100)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
