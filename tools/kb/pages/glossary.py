"""The 术语表 page, generated from ``data/glossary.yaml``.

On the glossary page::

    ```{kb-glossary}
    ```

renders every entry as a Sphinx glossary term (its Chinese name, English
name and each alias are terms, so ``{term}`AMP``` and ``{term}`混合精度```
both link to it), its definition, the sections listed under ``see:``, and —
generated, never stale — the pages that link the term with ``{term}``.

The entries come from ``kb_data.glossary`` (checked against
``data/schemas/glossary.schema.json``, unique ids and names; problems are
KB04x warnings at their line of the YAML file, and only valid entries are
shown). The nodes generated for an entry carry the YAML file and the
entry's line as their ``source`` and ``line``, so whatever Sphinx reports
about them — a ``see:`` label that does not exist is an unresolved
reference, which ``-n -W`` turns into a build error — names
``data/glossary.yaml:LINE``, not a line of the glossary page that does not
exist.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

from kb.core import data as kb_data
from kb.core.store import documents
from kb.pages.listings import holds_listing
from kb.site import output_state

# At most this many "出现在" links per term.
USAGE_SHOWN = 8


def load_glossary(data_dir: Path) -> list[dict]:
    """The valid entries of data/glossary.yaml (kb.core.data reports the others)."""
    return kb_data.glossary(data_dir).data


def names(entry: dict) -> list[str]:
    """All names of an entry: Chinese, English, then aliases, without repeats."""
    return kb_data.glossary_names(entry)


class kb_glossary_usage(nodes.General, nodes.Element):
    """Placeholder for "出现在" links, filled in ``doctree-resolved``."""


class GlossaryDirective(SphinxDirective):
    def run(self) -> list[nodes.Node]:
        holds_listing(self.env)
        path = Path(self.config.kb_data_dir) / "glossary.yaml"
        # the page is read again when glossary.yaml changes
        self.env.note_dependency(str(path))
        loaded = kb_data.glossary(Path(self.config.kb_data_dir))
        entries = sorted(zip(loaded.data, loaded.lines), key=lambda e: e[0]["id"])
        parsed = self.parse_text_to_nodes(glossary_text([e for e, _ in entries]), offset=self.content_offset)
        line_of_term = {names(e)[0]: line for e, line in entries}
        for item in (n for node in parsed for n in node.findall(nodes.definition_list_item)):
            terms = [t.astext() for t in item.findall(nodes.term)]
            # after each definition, a placeholder for the pages that use the term
            item.next_node(nodes.definition).append(kb_glossary_usage(terms=terms))
            if terms and terms[0] in line_of_term:
                _locate(item, str(path.resolve()), line_of_term[terms[0]])
        return parsed


def glossary_text(entries: list[dict]) -> str:
    """A MyST glossary of the entries: names as terms, definition, "详见" links."""
    lines = ["```{glossary}", ":sorted:", ""]
    for entry in entries:
        lines += names(entry)
        see = " · ".join(f"{{ref}}`{label}`" for label in entry.get("see", []))
        lines.append(textwrap.indent(entry["def"].strip(), "  ") + (f"\n\n  详见：{see}" if see else ""))
        lines.append("")
    lines.append("```")
    return "\n".join(lines)


def _locate(item: nodes.Node, source: str, line: int) -> None:
    """Make the nodes of one entry point at its line in the YAML file."""
    for node in item.findall():
        node.source, node.line = source, line


def collect_usage(app, doctree) -> None:
    """Record which terms each page links with {term}."""
    env = app.env
    used = {
        node["reftarget"].lower()
        for node in doctree.findall(addnodes.pending_xref)
        if node.get("reftype") == "term"
    }
    if used:
        documents(env, "term_usage")[env.docname] = used


def term_anchors(env) -> dict[str, tuple[str, str]]:
    """Where each glossary term is defined: lowercased name -> (page, anchor),
    from the standard domain's documented ``get_objects()``."""
    return {
        name.lower(): (doc, anchor)
        for name, _, objtype, doc, anchor, _ in env.get_domain("std").get_objects()
        if objtype == "term"
    }


def on_env_get_updated(app, env) -> list[str]:
    """Pages that link a term whose anchor moved are written again.

    A term without an ASCII name gets a numbered anchor (``#term-12``) in the
    order of the glossary, so an entry or alias added to data/glossary.yaml
    moves the anchors of the terms after it; the pages that link those terms
    did not change and would keep the old anchors. Compared with what the
    written pages link (kb.site.output_state), so an interrupted build does
    not lose the rewrite."""
    anchors = term_anchors(env)
    before = output_state.before(app, "term_anchors")
    output_state.record(app, "term_anchors", anchors)
    if before == anchors:
        return []
    moved = (
        None
        if before is None
        else {n for n in anchors.keys() | before.keys() if anchors.get(n) != before.get(n)}
    )
    return sorted(doc for doc, used in documents(env, "term_usage").items() if moved is None or used & moved)


def on_doctree_resolved(app, doctree, docname: str) -> None:
    env = app.env
    for node in list(doctree.findall(kb_glossary_usage)):
        wanted = {t.lower() for t in node["terms"]}
        pages = sorted(
            d for d, used in documents(env, "term_usage").items() if used & wanted and d != docname
        )
        if not pages:
            node.replace_self([])
            continue
        para = nodes.paragraph(classes=["kb-term-usage"])
        para += nodes.Text("出现在：")
        shown, more = pages[:USAGE_SHOWN], len(pages) - USAGE_SHOWN
        for i, doc in enumerate(shown):
            if i:
                para += nodes.Text(" · ")
            title = env.titles[doc].astext() if doc in env.titles else doc
            para += nodes.reference(
                "", title, internal=True, refuri=app.builder.get_relative_uri(docname, doc)
            )
        if more > 0:  # the page stays small however many articles use the term
            para += nodes.Text(f" 等 {len(pages)} 篇")
        node.replace_self(para)


def setup(app) -> dict[str, Any]:
    app.setup_extension("kb.pages.listings")  # kb_data_dir; the page is written again when usage changes
    app.setup_extension("kb.site.output_state")
    app.add_node(kb_glossary_usage)
    app.add_directive("kb-glossary", GlossaryDirective)
    app.connect("doctree-read", collect_usage)
    app.connect("doctree-resolved", on_doctree_resolved)
    app.connect("env-get-updated", on_env_get_updated)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
