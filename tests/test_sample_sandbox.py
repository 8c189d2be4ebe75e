"""A page's code samples are a pull request's code: tools/run_samples.py runs
them in a sandbox (no secret of the environment, no write to the checkout,
no network), and pytest runs them nowhere else."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest
from run_samples import MAX_WRITE_MB, isolation, writable_folders

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow  # starts pytest in the sandbox, a few seconds a test

PAGE = """\
---
title: 沙箱
---

# 沙箱

```python
import os, socket
assert os.environ.get("KB_SANDBOX_CANARY") is None, "the environment leaked"
for pid in filter(str.isdigit, os.listdir("/proc") if {isolated} else []):
    try:
        environ = open(f"/proc/{{pid}}/environ", "rb").read()
    except OSError:
        continue
    assert b"KB_SANDBOX_CANARY" not in environ, "another process's environment leaked"
try:
    open({probe!r}, "w").write("written")
except OSError:
    pass
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
    reached = True
except OSError:
    reached = False
assert not reached or {network_allowed}, "the network was reached"
if {isolated}:
    import ctypes, subprocess
    libc = ctypes.CDLL(None, use_errno=True)
    caps = [line for line in open("/proc/self/status") if line.startswith("CapEff:")]
    assert caps == ["CapEff:\\t0000000000000000\\n"], caps
    for target in (b"/proc", {checkout!r}.encode()):
        assert libc.umount2(target, 2) != 0, "a mount was taken off"
    for path in ({outside!r}, {secret!r}):
        try:
            open(path, "a").close()
        except OSError:
            pass
    try:
        leaked = open({secret!r}).read()
    except OSError:
        leaked = ""
    assert leaked == "", "a file only root may read was read"
    subprocess.Popen(["sleep", "{linger}"], start_new_session=True)
```
"""


@pytest.fixture
def listener():
    """A TCP server on the machine's loopback; yields (port, connections seen)."""
    server = socket.create_server(("127.0.0.1", 0))
    seen: list[str] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            seen.append("connected")
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1], seen
    server.close()


def isolation_here(tmp_path: Path) -> tuple[list[str], str | None]:
    """What run_samples.isolation finds on this machine, for a folder made as
    the run's is."""
    folder = tmp_path / "probe"
    writable_folders(folder)
    return isolation(folder, {"PATH": os.environ["PATH"]})


def run(docs: Path, *pages: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "tools/run_samples.py"), "--docs", str(docs), *map(str, pages)],
        capture_output=True,
        text=True,
        env=env,
    )


def lingering(marker: str) -> list[str]:
    """Processes whose command line holds ``marker``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            pass
    return found


def test_a_sample_gets_no_secret_no_write_to_the_checkout_and_no_network(tmp_path, listener):
    port, seen = listener
    probe = ROOT / f".sandbox-probe-{uuid.uuid4().hex}"
    # a folder outside the checkout, and a file only its owner may read
    outside, secret = tmp_path / "outside" / "written.txt", tmp_path / "outside" / "secret.txt"
    outside.parent.mkdir()
    secret.write_text("kb-secret-7f3a", encoding="utf-8")
    secret.chmod(0o600)
    linger = f"{31 + uuid.uuid4().int % 1000 / 1000:.3f}"
    # the network is cut only where the machine allows a namespace (the run says so otherwise)
    prefix, notice = isolation_here(tmp_path)
    cut = prefix[:1] == ["unshare"]
    # namespaces, or the user nobody: no other process's environment to read
    isolated = bool(prefix)
    docs = tmp_path / "docs"
    page = docs / "training/sandbox.md"
    page.parent.mkdir(parents=True)
    page.write_text(
        PAGE.format(
            probe=str(probe),
            port=port,
            network_allowed=not cut,
            isolated=isolated,
            checkout=str(ROOT),
            outside=str(outside),
            secret=str(secret),
            linger=linger,
        ),
        encoding="utf-8",
    )
    try:
        proc = run(docs, page, env={**os.environ, "KB_SANDBOX_CANARY": "secret-7f3a"})
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0 and "1 passed" in out, out[-3000:]
        assert not probe.exists(), "a sample wrote into the checkout"
        if isolated and os.geteuid() == 0:  # as nobody
            assert not outside.exists(), "a sample wrote outside its folder"
        if cut:
            assert lingering(f"sleep\0{linger}") == [], "a sample's process outlived the run"
        if cut:
            assert seen == [], "a sample reached the machine's loopback"
        else:
            assert notice and notice in out, out[-3000:]
    finally:
        probe.unlink(missing_ok=True)


def test_only_the_pages_reach_the_sandbox(tmp_path):
    """A Python file beside the pages (the build refuses it: KB132) is not
    in the run's folder, so pytest loads no conftest.py of a pull request."""
    docs = tmp_path / "docs"
    (docs / "training").mkdir(parents=True)
    (docs / "training/conftest.py").write_text("raise SystemExit('conftest of the pull request ran')\n")
    (docs / "training/page.md").write_text("# 页\n\n```python\nassert 1 + 1 == 2\n```\n", encoding="utf-8")
    proc = run(docs, docs / "training/page.md")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "1 passed" in out and "ran" not in out, out[-3000:]


def test_pytest_runs_no_page_outside_the_sandbox():
    env = {k: v for k, v in os.environ.items() if k != "KB_SAMPLE_SANDBOX"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "docs/training/llm-training-10-tips.md",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "run only in the sandbox" in out and "passed" not in out, out[-3000:]


def test_a_sample_that_ends_the_process_fails_the_run(tmp_path):
    """pytest's report is written at its end: a run without it did not finish,
    whatever its exit status says."""
    docs = tmp_path / "docs"
    (docs / "training").mkdir(parents=True)
    page = docs / "training/page.md"
    page.write_text("# 页\n\n```python\nimport os\nos._exit(0)\n```\n", encoding="utf-8")
    proc = run(docs, page)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "pytest ended before it reported" in out, out[-3000:]


FILL = """\
# 页

```python
import os, tempfile
try:
    with open(os.path.join(tempfile.gettempdir(), "big"), "wb") as f:
        for _ in range({mb}):
            f.write(bytes(1 << 20))
    filled = True
except OSError:
    filled = False
assert not filled, "wrote {mb} MiB"
```
"""


def test_a_sample_cannot_fill_the_machines_disk(tmp_path):
    """In namespaces (mode 1) the samples' home and temporary folders are
    capped tmpfs, not the machine's disk."""
    if isolation_here(tmp_path)[0][:1] != ["unshare"]:
        pytest.skip("no namespaces on this machine: the samples write to its disk (the run says so)")
    docs = tmp_path / "docs"
    page = docs / "training/fill.md"
    page.parent.mkdir(parents=True)
    page.write_text(FILL.format(mb=MAX_WRITE_MB + 64), encoding="utf-8")
    proc = run(docs, page)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "1 passed" in out, out[-3000:]
