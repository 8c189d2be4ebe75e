# Each page's title in the kb domain's "pages" store (tests/test_ext_store.py).
from docutils import nodes
from kb.core.store import documents

project = "store"
extensions = ["kb.core.store"]


def _note_title(app, doctree):
    documents(app.env, "pages")[app.env.docname] = {"title": doctree.next_node(nodes.title).astext()}


def setup(app):
    app.connect("doctree-read", _note_title)
