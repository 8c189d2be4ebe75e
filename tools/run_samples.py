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
- in network, mount and process namespaces of their own (``unshare``,
  set up by ``inside``), they reach no host (the namespace's loopback is
  their own), can write no file but their folder's (its home and tmp in
  memory, 1 GiB each) and a private /dev/shm (every mount is read-only, the checkout and the preview of the
  site in it included), see /root and /home empty (but for this Python and
  its packages, where they lie there), and see no process but their own
  (not the environment of make or pytest in /proc/<pid>/environ, nor a
  process to signal; what they leave running ends with them);
- as root, they run as the user nobody; in any case with no capability and
  none to gain (``setpriv --no-new-privs --bounding-set=-all``), so they
  cannot unmount, remount or leave the namespaces again.
  Where the machine allows no namespace (a container without
  CAP_SYS_ADMIN), root runs them as nobody without privileges, who cannot
  write the checkout; what is lost is said on the run's first line
  (``isolation``), and CI refuses a run with no isolation at all;
- a run that ends before pytest wrote its report (a sample that ended the
  process) fails, whatever its exit status.

Usage: run_samples.py [--docs DIR] [pytest options] [PAGE.md ...] (no PAGE: every page).
The exit status is pytest's; a failing sample is reported as
``docs/<page>.md:LINE: sample failed``, as in the checkout.
"""

from __future__ import annotations

import argparse
import configparser
import contextlib
import fcntl
import io
import os
import re
import resource
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What the sandbox's pytest reads besides the pages
# (the pages' hidden setup imports tests/snippet_fixtures.py and
# tests/snippet_checks.py, which reads the schemas in tests/schemas/)
RUN_FILES = ["conftest.py", "tests/snippet_fixtures.py", "tests/snippet_checks.py", "tests/schemas"]
NOBODY = 65534
# The run's folders the samples may write (made empty, and given to nobody
# by name: the rest stays root's, so no sample can swap a folder of the
# tree for a link that a chown or mkdir as root would then follow)
WRITABLE = ("home", "tmp", "out")
# A sample's processes, as nobody (a fork bomb stops there), and the run's time
MAX_PROCESSES = 512
MAX_SECONDS = 1800
# What they may write in their home and temporary folders (mode 1: tmpfs), each
MAX_WRITE_MB = 1024
ENV_KEPT = {"PATH"}
ENV_SET = {
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "KB_SAMPLE_SANDBOX": "1",
}
# pytest's settings for the run: the repository's pytest.ini (its markers,
# warnings filters and timeout), but for where to look and what to add
RUN_SETTINGS = {
    "testpaths": "docs",
    "pythonpath": "tests",
    "addopts": "-ra --strict-markers -p no:cacheprovider",
}


def run_settings() -> str:
    """The run's pytest.ini: the repository's, with RUN_SETTINGS."""
    settings = configparser.ConfigParser(interpolation=None)
    settings.read(ROOT / "pytest.ini", encoding="utf-8")
    settings["pytest"].update(RUN_SETTINGS)
    out = io.StringIO()
    settings.write(out)
    return out.getvalue()


# Setting up the namespaces (``inside``, as the namespaces' root), before the
# samples start: bring up the loopback (a sample's local rendezvous,
# torch.distributed's store on 127.0.0.1, works; no other host is there).
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
# Folders whose files are a person's (keys, tokens, shell start-up files):
# hidden behind an empty folder, but for what the run needs from them.
PRIVATE = [Path("/root"), Path("/home")]
# Then the samples run with no privilege at all: no capability (so no
# mount, unmount or setns to undo the above), none to gain (setuid files).
NO_PRIVILEGE = ["--no-new-privs", "--bounding-set=-all", "--inh-caps=-all"]
AS_NOBODY = [f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True, text=True)


def _mount_points() -> list[Path]:
    """Mount points of this mount namespace (/proc/self/mountinfo's fifth
    field; its octal escapes, as of a space, undone)."""
    points = []
    for line in Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines():
        raw = line.split(" ")[4]
        points.append(Path(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), raw)))
    return points


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack("16sH", fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sH", b"lo", 0)))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP))


def _covered(keep: list[Path]) -> list[Path]:
    """The folders to cover with an empty one: PRIVATE, and the first folder
    on the way to a kept path that others may not pass (a checkout in a
    0700 folder, as ``mktemp -d`` makes): behind the cover the kept paths
    are mounted again, under folders anyone may pass. None inside another."""
    folders = {p for p in PRIVATE if p.is_dir()}
    for path in keep:
        closed = [a for a in reversed(path.parents) if not os.stat(a).st_mode & stat.S_IXOTH]
        if closed:
            folders.add(closed[0])
    return sorted(f for f in folders if not any(other in f.parents for other in folders))


def inside(run: Path, cmd: list[str]) -> None:
    """In new network, mount and process namespaces: make every mount
    read-only but the run's folder and a private /dev/shm, hide the homes
    and any folder others may not pass (keeping this Python and its packages
    where they lie inside one), bring
    up the loopback, then run ``cmd`` (which drops every privilege)."""
    needed = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}  # this Python, its packages
    keep = sorted(k for k in needed if not any(other in k.parents for other in needed))
    _mount("--bind", str(run), str(run))
    stage = run / ".kept"  # in the run's folder, root's: no sample is running yet
    for private in _covered(keep):
        staged = []
        for path in (k for k in keep if private in k.parents):
            staged.append((stage / str(len(staged)), path))
            staged[-1][0].mkdir(parents=True, exist_ok=True)
            _mount("--bind", str(path), str(staged[-1][0]))
        _mount("-t", "tmpfs", "-o", "mode=0755,size=1m", "tmpfs", str(private))
        for source, path in staged:
            path.mkdir(parents=True, exist_ok=True)
            _mount("--move", str(source), str(path))
    if Path("/dev/shm").is_dir():
        _mount("-t", "tmpfs", "-o", "mode=1777,size=512m", "tmpfs", "/dev/shm")
    # what the samples may write, in memory and capped (not the machine's disk)
    owner = os.stat(run / "tmp")
    for name in ("home", "tmp"):
        options = f"mode=0700,uid={owner.st_uid},gid={owner.st_gid},size={MAX_WRITE_MB}m"
        _mount("-t", "tmpfs", "-o", options, "tmpfs", str(run / name))
    writable = {run, Path("/dev/shm"), run / "home", run / "tmp"}
    for point in _mount_points():
        if point in writable or any(
            top == point or top in point.parents for top in (Path("/proc"), Path("/sys"), Path("/dev"))
        ):
            continue
        _mount("-o", "remount,bind,ro", str(point))
    _loopback_up()
    os.chdir(run)  # the folder as mounted now (the working directory was the one before)
    os.execvp(cmd[0], cmd)


def _limits() -> None:
    """In the child, before it becomes nobody: at most MAX_PROCESSES of
    nobody's processes (root's own count is not checked, nobody's is)."""
    if os.geteuid() == 0:  # a user's own limit would count all their processes
        resource.setrlimit(resource.RLIMIT_NPROC, (MAX_PROCESSES, MAX_PROCESSES))


def _end(proc: subprocess.Popen, prefix: list[str], started: float) -> None:
    """Stop what the run left: its process group; and as nobody without a
    process namespace (mode 2), every process of nobody's started since the
    run began (a sample's ``setsid`` leaves the group)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    if prefix[:1] != ["setpriv"]:
        return
    since = (time.clock_gettime(time.CLOCK_BOOTTIME) - (time.monotonic() - started)) * os.sysconf(
        "SC_CLK_TCK"
    )
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_text()
            start = int(fields[fields.rindex(")") + 2 :].split()[19])
            if os.stat(f"/proc/{pid}").st_uid == NOBODY and start >= since - 1:
                os.kill(int(pid), signal.SIGKILL)


def isolation(run: Path, env: dict[str, str]) -> tuple[list[str], str | None]:
    """The command prefix that isolates the run, and a notice of what the
    machine did not allow. Tried in turn, each with this Python:

    1. network, mount and process namespaces of its own (``unshare``; a
       user namespace too when not root), set up by ``inside``: no network,
       no file to write but the run's own, the homes hidden, no other
       process in sight; then, as root, the user nobody; no privilege;
    2. as root, the user nobody with no privilege (``setpriv``): the network
       is reachable, only files anyone may write can be written;
    3. neither: only the environment and the folder are the run's own
       (refused on CI: the variable CI is set)."""
    root = os.geteuid() == 0
    namespaces = ["unshare", "--net", "--mount", "--ipc", "--pid", "--fork", "--mount-proc"]
    tries = [
        (
            [
                *namespaces,
                *([] if root else ["--map-root-user"]),
                sys.executable,
                __file__,
                "--inside",
                str(run),
            ]
            + ["--", "setpriv", *(AS_NOBODY if root else []), *NO_PRIVILEGE, "--"],
            None,
        ),
    ]
    if root:
        tries.append(
            (
                ["setpriv", *AS_NOBODY, *NO_PRIVILEGE, "--"],
                "the samples reach the network (they run as nobody, without privileges)",
            )
        )
    problems = []
    for prefix, lost in tries:
        try:
            ok = subprocess.run(
                [*prefix, sys.executable, "-c", "0"],
                capture_output=True,
                text=True,
                timeout=60,
                cwd=run,
                env=env,
                preexec_fn=_limits,
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
    (folder / "pytest.ini").write_text(run_settings(), encoding="utf-8")
    writable_folders(folder)
    folder.chmod(0o755)  # mkdtemp's 0700: nobody must reach the pages
    return folder


def writable_folders(folder: Path) -> None:
    """The folders WRITABLE of the run's folder, made empty and, as root,
    given to nobody (who runs the samples) by name."""
    for name in WRITABLE:
        (folder / name).mkdir(parents=True)
        if os.geteuid() == 0:
            os.chown(folder / name, NOBODY, NOBODY, follow_symlinks=False)


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
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--inside"]:  # the namespaces' set-up: --inside RUN -- command
        inside(Path(argv[1]), argv[3:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, default=ROOT / "docs", help="the pages (default: docs/)")
    parser.add_argument("pages", nargs="*", help="only these pages (default: every page)")
    args, options = parser.parse_known_args(argv)  # options: pytest's (-rA, -x …)
    with tempfile.TemporaryDirectory(prefix="kb-samples-") as tmp:
        folder = prepare(Path(tmp), args.docs)
        env = {k: v for k, v in os.environ.items() if k in ENV_KEPT}
        env.update(ENV_SET, HOME=str(folder / "home"), TMPDIR=str(folder / "tmp"))
        prefix, notice = isolation(folder, env)
        if notice:
            print(notice, flush=True)
            if not prefix and os.environ.get("CI"):
                print("run_samples: on CI the samples run isolated or not at all", flush=True)
                return 1
        report = folder / "out" / "report.xml"
        cmd = [sys.executable, "-m", "pytest", "-q", f"--junit-xml={report}", *options]
        cmd += ["-c", str(folder / "pytest.ini"), "--rootdir", str(folder)]
        pages = [str(folder / page) for page in page_args(args.pages, args.docs) or ["docs"]]
        started = time.monotonic()
        proc = subprocess.Popen(
            [*prefix, *cmd, *pages],
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_limits,
        )
        try:
            code = proc.wait(timeout=MAX_SECONDS)
        except subprocess.TimeoutExpired:
            print(f"run_samples: the samples ran longer than {MAX_SECONDS} s and were stopped", flush=True)
            code = 1
        finally:
            _end(proc, prefix, started)
        if code == 0 and not report.is_file():
            print("run_samples: pytest ended before it reported (a sample ended the process?)", flush=True)
            return 1
        return code


if __name__ == "__main__":
    sys.exit(main())
