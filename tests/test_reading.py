"""Reading comfort for a Chinese reader (issue #21, item 9), in tiny in-process
projects: the glossary in pinyin order with a jump bar and readable anchors,
term links that carry their definition; and, on the built site, the reading
order across guides and the article footer."""

from __future__ import annotations

import re
from pathlib import Path

import axe_check
import pytest
from ext_helpers import build_root  # noqa: F401 (fixture)
from playwright.sync_api import expect

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


# -- on the built site, in chromium ---------------------------------------------------------

SHOTS = Path(__file__).resolve().parent.parent / "test-results" / "reading"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 740}
ARTICLE = "training/llm-training-10-tips.html"
SCREENSHOTS = {
    "home": "index.html",
    "article": ARTICLE,
    "glossary": "glossary.html",
    "search": "search.html?q=%E6%B7%B7%E5%90%88%E7%B2%BE%E5%BA%A6",
}


def site_pages(site: Path) -> list[str]:
    return sorted(str(p.relative_to(site)) for p in site.rglob("*.html") if "_static" not in p.parts)


def open_page(pg, url: str, state: str = "networkidle") -> None:
    """Open a page and wait until it settled: no request for half a second
    (screenshots, layout), or with state="load" its load event (the DOM and
    styles for axe, without the half second)."""
    pg.goto(url, wait_until=state)
    if "search.html" in url:
        pg.wait_for_selector("#search-results[data-search-done]", state="attached")


def reveal_back_to_top(pg):
    """furo shows 回到顶部 while the reader scrolls back up, past the first screen."""
    pg.evaluate("window.scrollTo({top: 3000, behavior: 'instant'})")
    pg.wait_for_timeout(200)
    for _ in range(4):
        pg.evaluate("window.scrollBy({top: -100, behavior: 'instant'})")
        pg.wait_for_timeout(100)
    button = pg.locator(".back-to-top")
    expect(button).to_be_visible()
    return button


@pytest.mark.browser
def test_every_page_passes_axe_in_both_colour_schemes(browser, server, site):
    """WCAG 2.1 AA (axe), serious and critical findings, on every page of the
    site in the light and the dark scheme (diagrams drawn): every rule in the
    light scheme; then, the page switched to the dark one, what the scheme
    changes (the rules that read colours, and every rule on what only one
    scheme shows: axe_check.start's colours). The site's colours follow the
    scheme in CSS alone (furo's "auto" theme), so the switched page is the
    page opened in the dark scheme (axe_check.switch_scheme)."""
    context = browser.new_context(bypass_csp=True, viewport=DESKTOP)
    axe_check.preload(context)
    pg = context.new_page()
    found = {}
    for name in site_pages(site):
        pg.emulate_media(color_scheme="light")
        open_page(pg, f"{server}/{name}", "load")
        for scheme in ("light", "dark"):
            if scheme == "dark":
                axe_check.switch_scheme(pg, "dark")
            if bad := axe_check.check(pg, colours=scheme == "dark"):
                found[f"{name} ({scheme})"] = bad
    context.close()
    assert found == {}


@pytest.mark.browser
def test_the_dark_scheme_check_finds_what_the_scheme_changes(page, server):
    """What the sweep above runs on a page switched to the dark scheme
    (axe_check.start with colours) finds a colour that fails there only (the
    switch restyles the page, and the check reads the colours a transition
    ends on) and a mistake in what only the dark scheme
    shows; a mistake the light scheme's run finds (an image without alt
    that both schemes show) is left to that run."""
    page.emulate_media(color_scheme="light")
    page.goto(f"{server}/index.html")
    image = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='20' height='20'/%3E"
    page.evaluate(
        """image => document.querySelector("article").insertAdjacentHTML("beforeend",
        `<p id="kb-dim" style="color:#333">暗字</p>`
        + `<img id="kb-dark" class="only-dark" src="${image}">`
        + `<img id="kb-light" class="only-light" src="${image}">`
        + `<img id="kb-both" src="${image}">`
        + `<p id="kb-fade" style="background:#fff;color:var(--color-foreground-primary);transition:color .5s">渐变</p>`)""",
        image,
    )
    light = "\n".join(axe_check.check(page))
    assert "#kb-both" in light and "#kb-dim" not in light and "#kb-fade" not in light, light
    axe_check.switch_scheme(page, "dark")
    axe_check.start(page, colours=True)
    found = "\n".join(axe_check.serious(page))
    # read once the colours stopped changing: #kb-fade's, half a second
    assert "color-contrast" in found and "#kb-dim" in found and "#kb-fade" in found, found
    assert "image-alt" in found and "#kb-dark" in found, found
    assert "#kb-light" not in found and "#kb-both" not in found, found


@pytest.mark.browser
@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_screenshots_of_the_key_pages(browser, server, device):
    """Home, an article, the glossary and the search page at 1280 px and 375 px
    (test-results/reading/, for a reviewer); none scrolls sideways."""
    context = browser.new_context(viewport=DESKTOP if device == "desktop" else PHONE)
    pg = context.new_page()
    SHOTS.mkdir(parents=True, exist_ok=True)
    for name, url in SCREENSHOTS.items():
        open_page(pg, f"{server}/{url}")
        pg.screenshot(path=str(SHOTS / f"{name}-{device}.png"))
        assert pg.evaluate("document.documentElement.scrollWidth") <= pg.viewport_size["width"], name
    context.close()


@pytest.mark.browser
def test_desktop_1280_shows_the_contents_beside_the_text(browser, server):
    context = browser.new_context(viewport=DESKTOP)
    pg = context.new_page()
    open_page(pg, f"{server}/{ARTICLE}")
    toc = pg.locator(".toc-drawer")
    article = pg.locator("article[role=main]").bounding_box()
    box = toc.bounding_box()
    assert toc.is_visible() and pg.locator(".toc-tree li li a").first.is_visible()
    assert box["x"] >= article["x"] + article["width"] and box["x"] + box["width"] <= 1280
    assert not pg.locator(".toc-content-icon").is_visible()
    # Chinese text: line height about 1.75, a CJK font named
    para = pg.locator("article[role=main] p").first
    size, height, family = para.evaluate(
        "p => [parseFloat(getComputedStyle(p).fontSize), parseFloat(getComputedStyle(p).lineHeight),"
        " getComputedStyle(p).fontFamily]"
    )
    assert 1.7 <= height / size <= 1.8
    assert "PingFang SC" in family and "Noto Sans CJK SC" in family
    # 回到顶部 appears (scrolling up) beside the text, not over it
    button = reveal_back_to_top(pg)
    assert button.bounding_box()["x"] >= article["x"] + article["width"]
    context.close()


@pytest.mark.browser
def test_phone_titles_code_contents_drawer_and_back_to_top(browser, server, site):
    context = browser.new_context(viewport=PHONE)
    pg = context.new_page()
    for name in [p for p in site_pages(site) if p.count("/") == 1 and not p.endswith("index.html")]:
        open_page(pg, f"{server}/{name}", "load")
        # the title in at most two lines
        lines = pg.locator("article h1").evaluate(
            "h => Math.round(h.getBoundingClientRect().height / parseFloat(getComputedStyle(h).lineHeight))"
        )
        assert lines <= 2, (name, lines)
        # no code block scrolls sideways
        wide = pg.evaluate(
            "[...document.querySelectorAll('article pre:not(.mermaid)')]"
            ".filter(p => p.scrollWidth > p.clientWidth + 1).length"
        )
        assert wide == 0, name
    open_page(pg, f"{server}/{ARTICLE}")
    # the contents drawer closes after a tap on an entry
    pg.locator("label.toc-header-icon").click()
    pg.wait_for_timeout(400)
    assert pg.locator(".toc-drawer").bounding_box()["x"] < PHONE["width"]
    pg.locator(".toc-drawer .toc-tree li li a").nth(1).click()
    pg.wait_for_timeout(400)
    assert not pg.locator("#__toc").is_checked()
    assert pg.locator(".toc-drawer").bounding_box()["x"] >= PHONE["width"]
    # 回到顶部 sits in the header bar, above the text
    button = reveal_back_to_top(pg)
    header = pg.locator(".mobile-header").bounding_box()
    box = button.bounding_box()
    assert box["y"] >= header["y"] and box["y"] + box["height"] <= header["y"] + header["height"]
    context.close()


@pytest.mark.browser
def test_term_links_show_the_definition_on_focus(page, server):
    open_page(page, f"{server}/{ARTICLE}")
    link = page.locator("article a.reference:has(.std-term)").first
    href = link.get_attribute("href")
    assert re.search(r"glossary\.html#term-[a-z0-9-]+$", href), href
    link.focus()
    tip = page.locator("#kb-term-tip")
    expect(tip).to_be_visible()
    assert link.get_attribute("aria-describedby") == "kb-term-tip"
    assert len(tip.inner_text()) > 10
    page.keyboard.press("Escape")
    expect(tip).to_be_hidden()
    # the anchor exists on the glossary page, with the headword in bold
    open_page(page, f"{server}/{href.split('/')[-1]}")
    target = page.locator(f"#{href.split('#')[1]}")
    assert target.evaluate("t => getComputedStyle(t).fontWeight") == "700"
    assert page.console_errors == []


@pytest.mark.browser
def test_home_opens_with_how_to_start_and_keywords_are_for_the_index(page, server, site):
    open_page(page, f"{server}/index.html")
    headings = page.locator("article h2").all_inner_texts()
    assert headings[0].startswith("从这里开始")
    start = page.locator("article h2").first.bounding_box()["y"]
    quote = page.locator("article blockquote").first.bounding_box()["y"]
    guides = page.locator("article ul.kb-guides a")
    assert guides.count() == 4 and guides.first.bounding_box()["y"] < quote
    assert start < quote
    # the 本站内容 titles that name a page are links
    assert page.locator("article h3 a", has_text="技术教程").count() == 1
    # a diagram links to its SVG, the full-size view
    open_page(page, f"{server}/{ARTICLE}")
    link = page.locator(".kb-diagram-image:visible").first
    assert link.get_attribute("href") == link.locator("img").get_attribute("src")
    # 关键词: in the page (and so in the search index), not shown
    keyworded = [
        p for p in site_pages(site) if 'class="kb-keywords"' in (site / p).read_text(encoding="utf-8")
    ]
    assert keyworded
    open_page(page, f"{server}/{keyworded[0]}")
    assert page.locator(".kb-keywords").count() == 1 and not page.locator(".kb-keywords").is_visible()
