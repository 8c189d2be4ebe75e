"""编者注: the editors' corrections, next to the author's original.

In a page::

    :::{editor-note}
    :label: inference-cost-depreciation
    :kind: figure
    :date: 2026-12-01
    **硬件折旧一行算不出 0.0009 元/秒。** 按表中的输入重算……
    :::

renders an admonition titled 编者注 (class ``editor-note``). ``:label:``
makes the note a reference target (``{ref}`` shows its verdict sentence)
and keeps its anchor stable: ``note-`` and ASCII kebab-case (KB022),
no other element's id on the page (KB023), no other page's label
(KB024, kb.core.labels). ``:kind:``
says what kind of error it is (see KINDS) and ``:date:`` when the editors
checked it (the sources' reading date); both are required (KB021). The
first sentence is the verdict, one line; a long explanation goes below it
in ``{details}``, and a quoted original in ``{original}``, both collapsed.

Every note is collected per document (merged and purged per document), and

    ```{kb-editor-notes}
    ```

lists them all, grouped by verdict (更正, 未能核实, 补充说明) and by
article: the section, the kind, the date and the whole verdict sentence,
linked to the note (the 勘误与编者注 page). A note without text is a warning.

``{details} 标题`` and ``{original}`` render as ``<details>``: collapsed,
opened by the reader. Every code block inside ``{original}`` is the
author's original, shown as such: 原文·勿照抄 next to its copy button.
"""

from __future__ import annotations

import datetime
import re
from collections import Counter
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from kb.core import data as kb_data
from kb.core import labels as kb_labels
from kb.core.i18n import N_, _
from kb.core.log import getLogger
from kb.core.store import documents
from kb.guard.untrusted import own
from kb.pages.frontmatter import find_front_matter, parse
from kb.pages.listings import holds_listing, reading_order

logger = getLogger(__name__)

TITLE = N_("编者注")

# What a note corrects: the key written in :kind:, the name readers see, and
# the verdict it belongs to on the 勘误 page.
KINDS = {
    "code": (N_("代码有误"), N_("更正")),
    "figure": (N_("数字或计算有误"), N_("更正")),
    "fact": (N_("事实有误"), N_("更正")),
    "outdated": (N_("内容过时"), N_("更正")),
    "conclusion": (N_("结论有误"), N_("更正")),
    "title": (N_("标题与正文不符"), N_("更正")),
    "unsourced": (N_("未找到来源"), N_("未能核实")),
    "clarification": (N_("补充说明"), N_("补充说明")),
}
VERDICTS = (N_("更正"), N_("未能核实"), N_("补充说明"))
DATE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
# a note's label is its anchor: note- and ASCII kebab-case, as slugs are
# (docutils' make_id drops other characters and leading digits: 编者注甲
# made no anchor, note-甲 and note-乙 one anchor, 2024-fix and 2025-fix one)
LABEL = re.compile(r"note(?:-[a-z0-9]+)+\Z")


class editor_notes_list(nodes.General, nodes.Element):
    """Placeholder for the list of notes, filled in ``doctree-resolved``."""


class editor_notes_html(nodes.General, nodes.Element):
    """The list of notes for the HTML writer: its ``groups`` (``note_groups``),
    rendered by ``visit_notes_html``."""


def _first_sentence(text: str) -> str:
    """The note's first sentence, whole: up to the first 。！？ (with any closing
    quote or bracket after it), or ! ? followed by a space."""
    text = re.sub(r"\s+", " ", text).strip()
    match = re.search(r"^(.+?(?:[。！？][”’」』）)]*|[!?](?=\s|$)))", text)
    return match.group(1) if match else text


def _verdict(note: nodes.Element) -> str:
    """The verdict a note opens with: its leading bold sentence (the convention,
    see CONTRIBUTING), else its first sentence."""
    first = next((child for child in note.children[1:] if isinstance(child, nodes.paragraph)), None)
    if first is not None and first.children and isinstance(first.children[0], nodes.strong):
        return re.sub(r"\s+", " ", first.children[0].astext()).strip()
    return _first_sentence(_verdict_text(note))


def _is_date(text: str) -> bool:
    """Whether ``text`` is a day of the calendar as YYYY-MM-DD (not 2026-02-30)."""
    if not DATE.match(text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


class EditorNote(SphinxDirective):
    has_content = True
    option_spec = {
        "label": directives.unchanged,
        "class": directives.class_option,
        # checked in run (KB021): docutils' own check would report a kind
        # not in KINDS without a KB code, then run the note without it
        "kind": directives.unchanged,
        "date": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        if not self.content:
            logger.warning(
                "KB020 empty 编者注: say what is wrong, the corrected form and why",
                location=self.get_location(),
                type="kb",
                subtype="editor-note",
            )
            return []
        kind, date = self.options.get("kind"), self.options.get("date", "")
        if kind not in KINDS or not _is_date(date):
            logger.warning(
                "KB021 编者注 needs :kind: (one of %s) and :date: (YYYY-MM-DD, when the sources were read); "
                "it has kind %r and date %r",
                ", ".join(KINDS),
                kind or "",
                date,
                location=(self.env.docname, self.lineno),
                type="kb",
                subtype="editor-note",
            )
        # the class marks a 编者注 (KB086 refuses it on a page's other elements)
        node = own(nodes.admonition(classes=["editor-note", *self.options.get("class", [])]), "editor-note")
        self.set_source_info(node)
        node += nodes.title("", _(TITLE))
        node += self.parse_content_to_nodes(allow_section_headings=False)
        mark_sources(node)
        summary = _verdict(node)
        label = self.options.get("label")
        if label and not LABEL.match(label):
            logger.warning(
                "KB022 编者注 :label: %r is not note- and ASCII kebab-case (lowercase letters, digits, "
                "single hyphens): it is the note's anchor, which would be %r; write it like note-page-topic",
                label,
                nodes.make_id(label),
                location=(self.env.docname, self.lineno),
                type="kb",
                subtype="editor-note",
            )
        if label:
            node_id = nodes.make_id(label)
            node["ids"].append(node_id)
            std = self.env.get_domain("std")
            # {ref} to a note shows its verdict sentence, through the std
            # domain's note_hyperlink_target: public, but its docstring asks
            # extensions not to call it (no upstream issue documents another
            # way to give a label a title of its own); tests/test_errata.py's
            # test_a_ref_to_a_note_shows_its_verdict_not_its_label fails if it
            # changes. A label another page holds already is left to KB024
            # (kb.core.labels), which Sphinx's own warning would come before,
            # without a line. (The pages read in this build hold none.)
            kb_labels.define(self.env, label, self.lineno)
            held = std.labels.get(label)
            if held is None or held[0] == self.env.docname:
                std.note_hyperlink_target(
                    label,
                    self.env.docname,
                    node_id,
                    _("{title}：{summary}").format(title=_(TITLE), summary=summary),
                )
        else:
            node_id = f"editor-note-{self.env.new_serialno('editor-note')}"
            node["ids"].append(node_id)
        documents(self.env, "editor_notes").setdefault(self.env.docname, []).append(
            {
                "id": node_id,
                "label": label or "",
                "line": self.lineno,
                "summary": summary,
                "kind": kind if kind in KINDS else "clarification",
                "date": date,
            }
        )
        return [node]


# The paragraph of a note that names its sources ("来源：…"): titles of other
# sites' pages, which the article's 参考来源 list repeats. The search leaves
# both out (pagefind.yml), so that a query is not answered by a source's
# title ("Fixing Gradient Accumulation" for "vanishing gradient").
SOURCES_PREFIXES = ("来源：", "来源:")
NOTE_SOURCES_CLASS = "kb-note-sources"


SOURCES_DETAILS = "展开说明：来源"


def mark_sources(note: nodes.Element) -> None:
    """Give the note's paragraphs that start with 来源： (its collapsed
    parts' too), and a collapsed part titled 展开说明：来源, the class
    NOTE_SOURCES_CLASS (the site's: a page may not give it, KB086)."""
    for child in note.findall(nodes.Element, include_self=False):
        if isinstance(child, nodes.paragraph):
            sources = child.astext().lstrip().startswith(SOURCES_PREFIXES)
        elif isinstance(child, kb_details):
            sources = bool(child.children) and isinstance(child[0], kb_summary)
            sources = sources and child[0].astext().strip() == SOURCES_DETAILS
        else:
            sources = False
        if sources:
            child["classes"].append(NOTE_SOURCES_CLASS)
            own(child, NOTE_SOURCES_CLASS)


def _verdict_text(note: nodes.Element) -> str:
    """The note's text before any collapsed part (details, original)."""
    parts = []
    for child in note.children[1:]:
        if isinstance(child, kb_details):
            break
        parts.append(child.astext())
    return " ".join(parts)


def imitated(node: nodes.admonition) -> None:
    """KB025 for an admonition titled 编者注 that is no {editor-note}: it
    reads as the editors' correction, but carries no kind, date or source,
    and the 勘误 page does not list it. (A page's editor-note class on
    another element is refused as the site's, KB086.)"""
    title = node.next_node(nodes.title)
    if "editor-note" in node["classes"] or title is None:
        return
    if re.sub(r"[\s:：]", "", title.astext()) in (TITLE, _(TITLE)):
        logger.warning(
            "KB025 this admonition is titled 编者注 but is no {editor-note}: it carries no :kind:, "
            ":date: or source, and the 勘误 page does not list it; write it as an {editor-note} "
            "(CONTRIBUTING shows how), or give it another title",
            location=node,
            type="kb",
            subtype="editor-note",
        )


def note_sections(app, doctree) -> None:
    """Each note's section title, once the page's sections exist; and each
    note's anchor is the page's only element with that id (KB023)."""
    notes = documents(app.env, "editor_notes").get(app.env.docname, [])
    # by anchor and line: two notes may share an anchor (KB023)
    by_id = {(note["id"], note["line"]): note for note in notes}
    used = Counter(i for element in doctree.findall(nodes.Element) for i in element["ids"])
    for node in doctree.findall(nodes.admonition):
        imitated(node)
        note = next((by_id[i, node.line] for i in node["ids"] if (i, node.line) in by_id), None)
        if note is None:
            continue
        # (a label KB022 refused is left to KB022)
        if used[note["id"]] > 1 and (not note["label"] or LABEL.match(note["label"])):
            logger.warning(
                "KB023 编者注 anchor %r is also the id of another element of this page (a note with "
                "the same :label:, a heading's anchor, a (label)= target or a footnote), and links go to "
                "the first: change the note's :label: (and the {ref}s to it), or the other element",
                note["id"],
                location=node,
                type="kb",
                subtype="editor-note",
            )
        section = node.parent
        while section is not None and not isinstance(section, nodes.section):
            section = section.parent
        title = section.next_node(nodes.title) if section is not None else None
        note["section"] = title.astext() if title is not None else ""


class kb_details(nodes.General, nodes.Element):
    """<details>: collapsed until the reader opens it."""


class kb_summary(nodes.General, nodes.TextElement):
    """The always-visible line of a kb_details."""


def visit_details(self, node) -> None:
    self.body.append(self.starttag(node, "details", CLASS="kb-details"))


def depart_details(self, node) -> None:
    self.body.append("</details>\n")


def visit_summary(self, node) -> None:
    self.body.append(self.starttag(node, "summary", ""))


def depart_summary(self, node) -> None:
    self.body.append("</summary>\n")


def _plain_visit(self, node) -> None:
    pass


class Details(SphinxDirective):
    """``{details} 标题``: a collapsed explanation under a note's verdict."""

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    default_summary = N_("展开说明")

    def run(self) -> list[nodes.Node]:
        node = kb_details(classes=self.classes())
        self.set_source_info(node)
        node += kb_summary("", self.arguments[0] if self.arguments else _(self.default_summary))
        node += self.parse_content_to_nodes(allow_section_headings=False)
        return [node]

    def classes(self) -> list[str]:
        return []


class Original(Details):
    """``{original}``: the author's original, quoted in a note, collapsed;
    each code block in it shows 原文·勿照抄 next to its copy button."""

    default_summary = N_("原文（仅作对照，勿照抄）")

    def run(self) -> list[nodes.Node]:
        [node] = super().run()
        own(node, "kb-original-quote")  # the site's class (KB086 refuses it in a page's own text)
        for block in list(node.findall(lambda n: isinstance(n, (nodes.literal_block, nodes.doctest_block)))):
            own(block, "kb-original")
            status = own(nodes.container(classes=["kb-code-original"]))
            # replace_self gives status the block's classes: the page's stay refused
            block.replace_self(status)
            own(status, "kb-original")
            # and its ids and names: the block keeps them (a :name: given twice was KB085)
            status["ids"], status["names"] = [], []
            status += own(nodes.inline("", _(ORIGINAL_STATUS), classes=["kb-code-status"]))
            status += block
        return [node]

    def classes(self) -> list[str]:
        return ["kb-original-quote"]


ORIGINAL_STATUS = N_("原文·勿照抄")


class EditorNotesList(SphinxDirective):
    def run(self) -> list[nodes.Node]:
        holds_listing(self.env)
        node = editor_notes_list()
        self.set_source_info(node)
        return [node]


def _erratum_link(app) -> nodes.Node:
    repo = (app.config.html_theme_options or {}).get("source_repository", "")
    para = nodes.paragraph(classes=["kb-erratum-link"])
    if repo:
        para += nodes.Text(_("发现新的问题？"))
        para += nodes.reference(
            "", _("提交勘误"), refuri=repo.rstrip("/") + "/issues/new?template=erratum.yml"
        )
        para += nodes.Text(_("（需要 GitHub 账号；写明页面、原文和依据）。"))
    return para


def _render(app, fromdoc: str) -> list[nodes.Node]:
    """The page's count, the erratum link, and the list itself: an
    ``editor_notes_html`` holding its groups (``note_groups``), which the HTML
    writer renders with ``visit_notes_html``; other builders get the list as
    docutils nodes (``as_nodes``)."""
    env = app.env
    notes = documents(env, "editor_notes")
    total = sum(len(v) for v in notes.values())
    out: list[nodes.Node] = [
        nodes.paragraph(
            "", _("全站共 {total} 条编者注，分布在 {pages} 个页面。").format(total=total, pages=len(notes))
        ),
        _erratum_link(app),
    ]
    groups = note_groups(app, fromdoc)
    if app.builder.format == "html":
        out.append(editor_notes_html(groups=groups))
    else:
        out.extend(as_nodes(groups))
    return out


# (verdict heading, [(page title, [(link, verdict sentence, （section · kind · date）)])])
Groups = list[tuple[str, list[tuple[str, list[tuple[str, str, str]]]]]]


def note_groups(app, fromdoc: str) -> Groups:
    """Every note, by verdict (更正, 未能核实, 补充说明), then by page in the
    site's reading order (then any page outside it), as the list shows them."""
    env = app.env
    notes = documents(env, "editor_notes")
    pos = {doc: i for i, doc in enumerate(reading_order(env))}
    order = sorted((d for d in env.found_docs if d in notes), key=lambda d: (pos.get(d, len(pos)), d))
    kind_names = {kind: _(name) for kind, (name, _group) in KINDS.items()}
    uris = {doc: app.builder.get_relative_uri(fromdoc, doc) for doc in order}
    groups: Groups = []
    for verdict in VERDICTS:
        pages = []
        for doc in order:
            found = [n for n in notes[doc] if KINDS[n.get("kind", "clarification")][1] == verdict]
            if not found:
                continue
            title = env.titles[doc].astext() if doc in env.titles else doc
            items = []
            for note in found:
                meta = [
                    note.get("section") or "",
                    kind_names[note.get("kind", "clarification")],
                    note.get("date") or "",
                ]
                items.append(
                    (
                        f"{uris[doc]}#{note['id']}",
                        note["summary"],
                        "（" + " · ".join(m for m in meta if m) + "）",
                    )
                )
            pages.append((title, items))
        if pages:
            count = sum(len(items) for _title, items in pages)
            groups.append((_("{verdict}（{count} 条）").format(verdict=_(verdict), count=count), pages))
    return groups


def as_nodes(groups: Groups) -> list[nodes.Node]:
    """The list as docutils nodes: a rubric per verdict, then each page's
    title and a bullet list of its notes (a link and its section, kind, date)."""
    out: list[nodes.Node] = []
    for heading, pages in groups:
        out.append(nodes.rubric("", heading, classes=["kb-notes-verdict"]))
        for title, items in pages:
            out.append(nodes.paragraph("", "", nodes.strong("", title), classes=["kb-notes-page"]))
            blist = nodes.bullet_list(classes=["kb-notes-list"])
            for href, summary, meta in items:
                para = nodes.paragraph()
                para += nodes.reference("", summary, internal=True, refuri=href)
                para += nodes.inline("", meta, classes=["kb-notes-meta"])
                blist += nodes.list_item("", para)
            out.append(blist)
    return out


def visit_notes_html(self, node: editor_notes_html) -> None:
    """What the HTML writer makes of ``as_nodes(node["groups"])``, byte for
    byte, in every HTML builder (tests/test_errata.py renders both), written
    as one string: at 1,000 articles the list is 11,000 notes, some 70,000
    nodes, and writing the page through them took 1.3 s of a title edit's
    5.3 s (``make bench``'s synthetic site); as one string, 0.25 s. Text and
    attribute values are escaped by the writer's own ``encode`` and
    ``attval``; an empty link is ``#``, as the writer makes it."""
    enc, att = self.encode, self.attval
    out = []
    for heading, pages in node["groups"]:
        out.append(f'<p class="kb-notes-verdict rubric">{enc(heading)}</p>\n')
        for title, items in pages:
            out.append(f'<p class="kb-notes-page"><strong>{enc(title)}</strong></p>\n')
            out.append('<ul class="kb-notes-list simple">\n')
            out.extend(
                f'<li><p><a class="reference internal" href="{att(href or "#")}">{enc(summary)}</a>'
                f'<span class="kb-notes-meta">{enc(meta)}</span></p></li>\n'
                for href, summary, meta in items
            )
            out.append("</ul>\n")
    self.body.append("".join(out))
    raise nodes.SkipNode


# The verdict line of every note, as a link without words of its own shows
# it: made once a build, when the pages have been read (env-updated, before
# the pages are written, in worker processes too), not once a page (10,000
# notes at 1,000 articles).
_verdicts: dict[str, set[str]] = {}


def collect_verdicts(app, env, *_args) -> set[str]:
    _verdicts["set"] = {
        _("{title}：{summary}").format(title=_(TITLE), summary=note["summary"])
        for found in documents(env, "editor_notes").values()
        for note in found
    }
    return _verdicts["set"]


def on_env_updated(app, env) -> list[str]:
    collect_verdicts(app, env)
    return []  # no page to write besides those Sphinx writes


# what may stand between links to notes in a paragraph of nothing else
SEPARATORS = re.compile(r"[\s·、，,;；/|]+")


def on_doctree_resolved(app, doctree, docname: str) -> None:
    # A link to a note that shows its verdict (a {ref} without text of its
    # own): the words are the note's, indexed on the note's own page;
    # pagefind.yml leaves them out where they are repeated (guide tables, other
    # notes, the 勘误 page), or those pages outrank the article. A link with
    # its own words (见{ref}`案例 3 的编者注 <…>`) is indexed as the page
    # reads: without them, a result would show "见。".
    verdicts = _verdicts.get("set")
    if verdicts is None:
        verdicts = collect_verdicts(app, app.env)
    for ref in doctree.findall(nodes.reference):
        target = ref.get("refid") or ref.get("refuri", "").partition("#")[2]
        if target.startswith("note-") and ref.astext() in verdicts:
            ref["classes"].append("kb-note-ref")
    # and a paragraph of such links and the marks between them (a guide
    # table's 编者注 column: "… · … · …"), or the index would keep "· · ·"
    for para in doctree.findall(nodes.paragraph):
        if para.children and all(
            "kb-note-ref" in child.get("classes", ())
            if isinstance(child, nodes.Element)
            else not SEPARATORS.sub("", child.astext())
            for child in para.children
        ):
            para["classes"].append("kb-note-ref")
    # The list of every note last: its links have words of their own (the
    # verdict, without 编者注：), and at 1,000 articles it is 50,000 nodes
    # that the two walks above need not visit.
    for node in list(doctree.findall(editor_notes_list)):
        node.replace_self(_render(app, docname))


def check_listing_notes(app, env) -> None:
    """KB026 for a ``listing_notes`` entry of a page's front matter that is
    not the label of a 编者注 on that page: the listings would show no
    verdict beside a title or summary the editors meant to correct."""
    notes = documents(env, "editor_notes")
    for doc, meta in sorted(documents(env, "pages").items()):
        labels = {n["label"] for n in notes.get(doc, []) if n["label"]}
        for index, label in enumerate(meta.get("listing_notes", [])):
            if label in labels:
                continue
            logger.warning(
                "KB026 listing_notes names %r, which is not the :label: of a 编者注 on this page: "
                "name the note of this page that corrects its title or summary (%s), or remove it",
                label,
                ", ".join(sorted(labels)[:8]) + (" …" if len(labels) > 8 else "")
                if labels
                else "this page has no labelled note",
                location=(doc, _front_matter_line(env, doc, ["listing_notes", index])),
                type="kb",
                subtype="editor-note",
            )


def _front_matter_line(env, doc: str, path: list) -> int | None:
    """The line of the page's front-matter value at ``path`` (keys and
    indexes), as the front matter's own checks place it (kb.core.data.line_of)."""
    try:
        found = find_front_matter(env.doc2path(doc).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    root = parse(found)[0] if found else None
    return kb_data.line_of(root, path, found.first) if root is not None else None


def setup(app) -> dict[str, Any]:
    # the 勘误 page is a listing: kb.pages.listings writes it again when a note changes
    app.setup_extension("kb.pages.listings")
    app.setup_extension("kb.core.i18n")
    app.setup_extension("kb.core.labels")  # a moved label: its old page does not hold it
    app.add_node(editor_notes_list)
    app.add_node(editor_notes_html, html=(visit_notes_html, None))
    visitors = {name: (_plain_visit, _plain_visit) for name in ("latex", "text", "man", "texinfo")}
    app.add_node(kb_details, html=(visit_details, depart_details), **visitors)
    app.add_node(kb_summary, html=(visit_summary, depart_summary), **visitors)
    app.add_directive("details", Details)
    app.add_directive("original", Original)
    app.add_directive("editor-note", EditorNote)
    app.add_directive("kb-editor-notes", EditorNotesList)
    app.connect("doctree-read", note_sections)
    app.connect("doctree-resolved", on_doctree_resolved)
    app.connect("env-updated", on_env_updated)
    app.connect("env-check-consistency", check_listing_notes)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 6}
