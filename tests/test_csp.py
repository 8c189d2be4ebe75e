"""The site works under the Content-Security-Policy it ships.

The site is served with the headers of its own ``_headers`` file (copied to
the site root from ``_static/_headers``), as Netlify or Cloudflare Pages
would send them, and each key page is opened in Chromium with the policy
enforced: every page must do its work (theme, diagrams, search) and the
browser must report no violation. A page with an inline script, served the
same way, shows that a violation would be seen.
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import pytest
from local_site import QuietHandler, serve

pytestmark = pytest.mark.browser

RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));
"""


def headers_of(site: Path) -> dict[str, str]:
    """The headers ``_headers`` gives every path (the ``/*`` block)."""
    headers, inside = {}, False
    for line in (site / "_headers").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith((" ", "\t")):
            inside = line.strip() == "/*"
        elif inside:
            name, _, value = line.strip().partition(":")
            headers[name.strip()] = value.strip()
    return headers


def headed(headers: dict[str, str]) -> type[QuietHandler]:
    class Handler(QuietHandler):
        def end_headers(self) -> None:
            for name, value in headers.items():
                self.send_header(name, value)
            super().end_headers()

    return Handler


@pytest.fixture(scope="module")
def csp_server(site):
    headers = headers_of(site)
    assert "Content-Security-Policy" in headers
    with serve(site, handler_class=headed(headers)) as base:
        yield base


def open_enforced(browser, url: str):
    context = browser.new_context()  # no bypass: the policy is enforced
    page = context.new_page()
    page.add_init_script(RECORD_VIOLATIONS)
    page.console_errors = []
    page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))
    response = page.goto(url)
    page.wait_for_load_state("networkidle")
    return context, page, response


PAGES = {
    "home": ("index.html", "document.body.dataset.theme === 'auto'"),
    "diagram": (
        "training/llm-training-10-tips.html",
        "document.querySelectorAll('.kb-diagram img').length === 4",
    ),
    "search": (
        f"search.html?q={urllib.parse.quote('混合精度')}",
        "document.querySelectorAll('[data-search-result]').length > 0",
    ),
    "glossary": ("glossary.html", "document.body.dataset.theme === 'auto'"),
    "404": ("training/no/such/page.html", "document.title.includes('页面不存在')"),
}


@pytest.mark.parametrize("name", sorted(PAGES))
def test_key_pages_work_under_the_shipped_policy(browser, csp_server, name):
    path, works = PAGES[name]
    context, page, response = open_enforced(browser, f"{csp_server}/{path}")
    try:
        assert "default-src 'self'" in response.headers["content-security-policy"]
        page.wait_for_function(works, timeout=20_000)
        assert page.evaluate("window.__csp") == []
        assert [e for e in page.console_errors if "Content Security Policy" in e] == []
    finally:
        context.close()


def test_a_violation_would_be_seen(browser, site, tmp_path):
    """The harness itself: an inline script under the same headers is blocked and reported."""
    (tmp_path / "_headers").write_text((site / "_headers").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "bad.html").write_text(
        "<!doctype html><title>x</title><body><script>document.title = 'ran'</script>", encoding="utf-8"
    )
    with serve(tmp_path, handler_class=headed(headers_of(tmp_path))) as base:
        context, page, _ = open_enforced(browser, f"{base}/bad.html")
        try:
            assert page.title() == "x"
            assert any(v.startswith("script-src") for v in page.evaluate("window.__csp"))
        finally:
            context.close()
