"""kb.guard.html's check of written files, without a build: the parallel
check (many files) finds what the serial one finds, in the same order."""

from __future__ import annotations

from pathlib import Path

from kb.guard import html as guard

CLEAN = "<!doctype html><html><head><title>t</title></head><body><p>正文</p></body></html>\n"
BAD = '<!doctype html><html><body>\n<p>正文</p>\n<img src="https://tracker.example/p.gif">\n</body></html>\n'


def files(tmp_path: Path, n: int, bad: set[int]) -> list[tuple[Path, bool]]:
    out = []
    for i in range(n):
        path = tmp_path / f"p{i:03}.html"
        path.write_text(BAD if i in bad else CLEAN, encoding="utf-8")
        out.append((path, True))
    return out


def test_many_files_are_checked_in_parallel_with_the_serial_result(tmp_path):
    many = files(tmp_path, guard.PARALLEL_FILES + 10, bad={3, guard.PARALLEL_FILES + 7})
    parallel = guard.check_files(many)
    serial = [guard.check_file(path, page) for path, page in many]
    assert parallel == serial
    found = [i for i, f in enumerate(parallel) if any("tracker.example" in what for _, what in f)]
    assert found == [3, guard.PARALLEL_FILES + 7]
    assert [line for line, what in parallel[3] if "tracker.example" in what] == [3]
