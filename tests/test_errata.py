"""The 勘误与编者注 page and {ref} to a note show whole verdict sentences.

Built on the tiny project of test_data_errors (the repository's conf.py,
extensions and data; two short pages), so each build takes about a second.
"""

from __future__ import annotations

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


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tiny_project(tmp_path_factory.mktemp("errata") / "kb")
    write(root, "docs/training/x.md", ARTICLE + NOTES)
    write(root, "docs/training/y.md", OTHER)
    write(root, "docs/training/index.md", "# 训练\n\n```{toctree}\nx\ny\n```\n")
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
    assert body.index("更正（1 条）") < body.index("未能核实（1 条）") < body.index("补充说明（1 条）")
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
