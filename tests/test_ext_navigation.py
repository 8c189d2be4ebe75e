"""kb.pages.navigation with furo: the sidebar is bounded by answering furo's
one call of Sphinx's ``toctree`` template function (furo has no option for
it: pradyunsg/furo#674). If furo stops making that call, or makes it before
this extension's html-page-context handler, the sidebar lists every page
and these tests fail."""

from __future__ import annotations

import re
from pathlib import Path

from ext_helpers import build_root  # noqa: F401 (fixture)
from kb.pages.navigation import SIDEBAR_CALL, Toctree

pytest_plugins = ("sphinx.testing.fixtures",)


def sidebar(html: str) -> str:
    return re.search(r'<div class="sidebar-tree">(.*?)</div>', html, re.S).group(1)


def test_sidebar_shows_a_window_of_the_guide(build_root):
    app = build_root("ext-nav")
    html = (Path(app.outdir) / "guide" / "p08.html").read_text(encoding="utf-8")
    tree = sidebar(html)
    shown = re.findall(r'href="(p\d\d)\.html"', tree)
    # 9 around p08 (the page itself: href="")
    assert shown == [f"p{i:02d}" for i in range(4, 13) if i != 8]
    assert re.search(r'class="current reference internal" href="">Page 08<', tree)
    assert "全部 15 篇" in tree
    # furo's markup on top of it: the current guide opens with its checkbox
    assert 'class="toctree-checkbox"' in tree and "current-page" in tree


def test_previous_next_read_on_across_guides(build_root):
    app = build_root("ext-nav")
    out = Path(app.outdir)
    last = (out / "guide" / "p15.html").read_text(encoding="utf-8")
    first = (out / "guide" / "p01.html").read_text(encoding="utf-8")
    other = (out / "other" / "index.html").read_text(encoding="utf-8")
    # the last page of one guide leads on to the next guide, and back
    assert re.search(r'class="next-page" href="\.\./other/index\.html"', last)
    assert re.search(r'class="prev-page" href="p14\.html"', last)
    assert re.search(r'class="prev-page" href="\.\./guide/p15\.html"', other)
    assert re.search(r'class="next-page" href="p02\.html"', first)


def test_other_calls_get_sphinx_toctree():
    calls = []

    def sphinx_toctree(**kwargs):
        calls.append(kwargs)
        return "sphinx"

    toctree = Toctree(app=None, pagename="guide/p01", sphinx_toctree=sphinx_toctree)
    assert toctree(maxdepth=1, collapse=True) == "sphinx"
    assert calls == [{"maxdepth": 1, "collapse": True}]
    assert SIDEBAR_CALL == {"collapse": False, "titles_only": True, "maxdepth": -1, "includehidden": True}


def test_previous_next_are_sphinx_relations(build_root):
    """kb.pages.navigation decides which pages to write again from the
    previous / next pages it computes (the reading order, root first); Sphinx
    writes them from its own ``collect_relations`` (not in its documented
    API). If this fails, Sphinx changed how it orders pages: mend
    ``navigation.neighbours``."""
    from kb.pages.navigation import neighbours

    app = build_root("ext-nav")
    sphinx = {doc: (rel[1], rel[2]) for doc, rel in app.env.collect_relations().items()}
    assert neighbours(app.env) == sphinx
