"""Serve mermaid from the site itself, never from a CDN.

sphinxcontrib-mermaid loads mermaid from cdn.jsdelivr.net unless
``mermaid_use_local`` names a file under ``_static``; readers behind filtered
networks cannot reach the CDN. The npm package ``mermaid`` (pinned in
package.json and its lock file, installed by ``npm ci``) ships an ESM build
that imports its diagram types from a ``chunks/`` folder on demand. This
extension copies that build, the whole chunk folder and no source maps, into
``<outdir>/_static/vendor/mermaid/`` and points ``mermaid_use_local`` at it.
Only pages with a diagram load the script (sphinxcontrib-mermaid adds it to
pages without a doctree too; this extension removes it there).

A missing ``node_modules/mermaid`` is a warning (``-W`` fails): run ``npm ci``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sphinx.util import logging

logger = logging.getLogger(__name__)

ENTRY = "mermaid.esm.min.mjs"
CHUNKS = Path("chunks") / "mermaid.esm.min"
TARGET = Path("_static") / "vendor" / "mermaid"


def files_to_copy(dist: Path) -> list[Path]:
    """The ESM entry point and every chunk it may import (no source maps)."""
    return [dist / ENTRY, *sorted((dist / CHUNKS).glob("*.mjs"))]


def on_builder_inited(app) -> None:
    if app.builder.format != "html":
        return
    app.config.mermaid_use_local = f"vendor/mermaid/{ENTRY}"


def on_build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    dist = Path(app.confdir) / "node_modules" / "mermaid" / "dist"
    if not (dist / ENTRY).exists():
        logger.warning("mermaid is not installed (%s): run `npm ci` (make html does)",
                       dist / ENTRY, type="kb", subtype="mermaid")
        return
    out = Path(app.outdir) / TARGET
    for src in files_to_copy(dist):
        dest = out / src.relative_to(dist)
        if dest.exists() and dest.stat().st_size == src.stat().st_size:
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)


def drop_script_without_diagram(app, pagename, templatename, context, doctree) -> None:
    """sphinxcontrib-mermaid also adds its script to pages without a doctree
    (search, tag pages); remove it from every page that has no diagram."""
    from sphinxcontrib.mermaid import mermaid

    if doctree is not None and doctree.next_node(mermaid) is not None:
        return
    scripts = context.get("script_files")
    if scripts:
        scripts[:] = [js for js in scripts
                      if "import mermaid" not in (getattr(js, "attributes", None) or {}).get("body", "")]


def setup(app) -> dict[str, Any]:
    app.setup_extension("sphinxcontrib.mermaid")
    app.connect("builder-inited", on_builder_inited)
    app.connect("build-finished", on_build_finished)
    # after sphinxcontrib-mermaid's own handler (priority 500)
    app.connect("html-page-context", drop_script_without_diagram, priority=600)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
