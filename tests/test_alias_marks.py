"""Glossary names in the search index: AliasMarks and where the pages carry them.

A page that says 混合精度 must be found by ``mixed precision`` with one
search, so each mention is followed by the term's other names in a hidden
span that only Pagefind reads (tools/kb/search/index.py).
"""

from __future__ import annotations

import re
from pathlib import Path

from kb.search.index import AliasMarks

GROUPS = [["混合精度", "mixed precision", "AMP", "自动混合精度"], ["张量并行", "tensor parallelism", "TP"]]


def marks_in(html: str) -> list[str]:
    return re.findall(r'<span class="kb-aka" hidden> ⟦ (.*?) ⟧ </span>', html)


def test_each_mention_is_followed_by_the_other_names():
    out = AliasMarks(GROUPS).add("用混合精度训练，再用混合精度推理")
    assert out.startswith("用混合精度<span")
    assert marks_in(out) == ["mixed precision ｜ AMP ｜ 自动混合精度"] * 2


def test_the_longest_name_wins_and_latin_names_match_whole_words_in_any_case():
    marks = AliasMarks(GROUPS)
    # 自动混合精度 is one mention, not 自动 + a mention of 混合精度
    assert marks_in(marks.add("开启自动混合精度")) == ["混合精度 ｜ mixed precision ｜ AMP"]
    assert marks_in(marks.add("HTTP 与 TPU 不是 TP")) == ["张量并行 ｜ tensor parallelism"]
    assert marks_in(marks.add("Mixed  Precision 与 amp")) == [
        "混合精度 ｜ AMP ｜ 自动混合精度", "混合精度 ｜ mixed precision ｜ 自动混合精度"]
    assert marks.add("没有术语的句子") == "没有术语的句子"
    # names are found in the text, not in its HTML (&amp; is not AMP)
    assert marks.add("Weights & Biases") == "Weights &amp; Biases"
    assert AliasMarks([]).add("混合精度") == "混合精度"


def page(site: Path, docname: str) -> str:
    return (site / f"{docname}.html").read_text(encoding="utf-8")


def test_pages_carry_marks_in_text_and_section_headings_only(site):
    html = page(site, "training/llm-training-10-tips")
    body = html[html.index("data-pagefind-body"):]
    assert any("mixed precision" in m for m in marks_in(body))
    # the page title (the result's title), code and the navigation have none
    h1 = re.search(r"<h1.*?</h1>", html, re.S).group(0)
    assert "kb-aka" not in h1
    assert all("kb-aka" not in pre for pre in re.findall(r"<pre.*?</pre>", html, re.S))
    assert "kb-aka" not in html[:html.index("data-pagefind-body")]  # site navigation
    assert "kb-aka" not in html[html.index('class="toc-tree"'):]  # this page's contents
    # section headings do: 案例 3：梯度爆炸 is found by "exploding gradients"
    heading = re.search(r'<h3 id="ts-exploding-gradients">.*?</h3>',
                        page(site, "training/llm-training-troubleshooting"), re.S).group(0)
    assert "exploding gradients" in heading and " hidden>" in heading


def test_pages_and_parts_not_indexed_carry_no_marks(site):
    assert "kb-aka" not in page(site, "glossary")
    assert "kb-aka" not in page(site, "articles")
    # pagefind.yml's exclude_selectors: a guide's listing of its articles
    landing = page(site, "training/index")
    listing = re.search(r'<ol class="[^"]*kb-article-list.*?</ol>', landing, re.S).group(0)
    assert "混合精度" in listing and "kb-aka" not in listing
