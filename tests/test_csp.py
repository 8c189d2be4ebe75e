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


# Read the Docs adds its Addons (flyout, search, PR banner) to every page it
# serves: its Cloudflare worker appends
#   <script async type="text/javascript" src="/_/static/javascript/readthedocs-addons.js">
# to <head>, and the script talks to /_/addons/ on the same host
# (readthedocs/common, dockerfiles/force-readthedocs-addons.js, read
# 2026-12-02). Read the Docs sends no _headers: only the pages' <meta> policy
# applies there. The real script cannot be fetched here, so a stand-in does
# what the pattern needs: load from that path, call that API, and try a
# third-party host (as EthicalAds would), which the policy must still stop.
ADDONS_TAG = '<script async type="text/javascript" src="/_/static/javascript/readthedocs-addons.js"></script>'
ADDONS_JS = b"""
fetch("/_/addons/?api-version=1").then((r) => r.json()).then((d) => {
  document.documentElement.dataset.rtdAddons = d.ok ? "loaded" : "bad";
});
fetch("https://server.ethicalads.io/api/v1/decision/").catch(() => {
  document.documentElement.dataset.rtdThirdParty = "blocked";
});
"""


class AsReadTheDocsServes(QuietHandler):
    """The site as Read the Docs serves it: no headers, the Addons script injected."""

    def do_GET(self) -> None:
        path = urllib.parse.urlparse(self.path).path
        if path == "/_/static/javascript/readthedocs-addons.js":
            return self._send(ADDONS_JS, "text/javascript")
        if path.startswith("/_/addons/"):
            return self._send(b'{"ok": true}', "application/json")
        file = Path(self.directory) / path.lstrip("/")
        if path.endswith(".html") and file.is_file():
            html = file.read_text(encoding="utf-8").replace("</head>", ADDONS_TAG + "</head>", 1)
            return self._send(html.encode("utf-8"), "text/html; charset=utf-8")
        return super().do_GET()

    def _send(self, body: bytes, kind: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_read_the_docs_addons_run_under_the_pages_policy(browser, site):
    with serve(site, handler_class=AsReadTheDocsServes) as base:
        context, page, response = open_enforced(browser, f"{base}/training/llm-training-10-tips.html")
        try:
            assert "content-security-policy" not in response.headers  # only the <meta> policy
            page.wait_for_function("document.documentElement.dataset.rtdAddons === 'loaded'", timeout=20_000)
            page.wait_for_function(
                "document.documentElement.dataset.rtdThirdParty === 'blocked'", timeout=20_000
            )
            violations = page.evaluate("window.__csp")
            assert violations and all("server.ethicalads.io" in v for v in violations), violations
        finally:
            context.close()
