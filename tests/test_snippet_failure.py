"""A broken sample fails the tests and names its page and line.

One run of the samples (tools/run_samples.py, as `make snippets` runs
them) on a copy of docs/ where each failing case ends a page of its own,
and one page is left as it is: its samples pass.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UNCHANGED = "training/llm-training-10-tips.md"

# runs pages' samples (torch) in a subprocess
pytestmark = [pytest.mark.slow, pytest.mark.snippet]

CASES = {
    "assertion": (
        "training/training-optimization-tips.md",
        "total = sum(range(10))\nassert total == 46, total\n",
        "AssertionError: 45",
    ),
    "future-warning": (
        "inference/inference-cost-breakdown.md",
        "from torch.cuda.amp import GradScaler\nscaler = GradScaler()\n",
        "FutureWarning",
    ),
    "name-error": ("hardware/nvidia-lpu.md", "print(undefined_name)\n", "NameError"),
}


@pytest.fixture(scope="module")
def samples_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict[str, int]]:
    """Run the samples of the changed pages and of UNCHANGED; (process, case -> line)."""
    tmp_path = tmp_path_factory.mktemp("samples")
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    lines = {}
    for case, (page, code, _) in CASES.items():
        path = docs / page
        text = path.read_text(encoding="utf-8")
        lines[case] = text.count("\n") + 2
        path.write_text(text + "\n" + f"```python\n{code}```\n", encoding="utf-8")
    # as make snippets runs them: in the sandbox (tools/run_samples.py)
    pages = [str(docs / page) for page, _, _ in CASES.values()] + [str(docs / UNCHANGED)]
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools/run_samples.py"), "--docs", str(docs), "-rA", *pages],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    return proc, lines


def section(out: str, page: str) -> str:
    """The failure report of the sample that failed on ``page``."""
    # pytest heads each failure with the file's name and the sample's line
    parts = re.split(r"^_{3,} (\S+) line=\d+ column=\d+ _{3,}$", out, flags=re.M)
    found = [body for name, body in zip(parts[1::2], parts[2::2]) if name == Path(page).name]
    assert len(found) == 1, out[-3000:]
    return found[0]


@pytest.mark.parametrize("case", sorted(CASES))
def test_failing_sample_names_page_and_line(samples_run, case):
    proc, lines = samples_run
    page, _, error = CASES[case]
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    report = section(out, page)
    assert f"docs/{page}:{lines[case]}: sample failed" in report, report
    assert error in report, report


def test_unchanged_page_passes(samples_run):
    proc, _ = samples_run
    out = proc.stdout + proc.stderr
    assert re.search(rf"^PASSED docs/{re.escape(UNCHANGED)}::", out, re.M), out[-3000:]
    assert not re.search(rf"^(FAILED|ERROR) docs/{re.escape(UNCHANGED)}::", out, re.M), out[-3000:]
    failed = set(re.findall(r"^FAILED docs/(\S+?)::", out, re.M))
    assert failed == {page for page, _, _ in CASES.values()}, out[-3000:]
