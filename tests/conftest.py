"""Shared fixtures: a fresh build of the site, a local server, a browser."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

from local_site import CHROMIUM, launch, serve


def sphinx_build(src: Path, out: Path, *extra: str, conf: Path = ROOT,
                 wait_for_index: bool = True) -> subprocess.CompletedProcess:
    """Run the project's build (same options as the Makefile) and capture output.

    An incremental build may leave the search index to a background run
    (kb_pagefind); unless told otherwise this waits for it, so a test sees
    the finished site.
    """
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-c", str(conf),
           "-W", "-n", "--keep-going", *extra, str(src), str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=conf)
    if wait_for_index:
        from kb.search import pagefind as kb_pagefind
        kb_pagefind.wait(out)
    return proc


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The site built from docs/ into a temporary folder, with zero warnings."""
    out = tmp_path_factory.mktemp("site")
    proc = sphinx_build(ROOT / "docs", out, "-j", "auto")
    assert proc.returncode == 0, f"build failed:\n{proc.stderr}"
    assert "WARNING" not in proc.stderr, proc.stderr
    return out


@pytest.fixture(scope="session")
def server(site):
    """Serve the built site on 127.0.0.1; yields the base URL."""
    with serve(site) as base:
        yield base


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium driven by Playwright (never a downloaded browser)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    """A fresh page that records console errors and requests to other hosts.

    It bypasses the pages' Content-Security-Policy so that tests can inject
    axe-core; tests/test_csp.py checks the pages under the policy."""
    context = browser.new_context(bypass_csp=True)
    pg = context.new_page()
    pg.console_errors = []
    pg.foreign_requests = []
    # errors, and the search page's warning that it fell back to a slower path
    pg.on("console", lambda m: (m.type == "error" or m.text.startswith("kb-search:"))
          and pg.console_errors.append(f"{m.text} ({m.location.get('url', '')})"))
    pg.on("pageerror", lambda e: pg.console_errors.append(str(e)))
    pg.on("request", lambda r: r.url.startswith(server) or r.url.startswith("data:")
          or pg.foreign_requests.append(r.url))
    yield pg
    context.close()
