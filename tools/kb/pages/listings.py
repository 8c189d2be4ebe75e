"""Article listings generated from front matter, never maintained by hand.

Three directives, each a placeholder filled in once every page is read::

    ```{kb-article-list}
    ```
    All articles, grouped by guide (the 全部文章 page): title, summary, tags.

    ```{kb-guide-articles}
    ```
    On a guide's landing page ``docs/<guide>/index.md``: one line per
    article, in the order of that page's toctree (the reading order), then
    the articles of other guides that name this guide in ``also_in``.

    ```{kb-guides}
    ```
    The four guides from ``data/guides.yaml`` with their blurb and article
    count (the home page's way in).

Pages holding a listing (these, and other extensions' listings that call
``holds_listing``) are written again whenever what a listing can show
changed: a page added or removed, a title, the toctrees, or a per-document
store declared ``shown_in_listings`` (kb_envstore: front matter, editor
notes, term usage). An incremental build never shows a stale title, and an
edit to an article's body does not rewrite the 1,000-entry listings. The
listing is computed at write time, so listing pages are not re-read.
``listings_changed(app)`` tells other extensions (kb_tags) whether that
happened in this build.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from kb.site import output_state as kb_output_state
from kb.core.store import listing_inputs, per_document

logger = logging.getLogger(__name__)


class kb_listing(nodes.General, nodes.Element):
    """Placeholder replaced in ``doctree-resolved``."""


def load_guides(app) -> list[dict]:
    from kb.pages.frontmatter import load_guides as read

    return read(Path(app.config.kb_data_dir))


class _ListingDirective(SphinxDirective):
    kind = ""

    def run(self) -> list[nodes.Node]:
        holds_listing(self.env)
        node = kb_listing(kind=self.kind)
        self.set_source_info(node)
        return [node]


class ArticleList(_ListingDirective):
    kind = "all"


class GuideArticles(_ListingDirective):
    kind = "guide"


class Guides(_ListingDirective):
    kind = "guides"


def holds_listing(env) -> None:
    """Note that the page being read shows a listing of other pages."""
    env.kb_listing_docs[env.docname] = True


def title_of(env, doc: str) -> str:
    """The title a page has in listings (its listing_title, if any)."""
    meta = env.kb_pages.get(doc, {})
    return meta.get("listing_title") or meta.get("title") or doc


def _link(app, fromdoc: str, todoc: str, text: str) -> nodes.reference:
    uri = app.builder.get_relative_uri(fromdoc, todoc)
    return nodes.reference("", text, internal=True, refuri=uri)


def _article_item(app, fromdoc: str, docname: str, meta: dict, tags: dict) -> nodes.list_item:
    para = nodes.paragraph()
    para += nodes.strong("", "", _link(app, fromdoc, docname, title_of(app.env, docname)))
    para += nodes.Text(" — " + meta["summary"])
    item = nodes.list_item("", para, classes=["kb-article"])
    if meta.get("tags"):
        tagline = nodes.paragraph(classes=["kb-tags"])
        for tag in meta["tags"]:
            link = _link(app, fromdoc, f"tags/{tag}", tags.get(tag, tag))
            tagline += nodes.inline("", "", link, classes=["kb-tag"])
            tagline += nodes.Text(" ")
        item += tagline
    return item


def reading_order(env) -> list[str]:
    """All documents in reading order: the toctrees from the root, depth first."""
    seen: list[str] = []

    def walk(doc: str) -> None:
        for child in env.toctree_includes.get(doc, []):
            if child not in seen:
                seen.append(child)
                walk(child)

    walk(env.config.root_doc)
    return seen


def guide_order(env, guide: str) -> list[str]:
    """The guide's articles in reading order, then those listed via also_in."""
    own = [d for d in env.toctree_includes.get(f"{guide}/index", []) if d in env.kb_pages]
    rest = sorted(d for d, m in env.kb_pages.items()
                  if m["guide"] == guide and d not in own)
    extra = sorted(d for d, m in env.kb_pages.items() if guide in m.get("also_in", []))
    return own + rest + extra


def _render(app, node: kb_listing, fromdoc: str) -> list[nodes.Node]:
    env = app.env
    from kb.pages.frontmatter import load_tags

    tags = load_tags(Path(app.config.kb_data_dir))
    guides = load_guides(app)
    if node["kind"] == "guides":
        blist = nodes.bullet_list(classes=["kb-guides"])
        for g in guides:
            count = len(guide_order(env, g["key"]))
            para = nodes.paragraph()
            para += nodes.strong("", "", _link(app, fromdoc, f"{g['key']}/index", g["title"]))
            para += nodes.Text(f"（{count} 篇）— {g['blurb']}")
            blist += nodes.list_item("", para)
        return [blist]
    if node["kind"] == "guide":
        guide = fromdoc.split("/")[0]
        blist = nodes.enumerated_list(classes=["kb-article-list"], enumtype="arabic",
                                      prefix="", suffix=".")
        for doc in guide_order(env, guide):
            blist += _article_item(app, fromdoc, doc, env.kb_pages[doc], tags)
        return [blist]
    out: list[nodes.Node] = []
    for g in guides:
        docs = [d for d in guide_order(env, g["key"]) if env.kb_pages[d]["guide"] == g["key"]]
        if not docs:
            continue
        out.append(nodes.rubric("", g["title"], classes=["kb-guide-heading"]))
        blist = nodes.bullet_list(classes=["kb-article-list"])
        for doc in docs:
            blist += _article_item(app, fromdoc, doc, env.kb_pages[doc], tags)
        out.append(blist)
    out.append(nodes.paragraph("", f"共 {sum(1 for _ in env.kb_pages)} 篇文章。",
                               classes=["kb-count"]))
    return out


def on_doctree_resolved(app, doctree, docname: str) -> None:
    for node in list(doctree.findall(kb_listing)):
        node.replace_self(_render(app, node, docname))


def _canonical(value) -> str:
    """The same text for the same data in every process (sets sorted)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=sorted)


def listing_signature(app) -> dict:
    """Everything a listing page can show, per document."""
    env = app.env
    stores = [getattr(env, name, {}) for name in listing_inputs(app)]
    return {doc: (env.titles[doc].astext() if doc in env.titles else None,
                  tuple(env.toctree_includes.get(doc, ())),
                  *(_canonical(store.get(doc)) for store in stores))
            for doc in env.found_docs}


def listings_changed(app) -> bool:
    """Whether what listings show changed in this build (set after reading)."""
    return app.kb_listings_changed


def on_env_get_updated(app, env) -> list[str]:
    """Pages that list other pages, when anything they show changed.

    Their listings are filled in at write time from the environment, so they
    need no re-reading (which would make every one-page edit a parallel read).
    """
    signature = listing_signature(app)
    # compared with what the written pages show, not with the environment,
    # which is saved before the pages are written (kb_output_state)
    app.kb_listings_changed = signature != kb_output_state.before(app, "listings")
    kb_output_state.record(app, "listings", signature)
    if not app.kb_listings_changed:
        return []
    return sorted(env.kb_listing_docs)


def setup(app) -> dict[str, Any]:
    app.setup_extension("kb.pages.frontmatter")
    app.setup_extension("kb.site.output_state")
    app.add_node(kb_listing)
    app.add_directive("kb-article-list", ArticleList)
    app.add_directive("kb-guide-articles", GuideArticles)
    app.add_directive("kb-guides", Guides)
    per_document(app, "kb_listing_docs")
    # before other extensions' handlers, which ask listings_changed()
    app.connect("env-get-updated", on_env_get_updated, priority=400)
    app.connect("doctree-resolved", on_doctree_resolved)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": 4}
