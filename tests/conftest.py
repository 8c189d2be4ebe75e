"""Shared fixtures: one build of the site per test run, a local server, one browser,
copies of the repository, and the shared builds of the bad-input matrix (one_build).

``make test`` runs the tests in several processes (pytest-xdist, ``-n``): the
site and each bad-input group are still built once per run, by the first
process that needs them (``once``), and the others wait for it and use its
folder. Each process has its own server and browser.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import one_build as _one_build
import pytest
from filelock import FileLock
from local_site import CHROMIUM, launch, serve

ROOT = Path(__file__).resolve().parent.parent


def sphinx_build(
    src: Path, out: Path, *extra: str, conf: Path = ROOT, wait_for_index: bool = True
) -> subprocess.CompletedProcess:
    """Run the project's build (same options as the Makefile) and capture output.

    An incremental build may leave the search index to a background run
    (kb.search.pagefind); unless told otherwise this waits for it, so a test sees
    the finished site.
    """
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-b",
        "html",
        "-c",
        str(conf),
        "-W",
        "-n",
        "--keep-going",
        *extra,
        str(src),
        str(out),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=conf)
    if wait_for_index:
        from kb.search import pagefind as kb_pagefind

        kb_pagefind.wait(out)
    return proc


T = TypeVar("T")


def once(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], T]) -> T:
    """``make(folder)``, run once per test run by whichever process asks first;
    the others wait for it and get its (pickled) result, or its failure.

    pytest-xdist gives each process a temporary folder inside the run's own
    (its documented recipe for session fixtures that run once); without
    xdist the run's folder is the process's.
    """
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    result, failed = shared / f"{name}.pickle", shared / f"{name}.failed"
    with FileLock(shared / f"{name}.lock"):
        if failed.exists():
            pytest.fail(
                f"{name}, made by another test process, failed:\n{failed.read_text(encoding='utf-8')}"
            )
        if result.exists():
            return pickle.loads(result.read_bytes())
        folder = shared / name
        folder.mkdir()
        try:
            value = make(folder)
        except BaseException as exc:
            failed.write_text(str(exc) or type(exc).__name__, encoding="utf-8")
            raise
        result.write_bytes(pickle.dumps(value))
        return value


@pytest.fixture(scope="session")
def rootdir() -> Path:
    """Where sphinx.testing finds the test roots: @pytest.mark.sphinx("html",
    testroot="ext-x") builds a copy of tests/roots/test-ext-x/."""
    return Path(__file__).resolve().parent / "roots"


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The site built from docs/ into a temporary folder, with zero warnings
    (once per test run: tests only read it)."""

    def build(out: Path) -> Path:
        proc = sphinx_build(ROOT / "docs", out, "-j", "auto")
        assert proc.returncode == 0, f"build failed:\n{proc.stderr}"
        assert "WARNING" not in proc.stderr, proc.stderr
        return out

    return once(tmp_path_factory, "site", build)


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


@pytest.fixture(scope="session")
def shared_context(browser):
    """The browser context the ``page`` fixture opens its tabs in: one per
    test process, so the site's scripts and styles are loaded once and a
    test does not start a renderer of its own (a new context per test costs
    about twice the CPU)."""
    context = browser.new_context(bypass_csp=True)
    yield context
    context.close()


# What a test can change in a tab that a new page would not carry over: a
# tab whose test called one of these is closed, not handed to the next test.
TAB_STATE = (
    "on",
    "once",
    "route",
    "route_from_har",
    "route_web_socket",
    "add_init_script",
    "add_locator_handler",
    "expose_binding",
    "expose_function",
    "set_viewport_size",
    "emulate_media",
    "set_extra_http_headers",
    "set_default_timeout",
    "set_default_navigation_timeout",
)


class Tabs:
    """The tabs of the ``page`` fixture: one tab of the shared context, handed
    from test to test. A new tab costs Chromium a renderer (about 0.6 s of
    CPU, three times a page load in an open tab); a tab handed on starts
    like a new one: the site's storage, session storage, cookies and
    permissions are cleared (``forget``), and a tab whose test changed
    something else of it (a listener, a route, the viewport: TAB_STATE) is
    closed instead."""

    def __init__(self, context, server: str) -> None:
        self.context, self.server, self.tab = context, server, None

    def take(self):
        if self.tab is None or self.tab.is_closed():  # closed by another Tabs of the context
            self.tab = self._new()
        tab, touched = self.tab, []
        tab.console_errors, tab.foreign_requests = [], []
        for name in TAB_STATE:
            setattr(tab, name, _noting(getattr(tab, name), name, touched))
        tab.kb_touched = touched
        return tab

    def give_back(self, tab) -> None:
        for name in TAB_STATE:
            delattr(tab, name)
        keep = not tab.kb_touched and not tab.is_closed()
        if keep:
            tab.goto("about:blank")  # the test's page stops running
        self.tab = tab if keep else None
        forget(self.context, self.server, keep=self.tab)

    def _new(self):
        tab, server = self.context.new_page(), self.server
        # errors, and the search page's warning that it fell back to a slower path
        tab.on(
            "console",
            lambda m: (
                (m.type == "error" or m.text.startswith("kb-search:"))
                and tab.console_errors.append(f"{m.text} ({m.location.get('url', '')})")
            ),
        )
        tab.on("pageerror", lambda e: tab.console_errors.append(str(e)))
        tab.on(
            "request",
            lambda r: (
                r.url.startswith(server) or r.url.startswith("data:") or tab.foreign_requests.append(r.url)
            ),
        )
        return tab


def _noting(method, name: str, touched: list):
    def call(*args, **kwargs):
        touched.append(name)
        return method(*args, **kwargs)

    return call


@pytest.fixture(scope="session")
def tabs(shared_context, server) -> Tabs:
    return Tabs(shared_context, server)


@pytest.fixture
def page(tabs):
    """A tab that starts as a new one would, and records console errors and
    requests to other hosts (``page.console_errors``, ``page.foreign_requests``).

    It bypasses the pages' Content-Security-Policy so that tests can inject
    axe-core; tests/test_csp.py checks the pages under the policy. What a
    test leaves in the site's storage (the saved theme …) and its cookies
    are cleared afterwards, so the next test starts as a new reader (Tabs)."""
    tab = tabs.take()
    yield tab
    tabs.give_back(tab)


def forget(context, server: str, keep=None) -> None:
    """Close the context's tabs but `keep` and clear what they left for the
    site: storage (Chromium's DevTools call Storage.clearDataForOrigin:
    local and session storage, IndexedDB, service workers, caches), cookies
    and permissions."""
    tab = keep or (context.pages[0] if context.pages else context.new_page())
    cdp = context.new_cdp_session(tab)
    cdp.send("Storage.clearDataForOrigin", {"origin": server, "storageTypes": "all"})
    cdp.detach()
    context.clear_cookies()
    context.clear_permissions()
    for tab in context.pages:
        if tab is not keep:
            tab.close()


# Fixtures that build the whole site (or a copy of the repository, or a tiny
# project in a subprocess), serve it or start the browser: a test using one is
# in the slow tier (pytest -m "not slow and not snippet" is the fast tier).
SLOW_FIXTURES = {
    "site",
    "server",
    "browser",
    "page",
    "tabs",
    "shared_context",
    "repo",
    "tiny_repo",
    "one_build",
    "tiny",
    "built",
    "sources",
    "csp_server",
}


def pytest_configure(config) -> None:
    """The kb package compiled once, before any test: where Python writes no
    bytecode (PYTHONDONTWRITEBYTECODE, set on this machine and in many CI
    images), every sphinx-build and `make` the tests start would compile it
    again, 0.6 s of CPU a process. The copies of the repository the tests
    build take the compiled files along (mtimes kept, so Python uses them)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        import compileall

        compileall.compile_dir(str(ROOT / "tools"), quiet=1)


def pytest_collection_modifyitems(items) -> None:
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def repo(tmp_path) -> Path:
    """A copy of what the build and the make targets read (mtimes kept), for a
    test that builds it several times; one-build cases use `one_build` instead."""
    return _one_build.copy_repo(tmp_path)


@pytest.fixture
def tiny_repo(tmp_path) -> Path:
    """A repository with a four-page docs/ (one_build.tiny_repo) that `make html`
    builds in seconds, for a test that builds it several times."""
    return _one_build.tiny_repo(tmp_path / "kb")


@pytest.fixture(scope="session")
def secret(tmp_path_factory) -> Path:
    """A file outside the repository copies, as /etc/passwd is outside CI's checkout."""

    def write(folder: Path) -> Path:
        path = folder / "secret.txt"
        path.write_text(f"{_one_build.SECRET}\npassword=hunter2\n", encoding="utf-8")
        return path

    return once(tmp_path_factory, "outside", write)


@pytest.fixture(scope="session")
def one_build(tmp_path_factory, secret):
    """``one_build(group)``: the run of a group of the bad-input matrix (tests/one_build.py),
    made on first use (once per test run) and shared by the tests of every case in it."""
    runs: dict[str, _one_build.Run] = {}

    def run(group: str) -> _one_build.Run:
        if group not in runs:
            runs[group] = once(
                tmp_path_factory, f"group-{group}", lambda folder: _one_build.run_group(group, folder, secret)
            )
        return runs[group]

    return run
