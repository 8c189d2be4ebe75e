"""Site search with Pagefind: Chinese, English and mixed queries, offline.

Replaces Sphinx's own search (whose zh index segments with jieba and whose
browser side does not segment queries at all; see issue 3's measurements):

- Sphinx's index is not built; ``search.html`` comes from
  ``_templates/search.html`` and runs ``_static/kb-search.js``;
- after an HTML build, Pagefind (npm ``pagefind``, the extended binary with
  Chinese segmentation; config in ``pagefind.yml``) indexes the pages'
  ``data-pagefind-body`` into ``<outdir>/pagefind/`` (``kb_pagefind``): in
  the build when there is no index yet (a build from scratch, as in CI),
  otherwise after it, in the background, so that an incremental build
  returns once the HTML is written (``KB_SEARCH_SYNC=1`` makes every build
  wait for its index);
- each section heading carries its section's id, so Pagefind can point a
  result at the matching section;
- where an indexed page names a glossary term (``data/glossary.yaml``:
  Chinese name, English name, abbreviations and synonyms), the term's other
  names follow the mention in a hidden span (``<span class="kb-aka" hidden>
  ⟦ mixed precision ｜ AMP ⟧</span>``): readers never see it, Pagefind
  indexes it, so one search for ``mixed precision`` finds the pages that say
  混合精度, ranked by how often and where they say it. The search page
  turns the marks into "（mixed precision）" in excerpts;
- the search page also gets the alias groups, to show a matching term's
  definition above the results and to rank pages titled with any of its
  names first.

Nothing to write in pages. A missing Pagefind is a warning (``-W`` fails):
run ``npm ci``, as ``make html`` does.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path
from typing import Any

import yaml
from docutils import nodes
from sphinx.util import logging
from sphinx.writers.html5 import HTML5Translator

from kb.site import output_state as kb_output_state
from kb.search import pagefind as kb_pagefind
from kb.core.store import rebuild_when_changed

logger = logging.getLogger(__name__)

# Pages whose text is a listing of other pages: not indexed, so that the
# articles themselves rank first.
# The glossary is not indexed either: the search page shows a matching term's
# definition above the results instead (it would otherwise outrank articles).
NOT_INDEXED = {"search", "genindex", "articles", "glossary", "errata"}


# Where a term's other names are not added: code, and the page title (the
# result's title; section headings carry them, the search page hides them).
NO_ALIASES = (nodes.literal, nodes.literal_block, nodes.raw, nodes.math, nodes.math_block,
              nodes.comment, nodes.term, nodes.subtitle)


def not_indexed_classes(confdir: Path) -> frozenset[str]:
    """The classes of ``pagefind.yml``'s ``exclude_selectors`` (``.kb-tags``):
    text there is not indexed, so it needs no marks (a guide's landing page
    lists hundreds of summaries)."""
    path = confdir / "pagefind.yml"
    if not path.exists():
        return frozenset()
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    selectors = config.get("exclude_selectors") if isinstance(config, dict) else None
    if not isinstance(selectors, list):  # Pagefind reports a bad config when it runs
        return frozenset()
    return frozenset(s[1:] for s in selectors if isinstance(s, str) and re.fullmatch(r"\.[\w-]+", s))


def _page_title(node: nodes.Node) -> bool:
    return (isinstance(node, nodes.title) and isinstance(node.parent, nodes.section)
            and isinstance(node.parent.parent, nodes.document))


LATIN = re.compile(r"[A-Za-z0-9]")
NOT_AFTER_LATIN = r"(?<![A-Za-z0-9])"
NOT_BEFORE_LATIN = r"(?![A-Za-z0-9])"


def names_pattern(names: list[str]) -> re.Pattern | None:
    """One regex that finds any of `names` in text: any case, any spacing
    between words, the longest name where several start at one place, and a
    name that starts or ends with a Latin letter or digit only as a whole
    word there (TP is not the end of HTTP).

    Built as a trie (名 → 名称 | 名字): a plain alternation of ~150 names
    tries every name at every character and costs seconds over 1,000 pages.
    """
    trie: dict = {}
    for name in names:
        node = trie
        for char in " ".join(name.lower().split()):
            node = node.setdefault(char, {})
        node[""] = {}

    def branch(node: dict, via: str) -> str:
        alts = [(r"\s*" if char == " " else re.escape(char)) + branch(child, char)
                for char, child in sorted(node.items()) if char]
        if "" in node:  # a name ends here; longer names are tried first
            alts.append(NOT_BEFORE_LATIN if LATIN.match(via) else "")
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    def starting_with(chars: list[str]) -> str:
        # a place where none of these names starts is passed over at once
        first = "".join(re.escape(c) for c in sorted({c for char in chars for c in (char, char.upper())}))
        alts = "|".join(re.escape(char) + branch(trie[char], char) for char in chars)
        return f"(?=[{first}])(?:{alts})"

    latin = sorted(char for char in trie if LATIN.match(char))
    other = sorted(char for char in trie if not LATIN.match(char))
    parts = ([NOT_AFTER_LATIN + starting_with(latin)] if latin else []) + (
        [starting_with(other)] if other else [])
    return re.compile("|".join(parts), re.IGNORECASE) if parts else None


def _squash(name: str) -> str:
    return "".join(name.split()).lower()


class AliasMarks:
    """The other names of each glossary term, after each mention of it."""

    def __init__(self, groups: list[list[str]], skip_classes: frozenset[str] = frozenset()):
        # text inside elements of these classes (or node types) gets no marks
        self.skip_classes = skip_classes
        # name → its mark; "mixed  precision" and "mixedprecision" are the
        # name "mixed precision"
        self.marks: dict[str, str] = {}
        names = []
        for group in groups:
            for name in group:
                others = list(dict.fromkeys(n for n in group if n.lower() != name.lower()))
                if others:
                    names.append(name)
                    self.marks[_squash(name)] = (
                        '<span class="kb-aka" hidden> ⟦ '
                        + " ｜ ".join(html.escape(n) for n in others) + " ⟧ </span>")
        self.pattern = names_pattern(names)

    def add(self, text: str, encode=html.escape) -> str:
        """`text` as HTML (`encode`), each mention followed by its mark."""
        if self.pattern is None:
            return encode(text)
        out, end = [], 0
        for match in self.pattern.finditer(text):
            out += [encode(text[end:match.end()]), self.marks.get(_squash(match.group(0)), "")]
            end = match.end()
        out.append(encode(text[end:]))
        return "".join(out)


class IndexedPageTranslator(HTML5Translator):
    """Give each section heading its section's id (``<h2 id="…">``), and
    mark glossary terms' other names for the search index.

    Pagefind makes a sub-result for every heading with an id; Sphinx puts
    the id on the ``<section>`` only. The id moves to the heading, so anchors
    keep working and no id appears twice.
    """

    def __init__(self, document: nodes.document, builder) -> None:
        super().__init__(document, builder)
        # Only the indexed pages' own text; not the titles and tables of
        # contents rendered apart for the navigation ("<partial node>").
        marks = getattr(builder, "kb_alias_marks", None)
        page = getattr(builder, "current_docname", None)
        self.alias_marks = (marks if document.get("source") != "<partial node>"
                            and page not in NOT_INDEXED else None)

    def visit_Text(self, node: nodes.Text) -> None:
        if self.alias_marks is None or self.protect_literal_text or self.in_mailto:
            return super().visit_Text(node)
        skip = self.alias_marks.skip_classes
        parent = node.parent
        while parent is not None:
            if (isinstance(parent, NO_ALIASES) or _page_title(parent) or parent.tagname in skip
                    or not skip.isdisjoint(parent.get("classes", ()))):
                return super().visit_Text(node)
            parent = parent.parent
        self.body.append(self.alias_marks.add(node.astext(), self.encode))

    def visit_section(self, node: nodes.section) -> None:
        ids = node["ids"]
        node["ids"] = []
        super().visit_section(node)
        node["ids"] = ids

    def visit_title(self, node: nodes.title) -> None:
        if isinstance(node.parent, nodes.section) and node.parent["ids"] and not node["ids"]:
            node["ids"] = list(node.parent["ids"])
            super().visit_title(node)
            node["ids"] = []
        else:
            super().visit_title(node)


def load_aliases(data_dir: Path) -> list[dict]:
    """Glossary entries for the search page: names (Chinese, English,
    abbreviations, synonyms), definition and anchor on the glossary page."""
    if not (data_dir / "glossary.yaml").exists():
        return []
    from kb.pages.glossary import load_glossary, names

    return [{"names": names(term), "def": term["def"]} for term in load_glossary(data_dir)]


def on_builder_inited(app) -> None:
    if app.builder.format != "html":
        return
    # the glossary, read once per build: marks in the pages, groups for the search page
    app.builder.kb_aliases = load_aliases(Path(app.config.kb_data_dir))
    app.builder.kb_alias_marks = AliasMarks(
        [entry["names"] for entry in app.builder.kb_aliases],
        not_indexed_classes(Path(app.confdir)))
    app.builder.search = False  # Pagefind replaces Sphinx's index
    app.config.html_additional_pages["search"] = "search.html"


# Sphinx's own search scripts: highlighting of its search terms and the
# translations it uses. Pagefind replaced that search; no page needs them.
UNUSED_SCRIPTS = ("_static/sphinx_highlight.js", "_static/doctools.js", "_static/translations.js")


def on_page_context(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    scripts = context.get("script_files")
    if scripts:
        scripts[:] = [js for js in scripts if getattr(js, "filename", None) not in UNUSED_SCRIPTS]
    context["kb_search_indexed"] = doctree is not None and pagename not in NOT_INDEXED
    # Landing pages summarise the articles: they rank below the articles.
    context["kb_search_weight"] = "0.5" if pagename.split("/")[-1] == "index" else ""
    if pagename == "search":
        glossary = app.builder.get_relative_uri("search", "glossary")
        anchors = _term_anchors(app)
        aliases = [{**entry, "url": f"{glossary}#{_term_id(anchors, entry)}"}
                   for entry in app.builder.kb_aliases]
        context["kb_search_aliases"] = json_for_script(aliases)


# Inside <script>, "</script", "<!--" and "<script" change how the HTML
# parser reads what follows; "&" matters to XHTML readers; U+2028/U+2029 end
# a line in older JavaScript. JSON lets each be written as \uXXXX instead.
SCRIPT_UNSAFE = str.maketrans({c: f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"})


def json_for_script(value) -> str:
    """JSON that can stand inside a <script> element whatever its strings hold."""
    return json.dumps(value, ensure_ascii=False).translate(SCRIPT_UNSAFE)


def _term_anchors(app) -> dict[str, str]:
    """Glossary term (lower case) -> its anchor, from the std domain's
    documented ``get_objects()`` (terms are its objects of type ``term``)."""
    return {name.lower(): anchor
            for name, _, objtype, _, anchor, _ in app.env.get_domain("std").get_objects()
            if objtype == "term"}


def _term_id(anchors: dict[str, str], entry: dict) -> str:
    """The anchor Sphinx gives the glossary term (its first name found)."""
    for name in entry["names"]:
        if name.lower() in anchors:
            return anchors[name.lower()]
    logger.warning("glossary entry %r is not a term on the glossary page: its search result "
                   "would link nowhere", entry["names"][0], type="kb", subtype="search")
    return ""


def _stale_pages(app, outdir: Path) -> int | None:
    """How many indexed pages were written since the index was built
    (None: there is no index).

    Only the documents' pages count: generated pages (tags, 404, search) are
    written on every build but never indexed.
    """
    entry = outdir / "pagefind" / "pagefind-entry.json"
    if not entry.exists():
        return None
    built = entry.stat().st_mtime_ns
    stale = 0
    for doc in app.env.found_docs:
        if doc in NOT_INDEXED:
            continue
        page = outdir / app.builder.get_target_uri(doc)
        if not page.exists() or page.stat().st_mtime_ns > built:
            stale += 1
    return stale


def on_build_finished(app, exception) -> None:
    """Index the site: in a build from scratch, after an incremental one."""
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    confdir = Path(app.confdir)
    if not kb_pagefind.binary(confdir).exists():
        logger.warning("Pagefind is not installed (%s): run `npm ci` (make html does) "
                       "to build the search index", kb_pagefind.binary(confdir),
                       type="kb", subtype="search")
        return
    # pages of removed sources are deleted first; then the index must forget them
    removed = kb_output_state.finish(app)
    failed = kb_pagefind.failure_file(outdir)
    if failed.exists():
        logger.warning("the search index update after the previous build failed:\n%s\n"
                       "It is rebuilt now.", failed.read_text(encoding="utf-8"),
                       type="kb", subtype="search")
        failed.unlink()
        stale = None
    else:
        stale = _stale_pages(app, outdir)
        if stale is not None:
            stale += removed
    if stale == 0:
        return
    if stale is not None and not os.environ.get("KB_SEARCH_SYNC"):
        kb_pagefind.index_in_background(outdir, confdir, outdir.parent / f".{outdir.name}.pagefind-log")
        logger.info("搜索索引在后台更新（%d 个页面有改动）", stale)
        return
    output = kb_pagefind.index(outdir, confdir)
    if output:
        logger.warning("Pagefind failed to index %s:\n%s", outdir, output,
                       type="kb", subtype="search")


def setup(app) -> dict[str, Any]:
    app.setup_extension("kb.pages.frontmatter")  # provides kb_data_dir
    app.setup_extension("kb.site.output_state")
    # Pages carry the glossary's names (AliasMarks) outside the parts
    # pagefind.yml excludes: a change to either file writes every page again.
    rebuild_when_changed(app, "kb_search_alias_digest", "html", lambda app: (
        Path(app.config.kb_data_dir) / "glossary.yaml", Path(app.confdir) / "pagefind.yml"))
    app.set_translator("html", IndexedPageTranslator)
    app.set_translator("dirhtml", IndexedPageTranslator)
    app.connect("builder-inited", on_builder_inited)
    app.connect("html-page-context", on_page_context)
    app.connect("build-finished", on_build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
