"""``llms.txt`` and ``llms-full.txt``: the site for language models (llmstxt.org).

Nothing to write in pages. After a website build (``kb.core.builders``):

- ``llms.txt``: the site's title, its summary as a quote, then one section
  per guide (``data/guides.yaml``, in order) listing each article as
  ``- [标题](URL): 摘要`` in reading order, and an ``Optional`` section with
  the other pages (术语表, 勘误 …);
- ``llms-full.txt``: every article as clean Markdown, in the same order:
  headings, paragraphs, lists, tables, code blocks with their language,
  diagrams as ```` ```mermaid ```` blocks, and each 编者注 as a quote
  titled 编者注 with its collapsed explanation and original. Links are
  absolute (``html_baseurl``). What the page adds around the text for
  readers (reading time, tags and related articles) is left out.

The Markdown is made from each article's page as it is written
(``html-page-context``: every ``doctree-resolved`` handler has run; in the
write workers under ``-j``) and kept in the doctree folder, so an
incremental build still writes every article. ``llms-full.txt`` is written
again only when what it is made of changed (``full_inputs``): a build that
writes no article leaves it as it was.

sphinx-llms-txt was considered: it concatenates the pages' *sources* (MyST
here, with front matter, ``:::{editor-note}`` fences and ``{term}`` roles,
not clean Markdown) and needs ``html_copy_source``; its Markdown output needs
another builder package and a second build.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from docutils import nodes
from sphinx import addnodes

from kb.core.builders import is_website
from kb.core.i18n import N_, _
from kb.core.log import getLogger
from kb.core.store import documents
from kb.editorial.notes import kb_summary
from kb.pages.frontmatter import load_guides
from kb.pages.listings import guide_order, reading_order, summary_notes, title_of, verdict_text

logger = getLogger(__name__)

CACHE = "kb-llms"
# the labels of docutils' admonitions that carry no title of their own
ADMONITION_LABELS = {
    "attention": N_("注意"),
    "caution": N_("小心"),
    "danger": N_("危险"),
    "error": N_("错误"),
    "hint": N_("提示"),
    "important": N_("重要"),
    "note": N_("注意"),
    "seealso": N_("参见"),
    "tip": N_("提示"),
    "warning": N_("警告"),
}
# added around the text for readers of the page: not part of the article
SKIPPED_CLASSES = {"kb-page-meta", "kb-article-footer", "headerlink"}
SKIPPED = (
    nodes.comment,
    nodes.target,
    nodes.raw,
    nodes.substitution_definition,
    nodes.system_message,
    addnodes.toctree,
    addnodes.index,
    nodes.meta,
)


class Markdown:
    """One page's doctree as Markdown; links made absolute from ``page_url``."""

    def __init__(self, page_url: str):
        self.page_url = page_url

    # -- blocks ---------------------------------------------------------------

    def blocks(self, node: nodes.Node, depth: int = 1) -> list[str]:
        out: list[str] = []
        for child in node.children:
            out += self.block(child, depth)
        return out

    def block(self, node: nodes.Node, depth: int) -> list[str]:
        if isinstance(node, SKIPPED) or SKIPPED_CLASSES & set(
            getattr(node, "get", lambda *a: [])("classes", [])
        ):
            return []
        if isinstance(node, nodes.section):
            title = next((c for c in node.children if isinstance(c, nodes.title)), None)
            head = [f"{'#' * min(depth, 6)} {self.inline(title)}"] if title is not None else []
            rest = [c for c in node.children if c is not title]
            return head + [b for c in rest for b in self.block(c, depth + 1)]
        if isinstance(node, nodes.paragraph | nodes.line_block):
            text = self.inline(node).strip()
            return [text] if text else []
        if isinstance(node, nodes.rubric | kb_summary):  # kb_summary: a {details} block's title
            return [f"**{self.inline(node).strip()}**"]
        if isinstance(node, nodes.literal_block):
            lang = node.get("language", "") if node.get("language") not in ("default", "none") else ""
            return [f"```{lang}\n{node.astext().rstrip(chr(10))}\n```"]
        if node.__class__.__name__ == "mermaid" and "code" in node:
            return [f"```mermaid\n{node['code']}\n```"]
        if isinstance(node, nodes.math_block):
            return [f"$$\n{node.astext()}\n$$"]
        if isinstance(node, nodes.bullet_list | nodes.enumerated_list):
            return [self.list(node, depth)]
        if isinstance(node, nodes.definition_list):
            items = []
            # its own items (each once: a definition holds lists of its own)
            for item in node.children:
                if not isinstance(item, nodes.definition_list_item):
                    continue
                term = self.inline(next((c for c in item.children if isinstance(c, nodes.term)), None))
                definition = next((c for c in item.children if isinstance(c, nodes.definition)), None)
                body = "\n\n".join(self.blocks(definition, depth) if definition is not None else [])
                items.append(f"**{term}**\n\n" + body)
            return items
        if isinstance(node, nodes.table):
            title = next((c for c in node.children if isinstance(c, nodes.title)), None)
            return [f"*{self.inline(title).strip()}*"] * (title is not None) + [self.table(node)]
        if isinstance(node, nodes.Admonition):
            # its own title (next_node would find a table's title inside it)
            title = next((c for c in node.children if isinstance(c, nodes.title)), None)
            if title is not None:
                label = self.inline(title)
            else:
                label = _(ADMONITION_LABELS[node.tagname]) if node.tagname in ADMONITION_LABELS else ""
            body = [b for c in node.children if c is not title for b in self.block(c, depth)]
            return [quote("\n\n".join([f"**{label}**"] * bool(label) + body))]
        if isinstance(node, nodes.block_quote):
            return [quote("\n\n".join(self.blocks(node, depth)))]
        if isinstance(node, nodes.image):
            return [self.image(node)]
        if isinstance(node, nodes.caption | nodes.title):
            return [f"*{self.inline(node).strip()}*"]
        if isinstance(node, nodes.TextElement):
            text = self.inline(node).strip()
            return [text] if text else []
        if isinstance(node, nodes.Element):
            return self.blocks(node, depth)  # containers, details, compound …
        text = node.astext().strip()
        return [text] if text else []

    def list(self, node: nodes.Element, depth: int) -> str:
        lines = []
        for i, item in enumerate(node.children, 1):
            mark = f"{i}. " if isinstance(node, nodes.enumerated_list) else "- "
            body = "\n\n".join(self.blocks(item, depth)).splitlines() or [""]
            lines.append(mark + body[0])
            lines += [(" " * len(mark) + line) if line else "" for line in body[1:]]
        return "\n".join(lines)

    def table(self, node: nodes.table) -> str:
        rows = []
        # its own rows (a cell may hold a table of its own, written in the cell)
        own = (
            row
            for group in node.children
            if isinstance(group, nodes.tgroup)
            for part in group.children
            if isinstance(part, nodes.thead | nodes.tbody)
            for row in part.children
            if isinstance(row, nodes.row)
        )
        for row in own:
            cells = [
                self.inline(entry).replace("|", "\\|").replace("\n", " ").strip() for entry in row.children
            ]
            rows.append(cells)
        if not rows:
            return ""
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * width]
        lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        return "\n".join(lines)

    def image(self, node: nodes.Element) -> str:
        return f"![{node.get('alt', '')}]({urljoin(self.page_url, node.get('uri', ''))})"

    # -- inline ---------------------------------------------------------------

    def inline(self, node: nodes.Node | None) -> str:
        if node is None:
            return ""
        if isinstance(node, nodes.Text):
            return node.astext()
        if isinstance(node, SKIPPED) or SKIPPED_CLASSES & set(node.get("classes", [])):
            return ""
        # each child once (a block in a block in a cell: twice per level was 2**depth)
        parts = [self.inline(c) for c in node.children]
        text = "".join(parts)
        if isinstance(node, nodes.strong):
            return f"**{text}**" if text.strip() else text
        if isinstance(node, nodes.emphasis):
            return f"*{text}*" if text.strip() else text
        if isinstance(node, nodes.literal):
            return f"`{node.astext()}`"
        if isinstance(node, nodes.reference):
            if node.get("refuri"):
                return f"[{text}]({urljoin(self.page_url, node['refuri'])})"
            if node.get("refid"):
                return f"[{text}]({self.page_url}#{node['refid']})"
            return text
        if isinstance(node, nodes.image):
            return self.image(node)
        if isinstance(node, nodes.line):
            return text + "\n"
        if isinstance(node, nodes.Element) and not isinstance(node, nodes.Inline | nodes.TextElement):
            return " ".join(parts)
        return text


def quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())


def to_markdown(doctree: nodes.Node, page_url: str) -> str:
    return "\n\n".join(b for b in Markdown(page_url).blocks(doctree) if b.strip()) + "\n"


def _cache(app) -> Path:
    return Path(app.doctreedir) / CACHE


def _page_url(app, doc: str) -> str:
    return urljoin(app.config.html_baseurl, app.builder.get_target_uri(doc))


def on_page_context(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """An article's Markdown, from the page as the reader gets it (every
    doctree-resolved handler has run). Written while the page is written, so
    under -j in the worker processes, not in the main one."""
    docname = pagename
    if doctree is None or not is_website(app.builder) or docname not in documents(app.env, "pages"):
        return
    path = _cache(app) / f"{docname}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_markdown(doctree, _page_url(app, docname)), encoding="utf-8")


def site_summary(app) -> str:
    root = app.config.root_doc
    meta = app.env.metadata.get(root, {}) if root in app.env.found_docs else {}
    return str(meta.get("summary") or "")


def llms_txt(app) -> str:
    env = app.env
    pages = documents(env, "pages")
    lines = [f"# {app.config.html_title or app.config.project}", ""]
    summary = site_summary(app)
    if summary:
        lines += [f"> {summary}", ""]
    lines += [
        _("面向工程师的 GPU 算力文章，按指南分组，每篇附一句话摘要；编者注指出原文的错误与更正。"),
        "",
        _("全部文章的 Markdown 全文：[llms-full.txt]({url})").format(
            url=urljoin(app.config.html_baseurl, "llms-full.txt")
        ),
        "",
    ]
    for guide in load_guides(Path(app.config.kb_data_dir)):
        # each article once, under its own guide (not the ones it is also listed in)
        docs = [d for d in guide_order(env, guide["key"]) if pages.get(d, {}).get("guide") == guide["key"]]
        if not docs:
            continue
        lines += [f"## {guide['title']}", ""]
        for doc in docs:
            notes = "".join(
                _("（{verdict} {url}）").format(
                    verdict=verdict_text(n), url=f"{_page_url(app, doc)}#{n['id']}"
                )
                for n in summary_notes(env, doc)
            )
            lines.append(
                f"- [{title_of(env, doc)}]({_page_url(app, doc)}): {pages[doc].get('summary', '')}{notes}"
            )
        lines.append("")
    root = app.config.root_doc
    others = [root] + [d for d in reading_order(env) if d not in pages and d != root and d in env.found_docs]
    if others:
        # "Optional" is llmstxt.org's own section name (tools may skip it): not translated
        lines += ["## Optional", ""]
        for doc in others:
            title = env.titles[doc].astext() if doc in env.titles else doc
            summary = env.metadata.get(doc, {}).get("summary")
            lines.append(f"- [{title}]({_page_url(app, doc)})" + (f": {summary}" if summary else ""))
        lines.append("")
    return "\n".join(lines)


def write_llms_full_txt(app, path: Path) -> None:
    """Every article's Markdown, in reading order, after the site's title.

    Written as bytes, one article's file after another (they are UTF-8
    already): at 1,000 articles the file is 27 MB, and decoding every file
    and joining them into one ``str`` took about 0.1 s of every edit build.
    Line ends become LF, as reading the files as text made them."""
    env = app.env
    pages = documents(env, "pages")
    head = [f"# {app.config.html_title or app.config.project}\n"]
    summary = site_summary(app)
    if summary:
        head.append(f"> {summary}\n")
    with path.open("wb") as out:
        out.write("\n".join(head).encode("utf-8"))
        for doc in [d for d in reading_order(env) if d in pages]:
            cached = _cache(app) / f"{doc}.md"
            if not cached.exists():
                logger.warning(
                    "KB109 no Markdown of %s for llms-full.txt: build again from an empty folder (make clean html)",
                    doc,
                    type="kb",
                    subtype="llms",
                )
                continue
            out.write(f"\n---\n\n{_('原文地址')}：{_page_url(app, doc)}\n\n".encode())
            out.write(cached.read_bytes().replace(b"\r\n", b"\n").replace(b"\r", b"\n"))


def full_inputs(app) -> str:
    """A digest of what llms-full.txt is made of: the site's title and
    summary, and each article in order with its URL and its Markdown file's
    size and time (the file is written again whenever its page is)."""
    env = app.env
    pages = documents(env, "pages")
    rows: list[Any] = [app.config.html_title or app.config.project, site_summary(app), _("原文地址")]
    for doc in reading_order(env):
        if doc in pages:
            cached = _cache(app) / f"{doc}.md"
            stat = cached.stat() if cached.is_file() else None
            rows.append([doc, _page_url(app, doc), stat and [stat.st_size, stat.st_mtime_ns]])
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode("utf-8")).hexdigest()


def on_build_finished(app, exception) -> None:
    if exception is not None or not is_website(app.builder) or not app.config.html_baseurl:
        return
    outdir = Path(app.outdir)
    (outdir / "llms.txt").write_text(llms_txt(app), encoding="utf-8")
    full, made_of = outdir / "llms-full.txt", _cache(app) / "llms-full.inputs"
    inputs = full_inputs(app)
    if full.is_file() and made_of.is_file() and made_of.read_text(encoding="utf-8") == inputs:
        return  # the same articles, URLs and Markdown as when it was written
    made_of.unlink(missing_ok=True)  # until the new file is complete
    write_llms_full_txt(app, full)
    made_of.parent.mkdir(parents=True, exist_ok=True)
    made_of.write_text(inputs, encoding="utf-8")


def setup(app) -> dict[str, Any]:
    app.setup_extension("kb.pages.listings")
    app.connect("html-page-context", on_page_context)
    app.connect("build-finished", on_build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
