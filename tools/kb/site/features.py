"""What readers expect of a documentation site, beyond the pages themselves.

- ``sitemap.xml`` and ``feed.xml`` (Atom, one entry per article; its date is
  the front-matter ``date`` where the article states one, else the page's
  last git commit), written after the HTML build, with ``html_baseurl``;
- a ``404.html`` that works at any depth (``<base href>`` to the site root);
- OpenGraph meta with the Chinese title and the article summary;
- the last-updated date of each page from git, read in one ``git log`` call;
  outside a git checkout, or in a shallow clone where a page's history is
  cut off, the date is left out quietly rather than shown wrong;
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
from sphinx.util import logging

from kb.core.store import documents, site
from kb.pages.frontmatter import load_tags
from kb.pages.listings import title_of

logger = logging.getLogger(__name__)

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
    if docname not in app.env.all_docs:
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
    line += nodes.Text(f"阅读时间约 {minutes} 分钟")
    date = last_commit(app, docname)
    if date:
        line += nodes.Text(f" · 最后更新：{date}")
    title = section.next_node(nodes.title)
    title.parent.insert(title.parent.index(title) + 1, line)


def _summary(app, pagename: str) -> str:
    meta = documents(app.env, "pages").get(pagename, {})
    if meta:
        return meta.get("summary", "")
    return app.env.metadata.get(pagename, {}).get("summary", "") if pagename in app.env.all_docs else ""


def on_page_context(app, pagename, templatename, context, doctree) -> None:
    base = app.config.html_baseurl
    context["kb_page_url"] = urljoin(base, app.builder.get_target_uri(pagename)) if base else ""
    context["kb_summary"] = _summary(app, pagename)
    context["kb_base_path"] = urlparse(base).path or "/"
    date = last_commit(app, pagename)
    if date:
        context["last_updated"] = date


def on_collect_pages(app):
    body = (
        '<section id="not-found"><h1>页面不存在（404）</h1>'
        "<p>你要找的页面不存在，可能已经移动或改名。</p>"
        '<ul><li><a href="index.html">回到首页</a></li>'
        '<li><a href="articles.html">浏览全部文章</a></li>'
        '<li><a href="search.html">搜索本站</a></li></ul></section>'
    )
    yield "404", {"title": "页面不存在", "body": body, "kb_not_found": True}, "page.html"


def _article_dates(app) -> list[tuple[str, str]]:
    out = []
    for doc, meta in documents(app.env, "pages").items():
        date = str(meta.get("date") or last_commit(app, doc) or "")
        out.append((doc, date))
    return out


def on_build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    base = app.config.html_baseurl
    if not base:
        logger.warning("html_baseurl is not set: no sitemap.xml or feed.xml", type="kb", subtype="site")
        return
    outdir = Path(app.outdir)
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
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    entries = []
    dated = sorted(_article_dates(app), key=lambda x: (x[1] or today, x[0]), reverse=True)
    for doc, date in dated:
        meta = documents(app.env, "pages")[doc]
        when = _rfc3339(date or today)
        url = escape(urljoin(base, app.builder.get_target_uri(doc)))
        entries.append(
            f"  <entry>\n    <title>{escape(title_of(app.env, doc))}</title>\n"
            f'    <link href="{url}"/>\n    <id>{url}</id>\n    <updated>{when}</updated>\n'
            f"    <summary>{escape(meta.get('summary', ''))}</summary>\n  </entry>"
        )
    newest = max((_rfc3339(d) for _, d in dated if d), default=_rfc3339(today))
    (outdir / "feed.xml").write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="zh-CN">\n'
        f"  <title>{escape(app.config.html_title)}</title>\n"
        f'  <link href="{escape(base)}"/>\n  <link rel="self" href="{escape(urljoin(base, "feed.xml"))}"/>\n'
        f"  <id>{escape(base)}</id>\n  <updated>{newest}</updated>\n" + "\n".join(entries) + "\n</feed>\n",
        encoding="utf-8",
    )


def _rfc3339(date: str) -> str:
    parts = (date + "-01-01")[:10] if len(date) == 4 else (date + "-01" if len(date) == 7 else date)
    return f"{parts}T00:00:00Z"


def _tag_slugs(app) -> list[str]:
    return list(load_tags(Path(app.config.kb_data_dir)))


def setup(app) -> dict[str, Any]:
    app.setup_extension("kb.core.store")
    app.setup_extension("kb.pages.frontmatter")
    app.connect("builder-inited", on_builder_inited)
    app.connect("doctree-resolved", on_doctree_resolved)
    app.connect("html-page-context", on_page_context)
    app.connect("html-collect-pages", on_collect_pages)
    app.connect("build-finished", on_build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
