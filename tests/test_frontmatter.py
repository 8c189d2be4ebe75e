"""Front-matter validation: each mistake is reported at its line with a KB code."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from kb.pages import frontmatter as fm
from one_build import register

from conftest import sphinx_build

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"

GOOD = """---
title: 梯度累积
guide: training
tags:
- memory
- training-optimization
date: 2026-03
summary: 用小显存模拟大 batch。
---

# 梯度累积
"""


def check(text: str, docname: str = "training/x"):
    return fm.validate(text, docname, DATA)


def test_valid_front_matter_passes():
    data, errors = check(GOOD)
    assert errors == [] and data["tags"] == ["memory", "training-optimization"]


@pytest.mark.parametrize(
    "edit, line, code, words",
    [
        (lambda t: t.replace("title: 梯度累积\n", ""), 2, "KB002", "missing required field 'title'"),
        (lambda t: t.replace("guide: training", "guide: traning"), 3, "KB003", "unknown guide 'traning'"),
        (lambda t: t.replace("- training-optimization", "- trainnig"), 6, "KB004", "unknown tag 'trainnig'"),
        (lambda t: t.replace("date: 2026-03", "date: 2026/03"), 7, "KB005", "not YYYY-MM"),
        (lambda t: t.replace("date: 2026-03", "autor: 张三"), 7, "KB006", "unknown field(s) 'autor'"),
        (lambda t: t.replace("tags:\n", "tags: [\n"), 5, "KB001", "not valid YAML"),
        (lambda t: t.split("---\n", 2)[2], 1, "KB001", "no front matter"),
    ],
)
def test_each_mistake_names_line_and_code(edit, line, code, words):
    data, errors = check(edit(GOOD))
    assert data is None
    assert any(ln == line and msg.startswith(code) and words in msg for ln, msg in errors), errors


def test_guide_must_match_folder():
    _, errors = check(GOOD, docname="hardware/x")
    assert errors == [
        (
            3,
            "KB007 guide 'training' does not match the page's folder "
            "docs/hardware/; move the page or fix the field",
        )
    ]


def test_an_unquoted_full_date_is_accepted():
    data, errors = check(GOOD.replace("date: 2026-03", "date: 2026-03-05"))
    assert errors == [] and data["date"] == "2026-03-05"


@pytest.mark.slow
def test_bad_tag_fails_the_build_with_path_and_line(tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    page = docs / "training" / "llm-training-10-tips.md"
    page.write_text(page.read_text(encoding="utf-8").replace("- memory\n", "- memroy\n"), encoding="utf-8")
    proc = sphinx_build(docs, tmp_path / "html")
    assert proc.returncode != 0
    assert f"{page}:7: WARNING: KB004 unknown tag 'memroy'" in proc.stderr, proc.stderr


# -- unsafe or malformed YAML, and titles (issue 18) ---------------------------------

from test_data_errors import ARTICLE, assert_fails_at, tiny_project, write  # noqa: E402


@pytest.fixture
def tiny(tmp_path) -> Path:
    return tiny_project(tmp_path / "kb")


def _bomb() -> str:
    """ "Billion laughs": ten levels of nine aliases each; 10^9 strings when built."""
    lines = ['lol0: &lol0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"lol{i}: &lol{i} [{', '.join([f'*lol{i - 1}'] * 9)}]" for i in range(1, 10)]
    return "\n".join(lines + ["keywords: *lol9"])  # validating keywords walks all 10^9


@pytest.mark.parametrize(
    "edit, line, code, words",
    [
        (
            lambda t: t.replace("guide: training\n", "guide: training\ntitle: 别的标题\n"),
            4,
            "KB008",
            "key 'title' is given twice (first on line 2)",
        ),
        (lambda t: t.replace("summary:", "extra: &x [a]\nsummary:"), 8, "KB009", "anchors"),
        (lambda t: t.replace("summary:", f"{_bomb()}\nsummary:"), 8, "KB009", "anchors"),
        (lambda t: t.replace("date: 2026-03", "date: " + "[" * 10000), 7, "KB009", "nested more than"),
        (
            lambda t: t.replace("date: 2026-03", "keywords: [" + ", ".join(["词"] * 6000) + "]"),
            2,
            "KB009",
            "more than the limit of 16384",
        ),
        (lambda t: t.replace("date: 2026-03", "date: !!timestamp 2026-03-05"), 7, "KB009", "YAML tag"),
        (lambda t: t.replace("date: 2026-03", "date: 2026-13-45"), 7, "KB005", "'2026-13-45' is not YYYY-MM"),
        (lambda t: "---\n- title\n- guide\n---\n\n# 梯度累积\n", 2, "KB001", "must be a mapping"),
        (lambda t: "---\n梯度累积\n---\n\n# 梯度累积\n", 2, "KB001", "must be a mapping"),
        (
            lambda t: "---\n---\n\n# 梯度累积\n",
            2,
            "KB001",
            "must be a mapping of fields (title: …, guide: …), but it is empty",
        ),
        (lambda t: t.replace("\n---\n\n#", "\n\n#"), 1, "KB001", "never closed"),
    ],
)
def test_unsafe_or_malformed_yaml_names_line_and_code(edit, line, code, words):
    data, errors = check(edit(GOOD))
    assert data is None
    assert any(ln == line and msg.startswith(code) and words in msg for ln, msg in errors), errors


ARTICLE_PAGE = "docs/training/x.md"

BUILD_CASES = {
    "duplicate-key": (
        ARTICLE.replace("tags:", "title: 别的标题\ntags:"),
        "x.md:4: WARNING: KB008 key 'title' is given twice (first on line 2)",
    ),
    "alias-bomb": (
        ARTICLE.replace("summary:", f"{_bomb()}\nsummary:"),
        "x.md:5: WARNING: KB009 YAML anchors (&name) and aliases (*name) are not allowed",
    ),
    "deep-nesting": (
        ARTICLE.replace("summary:", "extra: " + "[" * 10000 + "\nsummary:"),
        "x.md:5: WARNING: KB009 YAML nested more than 8 levels deep",
    ),
    "a-list": (
        "---\n- title: 梯度累积\n---\n\n# 梯度累积\n",
        "x.md:2: WARNING: KB001 front matter must be a mapping of fields",
    ),
    "a-string": (
        "---\n梯度累积\n---\n\n# 梯度累积\n",
        "x.md:2: WARNING: KB001 front matter must be a mapping of fields",
    ),
    "never-closed": (
        ARTICLE.replace("summary: 用小显存模拟大 batch。\n---\n", "summary: 用小显存模拟大 batch。\n"),
        "x.md:1: WARNING: KB001 the front matter opened on line 1 is never closed",
    ),
    "bad-date": (
        ARTICLE.replace("summary:", "date: 2026-13-45\nsummary:"),
        "x.md:5: WARNING: KB005 date '2026-13-45' is not YYYY-MM or YYYY-MM-DD",
    ),
    "only-front-matter": (
        ARTICLE.split("# 梯度累积")[0],
        "x.md:6: WARNING: KB052 the article has front matter but no text",
    ),
    "no-heading": (
        ARTICLE.replace("# 梯度累积\n", "正文。\n").replace("## 引言\n", "引言。\n"),
        "x.md:8: WARNING: KB050 page has no title: start it with a `# 标题` line",
    ),
    "title-differs": (
        ARTICLE.replace("# 梯度累积", "# 梯度累积实战"),
        "x.md:2: WARNING: KB051 title '梯度累积' differs from the page's first heading '梯度累积实战'",
    ),
}


@pytest.mark.parametrize("case", sorted(BUILD_CASES))
def test_front_matter_mistakes_fail_the_build_at_their_line(tiny, case):
    text, message = BUILD_CASES[case]
    write(tiny, ARTICLE_PAGE, text)
    # the alias bomb once took 104 s and ended in MemoryError: the timeout fails a hang
    assert_fails_at(tiny, f"{tiny}/docs/training/{message}", timeout=30 if "bomb" in case else None)


def test_a_page_that_is_not_an_article_needs_a_title_too(tiny):
    write(tiny, "docs/index.md", "---\nsummary: 首页\n---\n\n```{toctree}\ntraining/index\nglossary\n```\n")
    assert_fails_at(tiny, f"{tiny}/docs/index.md:5: WARNING: KB050 page has no title")


def test_an_alias_bomb_outside_the_articles_is_refused_too(tiny):
    write(
        tiny,
        "docs/index.md",
        f"---\n{_bomb()}\n---\n\n# 首页\n\n```{{toctree}}\ntraining/index\nglossary\n```\n",
    )
    assert_fails_at(tiny, f"{tiny}/docs/index.md:2: WARNING: KB009 YAML anchors", timeout=30)


def _duplicate_title(repo, at) -> str:
    page = repo / at.article()
    text = page.read_text(encoding="utf-8")
    page.write_text(
        text.replace("guide: training\n", "guide: training\ntitle: 另一个标题\n", 1), encoding="utf-8"
    )
    return at.article()


# an article of its own in the build of the group "pages" (tests/one_build.py)
register("pages", "front-matter", {"duplicate-title": _duplicate_title})


def test_make_html_reports_a_duplicate_title_at_the_second(one_build):
    r = one_build("pages")["front-matter/duplicate-title"]
    out = r.out
    assert r.run.proc.returncode != 0, out[-3000:]
    assert f"{r.value}:4: WARNING: KB008 key 'title' is given twice (first on line 2)" in out, out[-3000:]
    assert "Traceback" not in out, out[-3000:]


# A pull request that loosens data/front-matter.schema.json, then gives a
# field a shape the code cannot read (review 19: tracebacks in kb.pages.tags):
# the schema the code was written for still refuses it, at its line.
LOOSE_SCHEMAS = {
    "fields-without-rules": '{"type": "object", "properties": {"title": {}, "guide": {}, "tags": {}, "also_in": {}}}',
    "unusable": '{"type": "object"}',
}


@pytest.mark.parametrize("schema", sorted(LOOSE_SCHEMAS))
@pytest.mark.parametrize(
    "edit",
    [("title: 梯度累积", "title: [1, 2]"), ("summary: 用小显存模拟大 batch。", "summary: {a: b}")],
    ids=["title-a-list", "summary-a-mapping"],
)
def test_a_loosened_schema_still_refuses_what_the_code_cannot_read(tiny, schema, edit):
    write(tiny, "data/front-matter.schema.json", LOOSE_SCHEMAS[schema])
    write(tiny, "docs/training/x.md", ARTICLE.replace(*edit))
    line = ARTICLE.split("\n").index(edit[0]) + 1
    assert_fails_at(tiny, f"{tiny}/docs/training/x.md:{line}: WARNING: KB")
