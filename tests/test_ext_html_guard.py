"""kb.guard.html's check of written files: the parallel check (many files)
finds what the serial one finds, in the same order; and a copied asset that
passed is not read again until its content (or the guard) changes, while
one that failed fails every build."""

from __future__ import annotations

from pathlib import Path

import pytest
from ext_helpers import build_root  # noqa: F401 (fixture)
from kb.guard import html as guard

pytest_plugins = ("sphinx.testing.fixtures",)

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


HOSTILE_SVG = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>\n'


@pytest.fixture
def checked(monkeypatch) -> list[str]:
    """The names of the files the guard reads, build after build."""
    seen: list[str] = []
    check = guard.check_file

    def spy(path, page=True):
        seen.append(Path(path).name)
        return check(path, page)

    monkeypatch.setattr(guard, "check_file", spy)
    return seen


def test_an_asset_that_passed_is_checked_again_only_when_it_changes(build_root, checked):
    app = build_root("ext-html-guard")
    assert "figure.svg" in checked and "figure.svg" not in app.warning.getvalue()
    checked.clear()
    build_root("ext-html-guard", freshenv=False)
    assert "figure.svg" not in checked  # the same bytes passed last time
    asset = Path(app.srcdir) / "_static/figure.svg"
    asset.write_text(HOSTILE_SVG, encoding="utf-8")
    app = build_root("ext-html-guard", freshenv=False)
    assert "_static/figure.svg:1: WARNING: KB015 inline <script>" in app.warning.getvalue()
    checked.clear()
    app = build_root("ext-html-guard", freshenv=False)  # a failure is never remembered as a pass
    assert "figure.svg" in checked
    assert "KB015 inline <script>" in app.warning.getvalue()


def test_a_changed_guard_checks_every_asset_again(build_root, checked, monkeypatch):
    build_root("ext-html-guard")
    monkeypatch.setattr(guard, "_rules", lambda: "the guard as edited by a pull request")
    checked.clear()
    build_root("ext-html-guard", freshenv=False)
    assert "figure.svg" in checked
