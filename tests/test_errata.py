"""The 勘误与编者注 page and {ref} to a note show whole verdict sentences.

Built on the tiny project of test_data_errors (the repository's conf.py,
extensions and data; two short pages), so each build takes about a second.
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest
from test_data_errors import ARTICLE, INDEX, build, tiny_project, write

NOTES = """
(x-numbers)=
## 数字

原文说显存减少 50%。

:::{editor-note}
:label: note-x-quote
:kind: fact
:date: 2026-12-01
**“地表最强”不是贾樟柯说的，而是冯骥说的。”** 后面的说明有第二句。来源：某报道（2026-12-01 查阅）。
:::

:::{editor-note}
:label: note-x-plain
:kind: unsourced
:date: 2026-11-30
这组数字没有来源！后面还有一句。
:::

::::{editor-note}
:label: note-x-details
:kind: clarification
:date: 2026-12-01
**只有激活值减半，模型状态仍约 16 字节/参数。**
:::{details}
很长的说明。
:::
::::
"""

OTHER = """\
---
title: 另一页
guide: training
tags: [memory]
summary: 引用编者注。
---

# 另一页

见{ref}`note-x-quote`。
"""

# a title, a section and a verdict with characters HTML escapes
MARKUP = """\
---
title: 标记 & <符号> @
guide: training
tags: [memory]
summary: 标记字符。
---

# 标记 & <符号> @

## 小节 "引号" & `<b>`

:::{editor-note}
:label: note-z-markup
:kind: code
:date: 2026-12-01
**`x < y && z > "w"` @ 不成立。**
:::
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tiny_project(tmp_path_factory.mktemp("errata") / "kb")
    write(root, "docs/training/x.md", ARTICLE + NOTES)
    write(root, "docs/training/y.md", OTHER)
    write(root, "docs/training/z.md", MARKUP)
    write(root, "docs/training/index.md", "# 训练\n\n```{toctree}\nx\ny\nz\n```\n")
    write(
        root,
        "docs/errata.md",
        "---\ntitle: 勘误与编者注\n---\n\n# 勘误与编者注\n\n```{kb-editor-notes}\n```\n",
    )
    write(root, "docs/index.md", INDEX.replace("glossary\n", "glossary\nerrata\n"))
    code, out = build(root)
    assert code == 0, out[-3000:]
    return root / "_build" / "html"


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def test_errata_groups_by_verdict_and_article_with_whole_sentences(built):
    html = (built / "errata.html").read_text(encoding="utf-8")
    body = _text(html[html.index("全站共") :])
    # verdicts in order, each with its count, the article's title under each
    assert body.index("更正（2 条）") < body.index("未能核实（1 条）") < body.index("补充说明（1 条）")
    assert body.count("梯度累积") >= 3
    # whole verdict sentences: a bold verdict ending in 。” is not cut, nor run on
    assert "“地表最强”不是贾樟柯说的，而是冯骥说的。”（数字 · 事实有误 · 2026-12-01）" in body, body
    assert "后面的说明有第二句" not in body
    assert "这组数字没有来源！（数字 · 未找到来源 · 2026-11-30）" in body, body
    assert "只有激活值减半，模型状态仍约 16 字节/参数。（数字 · 补充说明 · 2026-12-01）" in body
    assert "很长的说明" not in body
    # each entry links to its note; the erratum form link works
    assert 'href="training/x.html#note-x-quote"' in html
    assert 'href="https://github.com/51suanli/kb/issues/new?template=erratum.yml"' in html


def test_the_list_is_written_as_the_html_writer_writes_it_as_nodes(built):
    """The 勘误 page's list is written as one string (notes.visit_notes_html,
    for speed): byte for byte what the HTML writer makes of the same list as
    docutils nodes (notes.as_nodes, what other builders get), markup
    characters in titles, verdicts and sections included. Fails when a
    docutils or Sphinx upgrade changes how lists, links or rubrics are written."""
    from kb.editorial import notes
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace

    root = built.parent.parent
    log = io.StringIO()
    # docutils_namespace: the nodes and directives the app registers go when it
    # is done, as after sphinx-build's own run (later builds in this process)
    with contextlib.chdir(root), docutils_namespace():
        app = Sphinx(root / "docs", root, built, built / ".doctrees", "html", status=log, warning=log)
        doctree = app.env.get_and_resolve_doctree("errata", app.builder, tags=app.tags)
    [node] = doctree.findall(notes.editor_notes_html)
    groups = node["groups"]
    assert sum(len(items) for _h, pages in groups for _t, items in pages) == 4
    assert any(
        "&" in title or "<" in meta for _h, pages in groups for title, items in pages for *_, meta in items
    )
    written = app.builder.render_partial(node)["fragment"]
    as_nodes = "".join(app.builder.render_partial(n)["fragment"] for n in notes.as_nodes(groups))
    assert written == as_nodes
    assert "标记 &amp; &lt;符号&gt; &#64;" in written  # escaped by the writer's own encode
    assert "小节 &quot;引号&quot; &amp; &lt;b&gt;" in written
    page = (built / "errata.html").read_text(encoding="utf-8")
    assert written in page


def test_a_ref_to_a_note_shows_its_verdict_not_its_label(built):
    html = _text((built / "training/y.html").read_text(encoding="utf-8"))
    assert "编者注：“地表最强”不是贾樟柯说的，而是冯骥说的。”" in html, html
    assert "note-x-quote" not in html


def test_the_guide_summaries_show_verdicts_not_labels(site):
    """The guides' 要点速览 tables show each note's verdict, never its raw label."""
    for guide in ("training", "inference", "hardware", "industry"):
        html = (site / guide / "index.html").read_text(encoding="utf-8")
        article = html[html.index("<article") : html.index("</article>")]
        shown = _text(article)
        assert not re.search(r"note-[a-z0-9]", shown), (guide, re.findall(r".{20}note-[a-z0-9-]+", shown))
        assert "编者注：" in shown, guide
