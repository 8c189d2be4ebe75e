"""Refuse raw HTML in pages: it bypasses the theme, escaping and the search index.

MyST passes raw HTML (``<script>``, ``<div onclick=…>``, ``<iframe>``) into
the page untouched. Pages here are written by many contributors and read in
browsers that trust the site, so raw HTML is an error, reported where it is::

    docs/training/x.md:12: WARNING: KB010 raw HTML (<script>) is not allowed in pages; …

The node is removed as well, so that a build that goes on after the
warning (``--keep-going``) writes no raw HTML either. Use MyST instead: admonitions (``:::{note}``), figures, tables, roles. Code
that shows HTML belongs in a fenced code block, which is not raw HTML.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes

from kb.core.log import getLogger

logger = getLogger(__name__)


def on_doctree_read(app, doctree) -> None:
    closing, reported = [], False
    for node in list(doctree.findall(nodes.raw)):
        formats = node.get("format", "").split()
        if "html" not in formats:
            # MyST writes a hard line break for the book this way
            if formats == ["latex"] and node.astext().strip() == "\\\\":
                continue
            # raw LaTeX (a role made with ``.. role:: x(raw)``): the book would
            # run it (``\input{/etc/passwd}`` reads any file into the PDF)
            _report(node, " ".join(formats) or "no format", kind="raw content")
            reported = True
            node.parent.remove(node)
            continue
        text = node.astext().strip()
        if re.fullmatch(r"<br\s*/?>", text):
            continue  # MyST renders a Markdown hard line break (two trailing spaces) this way
        if re.fullmatch(r"</\s*[A-Za-z][\w-]*\s*>", text):
            closing.append(node)  # the closing half of an inline tag, reported with its start
            continue
        tag = re.search(r"<\s*([A-Za-z][\w-]*)", text)
        what = f"<{tag.group(1)}>" if tag else "HTML"
        _report(node, what)
        reported = True
        # and it is not written either: --keep-going still writes the pages
        node.parent.remove(node)
    if closing and not reported:  # closing tags alone
        _report(closing[0], closing[0].astext().strip())
    for node in closing:
        node.parent.remove(node)


def _report(node, what: str, kind: str = "raw HTML") -> None:
    logger.warning(
        "KB010 %s (%s) is not allowed in pages; use MyST syntax (a directive or "
        "role) instead, or put HTML you want to show in a fenced code block",
        kind,
        what,
        location=node,
        type="kb",
        subtype="raw-html",
    )


def setup(app) -> dict[str, Any]:
    # before the environment collectors (priority 500): the page title they keep
    # (for other pages' navigation) must not hold the raw HTML either
    app.connect("doctree-read", on_doctree_read, priority=400)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
