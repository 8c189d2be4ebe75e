"""The 术语表 page, generated from ``data/glossary.yaml``.

On the glossary page::

    ```{kb-glossary}
    ```

renders every entry as a Sphinx glossary term (its Chinese name, English
name and each alias are terms, so ``{term}`AMP``` and ``{term}`混合精度```
both link to it), its definition, the sections listed under ``see:``, and —
generated, never stale — the pages that link the term with ``{term}``.

For a Chinese reader: entries are sorted by the pinyin of their Chinese name
(pypinyin; a Latin name by its letters), grouped under their first letter
with a jump bar of the letters; the Chinese name is the headword. Every name
of an entry links to one readable, stable anchor made from its ``id``:
``glossary.html#term-mixed-precision``. Term links elsewhere carry the
definition (``title``), which ``_static/kb-terms.js`` shows on hover and on
keyboard focus.

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

from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.statemachine import string2lines
from sphinx import addnodes
from sphinx.domains.std import make_glossary_term
from sphinx.util.docutils import SphinxDirective

from kb.core import data as kb_data
from kb.core.i18n import _
from kb.core.log import getLogger, reported_at
from kb.core.store import documents
from kb.guard.silent_loss import (
    cut_blank_runs,
    cut_footnote_scans,
    cut_too_deep,
    report_dropped_text,
    report_repeated_options,
    too_deep,
)
from kb.guard.untrusted import file_readers, own
from kb.pages.listings import holds_listing
from kb.site import output_state

logger = getLogger(__name__)

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


def reading(name: str) -> tuple[str, ...]:
    """The sort key of a name: its pinyin syllables, lowercase (Latin stays as is)."""
    from pypinyin import lazy_pinyin

    return tuple(s.lower() for s in lazy_pinyin(name) if s.strip())


def initial(name: str) -> str:
    """The letter a name is filed under (A–Z), or "#"."""
    first = reading(name)[0][:1].upper() if reading(name) else ""
    return first if "A" <= first <= "Z" else "#"


def anchor(entry: dict) -> str:
    """The page anchor of an entry, from its ASCII id: term-mixed-precision."""
    return f"term-{entry['id']}"


def letter_anchor(letter: str) -> str:
    return "glossary-" + ("other" if letter == "#" else letter.lower())


class GlossaryDirective(SphinxDirective):
    def run(self) -> list[nodes.Node]:
        holds_listing(self.env)
        path = Path(self.config.kb_data_dir) / "glossary.yaml"
        # the page is read again when glossary.yaml or its schema changes
        self.env.note_dependency(str(path))
        self.env.note_dependency(str(kb_data.schema_path(self.config.kb_data_dir, "glossary.schema.json")))
        loaded = kb_data.glossary(Path(self.config.kb_data_dir))
        # the anchors the page had before (bookmarks still land on the entry)
        self.env.note_dependency(str(Path(self.config.kb_data_dir) / "glossary-old-anchors.yaml"))
        self.old_anchors: dict[str, list[str]] = {}
        for old, entry_id in kb_data.glossary_old_anchors(Path(self.config.kb_data_dir)).data.items():
            self.old_anchors.setdefault(entry_id, []).append(old)
        entries = sorted(zip(loaded.data, loaded.lines), key=lambda e: (reading(e[0]["zh"]), e[0]["id"]))
        groups: dict[str, list[tuple[dict, int]]] = {}
        for entry, line in entries:
            groups.setdefault(initial(entry["zh"]), []).append((entry, line))
        jump = own(nodes.paragraph(classes=["kb-glossary-jump"]))
        jump += nodes.Text(_("按拼音首字母："))
        out: list[nodes.Node] = [jump]
        for letter, members in groups.items():
            jump += nodes.reference("", letter, refid=letter_anchor(letter))
            heading = own(
                nodes.rubric("", letter, ids=[letter_anchor(letter)], classes=["kb-glossary-letter"])
            )
            glossary = addnodes.glossary(sorted=False)  # in pinyin order already
            dlist = nodes.definition_list(classes=["glossary"])
            glossary += dlist
            for entry, line in members:
                dlist += self.entry_item(entry, str(path.resolve()), line)
            out += [heading, glossary]
        return out

    def entry_item(self, entry: dict, source: str, line: int) -> nodes.definition_list_item:
        """One entry: every name a term linking to the entry's anchor, the headword first."""
        item = nodes.definition_list_item()
        node_id = anchor(entry)
        for i, name in enumerate(names(entry)):
            term = make_glossary_term(
                self.env, [nodes.Text(name)], None, source, line, node_id, self.state.document
            )
            if i:  # the other names link to the headword's anchor; one id per page
                term["ids"].remove(node_id)
            own(term, "kb-headword" if i == 0 else "kb-alias")  # the site's (KB086 refuses them in pages)
            item += term
        self.state.document.note_explicit_target(item.children[0])
        # more ids: docutils writes each as an empty <span id> in the term
        item.children[0]["ids"].extend(self.old_anchors.get(entry["id"], []))
        see = " · ".join(f"{{ref}}`{label}`" for label in entry.get("see", []))
        with reported_at(self.yaml_location(source, line)):  # not at the glossary page
            text = self.checked_definition(entry["def"].strip(), source, line)
            text += "\n\n" + _("详见：") + see if see else ""
            definition = nodes.definition("", *self.parse_text_to_nodes(text, offset=self.content_offset))
        # after the definition, a placeholder for the pages that use the term
        definition += kb_glossary_usage(terms=names(entry))
        item += definition
        _locate(item, source, line)
        return item

    def checked_definition(self, text: str, source: str, line: int) -> str:
        """The definition as it may be parsed, each problem a warning at the entry.

        A definition is parsed in the glossary page's parser state, so what
        MyST or a directive says while parsing it would name the page, not
        the entry. So what the guards check in a page's source is checked
        here, reported at ``data/glossary.yaml:LINE``:

        - nesting deeper than MyST keeps (it drops the rest silently), or
          directives or rST nested past Python's recursion limit: KB053;
        - a directive option given twice (MyST keeps the last): KB065;
        - a file pulled in with {include}, {literalinclude}, a csv-table's
          :file: or rST in {eval-rst}: a definition is a few sentences of its
          own text, and an included file's problems would be reported at the
          page (KB048); the directive is dropped.
        (A NUL or %00 is refused with the entry, by kb.core.data: KB012.)

        The text is first cut into lines as parse_text_to_nodes cuts it
        (docutils' string2lines: Unicode line breaks, tabs, trailing spaces),
        so that what is checked is what MyST parses.
        """
        where = self.yaml_location(source, line)
        text = "\n".join(string2lines(text, self.state.document.settings.tab_width, convert_whitespace=True))
        # "[^" after "[^" with no "]": each parse below would take minutes (KB094)
        text = cut_footnote_scans(text, lambda _line: where)
        for _line, limit in too_deep(self.env, text):
            logger.warning(
                "KB053 lists or quotes nested too deep in this definition: the Markdown parser "
                "keeps %d levels of blocks and would drop this block and everything after "
                "it; flatten the nesting",
                limit,
                location=where,
                type="kb",
                subtype="nesting",
            )
        # an option given twice: the directive keeps the last (KB065)
        report_repeated_options(self.env, text, lambda _line: where, "in this definition")
        # a block between --- lines at the start of it, or of a directive in it (KB066), text after a quote's attribution (KB069): dropped
        report_dropped_text(self.env, text, lambda _line: where, whole=True)
        # directives or rST nested past Python's recursion limit: dropped (KB053)
        text = cut_too_deep(self.env, text, lambda _line: where)
        # a long run of whitespace-only lines: slow to highlight (KB094)
        text = cut_blank_runs(text, lambda _line: where)
        lines = text.split("\n")
        for block in file_readers(self, text):
            name, argument, (start, end) = block.name, block.argument, block.outermost
            logger.warning(
                "KB048 {%s} %s in a glossary definition: a definition cannot pull in a "
                "file or hold a table or rST; write the text in def (one to three sentences)",
                name,
                argument,
                location=where,
                type="kb",
                subtype="glossary",
            )
            lines[start:end] = [""] * (end - start)
        return "\n".join(lines)

    def yaml_location(self, source: str, line: int) -> str:
        """The YAML file and the entry's line, as Sphinx names the entry's nodes."""
        return f"{source}:{line}"


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


def definitions(app) -> dict[str, str]:
    """Anchor -> the entry's definition as plain text, for term links' titles."""
    return {
        anchor(e): e["def"].strip().replace("`", "")
        for e in kb_data.glossary(Path(app.config.kb_data_dir)).data
    }


def term_links(doctree) -> list[nodes.reference]:
    """The links of a page made by ``{term}``."""
    return [
        ref
        for ref in doctree.findall(nodes.reference)
        if any(
            "std-term" in child.get("classes", [])
            for child in ref.children
            if isinstance(child, nodes.Element)
        )
    ]


def title_term_links(app, doctree) -> None:
    """Give every term link the definition as its title."""
    links = term_links(doctree)
    defs = definitions(app) if links else {}
    for ref in links:
        text = defs.get(ref.get("refuri", "").rpartition("#")[2])
        if text:
            ref["reftitle"] = text


def on_doctree_resolved(app, doctree, docname: str) -> None:
    env = app.env
    if app.builder.format == "html":
        title_term_links(app, doctree)
    for node in list(doctree.findall(kb_glossary_usage)):
        wanted = {t.lower() for t in node["terms"]}
        pages = sorted(
            d for d, used in documents(env, "term_usage").items() if used & wanted and d != docname
        )
        if not pages:
            node.replace_self([])
            continue
        para = nodes.paragraph(classes=["kb-term-usage"])
        para += nodes.Text(_("出现在："))
        shown, more = pages[:USAGE_SHOWN], len(pages) - USAGE_SHOWN
        for i, doc in enumerate(shown):
            if i:
                para += nodes.Text(" · ")
            title = env.titles[doc].astext() if doc in env.titles else doc
            para += nodes.reference(
                "", title, internal=True, refuri=app.builder.get_relative_uri(docname, doc)
            )
        if more > 0:  # the page stays small however many articles use the term
            para += nodes.Text(_(" 等 {count} 篇").format(count=len(pages)))
        node.replace_self(para)


def on_page_context(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    # the definition on hover and on keyboard focus too (a title shows on hover only)
    if doctree is not None and any("reftitle" in ref for ref in term_links(doctree)):
        app.add_js_file(TERM_SCRIPT, defer="defer")


TERM_SCRIPT = "kb-terms.js"


def setup(app) -> dict[str, Any]:
    app.setup_extension("kb.core.i18n")
    app.setup_extension("kb.pages.listings")  # kb_data_dir; the page is written again when usage changes
    app.setup_extension("kb.site.output_state")
    app.add_node(kb_glossary_usage)
    app.add_directive("kb-glossary", GlossaryDirective)
    app.connect("doctree-read", collect_usage)
    app.connect("doctree-resolved", on_doctree_resolved)
    app.connect("env-get-updated", on_env_get_updated)
    app.connect("html-page-context", on_page_context)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 3}
