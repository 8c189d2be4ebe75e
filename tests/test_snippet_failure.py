"""A broken sample fails the tests and names its page and line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = "training/llm-training-10-tips.md"

# runs a page's samples (torch) in a subprocess
pytestmark = [pytest.mark.slow, pytest.mark.snippet]


def run_samples(tmp_path: Path, addition: str) -> tuple[subprocess.CompletedProcess, int]:
    """Run the samples of a copy of docs/ whose PAGE ends with ``addition``."""
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    page = docs / PAGE
    text = page.read_text(encoding="utf-8")
    line = text.count("\n") + 2
    page.write_text(text + "\n" + addition, encoding="utf-8")
    env = {**os.environ, "KB_DOCS_DIR": str(docs), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q",
         "--rootdir", str(tmp_path), str(page)],
        capture_output=True, text=True, cwd=tmp_path, env=env)
    return proc, line


@pytest.mark.parametrize("code, error", [
    ("total = sum(range(10))\nassert total == 46, total\n", "AssertionError: 45"),
    ("from torch.cuda.amp import GradScaler\nscaler = GradScaler()\n", "FutureWarning"),
    ("print(undefined_name)\n", "NameError"),
])
def test_failing_sample_names_page_and_line(tmp_path, code, error):
    proc, line = run_samples(tmp_path, f"```python\n{code}```\n")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert f"docs/{PAGE}:{line}: sample failed" in out, out
    assert error in out, out


def test_unchanged_page_passes(tmp_path):
    proc, _ = run_samples(tmp_path, "")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " passed" in proc.stdout
