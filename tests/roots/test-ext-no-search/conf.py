# Sphinx's HTML builder with its own search switched off as kb.search.index
# does it (tests/test_upstream_contract.py).
project = "no-search"


def _no_search(app):
    app.builder.search = False


def setup(app):
    app.connect("builder-inited", _no_search)
