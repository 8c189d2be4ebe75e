"""Parallel and incremental builds give the same site as a serial full build."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from conftest import sphinx_build
from synth_kb import make_kb

ROOT = Path(__file__).resolve().parent.parent
# Files whose bytes legitimately differ between two builds of the same sources.
VOLATILE = re.compile(r"^(\.doctrees/|\.buildinfo|pagefind/|_static/vendor/)")


def tree(out: Path) -> dict[str, str]:
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file()
            and not VOLATILE.match(p.relative_to(out).as_posix())}


@pytest.fixture
def sources(tmp_path) -> Path:
    """A copy of everything the build reads (no extra articles), so a test can edit pages."""
    return make_kb(0, tmp_path / "kb")


def build(src: Path, out: Path, *extra: str):
    proc = sphinx_build(src / "docs", out, *extra, conf=src)
    assert proc.returncode == 0, proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    return proc


def test_parallel_build_equals_serial_build(sources, tmp_path):
    build(sources, tmp_path / "j1", "-j", "1")
    build(sources, tmp_path / "j2", "-j", "2")
    one, two = tree(tmp_path / "j1"), tree(tmp_path / "j2")
    assert one.keys() == two.keys()
    assert [f for f in one if one[f] != two[f]] == []


def test_title_change_reaches_every_listing_without_full_rebuild(sources, tmp_path):
    out = tmp_path / "html"
    build(sources, out)
    page = sources / "docs/training/llm-training-10-tips.md"
    text = page.read_text(encoding="utf-8")
    text = text.replace("title: 大模型训练优化实战：提升效率的 10 个技巧", "title: 十个训练技巧（改名）", 1)
    page.write_text(text.replace("# 大模型训练优化实战：提升效率的 10 个技巧", "# 十个训练技巧（改名）", 1),
                    encoding="utf-8")
    untouched = out / "hardware/nvidia-lpu.html"
    before = untouched.stat().st_mtime_ns
    proc = build(sources, out)
    assert "十个训练技巧（改名）" in (out / "articles.html").read_text(encoding="utf-8")
    assert "十个训练技巧（改名）" in (out / "training/index.html").read_text(encoding="utf-8")
    assert "十个训练技巧（改名）" in (out / "tags/memory.html").read_text(encoding="utf-8")
    # an article that shows it under 相关文章 is written again
    related = out / "training/training-optimization-tips.html"
    assert "十个训练技巧（改名）" in related.read_text(encoding="utf-8").split("kb-article-footer")[1]
    # and the rebuild was incremental: an unrelated page was not rewritten
    assert untouched.stat().st_mtime_ns == before, proc.stdout
    # the incremental result equals a full build of the edited sources
    build(sources, tmp_path / "full")
    inc, full = tree(out), tree(tmp_path / "full")
    assert [f for f in full if inc.get(f) != full[f]] == []
