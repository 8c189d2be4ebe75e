"""Run the pages' code samples (conftest.py: Sybil under pytest) in a sandbox.

A page's ```` ```python ```` block is a pull request's code like any other
part of the page, and running it is running that code on the CI machine. So
the samples never run in the test process or in the checkout:

- they run in a temporary folder that holds only what they need: a copy of
  the pages (``*.md`` under docs/, nothing else: a ``docs/conftest.py`` or
  ``test_*.py`` of a pull request is not there for pytest to load; the build
  refuses them, KB132), the repository's conftest.py and pytest settings, and
  what the pages' hidden setup imports (RUN_FILES);
- their environment holds only PATH, a HOME and TMPDIR inside that folder,
  the locale and the offline switches of the model hubs: no CI variable,
  token or secret of the machine;
- in network, mount and process namespaces of their own (``unshare``),
  they reach no host (the namespace's loopback is their own), the checkout
  is read-only to them (no change to the site a preview publishes, nor to
  the tests), and they see no process but their own (not the environment
  of make or pytest in /proc/<pid>/environ, nor a process to signal). Where the machine allows no namespace (a container without
  CAP_SYS_ADMIN), root runs them as the user nobody, who cannot write the
  checkout; what is lost is said on the run's first line (``isolation``).

Usage: run_samples.py [--docs DIR] [pytest options] [PAGE.md ...] (no PAGE: every page).
The exit status is pytest's; a failing sample is reported as
``docs/<page>.md:LINE: sample failed``, as in the checkout.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What the sandbox's pytest reads besides the pages
# (the pages' hidden setup imports tests/snippet_fixtures.py and
# tests/snippet_checks.py, which reads the schemas in tests/schemas/)
RUN_FILES = ["conftest.py", "tests/snippet_fixtures.py", "tests/snippet_checks.py", "tests/schemas"]
NOBODY = 65534
ENV_KEPT = {"PATH"}
ENV_SET = {
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "KB_SAMPLE_SANDBOX": "1",
}
# pytest's settings for the run: the repository's, but for where to look
INI = """\
[pytest]
testpaths = docs
pythonpath = tests
addopts = -ra --strict-markers -p no:cacheprovider
markers =
    slow: see the repository's pytest.ini
    browser: see the repository's pytest.ini
    snippet: a code sample from a page in docs/, run by Sybil
"""


def repository_filterwarnings() -> str:
    """The repository's pytest.ini filterwarnings block (one list for both runs)."""
    lines = (ROOT / "pytest.ini").read_text(encoding="utf-8").splitlines()
    out, inside = [], False
    for line in lines:
        if line.startswith("filterwarnings"):
            inside = True
        elif inside and line and not line[0].isspace():
            break
        if inside:
            out.append(line)
    return "\n".join(out) + "\n" if out else ""


# In namespaces of the run's own, before the samples start: the checkout
# mounted read-only over itself (util-linux's mount), and the namespace's
# loopback brought up (a sample's local rendezvous, torch.distributed's
# store on 127.0.0.1, works; no other host is there to reach).
LOOPBACK_UP = (
    "import fcntl, socket, struct; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
    "flags = struct.unpack('16sH', fcntl.ioctl(s, 0x8913, struct.pack('16sH', b'lo', 0)))[1]; "
    "fcntl.ioctl(s, 0x8914, struct.pack('16sH', b'lo', flags | 1))"  # SIOCGIFFLAGS, SIOCSIFFLAGS: IFF_UP
)
READ_ONLY = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && "$2" -c "$3" && shift 3 && exec "$@"'


def isolation() -> tuple[list[str], str | None]:
    """The command prefix that isolates the run, and a notice of what the
    machine did not allow. Tried in turn, each with this Python:

    1. network, mount and process namespaces of its own (``unshare``; a
       user namespace too when not root): no network, the checkout
       read-only, no other process in sight;
    2. as root, the user nobody (``setpriv``): the network is reachable,
       the checkout (root's) cannot be written;
    3. neither: only the environment is the run's own."""
    root = os.geteuid() == 0
    tries = [
        (
            [
                "unshare",
                "--net",
                "--mount",
                "--pid",
                "--fork",
                "--mount-proc",
                *([] if root else ["--map-root-user"]),
            ]
            + ["sh", "-c", READ_ONLY, "sh", str(ROOT), sys.executable, LOOPBACK_UP],
            None,
        ),
    ]
    if root:
        drop = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        tries.append(
            (drop, "the samples reach the network (they run as nobody: the checkout is read-only to them)")
        )
    problems = []
    for prefix, lost in tries:
        try:
            ok = subprocess.run(
                [*prefix, sys.executable, "-c", "0"], capture_output=True, text=True, timeout=60
            )
            problem = None if ok.returncode == 0 else (ok.stderr.strip() or f"exit status {ok.returncode}")
        except (OSError, subprocess.TimeoutExpired) as exc:
            problem = str(exc)
        if problem is None:
            return prefix, lost and f"run_samples: {'; '.join(problems)}: {lost}"
        problems.append(f"{prefix[0]}: {problem.splitlines()[-1]}")
    return (
        [],
        f"run_samples: {'; '.join(problems)}: the samples run with only their environment and folder their own",
    )


def prepare(folder: Path, docs: Path) -> Path:
    """The run's folder: the pages of `docs` and the files RUN_FILES."""
    for path in sorted(docs.rglob("*.md")):
        rel = path.relative_to(docs)
        if path.is_symlink() or not path.is_file() or rel.parts[0] in ("_build",):
            continue
        dest = folder / "docs" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
    for name in RUN_FILES:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copyfile)(ROOT / name, folder / name)
    (folder / "pytest.ini").write_text(INI + repository_filterwarnings(), encoding="utf-8")
    for name in ("home", "tmp"):
        (folder / name).mkdir()
    return folder


def page_args(pages: list[str], docs: Path) -> list[str]:
    """The run's paths of the pages asked for (docs/x.md, or a path under `docs`)."""
    out = []
    for page in pages:
        path = Path(page)
        if not path.is_absolute():
            path = ROOT / path if (ROOT / path).exists() else Path.cwd() / path
        try:
            rel = path.resolve().relative_to(docs.resolve())
        except ValueError:
            sys.exit(f"run_samples: {page} is not a page under {docs}: give pages as docs/<guide>/<page>.md")
        out.append((Path("docs") / rel).as_posix())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, default=ROOT / "docs", help="the pages (default: docs/)")
    parser.add_argument("pages", nargs="*", help="only these pages (default: every page)")
    args, options = parser.parse_known_args(argv)  # options: pytest's (-rA, -x …)
    prefix, notice = isolation()
    if notice:
        print(notice, flush=True)
    with tempfile.TemporaryDirectory(prefix="kb-samples-") as tmp:
        folder = prepare(Path(tmp), args.docs)
        if prefix[:1] == ["setpriv"]:
            for path in [folder, *folder.rglob("*")]:
                os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
        env = {k: v for k, v in os.environ.items() if k in ENV_KEPT}
        env.update(ENV_SET, HOME=str(folder / "home"), TMPDIR=str(folder / "tmp"))
        cmd = [*prefix, sys.executable, "-m", "pytest", "-q", *options, *page_args(args.pages, args.docs)]
        return subprocess.run(cmd, cwd=folder, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
