"""编者注: the editors' corrections, next to the author's original.

In a page::

    :::{editor-note}
    :label: inference-cost-depreciation
    原文的硬件折旧按 2 万美元计算却没有换算成人民币……
    :::

renders an admonition titled 编者注 (class ``editor-note``). ``:label:`` is
optional; it makes the note a reference target (``{ref}`` works) and keeps
its anchor stable.

Every note is collected per document (merged and purged per document), and

    ```{kb-editor-notes}
    ```

lists them all, grouped by page, with a link to each note and its first
sentence: the 勘误与编者注 page. A note without text is a warning.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging

from kb_envstore import per_document
from kb_listings import holds_listing, reading_order
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

TITLE = "编者注"


class editor_notes_list(nodes.General, nodes.Element):
    """Placeholder for the list of notes, filled in ``doctree-resolved``."""


def _first_sentence(text: str, limit: int = 80) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    match = re.search(r"^(.+?[。！？!?])", text)
    sentence = match.group(1) if match else text
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


class EditorNote(SphinxDirective):
    has_content = True
    option_spec = {"label": directives.unchanged, "class": directives.class_option}

    def run(self) -> list[nodes.Node]:
        if not self.content:
            logger.warning("KB020 empty 编者注: say what is wrong, the corrected form and why",
                           location=self.get_location(), type="kb", subtype="editor-note")
            return []
        node = nodes.admonition(classes=["editor-note", *self.options.get("class", [])])
        self.set_source_info(node)
        node += nodes.title(TITLE, TITLE)
        node += self.parse_content_to_nodes(allow_section_headings=False)
        label = self.options.get("label")
        if label:
            node_id = nodes.make_id(label)
            node["ids"].append(node_id)
            std = self.env.get_domain("std")
            std.note_hyperlink_target(label, self.env.docname, node_id, f"{TITLE}：{label}")
        else:
            node_id = f"editor-note-{self.env.new_serialno('editor-note')}"
            node["ids"].append(node_id)
        self.env.kb_editor_notes.setdefault(self.env.docname, []).append({
            "id": node_id,
            "line": self.lineno,
            "summary": _first_sentence(node.astext()[len(TITLE):]),
        })
        return [node]


class EditorNotesList(SphinxDirective):
    def run(self) -> list[nodes.Node]:
        holds_listing(self.env)
        node = editor_notes_list()
        self.set_source_info(node)
        return [node]


def _render(app, fromdoc: str) -> list[nodes.Node]:
    env = app.env
    notes = env.kb_editor_notes
    total = sum(len(v) for v in notes.values())
    out: list[nodes.Node] = [nodes.paragraph("", f"全站共 {total} 条编者注，分布在 {len(notes)} 个页面。")]
    # in the site's reading order, then anything outside it
    pos = {doc: i for i, doc in enumerate(reading_order(env))}
    order = sorted((d for d in env.found_docs if d in notes), key=lambda d: (pos.get(d, len(pos)), d))
    for doc in order:
        title = env.titles[doc].astext() if doc in env.titles else doc
        out.append(nodes.rubric("", title, classes=["kb-notes-page"]))
        blist = nodes.bullet_list(classes=["kb-notes-list"])
        for note in notes[doc]:
            uri = app.builder.get_relative_uri(fromdoc, doc) + "#" + note["id"]
            para = nodes.paragraph()
            para += nodes.reference("", note["summary"], internal=True, refuri=uri)
            blist += nodes.list_item("", para)
        out.append(blist)
    return out


def on_doctree_resolved(app, doctree, docname: str) -> None:
    for node in list(doctree.findall(editor_notes_list)):
        node.replace_self(_render(app, docname))


def setup(app) -> dict[str, Any]:
    # the 勘误 page is a listing: kb_listings writes it again when a note changes
    app.setup_extension("kb_listings")
    app.add_node(editor_notes_list)
    app.add_directive("editor-note", EditorNote)
    app.add_directive("kb-editor-notes", EditorNotesList)
    per_document(app, "kb_editor_notes", shown_in_listings=True)
    app.connect("doctree-resolved", on_doctree_resolved)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": 1}
