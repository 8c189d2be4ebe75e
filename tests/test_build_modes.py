"""Parallel and incremental builds give the same site as a serial full build."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
from kb.search import pagefind as kb_pagefind
from synth_kb import make_kb

from conftest import sphinx_build

ROOT = Path(__file__).resolve().parent.parent
# every test builds the whole site
pytestmark = pytest.mark.slow
# Files whose bytes legitimately differ between two builds of the same sources.
VOLATILE = re.compile(r"^(\.doctrees/|\.buildinfo|pagefind/|_static/vendor/)")


def tree(out: Path) -> dict[str, str]:
    return {
        p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not VOLATILE.match(p.relative_to(out).as_posix())
    }


@pytest.fixture
def sources(tmp_path) -> Path:
    """A copy of everything the build reads (no extra articles), so a test can edit pages."""
    return make_kb(0, tmp_path / "kb")


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> tuple[Path, Path]:
    """(folder, snapshot): sources built once in folder/kb -> folder/html, and a
    copy of both, file times kept, for `built` to restore."""
    folder = tmp_path_factory.mktemp("built")
    build(make_kb(0, folder / "kb"), folder / "html")
    snapshot = tmp_path_factory.mktemp("snapshot")
    for name in ("kb", "html"):
        shutil.copytree(folder / name, snapshot / name, symlinks=True)
    return folder, snapshot


@pytest.fixture
def built(pristine) -> tuple[Path, Path]:
    """(sources, out): the sources and their full build, as the first build left
    them; restored at the same place for each test (the environment the next
    build reads names that place), instead of a full build per test."""
    folder, snapshot = pristine
    for path in folder.iterdir():
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    for name in ("kb", "html"):
        shutil.copytree(snapshot / name, folder / name, symlinks=True)
    return folder / "kb", folder / "html"


def build(src: Path, out: Path, *extra: str):
    proc = sphinx_build(src / "docs", out, *extra, conf=src)
    assert proc.returncode == 0, proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    return proc


def test_parallel_build_equals_serial_build(built, tmp_path):
    sources, serial = built  # built without -j: serially
    build(sources, tmp_path / "j2", "-j", "2")
    one, two = tree(serial), tree(tmp_path / "j2")
    assert one.keys() == two.keys()
    assert [f for f in one if one[f] != two[f]] == []


@pytest.mark.parametrize(
    "extra",
    [
        (),
        # few pages read but many to write: the write goes parallel (kb.site.build_speed)
        ("-j", "2", "-D", "kb_parallel_threshold=3"),
    ],
    ids=["default", "parallel-write"],
)
def test_title_change_reaches_every_listing_without_full_rebuild(built, tmp_path, extra):
    # the first build was serial, with the default threshold: neither option
    # asks for a rebuild (kb_parallel_threshold's rebuild is ""), and a
    # parallel build writes the same site (test_parallel_build_equals_serial_build)
    sources, out = built
    page = sources / "docs/training/llm-training-10-tips.md"
    text = page.read_text(encoding="utf-8")
    text = text.replace("title: 大模型训练优化实战：提升效率的 10 个技巧", "title: 十个训练技巧（改名）", 1)
    page.write_text(
        text.replace("# 大模型训练优化实战：提升效率的 10 个技巧", "# 十个训练技巧（改名）", 1),
        encoding="utf-8",
    )
    untouched = out / "hardware/nvidia-lpu.html"
    before = untouched.stat().st_mtime_ns
    proc = build(sources, out, *extra)
    # Sphinx reports parallel writing by chunks ("[ 50%] errata .. training/…")
    plain = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", proc.stdout)  # colours, where CI asks for them
    chunked = re.search(r"writing output\.\.\. \[\s*\d+%\] \S+ \.\. \S+", plain)
    assert bool(chunked) == bool(extra), proc.stdout
    assert "十个训练技巧（改名）" in (out / "articles.html").read_text(encoding="utf-8")
    assert "十个训练技巧（改名）" in (out / "training/index.html").read_text(encoding="utf-8")
    assert "十个训练技巧（改名）" in (out / "tags/memory.html").read_text(encoding="utf-8")
    # an article that shows it under 相关文章 is written again
    related = out / "training/training-optimization-tips.html"
    assert "十个训练技巧（改名）" in related.read_text(encoding="utf-8").split("kb-article-footer")[1]
    # and the rebuild was incremental: an unrelated page was not rewritten
    assert untouched.stat().st_mtime_ns == before, proc.stdout
    # the incremental result equals a full build of the edited sources
    build(sources, tmp_path / "full", *extra)
    inc, full = tree(out), tree(tmp_path / "full")
    assert [f for f in full if inc.get(f) != full[f]] == []


def indexed_text(site: Path) -> str:
    """The page text Pagefind stored (its fragments are gzip-compressed JSON;
    the Chinese words are separated by zero-width spaces)."""
    return "".join(
        gzip.decompress(f.read_bytes()).decode("utf-8", "replace").replace("\u200b", "")
        for f in (site / "pagefind" / "fragment").glob("*.pf_fragment")
    )


def add_line(page: Path, line: str) -> None:
    page.write_text(page.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")


def test_a_small_edit_is_indexed_after_the_build_returns(built):
    sources, out = built  # a full build indexes in the build
    assert (out / "pagefind/pagefind-entry.json").exists()
    add_line(sources / "docs/hardware/nvidia-lpu.md", "斑马鱼索引测试词。")
    proc = sphinx_build(sources / "docs", out, conf=sources, wait_for_index=False)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"搜索索引在后台更新（\d 个页面有改动）", proc.stdout), proc.stdout
    kb_pagefind.wait(out)
    assert "斑马鱼索引测试词" in indexed_text(out)
    assert not kb_pagefind.failure_file(out).exists()
    # the index was swapped in whole: nothing half-written is left next to it
    assert sorted(p.name for p in out.parent.glob(".html.*")) == [".html.pagefind-lock", ".html.pagefind-log"]


def search_aliases(site: Path) -> list[dict]:
    """The glossary's name groups the search page carries (kb.search)."""
    html = (site / "search.html").read_text(encoding="utf-8")
    return json.loads(
        re.search(r'<script type="application/json" id="kb-search-aliases">(.*?)</script>', html, re.S).group(
            1
        )
    )


def test_a_glossary_edit_reaches_the_search_page_and_equals_a_full_build(built, tmp_path):
    """The search page carries the glossary's names of each term (pages carry
    none: tests/test_alias_marks.py): a new alias is there after an incremental
    build, which writes the same site as a full build."""
    sources, out = built
    glossary = sources / "data/glossary.yaml"
    text = glossary.read_text(encoding="utf-8")
    glossary.write_text(text.replace("aliases: [AMP, ", "aliases: [AMP, 斑马精度, ", 1), encoding="utf-8")
    build(sources, out)
    kb_pagefind.wait(out)
    group = next(e for e in search_aliases(out) if "斑马精度" in e["names"])
    assert "AMP" in group["names"]
    build(sources, tmp_path / "full")  # the same pages as a full build
    inc, full = tree(out), tree(tmp_path / "full")
    assert [f for f in full if inc.get(f) != full[f]] == []


def test_a_tag_dropped_from_the_vocabulary_fails_the_next_incremental_build(built):
    """Front matter is checked against data/tags.yaml when a page is read: a
    vocabulary edit makes every page be read again, not only the edited ones."""
    sources, out = built
    tags = sources / "data/tags.yaml"
    tags.write_text(
        tags.read_text(encoding="utf-8").replace("mixed-precision: 混合精度\n", ""), encoding="utf-8"
    )
    proc = sphinx_build(sources / "docs", out, conf=sources)
    assert proc.returncode != 0
    assert re.search(
        r"docs/training/llm-training-10-tips\.md:\d+: WARNING: KB\d+ .*mixed-precision", proc.stderr
    ), proc.stderr


def test_a_failed_background_index_fails_the_next_build(built):
    sources, out = built
    config = sources / "pagefind.yml"
    good = config.read_text(encoding="utf-8")
    config.write_text("exclude_selectors: 42\n", encoding="utf-8")  # Pagefind refuses it
    add_line(sources / "docs/hardware/nvidia-lpu.md", "第一次编辑。")
    proc = sphinx_build(sources / "docs", out, conf=sources)
    assert proc.returncode == 0, proc.stderr  # the HTML was built; the index run came after
    assert "Pagefind config" in kb_pagefind.failure_file(out).read_text(encoding="utf-8")
    assert (out / "pagefind/pagefind-entry.json").exists()  # the previous index still serves
    config.write_text(good, encoding="utf-8")
    add_line(sources / "docs/hardware/nvidia-lpu.md", "第二次编辑。")
    proc = sphinx_build(sources / "docs", out, conf=sources)
    assert proc.returncode != 0
    assert "the search index update after the previous build failed" in proc.stderr
    assert "invalid type: integer `42`" in proc.stderr
    assert "第二次编辑" in indexed_text(out)  # and it was rebuilt in that build
    assert not kb_pagefind.failure_file(out).exists()
