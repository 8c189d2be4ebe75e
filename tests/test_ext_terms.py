"""The search page's glossary groups link to the terms' anchors, found with
the std domain's documented get_objects() (kb.pages.glossary.term_anchors),
not its private term table."""

from __future__ import annotations

from pathlib import Path

from ext_helpers import build_root  # noqa: F401 (fixture)
from kb.pages.glossary import term_anchors
from kb.search.index import _term_id

pytest_plugins = ("sphinx.testing.fixtures",)


def test_term_anchor_is_the_one_term_links_use(build_root):
    app = build_root("ext-terms")
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    anchors = {name: anchor for name, (_, anchor) in term_anchors(app.env).items()}
    # every name of the entry, whatever its case, has the anchor the page gives it
    assert set(anchors) == {"混合精度", "amp"}
    for anchor in anchors.values():
        assert f'id="{anchor}"' in html
    # and it is the anchor {term} links resolve to (case-insensitively, as here)
    assert f'href="#{anchors["amp"]}"' in html
    assert _term_id(anchors, {"names": ["AMP", "automatic mixed precision"]}) == anchors["amp"]


def test_entry_without_a_term_is_a_warning(build_root):
    app = build_root("ext-terms")
    anchors = {name: anchor for name, (_, anchor) in term_anchors(app.env).items()}
    assert _term_id(anchors, {"names": ["不存在的术语"]}) == ""
    assert "glossary entry '不存在的术语' is not a term" in app.warning.getvalue()
