"""The site as a reader sees it, in Debian's chromium: key pages, phone width,
copy buttons, the saved theme and the diagrams drawn in it, 404, and accessibility (axe-core).

Screenshots of the key pages go to test-results/screenshots/ (a CI artifact).
"""

from __future__ import annotations

from pathlib import Path

import axe_check
import pytest
from test_site import articles

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "test-results" / "screenshots"


def longest_article() -> str:
    return max(articles(), key=lambda d: (ROOT / "docs" / f"{d}.md").stat().st_size)


KEY_PAGES = {
    "home": "index.html",
    "training": "training/index.html",
    "inference": "inference/index.html",
    "hardware": "hardware/index.html",
    "industry": "industry/index.html",
    "longest-article": f"{longest_article()}.html",
    "glossary": "glossary.html",
    "search": "search.html?q=%E6%B7%B7%E5%90%88%E7%B2%BE%E5%BA%A6",
    "tag": "tags/memory.html",
    "errata": "errata.html",
}


@pytest.mark.parametrize("name", sorted(KEY_PAGES))
def test_key_page_loads_clean_and_is_accessible(page, server, name):
    page.goto(f"{server}/{KEY_PAGES[name]}")
    page.wait_for_load_state("networkidle")
    if name == "search":
        page.wait_for_selector("#search-results[data-search-done]", state="attached")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)
    assert page.foreign_requests == [], page.foreign_requests
    assert page.console_errors == [], page.console_errors
    bad = axe_check.check(page, every_rule=True)
    assert bad == [], "\n".join(bad)


def test_404_page_works_at_any_depth(page, server):
    response = page.goto(f"{server}/training/no/such/page.html")
    assert response.status == 404
    page.wait_for_load_state("networkidle")
    assert "页面不存在" in page.title()
    # styled: furo's stylesheet loaded through <base href>
    assert page.evaluate("getComputedStyle(document.body).fontFamily") != "Times New Roman"
    page.click("text=回到首页")
    assert page.url == f"{server}/index.html"
    missing = [e for e in page.console_errors if "/no/such/page.html" not in e]
    assert missing == [] and page.foreign_requests == []


def test_every_code_block_has_a_copy_button_that_copies_only_code(browser, server):
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    pg = context.new_page()
    pg.goto(f"{server}/training/llm-training-troubleshooting.html")
    pg.wait_for_load_state("networkidle")
    blocks = pg.locator("div.highlight")
    assert blocks.count() > 10
    assert pg.locator("div.highlight button.copybtn").count() == blocks.count()
    first = pg.locator("div.highlight-python div.highlight").first
    first.hover()
    first.locator("button.copybtn").click()
    copied = pg.evaluate("navigator.clipboard.readText()")
    expected = first.locator("pre").inner_text()
    assert copied.strip() == expected.strip() and "batch_size" in copied
    context.close()


# the variant of each diagram's SVG that is shown (kb.site.mermaid: furo's only-light / only-dark)
SHOWN_DIAGRAMS = (
    "() => [...document.querySelectorAll('.kb-diagram img')]"
    ".filter(i => i.getClientRects().length).map(i => i.src.split('-').pop())"
)


def test_the_saved_theme_is_applied_by_our_script_and_diagrams_follow_a_new_theme(page, server):
    """_static/kb-theme.js (our file, in place of furo's inline script) applies the
    reader's saved theme; each diagram shows the SVG drawn for it, and the
    other one when the theme changes."""
    url = f"{server}/training/llm-training-10-tips.html"
    page.goto(url)
    assert page.evaluate("document.body.dataset.theme") == "auto"  # nothing saved
    page.evaluate("localStorage.setItem('theme', 'light')")
    page.goto(url)
    assert page.evaluate("document.body.dataset.theme") == "light"
    assert page.evaluate(SHOWN_DIAGRAMS) == ["light.svg"] * 2
    # furo's toggle sets data-theme on <body>
    page.evaluate("document.body.dataset.theme = 'dark'")
    assert page.evaluate(SHOWN_DIAGRAMS) == ["dark.svg"] * 2
    page.evaluate("document.body.dataset.theme = 'light'")
    assert page.evaluate(SHOWN_DIAGRAMS) == ["light.svg"] * 2
    assert page.console_errors == [] and page.foreign_requests == []


def test_phone_width_navigation_and_tables(browser, server):
    context = browser.new_context(viewport={"width": 375, "height": 740})
    pg = context.new_page()
    pg.goto(f"{server}/inference/inference-cost-breakdown.html")
    pg.wait_for_load_state("networkidle")
    # the page itself never scrolls sideways; wide tables scroll in their own box
    assert pg.evaluate("document.documentElement.scrollWidth") <= 375
    wide = pg.evaluate("""() => [...document.querySelectorAll('article table')]
        .filter(t => t.scrollWidth > t.parentElement.clientWidth)
        .map(t => getComputedStyle(t.parentElement).overflowX)""")
    assert all(o in ("auto", "scroll") for o in wide)
    nav = pg.locator(".sidebar-drawer")
    assert not nav.is_visible() or nav.bounding_box()["x"] < 0
    pg.locator("label[for='__navigation']:visible").first.click()
    pg.wait_for_timeout(400)
    assert pg.locator(".sidebar-drawer").bounding_box()["x"] >= 0
    assert pg.locator(".sidebar-drawer a", has_text="推理").first.is_visible()
    SHOTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(SHOTS / "phone-navigation.png"))
    context.close()


def test_a_tab_handed_to_the_next_test_starts_with_nothing_a_test_left(shared_context, server):
    """The ``page`` fixture hands one tab from test to test (tests/conftest.py,
    Tabs): a theme saved, a cookie or session data left by one test is gone
    for the next; a tab whose test added a listener, a route or a script, or
    changed its viewport, is not handed on (a new tab is)."""
    from conftest import Tabs

    tabs = Tabs(shared_context, server)
    tab = tabs.take()
    tab.goto(f"{server}/index.html")
    tab.evaluate(
        "localStorage.setItem('theme', 'dark'); sessionStorage.setItem('x', '1'); document.cookie = 'y=1'"
    )
    tab.console_errors.append("an error of this test")
    shared_context.new_page()  # a tab the test opened
    tabs.give_back(tab)
    assert shared_context.pages == [tab]
    again = tabs.take()
    assert again is tab and again.console_errors == []
    again.goto(f"{server}/index.html")
    assert again.evaluate("[localStorage.length, sessionStorage.length, document.cookie]") == [0, 0, ""]
    assert again.evaluate("document.body.dataset.theme") == "auto"
    for change in (
        lambda t: t.on("console", lambda message: None),
        lambda t: t.route("**/*.css", lambda route: route.abort()),
        lambda t: t.add_init_script("window.x = 1"),
        lambda t: t.set_viewport_size({"width": 300, "height": 300}),
        lambda t: t.emulate_media(color_scheme="dark"),
    ):
        tab = tabs.take()
        tab.goto(f"{server}/index.html")
        change(tab)
        tabs.give_back(tab)
        assert tab.is_closed() and shared_context.pages == []
        assert tabs.take() is not tab
        tabs.give_back(tabs.tab)
