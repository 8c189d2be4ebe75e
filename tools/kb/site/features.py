"""What readers expect of a documentation site, beyond the pages themselves.

- ``sitemap.xml``, ``robots.txt`` (pointing to it) and ``feed.xml`` (Atom,
  RFC 4287: one entry per article; its date is the front-matter ``date``
  where the article states one, else the page's last git commit; the feed's
  ``<updated>`` is its newest entry's), written after the build, with
  ``html_baseurl``;
- a ``404.html`` that works at any depth under the path the site is served
  from (``kb_served_at``: ``html_baseurl``, or on Read the Docs its
  ``/zh-cn/<version>/``): a ``<base href>`` to that path; ``noindex``, and no
  canonical link (it stands for no page of its own);
- OpenGraph meta with the Chinese title and the article summary;
- the last-updated date of each page from git, read in one ``git log`` call;
  outside a git checkout, or in a shallow clone where a page's history is
  cut off, the date is left out quietly rather than shown wrong;
- all of it on the website only (``kb.core.builders.is_website``): epub,
  LaTeX, text and the other builders get none of these files;
- reading time under an article's title, counting Chinese characters
  (about 400 a minute) and Latin words (about 200 a minute) separately: a
  word count that splits on spaces sees a Chinese paragraph as one word.
"""

from __future__ import annotations

import math
import re
import subprocess
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlparse

from docutils import nodes

from kb.core.builders import is_website
from kb.core.i18n import _
from kb.core.log import getLogger
from kb.core.store import documents, site
from kb.pages.frontmatter import load_tags
from kb.pages.listings import summary_notes, title_of, verdict_text

logger = getLogger(__name__)

CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
LATIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


def reading_minutes(text: str) -> int:
    cjk = len(CJK.findall(text))
    words = len(LATIN_WORD.findall(CJK.sub(" ", text)))
    return max(1, math.ceil(cjk / 400 + words / 200))


def git_dates(root: Path) -> dict[str, str]:
    """Last commit date (YYYY-MM-DD) of every file under ``root``, by path relative to it."""
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        shallow = subprocess.run(
            ["git", "rev-parse", "--is-shallow-repository"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        log = subprocess.run(
            ["git", "log", "--format=@%cs", "--name-only", "--", "."],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    dates: dict[str, str] = {}
    date = None
    for line in log.splitlines():
        if line.startswith("@"):
            date = line[1:]
        elif line.strip() and date:
            path = (Path(top) / line).resolve()
            try:
                rel = path.relative_to(root.resolve()).as_posix()
            except ValueError:
                continue
            dates.setdefault(rel, date)
    if shallow == "true":
        # The oldest commit of a shallow clone stands for all earlier history:
        # a file last changed there has no trustworthy date.
        oldest = min(dates.values(), default=None)
        dates = {k: v for k, v in dates.items() if v != oldest}
    return dates


def on_builder_inited(app) -> None:
    # read once per build; the pages written in this build show them
    site(app.env)["git_dates"] = git_dates(Path(app.srcdir)) if app.builder.format == "html" else {}


def last_commit(app, docname: str) -> str | None:
    """The date of the last commit of a document's source, if git knows it."""
    if docname not in app.env.found_docs:
        return None
    return site(app.env)["git_dates"].get(app.env.doc2path(docname, False).as_posix())


def on_doctree_resolved(app, doctree, docname: str) -> None:
    """Reading time (and last update) under an article's H1."""
    if docname not in documents(app.env, "pages") or app.builder.format != "html":
        return
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        return
    minutes = reading_minutes(section.astext())
    line = nodes.paragraph(classes=["kb-page-meta"])
    line += nodes.Text(_("阅读时间约 {minutes} 分钟").format(minutes=minutes))
    date = last_commit(app, docname)
    if date:
        line += nodes.Text(" · " + _("最后更新：{date}").format(date=date))
    title = section.next_node(nodes.title)
    title.parent.insert(title.parent.index(title) + 1, line)


def _summary(app, pagename: str) -> str:
    meta = documents(app.env, "pages").get(pagename, {})
    if meta:
        return meta.get("summary", "")
    return app.env.metadata.get(pagename, {}).get("summary", "") if pagename in app.env.found_docs else ""


def served_path(app) -> str:
    """The URL path the site is served from (``/``, ``/zh-cn/latest/`` …)."""
    path = urlparse(app.config.kb_served_at or app.config.html_baseurl).path or "/"
    return path if path.endswith("/") else path + "/"


def on_page_context(app, pagename, templatename, context, doctree) -> None:
    base = app.config.html_baseurl
    context["kb_page_url"] = urljoin(base, app.builder.get_target_uri(pagename)) if base else ""
    context["kb_summary"] = _summary(app, pagename)
    if context.get("kb_not_found"):
        # served for any missing URL: its links resolve from the site's own
        # path, it is not a page to index, and no URL is its canonical one
        # (pageurl and metatags: documented template variables)
        context["kb_base_path"] = served_path(app)
        context["kb_page_url"] = ""
        context["pageurl"] = None
        context["metatags"] = context.get("metatags", "") + '\n<meta name="robots" content="noindex">'
    date = last_commit(app, pagename)
    if date:
        context["last_updated"] = date


# sphinx-notfound-page (Read the Docs' extension) was considered for the 404
# page: it rewrites every URL of the page to an absolute one through Sphinx's
# undocumented setup_css_tag_helper/setup_js_tag_helper, and off Read the Docs
# its prefix defaults to /en/latest/. One <base href> to the served path does
# the same with documented template variables, and no dependency.
def on_collect_pages(app):
    if not is_website(app.builder):  # a book or a single page has no 404 page
        return
    rel = app.builder.get_relative_uri
    links = [
        ("index", _("回到首页")),
        ("articles", _("浏览全部文章")),
        ("search", _("搜索本站")),
    ]
    items = "".join(
        f'<li><a href="{escape(rel("404", doc))}">{escape(text)}</a></li>'
        for doc, text in links
        if doc in app.env.found_docs or doc == "search"
    )
    body = (
        f'<section id="not-found"><h1>{escape(_("页面不存在（404）"))}</h1>'
        f"<p>{escape(_('你要找的页面不存在，可能已经移动或改名。'))}</p>"
        f"<ul>{items}</ul></section>"
    )
    yield "404", {"title": _("页面不存在"), "body": body, "kb_not_found": True}, "page.html"


def _article_dates(app) -> list[tuple[str, str]]:
    out = []
    for doc, meta in documents(app.env, "pages").items():
        date = str(meta.get("date") or last_commit(app, doc) or "")
        out.append((doc, date))
    return out


# sphinx-sitemap was considered for sitemap.xml: it lists every page written
# (404 and search included, unless excluded one by one), its default URL
# scheme puts language and version in the path ({lang}{version}{link}: here
# zh_CN/2026.12/), and its lastmod needs sphinx-last-updated-by-git, which
# reads git per page. This sitemap is the documents and the tag pages, with
# the dates of the one `git log` the pages already show.
def write_sitemap(app, outdir: Path, base: str) -> None:
    pages = sorted(set(app.env.found_docs) | {f"tags/{t}" for t in _tag_slugs(app)})
    rows = []
    for doc in pages:
        url = escape(urljoin(base, app.builder.get_target_uri(doc)))
        date = last_commit(app, doc)
        lastmod = f"<lastmod>{date}</lastmod>" if date else ""
        rows.append(f"  <url><loc>{url}</loc>{lastmod}</url>")
    (outdir / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + "\n".join(rows) + "\n</urlset>\n",
        encoding="utf-8",
    )


def write_robots(outdir: Path, base: str) -> None:
    """Every page may be crawled; the sitemap lists them (robots.txt is read
    at a host's root: on a host of its own, this file is the one served)."""
    (outdir / "robots.txt").write_text(
        f"User-agent: *\nAllow: /\n\nSitemap: {urljoin(base, 'sitemap.xml')}\n", encoding="utf-8"
    )


def write_feed(app, outdir: Path, base: str) -> None:
    """Atom (RFC 4287): the feed's author is the site's; an article that names
    its author (front matter) has its own; the feed is as new as its newest entry."""
    pages = documents(app.env, "pages")
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    dated = sorted(
        ((doc, _rfc3339(date or today)) for doc, date in _article_dates(app)),
        key=lambda x: (x[1], x[0]),
        reverse=True,
    )
    entries = []
    for doc, when in dated:
        meta = pages[doc]
        url = escape(urljoin(base, app.builder.get_target_uri(doc)))
        author = f"    <author><name>{escape(meta['author'])}</name></author>\n" if meta.get("author") else ""
        notes = "".join(
            _("（{verdict}）").format(verdict=verdict_text(n)) for n in summary_notes(app.env, doc)
        )
        entries.append(
            f"  <entry>\n    <title>{escape(title_of(app.env, doc))}</title>\n"
            f'    <link href="{url}"/>\n    <id>{url}</id>\n    <updated>{when}</updated>\n{author}'
            f"    <summary>{escape(meta.get('summary', '') + notes)}</summary>\n  </entry>"
        )
    newest = max((when for _, when in dated), default=_rfc3339(today))
    (outdir / "feed.xml").write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="zh-CN">\n'
        f"  <title>{escape(app.config.html_title)}</title>\n"
        f'  <link href="{escape(base)}"/>\n  <link rel="self" href="{escape(urljoin(base, "feed.xml"))}"/>\n'
        f"  <id>{escape(base)}</id>\n  <updated>{newest}</updated>\n"
        f"  <author><name>{escape(app.config.author)}</name></author>\n" + "\n".join(entries) + "\n</feed>\n",
        encoding="utf-8",
    )


def on_build_finished(app, exception) -> None:
    if exception is not None or not is_website(app.builder):
        return
    base = app.config.html_baseurl
    if not base:
        logger.warning(
            "KB109 html_baseurl is not set in conf.py: no sitemap.xml, robots.txt or feed.xml; set it to the site's address",
            type="kb",
            subtype="site",
        )
        return
    outdir = Path(app.outdir)
    write_sitemap(app, outdir, base)
    write_robots(outdir, base)
    write_feed(app, outdir, base)


def _rfc3339(date: str) -> str:
    parts = (date + "-01-01")[:10] if len(date) == 4 else (date + "-01" if len(date) == 7 else date)
    return f"{parts}T00:00:00Z"


def _tag_slugs(app) -> list[str]:
    return list(load_tags(Path(app.config.kb_data_dir)))


def setup(app) -> dict[str, Any]:
    app.setup_extension("kb.core.store")
    app.setup_extension("kb.pages.frontmatter")
    # where the site is served (a URL or a path): the 404 page's links resolve from it
    app.add_config_value("kb_served_at", "", "html", types=[str])
    app.connect("builder-inited", on_builder_inited)
    app.connect("doctree-resolved", on_doctree_resolved)
    app.connect("html-page-context", on_page_context)
    app.connect("html-collect-pages", on_collect_pages)
    app.connect("build-finished", on_build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
