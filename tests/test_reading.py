"""Reading comfort for a Chinese reader (issue #21, item 9), in tiny in-process
projects: the glossary in pinyin order with a jump bar and readable anchors,
term links that carry their definition; and, on the built site, the reading
order across guides and the article footer."""

from __future__ import annotations

import re
from pathlib import Path

from ext_helpers import build_root  # noqa: F401 (fixture)

pytest_plugins = ("sphinx.testing.fixtures",)


def test_glossary_is_in_pinyin_order_with_a_jump_bar(build_root):
    app = build_root("ext-glossary")
    html = (Path(app.outdir) / "glossary.html").read_text(encoding="utf-8")
    headwords = re.findall(r'<dt class="kb-headword" id="([^"]+)">([^<]+)<', html)
    # by reading, a < hun < xian < zero; not by code point (显 < 混 < 阿)
    assert [word for _, word in headwords] == ["阿姆达尔定律", "混合精度", "显存", "ZeRO"]
    # readable anchors from the entries' ids, one per entry
    assert [anchor for anchor, _ in headwords] == [
        "term-amdahl-law",
        "term-mixed-precision",
        "term-gpu-memory",
        "term-zero",
    ]
    assert not re.search(r'id="term-\d+"', html)
    # the jump bar links every letter heading, in order
    jump = re.search(r'<p class="kb-glossary-jump">(.*?)</p>', html, re.S).group(1)
    letters = re.findall(r'href="#glossary-([a-z])"', jump)
    assert letters == ["a", "h", "x", "z"]
    for letter in letters:
        assert f'id="glossary-{letter}"' in html
    assert "按拼音首字母" in jump


def test_every_name_of_an_entry_links_to_its_anchor_with_the_definition(build_root):
    app = build_root("ext-glossary")
    html = (Path(app.outdir) / "page.html").read_text(encoding="utf-8")
    links = dict(re.findall(r'href="glossary\.html#(term-[a-z-]+)" title="([^"]+)"', html))
    assert links == {
        "term-gpu-memory": "GPU 上的内存，存放参数与激活值。",
        "term-mixed-precision": "用 FP16 或 BF16 做大部分运算的训练方式。",  # AMP: an alias
    }
    # the script that shows the definition on focus, on this page only
    assert "_static/kb-terms.js" in html
    assert "kb-terms.js" not in (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert app.warning.getvalue() == ""
