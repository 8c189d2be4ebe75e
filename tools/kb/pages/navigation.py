"""A sidebar navigation whose size does not grow with the number of articles.

furo renders the whole site toctree into every page, so each page's HTML and
the build time grow with the article count (issue 8 measured 163 KB per page
and 20 minutes at 1,000 articles). This extension hands furo a bounded tree
instead: the guides, and inside the current guide only a window of articles
around the current page, with a link to the guide's landing page that lists
them all. Nothing to write in pages; the order is the toctrees' order.

The window is ``kb_nav_window`` articles (default 9). Previous / next links
at the bottom of a page follow the toctrees across guides, so the site reads
straight through: the last article of 训练 leads on to 推理.
"""

from __future__ import annotations

from html import escape
from typing import Any

from kb.core.i18n import _
from kb.core.store import toctree_children
from kb.pages.listings import reading_order
from kb.site import output_state as kb_output_state

# The one call of Sphinx's ``toctree`` template function that this answers
# with the bounded tree: furo's, for its sidebar (the whole site, all levels).
# furo has no option to bound or skip that tree (pradyunsg/furo#674, open;
# #128 declined), so its call is answered here, and any other call goes to
# Sphinx's own function. tests/test_ext_navigation.py fails if furo stops
# making this call from its html-page-context handler, after this one.
SIDEBAR_CALL = {"collapse": False, "titles_only": True, "maxdepth": -1, "includehidden": True}


def _title(env, docname: str) -> str:
    node = env.titles.get(docname)
    return node.astext() if node is not None else docname


def window(items: list[str], current: str | None, size: int) -> tuple[int, int]:
    """Start and end of a ``size``-long slice of ``items`` centred on ``current``."""
    if len(items) <= size:
        return 0, len(items)
    pos = items.index(current) if current in items else 0
    start = max(0, min(pos - size // 2, len(items) - size))
    return start, start + size


def render(app, pagename: str) -> str:
    """HTML shaped like Sphinx's toctree output, for furo's sidebar."""
    env, builder = app.env, app.builder
    root = app.config.root_doc
    size = app.config.kb_nav_window

    def link(doc: str, text: str, level: int, current: bool, children: str = "") -> str:
        classes = f"toctree-l{level}" + (" current" if current else "")
        if doc == pagename:
            classes += " current-page"
        href = builder.get_relative_uri(pagename, doc)
        a_cls = "current reference internal" if doc == pagename else "reference internal"
        return (
            f'<li class="{classes}"><a class="{a_cls}" href="{escape(href)}">'
            f"{escape(text)}</a>{children}</li>"
        )

    items = []
    for top in toctree_children(env, root):
        kids = toctree_children(env, top)
        in_here = pagename == top or pagename in kids
        sub = ""
        if kids and in_here:
            start, end = window(kids, pagename, size)
            rows = [link(d, _title(env, d), 2, d == pagename) for d in kids[start:end]]
            if end - start < len(kids):
                more = _("全部 {count} 篇……").format(count=len(kids))
                rows.append(
                    f'<li class="toctree-l2 kb-nav-more"><a class="reference internal" '
                    f'href="{escape(builder.get_relative_uri(pagename, top))}">{escape(more)}</a></li>'
                )
            sub = f'<ul class="current">{"".join(rows)}</ul>' if rows else ""
        items.append(link(top, _title(env, top), 1, in_here, sub))
    return f'<ul class="current">{"".join(items)}</ul>' if items else ""


class Toctree:
    """Sphinx's ``toctree`` template function for one page, except for the
    sidebar's call (SIDEBAR_CALL), which gets the bounded tree."""

    def __init__(self, app, pagename: str, sphinx_toctree) -> None:
        # private: templates are contributed, and Jinja's sandbox lets them read
        # any public attribute (``toctree.app.srcdir.parent`` reached every file
        # of the machine through pathlib) but none that starts with "_"
        self._app, self._pagename, self._sphinx_toctree = app, pagename, sphinx_toctree

    def __call__(self, **kwargs) -> str:
        if kwargs == SIDEBAR_CALL:
            return render(self._app, self._pagename)
        return self._sphinx_toctree(**kwargs)


def on_page_context(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    if "toctree" in context:
        context["toctree"] = Toctree(app, pagename, context["toctree"])


def neighbours(env) -> dict[str, tuple[str | None, str | None]]:
    """(previous, next) of each page in the site's reading order, the root
    first: what Sphinx shows as 上一篇 / 下一篇 (its ``collect_relations``,
    which is not in its documented API; tests/test_ext_navigation.py checks
    the two agree)."""
    order = [env.config.root_doc, *reading_order(env)]
    return {
        doc: (order[i - 1] if i else None, order[i + 1] if i + 1 < len(order) else None)
        for i, doc in enumerate(order)
    }


def nav_shown(app, env) -> dict[str, tuple]:
    """Per page, the titles its sidebar and previous / next links show."""
    tops = toctree_children(env, app.config.root_doc)
    shown_tops = tuple((t, _title(env, t)) for t in tops)
    guide_of = {top: top for top in tops}
    for top in tops:
        for kid in toctree_children(env, top):
            guide_of.setdefault(kid, top)
    relations = neighbours(env)
    shown = {}
    for doc in env.found_docs:
        sidebar: tuple = ()
        if doc in guide_of:
            kids = toctree_children(env, guide_of[doc])
            start, end = window(kids, doc, app.config.kb_nav_window)
            sidebar = (len(kids), *((d, _title(env, d)) for d in kids[start:end]))
        near = relations.get(doc, (None, None))
        shown[doc] = (shown_tops, sidebar, tuple((d, _title(env, d)) if d else None for d in near))
    return shown


def on_env_get_updated(app, env) -> list[str]:
    """Pages whose sidebar or previous / next show a title that changed,
    compared with what the written pages show (kb.site.output_state)."""
    shown = nav_shown(app, env)
    before = kb_output_state.before(app, "nav")
    kb_output_state.record(app, "nav", shown)
    if before is None:
        return sorted(shown)
    return sorted(doc for doc, row in shown.items() if before.get(doc) != row)


def setup(app) -> dict[str, Any]:
    app.setup_extension("kb.core.i18n")
    app.add_config_value("kb_nav_window", 9, "html", types=[int])
    app.setup_extension("kb.site.output_state")
    app.setup_extension("kb.pages.listings")  # the reading order, set at env-updated
    app.connect("env-get-updated", on_env_get_updated)
    # before furo's handler (priority 500), which calls context["toctree"]
    app.connect("html-page-context", on_page_context, priority=400)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
