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


def run(docs: Path, *pages: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "tools/run_samples.py"), "--docs", str(docs), *map(str, pages)],
        capture_output=True,
        text=True,
        env=env,
    )


def test_a_sample_gets_no_secret_no_write_to_the_checkout_and_no_network(tmp_path, listener):
    port, seen = listener
    probe = ROOT / f".sandbox-probe-{uuid.uuid4().hex}"
    # the network is cut only where the machine allows a namespace (the run says so otherwise)
    from run_samples import isolation

    prefix, notice = isolation()
    cut = prefix[:1] == ["unshare"]
    # namespaces, or the user nobody: no other process's environment to read
    isolated = bool(prefix)
    docs = tmp_path / "docs"
    page = docs / "training/sandbox.md"
    page.parent.mkdir(parents=True)
    page.write_text(
        PAGE.format(probe=str(probe), port=port, network_allowed=not cut, isolated=isolated), encoding="utf-8"
    )
    try:
        proc = run(docs, page, env={**os.environ, "KB_SANDBOX_CANARY": "secret-7f3a"})
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0 and "1 passed" in out, out[-3000:]
        assert not probe.exists(), "a sample wrote into the checkout"
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
