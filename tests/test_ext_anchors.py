"""kb.core.anchors: a heading without a label is linked by its title in pinyin
(ASCII kebab-case), not by docutils' running number, which shifts when a
section is added above it. The numbered id stays as a second anchor."""

from __future__ import annotations

import hashlib
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
        # at most MAX_SLUG characters, cut between syllables
        ("显卡" * 100, "-".join(["xian-ka"] * 10)),
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
    # a label stays first; docutils' number (or the title's ASCII letters) after the slug
    assert ids["常见型号"][0] == "chosen" and "chang-jian-xing-hao" in ids["常见型号"]
    assert 'href="#chosen"' in html  # a Markdown link to a label is fine
    assert ids["AI 推理"] == ["ai-tui-li", "ai"]
    assert ids["6. 检查点 策略"][0] == "6-jian-cha-dian-ce-lve" and re.fullmatch(
        r"id\d+", ids["6. 检查点 策略"][1]
    )
    assert ids["ＧＰＵ 与 绿色 算力"][0] == "gpu-yu-lv-se-suan-li"
    # every level; a title used twice gets a second, distinct slug
    assert [v[0] for text, v in found if text == "优势"] == ["you-shi", "you-shi-1"]
    # a heading inside a directive (a rubric) too
    assert re.search(
        r'<(?:p|h\d) class="rubric" id="ti-shi-li-de-biao-ti"><span id="id\d+"></span>提示里的标题', html
    )
    # no heading is left with a numbered first id
    assert [t for t, v in found if re.fullmatch(r"id\d+", v[0])] == []


def test_a_heading_slug_cannot_give_is_named_by_its_title_and_links_to_anchors_fail(build_root):
    """A heading MyST gives no slug id (no letters or digits; its slug taken
    by another element) is still named by its title, not by docutils' number.
    A Markdown link to a heading's anchor is KB097 at its line: MyST resolves
    it to the id it recorded (the number), and an incremental build does not
    write the linking page again. Labels and {ref} are the way."""
    app = build_root("ext-anchors-bad")
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    ids = dict(heading_ids(html))
    digest = hashlib.sha256("🚀🚀".encode()).hexdigest()[:8]
    assert ids["🚀🚀"][0] == f"h-{digest}"
    # "GPU" slugs to gpu, the id docutils gave "GPU 显存" (its ASCII letters)
    assert ids["GPU 显存"][:2] == ["gpu-xian-cun", "gpu"]
    assert ids["GPU"][0] == "gpu-1"
    assert [t for t, v in ids.items() if re.fullmatch(r"id\d+", v[0])] == []
    warnings = app.warning.getvalue()
    assert (
        "index.md:9: WARNING: KB097 the link '本页一节' goes to the heading 'GPU 显存' by its anchor"
        in warnings
    )
    assert (
        "two.md:3: WARNING: KB097 the link '首页一节' goes to the heading index#gpu-xian-cun by its anchor"
        in warnings
    )
    assert "{ref}`text <my-label>`" in warnings
    assert warnings.count("KB097") == 2
