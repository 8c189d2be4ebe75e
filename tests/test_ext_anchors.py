"""kb.core.anchors: a heading without a label is linked by its title in pinyin
(ASCII kebab-case), not by docutils' running number, which shifts when a
section is added above it. The numbered id stays as a second anchor."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ext_helpers import build_root  # noqa: F401 (fixture)
from kb.core.anchors import heading_slug

pytest_plugins = ("sphinx.testing.fixtures",)


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("消费级显卡", "xiao-fei-ji-xian-ka"),
        ("为什么选择 GPU 租赁 ？", "wei-shen-me-xuan-ze-gpu-zu-lin"),
        ("6. 检查点 策略", "6-jian-cha-dian-ce-lve"),
        ("ＧＰＵ 与 绿色 算力", "gpu-yu-lv-se-suan-li"),  # full-width letters, ü as v
        ("A100 vs H100：怎么选", "a100-vs-h100-zen-me-xuan"),
        ("！！！", ""),
    ],
)
def test_a_title_becomes_an_ascii_slug(title, slug):
    assert heading_slug(title) == slug


def heading_ids(html: str) -> list[tuple[str, list[str]]]:
    """Each heading's text and its section's ids: the section's own id first,
    then those of the empty spans before the heading (Sphinx's HTML)."""
    found = re.findall(r'<section id="([^"]+)">\s*((?:<span id="[^"]+"></span>)*)<h\d>([^<]*)', html)
    return [(text, [first, *re.findall(r'id="([^"]+)"', rest)]) for first, rest, text in found]


def test_unlabelled_headings_are_linked_by_their_slug(build_root):
    app = build_root("ext-anchors")
    assert app.warning.getvalue() == ""
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    found = heading_ids(html)
    ids = dict(found)
    # the slug first: the permalink, the page's contents and the search index use it
    assert ids["为什么选择 GPU 租赁 ？"][0] == "wei-shen-me-xuan-ze-gpu-zu-lin"
    assert html.count('href="#wei-shen-me-xuan-ze-gpu-zu-lin"') == 2  # the permalink, the contents
    # a [link](#slug) goes to an id the section has (MyST's record of the first id when read)
    link = re.search(r'href="#([^"]+)">租赁一节', html).group(1)
    assert link in ids["为什么选择 GPU 租赁 ？"]
    # a label stays first; docutils' number (or the title's ASCII letters) after the slug
    assert ids["常见型号"][0] == "chosen" and "chang-jian-xing-hao" in ids["常见型号"]
    assert ids["AI 推理"] == ["ai-tui-li", "ai"]
    assert ids["6. 检查点 策略"][0] == "6-jian-cha-dian-ce-lve" and re.fullmatch(
        r"id\d+", ids["6. 检查点 策略"][1]
    )
    assert ids["ＧＰＵ 与 绿色 算力"][0] == "gpu-yu-lv-se-suan-li"
    # every level; a title used twice gets a second, distinct slug
    assert [v[0] for text, v in found if text == "优势"] == ["you-shi", "you-shi-1"]
    # a title with no letters keeps its number: nothing else to name it by
    assert re.fullmatch(r"id\d+", ids["！！！"][0])
    # no heading is left with a numbered first id otherwise
    assert [t for t, v in found if re.fullmatch(r"id\d+", v[0])] == ["！！！"]
