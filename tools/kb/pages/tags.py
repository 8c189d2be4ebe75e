"""Tag pages, and the 标签 / 相关文章 block at the end of every article.

Nothing to write in pages: the tags come from front matter (vocabulary and
Chinese names in ``data/tags.yaml``), and

- ``tags/<tag>.html`` lists the articles with that tag, ``tags/index.html``
  every tag with its count (pages generated at write time, no sources);
- every article ends with its tags (linked to their pages) and 相关文章: the
  three articles sharing the most tags with it (same guide breaks ties, then
  nearness in reading order), after its 关键词 (front-matter ``keywords``, if any).

Incremental builds stay correct: after reading, the related lists are
recomputed (when anything listings show changed) and every article whose
list, or a title in it, changed is written again, even if its own source did
not change. The lists of this build are ``site(env)["related"]``.
"""

from __future__ import annotations

import heapq
from html import escape
from pathlib import Path
from typing import Any

from docutils import nodes

from kb.core.anchors import KEYWORDS_ID
from kb.core.builders import is_website
from kb.core.i18n import _
from kb.core.store import documents, site
from kb.pages.frontmatter import load_tags
from kb.pages.listings import link, listings_changed, reading_order, summary_notes, title_of, verdict_text
from kb.site import output_state as kb_output_state

RELATED = 3


def _tags(app) -> dict[str, str]:
    return load_tags(Path(app.config.kb_data_dir))


def related_all(env) -> dict[str, list[str]]:
    """For every article, the RELATED articles sharing most tags (then guide, then order).

    They depend on the articles' tags and guides and the reading order, not
    on titles: the lists are kept in the environment with those, and a build
    where none of them changed (a title edit) does not rank every article
    again (0.6 s at 1,000 articles)."""
    pages = documents(env, "pages")
    order = reading_order(env)
    made_of = (  # copies: the environment's lists may change in place
        tuple(order),
        tuple(
            sorted(
                (d, tuple(m.get("tags", [])), m["guide"], tuple(m.get("also_in", [])))
                for d, m in pages.items()
            )
        ),
    )
    kept = site(env).get("related_of")
    if kept is not None and kept[0] == made_of:
        return kept[1]
    out = _rank_related(pages, order)
    site(env)["related_of"] = (made_of, out)
    return out


def _rank_related(pages: dict[str, dict], order: list[str]) -> dict[str, list[str]]:
    pos = {doc: i for i, doc in enumerate(order)}
    by_tag: dict[str, list[str]] = {}
    for doc, meta in pages.items():
        for tag in meta.get("tags", []):
            by_tag.setdefault(tag, []).append(doc)
    guides = {d: {m["guide"], *m.get("also_in", [])} for d, m in pages.items()}
    out = {}
    for doc, meta in pages.items():
        shared: dict[str, int] = {}
        for tag in meta.get("tags", []):
            for other in by_tag[tag]:
                if other != doc:
                    shared[other] = shared.get(other, 0) + 1
        if len(shared) < RELATED:  # same guide, no shared tag: still related, after those
            for other in pages:
                if other != doc and other not in shared and guides[doc] & guides[other]:
                    shared[other] = 0

        here = pos.get(doc, len(pos))

        def rank(other: str, doc=doc, shared=shared, here=here):
            # ties go to the nearest articles in reading order, not to the
            # first ones of the guide: every article would otherwise list the
            # same few, and a title edit there would rewrite them all
            there = pos.get(other, len(pos))
            return (-shared[other], not (guides[doc] & guides[other]), abs(there - here), there, other)

        out[doc] = heapq.nsmallest(RELATED, shared, key=rank)
    return out


def on_env_get_updated(app, env) -> list[str]:
    """Articles whose 相关文章 list changed because another page changed."""
    before = kb_output_state.before(app, "related")
    if not listings_changed(app) and before is not None and "related" in site(env):
        return []  # no title, tag, guide or page changed: every list is as it was
    shown = {d: [(r, title_of(env, r)) for r in rows] for d, rows in related_all(env).items()}
    site(env)["related"] = shown  # what the pages written now show
    # compared with what the written pages show (kb.site.output_state), not with
    # the environment, which is saved before the pages are written
    kb_output_state.record(app, "related", shown)
    return sorted(d for d, rows in shown.items() if (before or {}).get(d) != rows)


def on_doctree_resolved(app, doctree, docname: str) -> None:
    env = app.env
    pages = documents(env, "pages")
    if docname not in pages or app.builder.format != "html":
        return
    meta = pages[docname]
    names = _tags(app)
    footer = nodes.container(classes=["kb-article-footer"])
    tagline = nodes.paragraph(classes=["kb-tags"])
    tagline += nodes.strong("", _("标签："))
    for tag in meta.get("tags", []):
        tagline += nodes.inline(
            "", "", link(app, docname, f"tags/{tag}", names.get(tag, tag)), classes=["kb-tag"]
        )
        tagline += nodes.Text(" ")
    footer += tagline
    rows = [doc for doc, _title in site(env).get("related", {}).get(docname, [])]
    if rows:
        footer += nodes.rubric("", _("相关文章"), classes=["kb-related-heading"])
        blist = nodes.bullet_list(classes=["kb-related"])
        for doc in rows:
            para = nodes.paragraph()
            para += link(app, docname, doc, title_of(env, doc))
            blist += nodes.list_item("", para)
        footer += blist
    section = next(iter(doctree.findall(nodes.section)), None)
    end = section if section is not None else doctree
    # front-matter keywords (other names, English names) are indexed for
    # search (unlike the footer, which names other pages), not shown; their
    # id tells the search page where the page's text ends (a result's
    # excerpt never shows them: _static/kb-search/excerpt.js)
    if meta.get("keywords"):
        keywords = nodes.paragraph(classes=["kb-keywords"], ids=[KEYWORDS_ID])
        keywords += nodes.strong("", _("关键词："))
        keywords += nodes.Text(" · ".join(meta["keywords"]))
        end.append(keywords)
    end.append(footer)


def _page(app, pagename: str, title: str, items: list[tuple[str, str, str, list]], intro: str):
    """A generated page: a list of links, each with its text (a summary, a
    count) and the notes that correct that summary, as (href, verdict):
    links that show a note's verdict (kb-note-ref, as kb.editorial.notes
    marks them on the pages), which the search index leaves out."""
    rows = "".join(
        f'<li><a class="reference internal" href="{escape(href)}">{escape(text)}</a>'
        f"{' — ' + escape(note) if note else ''}"
        + "".join(
            f'{escape(_("（"))}<a class="kb-note-ref reference internal" href="{escape(at)}">{escape(verdict)}</a>'
            f"{escape(_('）'))}"
            for at, verdict in notes
        )
        + "</li>"
        for href, text, note, notes in items
    )
    body = (
        f'<section id="tag-page"><h1>{escape(title)}</h1><p>{escape(intro)}</p>'
        f'<ul class="kb-tag-list">{rows}</ul></section>'
    )
    return pagename, {"title": title, "body": body}, "page.html"


def on_collect_pages(app):
    if not is_website(app.builder):  # a book or a single page has no tag pages
        return
    env = app.env
    pages = documents(env, "pages")
    names = _tags(app)
    pos = {doc: i for i, doc in enumerate(reading_order(env))}
    by_tag: dict[str, list[str]] = {tag: [] for tag in names}
    for doc in sorted(pages, key=lambda d: (pos.get(d, 1e9), d)):
        for tag in pages[doc].get("tags", []):
            by_tag.setdefault(tag, []).append(doc)
    rel = app.builder.get_relative_uri
    for tag, docs in by_tag.items():
        page = f"tags/{tag}"
        items = [
            (
                rel(page, d),
                title_of(env, d),
                pages[d].get("summary", ""),
                [(f"{rel(page, d)}#{n['id']}", verdict_text(n)) for n in summary_notes(env, d)],
            )
            for d in docs
        ]
        yield _page(
            app,
            page,
            _("标签：{tag}").format(tag=names.get(tag, tag)),
            items,
            _("共 {count} 篇文章带有这个标签。").format(count=len(docs)),
        )
    items = [
        (rel("tags/index", f"tags/{t}"), names.get(t, t), _("{count} 篇").format(count=len(d)), [])
        for t, d in by_tag.items()
    ]
    yield _page(app, "tags/index", _("全部标签"), items, _("按标签浏览文章。"))


def setup(app) -> dict[str, Any]:
    app.setup_extension("kb.pages.listings")
    app.connect("env-get-updated", on_env_get_updated)
    app.connect("doctree-resolved", on_doctree_resolved)
    app.connect("html-collect-pages", on_collect_pages)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 4}
