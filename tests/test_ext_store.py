"""kb.core.store keeps per-document data in a Sphinx domain: merged from the
worker processes of a parallel read, dropped with a removed document,
replaced when a document is read again, kept for the others."""

from __future__ import annotations

from pathlib import Path

from ext_helpers import build_root  # noqa: F401 (fixture)
from kb.core.store import documents

pytest_plugins = ("sphinx.testing.fixtures",)


def titles(app) -> dict[str, str]:
    return {doc: value["title"] for doc, value in documents(app.env, "pages").items()}


def test_per_document_data_follows_the_documents(build_root):
    app = build_root("ext-store", parallel=2)  # read by worker processes, merged
    assert titles(app) == {"index": "Home", **{p: f"Page {p}" for p in "abcdef"}}
    srcdir = Path(app.srcdir)
    (srcdir / "f.rst").unlink()
    (srcdir / "index.rst").write_text((srcdir / "index.rst").read_text().replace("   f\n", ""))
    (srcdir / "a.rst").write_text("Page A again\n============\n\nText.\n")
    app = build_root("ext-store", freshenv=False)
    assert titles(app) == {"index": "Home", "a": "Page A again", **{p: f"Page {p}" for p in "bcde"}}


def test_toctrees_are_recorded_as_sphinx_records_them(build_root):
    """kb.core.store's toctree record (documented ``toctree`` nodes) is what
    Sphinx keeps in ``env.toctree_includes`` (not in its documented API):
    after a parallel read, and after an incremental one that changes a toctree.
    If this fails, Sphinx changed what a toctree includes: read its changelog."""
    from kb.core.store import toctree_children, toctrees

    app = build_root("ext-store", parallel=2)
    assert toctree_children(app.env, "index") == list("abcdef")
    assert toctrees(app.env) == {d: list(c) for d, c in app.env.toctree_includes.items()}
    srcdir = Path(app.srcdir)
    (srcdir / "index.rst").write_text((srcdir / "index.rst").read_text().replace("   f\n", ""))
    (srcdir / "a.rst").write_text("Page A\n======\n\n.. toctree::\n   :glob:\n\n   [ef]\n")
    app = build_root("ext-store", freshenv=False)
    assert toctree_children(app.env, "index") == list("abcde")
    assert toctree_children(app.env, "a") == ["e", "f"]
    assert toctrees(app.env) == {d: list(c) for d, c in app.env.toctree_includes.items()}


def test_a_page_removed_but_still_listed_warns_as_a_full_build_does(build_root):
    """A page's file is deleted and a toctree still lists it: the listing
    page is read again (kb.core.store), so the incremental build warns
    "nonexisting document", as a full build of the same files does."""
    app = build_root("ext-store")
    srcdir = Path(app.srcdir)
    (srcdir / "f.rst").unlink()
    app = build_root("ext-store", freshenv=False)
    assert "toctree contains reference to nonexisting document 'f'" in app.warning.getvalue()


def test_a_label_on_a_node_without_a_line_takes_its_nearest_ancestors():
    """kb.core.labels records where each explicit target is defined; a node
    that carries no line of its own (as some directives leave them) is
    placed at its nearest ancestor's (docutils' get_source_line), not with
    an error."""
    from types import SimpleNamespace

    from docutils import frontend, nodes, utils
    from kb.core.labels import collect_labels

    doctree = utils.new_document("page.md", frontend.get_default_settings())
    outer = nodes.container()
    outer.line = 7
    inner = nodes.paragraph("", "文字")
    outer += inner
    doctree += outer
    inner["names"].append("my-label")
    doctree.note_explicit_target(inner)
    assert inner.line is None
    store = {"labels": {}}
    domain = SimpleNamespace(data={"documents": store})
    app = SimpleNamespace(env=SimpleNamespace(docname="page", get_domain=lambda name: domain))
    collect_labels(app, doctree)
    assert store["labels"] == {"page": {"my-label": 7}}
