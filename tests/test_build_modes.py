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


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> tuple[Path, Path]:
    """(folder, snapshot): sources built once in folder/kb -> folder/html, and a
    copy of both (and of what the index run keeps beside the site), file times
    kept, for `built` to restore."""
    folder = tmp_path_factory.mktemp("built")
    build(make_kb(0, folder / "kb"), folder / "html")
    snapshot = tmp_path_factory.mktemp("snapshot")
    copy_all(folder, snapshot)
    return folder, snapshot


def copy_all(source: Path, target: Path) -> None:
    for path in source.iterdir():
        if path.is_dir() and not path.is_symlink():
            shutil.copytree(path, target / path.name, symlinks=True)
        else:
            shutil.copy2(path, target / path.name, follow_symlinks=False)


def restore(pristine) -> tuple[Path, Path]:
    """(sources, out): the sources and their full build, as the first build left
    them, put back at the same place (the environment the next build reads
    names that place), instead of a full build per test."""
    folder, snapshot = pristine
    for path in folder.iterdir():
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    copy_all(snapshot, folder)
    return folder / "kb", folder / "html"


@pytest.fixture
def built(pristine) -> tuple[Path, Path]:
    return restore(pristine)


def build(src: Path, out: Path, *extra: str):
    proc = sphinx_build(src / "docs", out, *extra, conf=src)
    assert proc.returncode == 0, proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    return proc


NEW_TITLE = "十个训练技巧（改名）"
NEW_ALIAS = "斑马精度"
# few pages read but many to write: the write goes parallel (kb.site.build_speed)
PARALLEL = ("-j", "2", "-D", "kb_parallel_threshold=3")


def edit_title(sources: Path) -> None:
    """A title edit: the title shows on listings, tag pages and other articles' 相关文章."""
    page = sources / "docs/training/llm-training-10-tips.md"
    text = page.read_text(encoding="utf-8")
    text = text.replace("title: 大模型训练优化实战：提升效率的 10 个技巧", f"title: {NEW_TITLE}", 1)
    page.write_text(
        text.replace("# 大模型训练优化实战：提升效率的 10 个技巧", f"# {NEW_TITLE}", 1), encoding="utf-8"
    )


def edit_glossary(sources: Path) -> None:
    """A new glossary alias: the search page carries it."""
    glossary = sources / "data/glossary.yaml"
    text = glossary.read_text(encoding="utf-8")
    glossary.write_text(text.replace("aliases: [AMP, ", f"aliases: [AMP, {NEW_ALIAS}, ", 1), encoding="utf-8")


def test_incremental_and_parallel_builds_equal_a_full_build(pristine, tmp_path):
    """A title edit, then a glossary edit, each built incrementally (serially,
    and with the write in parallel): every page that shows the title is
    written again and no other; the search page gets the alias; and the end
    equals a full build of the edited sources that read and wrote in
    parallel, so serial and parallel builds agree too. (One full build serves
    both chains.)"""
    sources, out = restore(pristine)  # built serially, with the default threshold
    edit_title(sources)
    edit_glossary(sources)
    full = tmp_path / "full"
    proc = build(sources, full, *PARALLEL)
    plain = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", proc.stdout)  # colours, where CI asks for them
    assert re.search(r"reading sources\.\.\. \[\s*\d+%\] \S+ \.\. \S+", plain), proc.stdout
    expected = tree(full)
    # neither option asks for a rebuild (kb_parallel_threshold's rebuild is "")
    for extra in [(), PARALLEL]:
        sources, out = restore(pristine)
        edit_title(sources)
        untouched = out / "hardware/nvidia-lpu.html"
        before = untouched.stat().st_mtime_ns
        proc = build(sources, out, *extra)
        # Sphinx reports parallel writing by chunks ("[ 50%] errata .. training/…")
        plain = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", proc.stdout)
        chunked = re.search(r"writing output\.\.\. \[\s*\d+%\] \S+ \.\. \S+", plain)
        assert bool(chunked) == bool(extra), proc.stdout
        for listing in ["articles.html", "training/index.html", "tags/memory.html"]:
            assert NEW_TITLE in (out / listing).read_text(encoding="utf-8"), (extra, listing)
        # an article that shows it under 相关文章 is written again
        related = out / "training/training-optimization-tips.html"
        assert NEW_TITLE in related.read_text(encoding="utf-8").split("kb-article-footer")[1], extra
        # and the rebuild was incremental: an unrelated page was not rewritten
        assert untouched.stat().st_mtime_ns == before, proc.stdout
        edit_glossary(sources)
        build(sources, out, *extra)
        # the search page carries the new name (pages carry none: test_alias_marks.py)
        kb_pagefind.wait(out)
        group = next(e for e in search_aliases(out) if NEW_ALIAS in e["names"])
        assert "AMP" in group["names"]
        inc = tree(out)
        assert [f for f in expected if inc.get(f) != expected[f]] == [], extra
        assert inc.keys() == expected.keys(), extra


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
    assert sorted(p.name for p in out.parent.glob(".html.*")) == [
        ".html.pagefind-inputs",
        ".html.pagefind-log",
    ]


def search_aliases(site: Path) -> list[dict]:
    """The glossary's name groups the search page carries (kb.search)."""
    html = (site / "search.html").read_text(encoding="utf-8")
    return json.loads(
        re.search(r'<script type="application/json" id="kb-search-aliases">(.*?)</script>', html, re.S).group(
            1
        )
    )


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


def test_a_pagefind_yml_edit_indexes_every_page_again(built):
    """Pagefind's settings are an input of the index: after an edit of
    pagefind.yml alone, the index is made again, as a full build makes it."""
    sources, out = built
    assert 'training/index.html"' in indexed_text(out)  # keep_index_url: true
    config = sources / "pagefind.yml"
    good = config.read_text(encoding="utf-8")
    config.write_text(good.replace("keep_index_url: true", "keep_index_url: false", 1), encoding="utf-8")
    proc = sphinx_build(sources / "docs", out, conf=sources)
    assert proc.returncode == 0, proc.stderr
    assert 'training/index.html"' not in indexed_text(out)
    config.write_text(good, encoding="utf-8")
    proc = sphinx_build(sources / "docs", out, conf=sources)
    assert proc.returncode == 0, proc.stderr
    assert 'training/index.html"' in indexed_text(out)


def test_a_failed_background_index_fails_the_next_build(built):
    sources, out = built
    config = sources / "pagefind.yml"
    good = config.read_text(encoding="utf-8")
    # Pagefind refuses a selector that is not in a list (the build's own check of
    # pagefind.yml, KB092, lets it through: the selector is a reviewed one)
    config.write_text("exclude_selectors: .headerlink\n", encoding="utf-8")
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
    assert 'invalid type: string ".headerlink"' in proc.stderr
    assert "第二次编辑" in indexed_text(out)  # and it was rebuilt in that build
    assert not kb_pagefind.failure_file(out).exists()
