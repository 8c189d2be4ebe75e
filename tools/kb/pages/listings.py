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
store in ``SHOWN_IN_LISTINGS`` (kb.core.store: front matter, editor notes,
term usage). An incremental build never shows a stale title, and an edit to
an article's body does not rewrite the 1,000-entry listings. The listing is
computed at write time, so listing pages are not re-read.

Once every page is read (``env-updated``), this extension computes the
reading order (all documents, the toctrees depth first; ``site(env)``) and
records what listings show, per document, in kb.site.output_state;
``listings_changed(app)`` compares that with what the written pages showed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from kb.core.builders import is_website
from kb.core.i18n import _
from kb.core.store import SHOWN_IN_LISTINGS, documents, site, toctree_children
from kb.pages.frontmatter import load_guides, load_tags
from kb.site import output_state as kb_output_state


class kb_listing(nodes.General, nodes.Element):
    """Placeholder replaced in ``doctree-resolved``."""


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
    documents(env, "listings")[env.docname] = True


def title_of(env, doc: str) -> str:
    """The title a page has in listings (its listing_title, if any)."""
    meta = documents(env, "pages").get(doc, {})
    return meta.get("listing_title") or meta.get("title") or doc


def summary_notes(env, doc: str) -> list[dict]:
    """The 编者注 of page ``doc`` that its front matter's ``listing_notes``
    names: they correct what its title or summary says, so every listing
    that shows those shows their verdicts beside them (a label that names
    no note of the page is KB026, kb.editorial.notes)."""
    wanted = documents(env, "pages").get(doc, {}).get("listing_notes", [])
    if not wanted:
        return []
    notes = {n["label"]: n for n in documents(env, "editor_notes").get(doc, []) if n["label"]}
    return [notes[label] for label in wanted if label in notes]


def verdict_text(note: dict) -> str:
    """A note's verdict as a listing shows it beside a summary."""
    return _("编者注：{verdict}").format(verdict=note["summary"])


def summary_note_nodes(app, fromdoc: str, doc: str) -> list[nodes.Node]:
    """The verdicts of ``summary_notes``, each a link to its note, for a
    listing on ``fromdoc``; none when the page names none."""
    out: list[nodes.Node] = []
    for note in summary_notes(app.env, doc):
        uri = f"{app.builder.get_relative_uri(fromdoc, doc)}#{note['id']}"
        out += [
            nodes.Text(_("（")),
            nodes.reference("", verdict_text(note), internal=True, refuri=uri),
            nodes.Text(_("）")),
        ]
    return out


def link(app, fromdoc: str, todoc: str, text: str) -> nodes.Node:
    """A link from one page to another, as Sphinx writes internal links.

    Generated pages (``tags/…``) exist on the website only: another builder
    (epub, LaTeX, text) shows the text without a link."""
    if todoc not in app.env.found_docs and not is_website(app.builder):
        return nodes.inline("", text)
    uri = app.builder.get_relative_uri(fromdoc, todoc)
    return nodes.reference("", text, internal=True, refuri=uri)


def _article_item(app, fromdoc: str, docname: str, meta: dict, tags: dict) -> nodes.list_item:
    para = nodes.paragraph()
    para += nodes.strong("", "", link(app, fromdoc, docname, title_of(app.env, docname)))
    para += nodes.Text(" — " + meta["summary"])
    para += summary_note_nodes(app, fromdoc, docname)
    item = nodes.list_item("", para, classes=["kb-article"])
    if meta.get("tags"):
        tagline = nodes.paragraph(classes=["kb-tags"])
        for tag in meta["tags"]:
            tagline += nodes.inline(
                "", "", link(app, fromdoc, f"tags/{tag}", tags.get(tag, tag)), classes=["kb-tag"]
            )
            tagline += nodes.Text(" ")
        item += tagline
    return item


def reading_order(env) -> list[str]:
    """All documents in reading order, as computed once this build read every page."""
    return site(env)["reading_order"]


def _reading_order(env) -> list[str]:
    """All documents in reading order: the toctrees from the root, depth first."""
    seen: list[str] = []

    def walk(doc: str) -> None:
        for child in toctree_children(env, doc):
            if child not in seen:
                seen.append(child)
                walk(child)

    walk(env.config.root_doc)
    return seen


def guide_order(env, guide: str) -> list[str]:
    """The guide's articles in reading order, then those listed via also_in."""
    pages = documents(env, "pages")
    own = [d for d in toctree_children(env, f"{guide}/index") if d in pages]
    rest = sorted(d for d, m in pages.items() if m["guide"] == guide and d not in own)
    extra = sorted(d for d, m in pages.items() if guide in m.get("also_in", []))
    return own + rest + extra


def _render(app, node: kb_listing, fromdoc: str) -> list[nodes.Node]:
    env = app.env
    pages = documents(env, "pages")
    tags = load_tags(Path(app.config.kb_data_dir))
    guides = load_guides(Path(app.config.kb_data_dir))
    if node["kind"] == "guides":
        blist = nodes.bullet_list(classes=["kb-guides"])
        for g in guides:
            count = len(guide_order(env, g["key"]))
            para = nodes.paragraph()
            para += nodes.strong("", "", link(app, fromdoc, f"{g['key']}/index", g["title"]))
            para += nodes.Text(_("（{count} 篇）— {blurb}").format(count=count, blurb=g["blurb"]))
            blist += nodes.list_item("", para)
        return [blist]
    if node["kind"] == "guide":
        guide = fromdoc.split("/")[0]
        blist = nodes.enumerated_list(classes=["kb-article-list"], enumtype="arabic", prefix="", suffix=".")
        for doc in guide_order(env, guide):
            blist += _article_item(app, fromdoc, doc, pages[doc], tags)
        return [blist]
    out: list[nodes.Node] = []
    for g in guides:
        docs = [d for d in guide_order(env, g["key"]) if pages[d]["guide"] == g["key"]]
        if not docs:
            continue
        out.append(nodes.rubric("", g["title"], classes=["kb-guide-heading"]))
        blist = nodes.bullet_list(classes=["kb-article-list"])
        for doc in docs:
            blist += _article_item(app, fromdoc, doc, pages[doc], tags)
        out.append(blist)
    out.append(nodes.paragraph("", _("共 {count} 篇文章。").format(count=len(pages)), classes=["kb-count"]))
    return out


def on_doctree_resolved(app, doctree, docname: str) -> None:
    for node in list(doctree.findall(kb_listing)):
        node.replace_self(_render(app, node, docname))


def _canonical(value) -> str:
    """The same text for the same data in every process (sets sorted)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=sorted)


def listing_signature(env) -> dict:
    """Everything a listing page can show, per document."""
    stores = [documents(env, name) for name in SHOWN_IN_LISTINGS]
    return {
        doc: (
            env.titles[doc].astext() if doc in env.titles else None,
            tuple(toctree_children(env, doc)),
            *(_canonical(store.get(doc)) for store in stores),
        )
        for doc in env.found_docs
    }


def on_env_updated(app, env) -> None:
    """Every page is read: what this build's pages show of the others."""
    site(env)["reading_order"] = _reading_order(env)
    kb_output_state.record(app, "listings", listing_signature(env))


def listings_changed(app) -> bool:
    """Whether what listings show changed since the last complete build:
    compared with what the written pages show, not with the environment,
    which is saved before the pages are written (kb.site.output_state)."""
    return kb_output_state.current(app, "listings") != kb_output_state.before(app, "listings")


def on_env_get_updated(app, env) -> list[str]:
    """Pages that list other pages, when anything they show changed.

    Their listings are filled in at write time from the environment, so they
    need no re-reading (which would make every one-page edit a parallel read).
    """
    return sorted(documents(env, "listings")) if listings_changed(app) else []


def setup(app) -> dict[str, Any]:
    app.setup_extension("kb.core.store")
    app.setup_extension("kb.core.i18n")
    app.setup_extension("kb.pages.frontmatter")
    app.setup_extension("kb.site.output_state")
    app.add_node(kb_listing)
    app.add_directive("kb-article-list", ArticleList)
    app.add_directive("kb-guide-articles", GuideArticles)
    app.add_directive("kb-guides", Guides)
    app.connect("env-updated", on_env_updated)
    app.connect("env-get-updated", on_env_get_updated)
    app.connect("doctree-resolved", on_doctree_resolved)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 5}
