"""The knowledge base's data in the build environment: one Sphinx domain.

A domain's ``data`` is where Sphinx documents that an extension keeps what
it collects while reading (pickled with the environment, so it survives
incremental builds). ``KnowledgeBase`` keeps two kinds:

- **per document** (``documents(env, name)``: docname -> value): what a page
  holds, collected while it is read. Sphinx calls ``clear_doc`` when a
  document is re-read or removed and ``merge_domaindata`` with what worker
  processes read under ``-j``, so every store is parallel-safe without
  handlers of its own. The stores, and who fills them: ``pages`` (valid front
  matter, kb.pages.frontmatter), ``listings`` (pages that show a listing of
  other pages, kb.pages.listings), ``term_usage`` (terms a page links,
  kb.pages.glossary), ``editor_notes`` (kb.editorial.notes), ``mermaid``
  (diagrams, kb.site.mermaid), ``toctrees`` (the pages a page's toctrees
  list, in order, collected here from Sphinx's documented ``toctree`` node:
  ``toctree_children``; Sphinx's own record of it, ``env.toctree_includes``,
  is not part of its documented environment API), ``read`` (every page
  read: kb.site.build_speed checks that none handed to a worker was lost),
  ``assets`` (pages with a calculator or the spec table: kb.calc.directive),
  ``label_refs`` and ``labels`` (the labels a page links to, and those it
  defines: kb.core.labels).
- **for the whole site** (``site(env)``: name -> value): what is derived
  from all documents once they are read (reading order, the 相关文章 lists)
  or read once per build (git dates), for the pages written in this build;
  and caches kept from build to build (the mermaid parse results). What
  pages show of other pages, compared from build to build, is kept by
  kb.site.output_state instead (saved once the pages are written).

``SHOWN_IN_LISTINGS``: the per-document stores that pages listing other
pages show; when one changes, those pages are written again (kb.pages.listings).

``rebuild_when_changed(app, name, "env", files)`` is for data files that
every page depends on: a config value holding their digest, so that Sphinx
reads ("env") or writes ("html") every page again when one of them changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Set
from pathlib import Path
from typing import Any

from sphinx import addnodes
from sphinx.domains import Domain

PER_DOCUMENT = (
    "pages",
    "listings",
    "term_usage",
    "editor_notes",
    "mermaid",
    "toctrees",
    "read",
    "assets",
    "label_refs",
    "labels",
)
SHOWN_IN_LISTINGS = ("pages", "editor_notes", "term_usage")


class KnowledgeBase(Domain):
    """No roles, directives or objects: only the data below."""

    name = "kb"
    label = "51 算力知识库"
    initial_data: dict[str, Any] = {"documents": {name: {} for name in PER_DOCUMENT}, "site": {}}
    data_version = 7

    def clear_doc(self, docname: str) -> None:
        for store in self.data["documents"].values():
            store.pop(docname, None)

    def merge_domaindata(self, docnames: Set[str], otherdata: dict[str, Any]) -> None:
        for name, theirs in otherdata["documents"].items():
            mine = self.data["documents"][name]
            for docname in docnames:
                if docname in theirs:
                    mine[docname] = theirs[docname]

    def resolve_any_xref(self, env, fromdocname, builder, target, node, contnode) -> list:
        return []  # nothing to link to


def documents(env, name: str) -> dict[str, Any]:
    """The per-document store ``name`` (one of PER_DOCUMENT)."""
    return env.get_domain("kb").data["documents"][name]


def site(env) -> dict[str, Any]:
    """Values for the whole site (not per document)."""
    return env.get_domain("kb").data["site"]


def collect_toctrees(app, doctree) -> None:
    """The pages each toctree of the page lists (``includefiles``: the
    entries' documents, globs expanded), in the page's order."""
    listed = [doc for node in doctree.findall(addnodes.toctree) for doc in node.get("includefiles", ())]
    if listed:
        documents(app.env, "toctrees")[app.env.docname] = listed


def pages_listing_removed(app, env, added, changed, removed) -> list[str]:
    """The pages whose toctrees list a page that is gone: read again, so that
    they warn as a full build does (Sphinx reads only the pages that changed)."""
    gone = set(removed)
    return sorted(
        doc for doc, listed in toctrees(env).items() if doc not in gone and gone.intersection(listed)
    )


def toctree_children(env, docname: str) -> list[str]:
    """The pages ``docname``'s toctrees list, in order ([] for none)."""
    return documents(env, "toctrees").get(docname, [])


def toctrees(env) -> dict[str, list[str]]:
    """Every page's toctree children: docname -> pages, for pages that list any."""
    return documents(env, "toctrees")


def setup(app) -> dict[str, Any]:
    app.add_domain(KnowledgeBase)
    app.connect("doctree-read", collect_toctrees)
    app.connect("env-get-outdated", pages_listing_removed)
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}


def rebuild_when_changed(app, name: str, rebuild: str, files: Callable[[Any], Iterable[Path]]) -> None:
    """Config value `name`: the digest of `files(app)`, set at config-inited."""
    app.add_config_value(name, "", rebuild, types=[str])

    def digest(app, config) -> None:
        hashed = hashlib.sha256()
        for path in files(app):
            hashed.update(path.name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"") + b"\0")
        setattr(config, name, hashed.hexdigest())

    app.connect("config-inited", digest)
