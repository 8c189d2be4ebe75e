"""Labels that move between pages, in incremental builds.

A label (``(name)=`` above a section, a 编者注's ``:label:``) names one place
of the site: Sphinx's std domain keeps it as page, anchor and title, and a
``{ref}`` to it is resolved when the linking page is written. Sphinx writes
again only the pages it read, so when a label moves to another page, or its
title changes (a section renamed, a note's verdict rewritten), the pages
linking to it kept the old link or the old words until they changed
themselves. Here:

- the labels as they were, before anything of this build is purged
  (``env-get-outdated``);
- the std domain forgets the labels of every page this build reads before
  the first is read (``env-before-read-docs``; ``Domain.clear_doc``, which
  Sphinx calls again for each page as it reads it). A serial read forgets
  a page's labels only just before reading it: a label moved in one edit
  to a page read earlier was still held by its old page (Sphinx warned
  "duplicate label", and a 编者注 did not take it: KB024). A parallel read
  forgets them all first, as here;
- the labels each page links to (``doctree-read``: its ``pending_xref``
  targets, in the kb domain's per-document store ``label_refs``);
- once the pages are read, the pages linking to a label whose page, anchor
  or title changed are written again (``env-get-updated``);
- the labels each page defines (``doctree-read``: its explicit targets, as
  Sphinx's std domain takes them; a 编者注 adds its ``:label:``), with their
  lines: a label defined on two pages is named at each (KB024,
  ``env-check-consistency``). Sphinx keeps one of them, silently in a
  parallel read, and forgets both entries' history: a warning at every
  holder has each read again until one remains, as a full build reads them.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from docutils.utils import get_source_line
from sphinx import addnodes

from kb.core.log import getLogger
from kb.core.store import documents

logger = getLogger(__name__)

# The std domain's labels when the build started: id(env) -> (labels, anonlabels).
# (``StandardDomain.labels``, name -> (page, anchor, title), and ``anonlabels``,
# name -> (page, anchor): public attributes that Sphinx documents only in a
# comment of its source; no upstream issue asks to document them yet, and
# tests/test_upstream_contract.py fails if their shape changes.)
_before: dict[int, tuple[dict, dict]] = {}


def remember_labels(app, env, added, changed, removed) -> list[str]:
    std = env.get_domain("std")
    _before[id(env)] = (dict(std.labels), dict(std.anonlabels))
    return []


def forget_pages_to_read(app, env, docnames: list[str]) -> None:
    std = env.get_domain("std")
    for docname in docnames:
        std.clear_doc(docname)


def collect_refs(app, doctree) -> None:
    targets = {
        ref["reftarget"].lower()
        for ref in doctree.findall(addnodes.pending_xref)
        if ref.get("refdomain") in ("std", "", None) and ref.get("reftarget")
    }
    if targets:
        documents(app.env, "label_refs")[app.env.docname] = targets


def collect_labels(app, doctree) -> None:
    """The page's labels: its explicit targets, as the std domain takes them
    (not footnotes, citations, external link targets or object descriptions)."""
    defined = documents(app.env, "labels").setdefault(app.env.docname, {})
    for name, explicit in doctree.nametypes.items():
        node_id = doctree.nameids.get(name)
        node = doctree.ids.get(node_id) if explicit and node_id else None
        if node is None or isinstance(node, (nodes.footnote, nodes.citation)) or "refuri" in node:
            continue
        if node.tagname.startswith("desc_"):
            continue
        defined.setdefault(name, node.line or get_source_line(node)[1] or 0)


def define(env, label: str, line: int) -> None:
    """A label the page defines other than as a target (a 编者注's)."""
    documents(env, "labels").setdefault(env.docname, {}).setdefault(label, line)


def check_duplicates(app, env) -> None:
    holders: dict[str, list[tuple[str, int]]] = {}
    for docname, defined in sorted(documents(env, "labels").items()):
        for name, line in defined.items():
            holders.setdefault(name, []).append((docname, line))
    for name, where in sorted(holders.items()):
        if len(where) < 2:
            continue
        for docname, line in where:
            others = "、".join(str(env.doc2path(d)) for d, _line in where if d != docname)
            logger.warning(
                "KB024 label %r is defined on other pages too (%s): a label names one place of the "
                "whole site, and {ref}s would link to one of them; keep it on one page, rename the others",
                name,
                others,
                location=(docname, line or None),
                type="kb",
                subtype="label",
            )


def changed_labels(before: tuple[dict, dict], after: tuple[dict, dict]) -> set[str]:
    """Labels whose page, anchor or title differ between two states."""
    return {
        name
        for old, new in zip(before, after, strict=True)
        for name in old.keys() | new.keys()
        if old.get(name) != new.get(name)
    }


def pages_linking_to_moved_labels(app, env) -> list[str]:
    before = _before.pop(id(env), None)
    if before is None:
        return []
    std = env.get_domain("std")
    moved = changed_labels(before, (std.labels, std.anonlabels))
    if not moved:
        return []
    return sorted(doc for doc, targets in documents(env, "label_refs").items() if targets & moved)


def setup(app) -> dict[str, Any]:
    app.setup_extension("kb.core.store")
    app.connect("env-get-outdated", remember_labels)
    # before kb.site.build_speed reads the pages itself (priority 900: every
    # other handler sees the list first)
    app.connect("env-before-read-docs", forget_pages_to_read)
    app.connect("doctree-read", collect_refs)
    app.connect("doctree-read", collect_labels)
    app.connect("env-get-updated", pages_linking_to_moved_labels)
    app.connect("env-check-consistency", check_duplicates)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
