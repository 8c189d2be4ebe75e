"""Behaviour of Sphinx that the kb package relies on without a documented
API for it, pinned here so that an upgrade fails loudly, with the module to
mend, instead of changing the site quietly. (Others are pinned beside their
module: tests/test_ext_store.py (toctrees), tests/test_ext_build_speed.py
(reading in the main process), tests/test_ext_navigation.py (furo's sidebar
call), tests/test_ext_mermaid.py (sphinxcontrib-mermaid's classes),
tests/js/fragment.test.mjs (Pagefind's fragment files).)"""

from __future__ import annotations

from pathlib import Path

from ext_helpers import build_root  # noqa: F401 (fixture)
from sphinx.builders.html import StandaloneHTMLBuilder

pytest_plugins = ("sphinx.testing.fixtures",)


def test_a_builder_without_search_writes_no_sphinx_index(build_root):
    """kb.search.index turns Sphinx's search off with the builder's ``search``
    attribute (as Sphinx's epub builder and sphinxcontrib's htmlhelp builder do; not in the builder
    API reference), so that Pagefind's index is the only one. If this fails,
    find Sphinx's new switch and use it there."""
    assert StandaloneHTMLBuilder.search is True
    with_search = build_root("ext-with-search")
    assert (Path(with_search.outdir) / "searchindex.js").exists()
    without = build_root("ext-no-search")
    assert not (Path(without.outdir) / "searchindex.js").exists()
    assert not (Path(without.outdir) / "search.html").exists()
