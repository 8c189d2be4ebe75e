"""Where `make test` spends the machine's CPU: a pytest plugin.

    .venv/bin/python -m pytest -n 0 -p test_cpu            # every test, one process
    .venv/bin/python -m pytest -n 0 -p test_cpu tests/test_reading.py

The tests are CPU-bound on two cores, and much of their work runs in other
processes (Chromium's renderers, sphinx-build and make in subprocesses, Node),
which a profile of the pytest process does not see. So each test is charged
with the CPU time the whole machine spent while it ran (Linux's /proc/stat),
fixtures included: run it with one test process (-n 0) on a quiet machine.
At the end, the test files that cost most, and the tests, are printed
(TEST_CPU_TOP lines each, default 25); TEST_CPU_JSON=path also writes every
test's figures as JSON.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from pathlib import Path

_started: dict[str, tuple[float, float]] = {}
_spent: list[dict] = []


def busy_seconds() -> float:
    """CPU seconds the machine has spent so far, on all cores (user, nice,
    system, irq, softirq, steal), from /proc/stat."""
    fields = Path("/proc/stat").read_text(encoding="ascii").split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def pytest_runtest_logstart(nodeid, location):
    _started[nodeid] = (busy_seconds(), time.monotonic())


def pytest_runtest_logfinish(nodeid, location):
    cpu, wall = _started.pop(nodeid, (None, None))
    if cpu is not None:
        _spent.append({"test": nodeid, "cpu": busy_seconds() - cpu, "wall": time.monotonic() - wall})


def pytest_terminal_summary(terminalreporter):
    if not _spent:
        return
    top = int(os.environ.get("TEST_CPU_TOP", "25"))
    files: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for row in _spent:
        total = files[row["test"].split("::")[0]]
        total[0] += row["cpu"]
        total[1] += row["wall"]
        total[2] += 1
    write = terminalreporter.write_line
    write(
        f"test_cpu: {sum(r['cpu'] for r in _spent):.0f} CPU-s on the machine, "
        f"{sum(r['wall'] for r in _spent):.0f} s, {len(_spent)} tests"
    )
    write("  CPU-s  wall-s  tests  file")
    for name, (cpu, wall, count) in sorted(files.items(), key=lambda item: -item[1][0])[:top]:
        write(f"  {cpu:5.1f}  {wall:6.1f}  {count:5d}  {name}")
    write("  CPU-s  wall-s  test")
    for row in sorted(_spent, key=lambda r: -r["cpu"])[:top]:
        write(f"  {row['cpu']:5.1f}  {row['wall']:6.1f}  {row['test']}")
    if path := os.environ.get("TEST_CPU_JSON"):
        Path(path).write_text(json.dumps(_spent, ensure_ascii=False, indent=1), encoding="utf-8")
