"""Per-document data kept on the build environment, parallel-safe.

``per_document(app, "kb_pages")`` gives ``app.env.kb_pages``: a dict keyed by
docname that survives incremental builds (it is pickled with the
environment), loses a document's entry when that document is re-read or
removed (``env-purge-doc``) and takes the entries of documents read in
worker processes (``env-merge-info``). Extensions store what they collect
while reading there, and use it when writing.

``shown_in_listings=True`` declares that pages listing other pages (see
``kb_listings``) show this data: when it changes, they are written again.

``rebuild_when_changed(app, name, "env", files)`` is for data files that
every page depends on: a config value holding their digest, so that Sphinx
reads ("env") or writes ("html") every page again when one of them changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


def per_document(app, name: str, shown_in_listings: bool = False) -> None:
    if shown_in_listings:
        listing_inputs(app).append(name)

    def init(app) -> None:
        if not hasattr(app.env, name):
            setattr(app.env, name, {})

    def purge(app, env, docname: str) -> None:
        getattr(env, name, {}).pop(docname, None)

    def merge(app, env, docnames, other) -> None:
        store = getattr(env, name)
        theirs = getattr(other, name, {})
        for doc in docnames:
            if doc in theirs:
                store[doc] = theirs[doc]

    app.connect("builder-inited", init)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)


def listing_inputs(app) -> list[str]:
    """Names of the stores that listing pages show."""
    if not hasattr(app, "kb_listing_inputs"):
        app.kb_listing_inputs = []
    return app.kb_listing_inputs


def setup(app) -> dict[str, Any]:
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


def rebuild_when_changed(app, name: str, rebuild: str,
                         files: Callable[[Any], Iterable[Path]]) -> None:
    """Config value `name`: the digest of `files(app)`, set at config-inited."""
    app.add_config_value(name, "", rebuild, types=[str])

    def digest(app, config) -> None:
        hashed = hashlib.sha256()
        for path in files(app):
            hashed.update(path.name.encode() + b"\0" + (path.read_bytes() if path.exists() else b"") + b"\0")
        setattr(config, name, hashed.hexdigest())

    app.connect("config-inited", digest)
