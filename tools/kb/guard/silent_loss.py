"""What the tools would drop or choke on without a word fails the build at
its place instead.

- ``KB053`` Markdown nested deeper than the parser keeps. markdown-it stops
  at ``maxNesting`` (20 levels for MyST's CommonMark preset: a list about ten
  levels deep) and silently skips everything after that point on the page,
  the next heading included (the limit is by design, markdown-it/markdown-it
  #1025; MyST does not report it). Each page is parsed once more with a
  slightly higher limit: a block token at or past the limit of MyST's own
  parser (read from it, so a change upstream moves this check with it) is
  exactly what MyST would have dropped.
- ``KB054`` a page that is not UTF-8. Sphinx decodes the file before any
  event sees it and stops with a traceback (that under ``-j`` does not even
  name the file); the bytes are checked first.
- ``KB055`` a circular toctree (a page listed, directly or not, under
  itself). Sphinx 9.0 recurses without end in ``collect_relations`` and
  stops with ``RecursionError`` (upstream: sphinx-doc/sphinx#851, circular
  tocs are not noticed nicely); the toctrees are checked before writing.

- ``KB056`` a page larger than MAX_PAGE_BYTES (1 MiB; the longest article is
  under 50 KB). Parsing is roughly linear but slow (a 3 MB page takes about
  half a minute, a 60 MB one outlasts any CI timeout), so a page that size is
  a mistake or an attack on the build; it stops before anything is read.

- ``KB057`` a page named like one the site generates (``search``, ``404``,
  ``tags/…``), which would overwrite it, or in a folder the build fills
  with its own files (``_static/``, ``_sources/``, ``pagefind/`` …).

- ``KB065`` a directive option given twice. MyST reads the option block
  into a dict, and a key given again replaces the earlier value without a
  word (``_parse_directive_options`` in myst_parser.parsers.directives).
  The block is found as MyST finds it: the body's first lines that start
  with ``:`` (not ``:::``), or a ``---`` block; only for a directive that
  takes options (MyST reads the others' lines as body text).

- ``KB066`` a directive's or div's text that starts with a block between
  ``---`` lines: MyST reads it as front matter and drops it without a word
  (``nested_render_text`` in myst_parser's mdit_to_docutils/base.py removes
  a leading front matter from any text it parses on its own, meant for
  included files).

- ``KB068`` a ``:caption:`` (code-block, literalinclude, mermaid) that is
  not one paragraph. Sphinx and sphinxcontrib-mermaid parse it as Markdown
  blocks and keep the first node: a caption of no node is an IndexError
  traceback, and a block in it is read where no other check looks.

- ``KB069`` text after the ``-- author`` line of an epigraph, highlights or
  pull-quote: MyST keeps the quote before it and the attribution, and drops
  the rest without a word.

- ``KB133`` an rST comment in {eval-rst} that reads like a directive with
  one colon (``.. note: text``): docutils drops a comment from the page.

- ``KB132`` Python code or pytest settings under docs/ (``conftest.py``,
  ``x.py``, ``pytest.ini`` …): not part of the site, and never run (the
  samples' sandbox copies only the pages).

KB054 to KB057 leave nothing sensible to build: the build stops after the
warning, with exit status 2 and no traceback.
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
import textwrap
from pathlib import Path
from typing import Any
from urllib.parse import quote

# MyST documents no API that reads a directive's option block (how the block
# is read is itself open upstream: jupyter-book/myst-spec#51). Its own reader
# is used for KB065, so that the keys are the ones MyST reads (quotes,
# escapes, values over several lines, Unicode line breaks);
# tests/test_upstream_contract.py fails if it changes or if MyST stops
# keeping the last value of a key.
from docutils import frontend
from docutils.parsers import rst
from docutils.parsers.rst import directives
from docutils.parsers.rst import languages as rst_languages
from docutils.parsers.rst.directives.body import BlockQuote
from docutils.parsers.rst.directives.images import Figure
from docutils.statemachine import string2lines
from docutils.utils import new_document
from myst_parser.parsers.options import TokenizeError, options_to_tokens
from sphinx.directives.code import CodeBlock, LiteralInclude
from sphinx.directives.other import TocTree

from kb.core import markdown as kb_markdown
from kb.core import store as kb_store
from kb.core.log import clipped, getLogger

logger = getLogger(__name__)


class BuildStopped(SystemExit):
    """Ends sphinx-build after the warnings that say why (exit status 2).

    Sphinx prints a traceback and asks for a bug report for any exception,
    SphinxError included; a contributor's mistake deserves only the warning.
    """

    def __init__(self) -> None:
        super().__init__(2)


# -- KB053 nesting -------------------------------------------------------------


def too_deep(env, text: str) -> list[tuple[int, int]]:
    """(1-based line, depth) of the first block past MyST's nesting limit, in
    the page and in each directive body (each is parsed on its own)."""
    extensions = env.config.myst_enable_extensions
    limit = kb_markdown.parser(extensions).options["maxNesting"]
    md = kb_markdown.parser(extensions, limit + 2)  # bounded: the probe itself stops soon after
    found = []
    for inner in kb_markdown.walk(md, env, text):
        deep = next((t for t in inner.tokens if t.level >= limit and t.map), None)
        if deep is not None:
            found.append((inner.line(deep.map[0]) + 1, limit))
    return found


# rST in {eval-rst}: docutils parses each level of nesting (an indented list,
# quote or directive) a few Python calls deeper, and a hundred levels pass
# Python's recursion limit (a RecursionError traceback). Far below that:
MAX_RST_DEPTH = 32
# -- KB094 headings: MyST gives each heading a unique anchor by trying a-1,
# a-2 … from the start, so a page of 40,000 "## a" took four minutes (the
# longest article has under 100 headings)
MAX_HEADINGS = 1000
_headings: dict[str, int] = {}  # docname -> headings read for it so far (the page, then its includes)


def rst_too_deep(blocks: list[kb_markdown.Block]) -> list[tuple[int, int, int]]:
    """(first line, end line, 1-based line) of the block of the page (0-based
    lines) to blank for each {eval-rst} of its directives ``blocks`` indented
    more than MAX_RST_DEPTH levels deep (the directive, or the one or the
    div around it), and where.
    The rST is read in lines as docutils cuts it (str.splitlines)."""
    found = []
    for block in blocks:
        pieces = block.content.splitlines(keepends=True)
        deep = block.name == "eval-rst" and _rst_deep_line(pieces)
        if deep:
            line = block.content_lines[sum(piece.count("\n") for piece in pieces[: deep - 1])]
            found.append((*block.outermost, line + 1))
    return found


def _rst_deep_line(lines: list[str]) -> int | None:
    """1-based line of ``lines`` (rST) where the indentation passes
    MAX_RST_DEPTH levels, if it does."""
    stack: list[int] = []
    for number, line in enumerate(lines, 1):
        line = line.expandtabs(8)
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        while stack and stack[-1] > indent:
            stack.pop()
        if not stack or stack[-1] < indent:
            stack.append(indent)
        if len(stack) > MAX_RST_DEPTH:
            return number
    return None


# rST in {eval-rst}: an explicit markup line that names a directive but is
# not one (``.. note: text``, ``.. note：text``, ``.. note  :: text``,
# ``.. note text``) is a comment, which docutils drops from the page without
# a word: a directive mistyped (KB133). What a directive is, is docutils' own
# pattern (states.Body.patterns: the name, one optional space, "::", then a
# space or the line's end); which names are directives, docutils' own lookup
# (directives.directive: the registered ones, Sphinx's and the page's
# language's included). A note to editors belongs in a ``%`` line of the page.
RST_EXPLICIT_NAME = re.compile(r"^[ \t]*\.\.[ \t]+([^\W\d_][\w-]*)(.*)$")
RST_DIRECTIVE_MARK = re.compile(r"[ ]?::( |$)")


@functools.cache
def _lookup_document():
    """A document for docutils' directive lookup (which reports on it; silenced)."""
    settings = frontend.get_default_settings(rst.Parser)
    settings.report_level = 5
    return new_document("<lookup>", settings)


def is_directive_name(name: str, language_code: str) -> bool:
    language = rst_languages.get_language(language_code.replace("_", "-").lower())
    return directives.directive(name, language, _lookup_document())[0] is not None


def rst_comment_directives(env, blocks: list[kb_markdown.Block]) -> list[tuple[int, str, str]]:
    """(1-based line, name, what follows it) of each rST comment in the
    {eval-rst} blocks of ``blocks`` (a page's directives) that names a
    directive without being one."""
    language = env.settings.get("language_code", "en")
    found = []
    for block in blocks:
        if block.name not in ("eval-rst", "eval-rest"):
            continue
        for number, line in enumerate(block.content.split("\n")):
            match = RST_EXPLICIT_NAME.match(line)
            if (
                match
                and number < len(block.content_lines)
                and not RST_DIRECTIVE_MARK.match(match.group(2))
                and is_directive_name(match.group(1), language)
            ):
                found.append((block.content_lines[number] + 1, match.group(1), match.group(2)))
    return found


def cut_too_deep(env, text: str, location, page: str | None = None) -> str:
    """``text`` without each directive or div that holds directives or divs
    nested more than kb_markdown.MAX_DIRECTIVE_DEPTH (or blocks more than
    kb_markdown.MAX_LEVELS) deep, nor the {eval-rst} blocks nested too deep
    (lines kept), each reported at its line; and past the MAX_HEADINGS-th
    heading of the page ``page`` (counted with the files it includes), cut."""
    md = kb_markdown.parser(env.config.myst_enable_extensions)
    cut = []
    for start, end in kb_markdown.too_deep_blocks(md, env, text):
        logger.warning(
            "KB053 directives nested more than %d levels deep in this one (or directives, "
            "divs, lists and quotes more than %d blocks deep): the parser would exceed "
            "Python's recursion limit; flatten the nesting",
            kb_markdown.MAX_DIRECTIVE_DEPTH,
            kb_markdown.MAX_LEVELS,
            location=location(start + 1),
            type="kb",
            subtype="nesting",
        )
        cut.append((start, end))
    headings = sorted(
        found.line(token.map[0])
        for found in kb_markdown.walk(md, env, text)
        for token in found.tokens
        if token.type == "heading_open" and token.map
    )
    before = _headings.get(page, 0) if page else 0
    allowed = max(0, MAX_HEADINGS - before)
    if page:
        _headings[page] = before + len(headings)
    if len(headings) > allowed:
        logger.warning(
            "KB094 the page has %d headings%s, more than the %d a page may have (MyST's anchors "
            "for them take time with the square of their number); split the page, or write "
            "the lines as text",
            before + len(headings),
            " with the files it includes" if before else "",
            MAX_HEADINGS,
            location=location(headings[allowed] + 1),
            type="kb",
            subtype="limit",
        )
        cut.append((headings[allowed], text.count("\n") + 1))
    blocks = list(kb_markdown.directives(md, env, text))  # read once for the rST checks
    for start, end, line in rst_too_deep(blocks):
        _report_rst_depth(location(line))
        cut.append((start, end))
    for start, end, line, name, figure in bad_captions(env, text):
        _report_caption(name, figure, location(line))
        cut.append((start, end))
    for line, name, rest in rst_comment_directives(env, blocks):
        if rest.lstrip(" \t").startswith(":") and not rest.lstrip(" \t").startswith("::"):
            shown = f"'.. {name}:' with one colon is"
        else:
            shown = f"'.. {name}{rest[:20]}' is not the directive {name} but"
        logger.warning(
            "KB133 %s an rST comment, which the page drops without a word: write the "
            "directive as '.. %s::'; a note to editors is a '%%' line outside {eval-rst}",
            shown,
            name,
            location=location(line),
            type="kb",
            subtype="comment",
        )
    if not cut:
        return text
    lines = text.split("\n")
    for start, end in cut:
        lines[start:end] = [""] * (end - start)
    return "\n".join(lines)


def _report_rst_depth(location) -> None:
    logger.warning(
        "KB053 reStructuredText nested more than %d levels deep here (lists, quotes or "
        "directives indented inside each other): the parser would exceed Python's "
        "recursion limit; flatten the nesting",
        MAX_RST_DEPTH,
        location=location,
        type="kb",
        subtype="nesting",
    )


def _report_depth(app, text: str, location) -> None:
    for line, limit in too_deep(app.env, text):
        logger.warning(
            "KB053 lists or quotes nested too deep here: the Markdown parser keeps "
            "%d levels of blocks (about nine levels of list) and would drop this "
            "block and everything after it; flatten the nesting",
            limit,
            location=location(line),
            type="kb",
            subtype="nesting",
        )


# -- KB068 a caption that is not one paragraph -------------------------------------


def bad_captions(env, text: str) -> list[tuple[int, int, int, str, bool]]:
    """(first line, end line, 1-based line, name, whether it is a figure's
    text) of the block of ``text``
    (0-based lines) to blank for each directive whose ``:caption:`` is not
    one paragraph of Markdown. Sphinx's code blocks (container_wrapper) and
    sphinxcontrib-mermaid (figure_wrapper) parse the caption as blocks and
    keep the first node: a caption of no node (a link definition, spaces) is
    an IndexError traceback, and any block in it (an include, directives
    nested past the recursion limit) is read out of sight of the page's
    checks. Read in the lines either one parses: docutils' (string2lines,
    which also breaks at \u2028) and as given."""
    md = kb_markdown.parser(env.config.myst_enable_extensions)
    found = []
    for block in kb_markdown.directives(md, env, text):
        if _empty_figure(md, env, block):
            found.append((*block.outermost, block.start + 1, block.name, True))
            continue
        caption = _caption(env, block)
        if caption is not None and any(
            [token.type for token in kb_markdown.parsed(md, lines)]
            != ["paragraph_open", "inline", "paragraph_close"]
            for lines in _as_read(caption)
        ):
            found.append((*block.outermost, block.start + 1, block.name, False))
    return found


def _as_read(text: str) -> tuple[str, str]:
    """``text`` as MyST's nested parse reads it, and in docutils' lines
    (string2lines, as Sphinx's parse_text_to_nodes cuts it: also at \u2028)."""
    return text, "\n".join(string2lines(text))


def _empty_figure(md, env, block) -> bool:
    """Whether a figure has a text that renders no node: only blank lines,
    link definitions or a front matter (MyST drops them). Docutils' Figure
    reads its caption from the first node of the text, and with none it ends
    in an UnboundLocalError."""
    cls = kb_markdown.block_class(env, block.name)
    if cls is None or not issubclass(cls, Figure):
        return False
    parsed = kb_markdown.parsed_directive(env, block)  # None: MyST reports it, and runs nothing
    if parsed is None or not parsed.body:
        return False
    return any(
        all(token.type == "front_matter" for token in kb_markdown.parsed(md, lines))
        for lines in _as_read("\n".join(parsed.body))
    )


def _caption(env, block) -> str | None:
    """A directive's ``:caption:`` as MyST gives it to the directive, when the
    directive parses it as Markdown (a toctree's caption is plain text)."""
    cls = kb_markdown.block_class(env, block.name)
    if cls is None or "caption" not in (cls.option_spec or {}) or issubclass(cls, TocTree):
        return None
    if "caption" not in option_keys(block):
        return None
    parsed = kb_markdown.parsed_directive(env, block)  # None: MyST reports it, and runs nothing
    caption = parsed.options.get("caption") if parsed is not None else None
    if not isinstance(caption, str):
        return None
    if not caption and issubclass(cls, LiteralInclude):
        return block.argument  # Sphinx captions it with the file name, as given
    if not caption and issubclass(cls, CodeBlock):
        return None  # no caption
    return caption


def _report_caption(name: str, figure: bool, location) -> None:
    if figure:
        logger.warning(
            "KB068 the text of this {%s} renders nothing (only blank lines, link definitions "
            "or a --- block): a figure takes its caption from the first thing its text holds, "
            "and the build would stop; remove the blank lines after the options, or write a caption",
            name,
            location=location,
            type="kb",
            subtype="caption",
        )
        return
    logger.warning(
        "KB068 the :caption: of this {%s} is not one paragraph of text: it is parsed as "
        "Markdown, and only its first paragraph is kept (a caption of no text stops the build); "
        "write one line, and escape a first character that would start a heading, quote or "
        "list (\\# 标题, \\> 1, \\- x, 1\\. 步骤)",
        name,
        location=location,
        type="kb",
        subtype="caption",
    )


# -- KB065 an option given twice ------------------------------------------------


def _option_block(body: str) -> tuple[str, list[int], int] | None:
    """The option block MyST reads at the start of a directive's body (as
    myst_parser's _parse_directive_options finds it): its text, the 0-based
    line of ``body`` (counted in newlines) of each of its lines, and how many
    such lines of ``body`` it takes (a closing ``---`` included)."""
    if not body.startswith("---") and not body.lstrip().startswith(":"):
        return None
    parts = body.splitlines(keepends=True)
    at = [0]  # the line each part starts on; past the last part, the line after the body
    for part in parts:
        at.append(at[-1] + part.count("\n"))
    at[-1] = body.count("\n") + 1
    lines = [part.rstrip("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029") for part in parts]
    if body.startswith("---"):
        block = []
        for line in lines[1:]:
            if line.startswith("---"):
                taken = at[len(block) + 1] + 1
                break
            block.append(line)
        else:  # no closing line: all of it
            taken = at[-1]
        return textwrap.dedent("\n".join(block)), at[1 : 1 + len(block)], taken
    block = []
    for line in lines:
        stripped = line.lstrip()
        if not stripped.startswith(":") or stripped.startswith(":::"):
            break
        block.append(stripped[1:])
    return "\n".join(block), at[: len(block)], at[len(block)]


def repeated_options(env, text: str) -> list[tuple[int, str, int]]:
    """(1-based line, key, 1-based line of its first value) of each directive
    option given again in the same option block (once per key and block),
    directives in directives included (kb.core.markdown.walk: each body as
    MyST reads it)."""
    md = kb_markdown.parser(env.config.myst_enable_extensions)
    found: list[tuple[int, str, int]] = []
    for block in kb_markdown.directives(md, env, text):
        found += _repeated_keys(*_option_pairs(block), block.content_lines)
    return sorted(found)


def _option_pairs(block) -> tuple[list, list[int]]:
    """The (key, value) tokens of a directive's option block (kb.core.markdown.Block)
    as MyST reads them, and the line of the content of each line of the block
    (none if MyST reads no option block, or cannot read it)."""
    if not block.takes_options or (options := _option_block(block.content)) is None:
        return [], []
    try:
        pairs, _state = options_to_tokens(options[0])
    except TokenizeError:  # MyST reports it (myst.directive_option)
        return [], []
    return pairs, options[1]


def option_keys(block) -> list[str]:
    """The option keys of a directive (kb.core.markdown.Block), in order."""
    return [key.value for key, _value in _option_pairs(block)[0]]


def _repeated_keys(pairs: list, at: list[int], lines: tuple[int, ...]) -> list[tuple[int, str, int]]:
    """The keys given again in an option block, once each (see repeated_options);
    ``at``: the line of the content of each line of the block; ``lines``: the
    line of the page of each line of the directive's content."""
    first: dict[str, int] = {}
    found = {}
    for key, _value in pairs:
        line = 1 + lines[min(at[min(key.start.line, len(at) - 1)], len(lines) - 1)]
        if key.value not in first:
            first[key.value] = line
        elif key.value not in found:
            found[key.value] = (line, key.value, first[key.value])
    return list(found.values())


# -- KB066 front matter inside ------------------------------------------------


def dropped_front_matter(env, text: str, whole: bool = False) -> list[int]:
    """1-based lines of each block between ``---`` lines that starts a text
    MyST parses on its own (a directive's body, a div's text), which MyST
    drops; ``whole``: the text's own too (a glossary definition, a cell:
    texts MyST parses on their own, where no front matter belongs)."""
    md = kb_markdown.parser(env.config.myst_enable_extensions)
    return [
        inner.line(inner.tokens[0].map[0]) + 1 if inner.tokens[0].map else inner.line(0) + 1
        for inner in kb_markdown.walk(md, env, text)
        if (inner.depth or whole) and inner.tokens and inner.tokens[0].type == "front_matter"
    ]


# -- KB087 table cells past the header's ------------------------------------------
# A pipe table has as many columns as its header: markdown-it (GFM's rule)
# drops the cells a row has beyond them, without a word. A row's cells are
# counted as markdown-it's table rule cuts them: at each "|" not after a
# backslash, the empty text before a leading and after a trailing "|" left
# out; the line is read after its blockquote markers and indentation.
_ROW_PREFIX = re.compile(r"^(?:[ \t]*>)*")


def row_cells(line: str) -> int:
    """How many cells markdown-it's table rule reads in a row ``line``."""
    cells, current, escaped = [], [], False
    for ch in _ROW_PREFIX.sub("", line).strip():
        if ch == "|" and not escaped:
            cells.append("".join(current))
            current = []
        else:
            current.append(ch)
        escaped = ch == "\\"
    cells.append("".join(current))
    if cells and cells[0] == "":
        cells.pop(0)
    if cells and cells[-1] == "":
        cells.pop()
    return len(cells)


def dropped_cells(env, text: str) -> list[tuple[int, int, int]]:
    """(1-based line, cells, columns) of each table row with more cells than
    its table's header has columns."""
    md = kb_markdown.parser(env.config.myst_enable_extensions)
    found = []
    for inner in kb_markdown.walk(md, env, text):
        lines = inner.text.split("\n")
        columns, in_head = 0, False
        for token in inner.tokens:
            if token.type == "thead_open":
                columns, in_head = 0, True
            elif token.type == "thead_close":
                in_head = False
            elif token.type == "th_open" and in_head:
                columns += 1
            elif token.type == "tr_open" and not in_head and token.map and token.map[0] < len(lines):
                cells = row_cells(lines[token.map[0]])
                if cells > columns:
                    found.append((inner.line(token.map[0]) + 1, cells, columns))
    return found


def dropped_block_breaks(env, text: str) -> list[int]:
    """1-based lines of each MyST block break with text after it (``+++
    text``): MyST keeps the text as a notebook cell's metadata, which no page
    shows."""
    md = kb_markdown.parser(env.config.myst_enable_extensions)
    return [
        inner.line(token.map[0]) + 1
        for inner in kb_markdown.walk(md, env, text)
        for token in inner.tokens
        if token.type == "myst_block_break" and token.content.strip() and token.map
    ]


def report_dropped_text(env, text: str, location, whole: bool = False) -> None:
    """Report what MyST would drop without a word: a front matter inside
    (KB066), the text after an attribution (KB069), table cells past the
    header's columns (KB087), the text after a block break's +++ (KB088)."""
    for line in dropped_front_matter(env, text, whole):
        logger.warning(
            "KB066 this text starts with a block between --- lines: MyST reads it as front "
            "matter and drops it without a word; start the text with a line of its own, or "
            "use a thematic break (***) instead of ---",
            location=location(line),
            type="kb",
            subtype="dropped",
        )
    for line in dropped_block_breaks(env, text):
        logger.warning(
            "KB088 the text after +++ is kept as a notebook cell's metadata, which no page "
            "shows; write it on a line of its own (a +++ line alone is a break between blocks)",
            location=location(line),
            type="kb",
            subtype="dropped",
        )
    for line, cells, columns in dropped_cells(env, text):
        logger.warning(
            "KB087 this table row has %d cells, but the table's header has %d columns: "
            "Markdown drops the cells past them without a word; add the columns to the header "
            "(and the --- line under it), or write a | inside a cell as \\|",
            cells,
            columns,
            location=location(line),
            type="kb",
            subtype="dropped",
        )
    for line, name in dropped_after_attribution(env, text):
        logger.warning(
            "KB069 this text follows the '-- author' line of the {%s} above: MyST keeps only "
            "the quote before that line and the attribution, and drops the rest without a word; "
            "end the %s with the attribution, or start a line that is not one with '--', '---' or '—'",
            name,
            name,
            location=location(line),
            type="kb",
            subtype="dropped",
        )


# -- KB069 text after an attribution -----------------------------------------------
# MyST's block_quote (myst_parser/mocking.py, MockState.block_quote, for
# docutils' epigraph, highlights and pull-quote) takes the first line after a
# blank line that starts with "--", "---" or an em dash as the attribution,
# with the lines after it indented as far as its text, and parses none of the
# lines after those. Docutils' own rST parser keeps them (as a quote of their
# own); no upstream issue reports MyST's loss (searched 2026-12-04).
# tests/test_upstream_contract.py fails when MyST starts keeping them, and
# when its attribution rule moves away from this one.
_ATTRIBUTION = re.compile("^((?:---?(?!-)|—) *)(.+)")


def attribution_cut(lines: list[str]) -> int | None:
    """The index of the first line with text after a quote's attribution
    (which MyST drops), or None."""
    blank_before = False
    for i, line in enumerate(lines):
        if not line.strip():
            blank_before = True
            continue
        if not blank_before:
            continue
        blank_before = False
        found = _ATTRIBUTION.match(line)
        if not found:
            continue
        indent = len(found.group(1))
        after = i + 1
        while after < len(lines) and len(lines[after][indent:]) == len(lines[after].lstrip()):
            after += 1
        return next((k for k in range(after, len(lines)) if lines[k].strip()), None)
    return None


def dropped_after_attribution(env, text: str) -> list[tuple[int, str]]:
    """(1-based line, name) of the first text MyST drops after the attribution
    of each epigraph, highlights or pull-quote (docutils' BlockQuote) of
    ``text``, directives in directives included."""
    md = kb_markdown.parser(env.config.myst_enable_extensions)
    found = []
    for block in kb_markdown.directives(md, env, text):
        cls = kb_markdown.block_class(env, block.name)
        if cls is None or not issubclass(cls, BlockQuote):
            continue
        body = kb_markdown.parsed_directive(env, block)
        if body is None:  # MyST reports it, and runs nothing
            continue
        cut = attribution_cut(body.body)
        if cut is not None:
            # line ``k`` of the body is line ``body_offset + k`` of the content
            # (-1: the directive's own line, when MyST takes its text as the first)
            at = body.body_offset + cut
            line = block.start if at < 0 else block.content_lines[min(at, len(block.content_lines) - 1)]
            found.append((line + 1, block.name))
    return found


def report_repeated_options(env, text: str, location, where: str = "") -> None:
    """Report each option given twice (KB065), at ``location(line)``; for a
    text that is not a file of its own (a glossary definition), ``where``
    names it instead of the line of the first value."""
    for line, key, first in repeated_options(env, text):
        logger.warning(
            "KB065 the option :%s: is given again %s: the directive would keep only the last "
            "value, without a word; give each option once",
            key,
            where or f"(first on line {first})",
            location=location(line),
            type="kb",
            subtype="option",
        )


# -- KB094 blank runs: Pygments' lexers take time with the square of a run of
# lines holding only spaces or tabs (20,000 such lines: a minute; a 1 MiB page
# of them: hours), in any code block. No page needs more than this many in a row.
MAX_BLANK_RUN = 500


def _runs(lines: list[str]):
    """For each line, the length of the run of blank lines it ends (0 for a
    line with text). Blank: nothing but whitespace, Unicode's too (a line of
    U+3000 or U+00A0 is as slow to highlight as one of spaces)."""
    run = 0
    for line in lines:
        run = 0 if line.strip() else run + 1
        yield run


def blank_run(text: str) -> int | None:
    """The 1-based line where a run of more than MAX_BLANK_RUN lines holding
    nothing but whitespace starts, if there is one (linear: no regex)."""
    for number, run in enumerate(_runs(text.split("\n")), 1):
        if run > MAX_BLANK_RUN:
            return number - run + 1
    return None


def report_blank_run(location) -> None:
    logger.warning(
        "KB094 more than %d lines in a row hold nothing but spaces or tabs: highlighting "
        "them takes time with the square of their number; remove them",
        MAX_BLANK_RUN,
        location=location,
        type="kb",
        subtype="untrusted",
    )


def cut_blank_runs(text: str, location) -> str:
    """``text`` with each run of blank lines cut to MAX_BLANK_RUN lines, the
    first such run reported (KB094) at its line of ``location``."""
    line = blank_run(text)
    if line is None:
        return text
    report_blank_run(location(line))
    lines = text.split("\n")
    return "\n".join(piece for piece, run in zip(lines, _runs(lines), strict=True) if run <= MAX_BLANK_RUN)


# -- KB094 footnote references: for each "[^", markdown-it's footnote rule
# reads on to the next "]", space or line break for the label; a run of "[^" with
# neither ("[^[^[^…") costs time with the square of its length (20 KB: a
# minute and a half, three times over: MyST and two checks parse a page).
# Characters the rule reads, over the whole text; a page of footnotes reads a
# few thousand.
MAX_FOOTNOTE_SCAN = 200_000
_FOOTNOTE_START = re.compile(r"\[\^")
# what ends the label for markdown-it's footnote rule: "]", or a space or a
# line break, and nothing else (a tab or U+3000 does not)
_LABEL_END = re.compile(r"[\] \n]")


def footnote_scan(text: str) -> tuple[int, int] | None:
    """(offset, characters read) of the first "[^" at which the footnote rule
    has read more than MAX_FOOTNOTE_SCAN characters in all, or None. Linear:
    each "[^" finds the next "]", space or line break from where the last one did."""
    total, end = 0, -1
    for m in _FOOTNOTE_START.finditer(text):
        if end < m.end():
            stop = _LABEL_END.search(text, m.end())
            end = stop.start() if stop else len(text)
        total += end - m.end()
        if total > MAX_FOOTNOTE_SCAN:
            return m.start(), total
    return None


def cut_footnote_scans(text: str, location) -> str:
    """``text`` with every "[^" written "[\\^" (shown as the characters they
    are) when the footnote rule would read too much of it (footnote_scan),
    reported (KB094) at the line where it does."""
    found = footnote_scan(text)
    if found is None:
        return text
    report_footnote_scan(location(text.count("\n", 0, found[0]) + 1))
    return _FOOTNOTE_START.sub(r"[\\^", text)


def report_footnote_scan(location, where: str = "") -> None:
    """KB094 for a text footnote_scan refuses (``where``: "a cell of … has ")."""
    logger.warning(
        'KB094 %stoo many "[^" without a "]" after them: Markdown reads each as the start of '
        "a footnote reference, in time that grows with the square of their number; write a "
        'footnote reference as [^name] with no space in it, and "[\\^" for the characters',
        where,
        location=location,
        type="kb",
        subtype="untrusted",
    )


def on_source_read(app, docname: str, source: list[str]) -> None:
    if str(app.env.doc2path(docname)).endswith(".md"):
        source[0] = cut_blank_runs(source[0], lambda line: (docname, line))
        source[0] = cut_footnote_scans(source[0], lambda line: (docname, line))
        _report_depth(app, source[0], lambda line: (docname, line))
        report_repeated_options(app.env, source[0], lambda line: (docname, line))
        report_dropped_text(app.env, source[0], lambda line: (docname, line))
        _headings[docname] = 0  # the page's own count starts here; its includes add to it
        source[0] = cut_too_deep(app.env, source[0], lambda line: (docname, line), docname)


# A page with what it reads, and what that reads, in all: 30 files that each
# include the next twice are 2**29 includes, a build that never ends; and a
# 1 MiB page can hold 20,000 literalincludes of one large file (KB063).
# As much as a page may hold itself (MAX_PAGE_BYTES): highlighted, 1 MiB of
# code is a page of some 13 MB.
MAX_INCLUDES = 200
MAX_INCLUDED_BYTES = 1 << 20
_included: dict[str, list] = {}  # docname -> [files, bytes, warned] read for it in this build


def deep_in_the_stack() -> bool:
    """Whether the parse has used half of Python's recursion limit: each
    include (or table in a table's cell) is parsed some dozens of calls deeper
    than the one holding it, and past the limit the build ends in a traceback."""
    frame, depth = inspect.currentframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth > sys.getrecursionlimit() // 2


def over_budget_alone(files: int, size: int) -> bool:
    """Whether ``files`` files of ``size`` bytes in all are past a page's budget."""
    return files > MAX_INCLUDES or size > MAX_INCLUDED_BYTES


def read_so_far(docname: str) -> tuple[int, int]:
    """(files, bytes) the page ``docname`` has read so far in this process."""
    count = _included.get(docname)
    return (count[0], count[1]) if count else (0, 0)


def read_budget_spent(docname: str) -> bool:
    """Whether the page ``docname`` has read all its budget allows."""
    count = _included.get(docname)
    return count is not None and over_budget_alone(count[0], count[1])


def report_over_budget(docname: str, name, location) -> None:
    """Report (KB063, once per page) that ``name`` is past the page's budget."""
    _report_read(
        _included.setdefault(docname, [0, 0, False]),
        f"the page reads more than {MAX_INCLUDES} files or {MAX_INCLUDED_BYTES >> 20} MiB in all "
        "(includes, literalincludes and csv-table files, and what included files read, counted)",
        name,
        "read less, or split the page",
        location,
    )


def over_read_budget(docname: str, size: int, name, location) -> bool:
    """Count one file of ``size`` bytes read for the page ``docname`` (an
    include, a literalinclude, a csv-table's :file:); past the page's budget,
    report it (KB063, once per page, at ``location``, or what it returns when
    called) and say so: the caller leaves it out."""
    count = _included.setdefault(docname, [0, 0, False])
    count[0] += 1
    count[1] += size
    if not over_budget_alone(count[0], count[1]):
        return False
    report_over_budget(docname, name, location)
    return True


def _report_read(count: list, why: str, name, fix: str, location) -> None:
    if count[2]:  # once per page
        return
    count[2] = True
    logger.warning(
        "KB063 %s: %s and what follows are left out; %s",
        why,
        name,
        fix,
        location=location() if callable(location) else location,
        type="kb",
        subtype="include",
    )


def on_include_read(app, relative_path, parent_docname: str, content: list[str]) -> None:
    """An included file is parsed like a page (MyST's {include}, or rST's
    include with a MyST parser): the same limit, reported at its own line.
    And a page's reads have a budget; past it, an include is empty."""
    path = Path(app.srcdir) / relative_path
    page = app.env.docname  # the page being read (the parent may be another included file)
    if deep_in_the_stack():
        _report_read(
            _included.setdefault(page, [0, 0, False]),
            "includes nested too deep (a file that includes itself, or a long chain of files that include the next)",
            relative_path,
            "include the files from the page",
            (page, None),
        )
        content[0] = ""
        return
    if over_read_budget(page, len(content[0].encode("utf-8")), relative_path, (page, None)):
        content[0] = ""
        return
    # in the lines MyST parses: it joins the file's str.splitlines() (as
    # kb.guard.untrusted.on_include_read does too)
    content[0] = "\n".join(content[0].splitlines())
    content[0] = cut_blank_runs(content[0], lambda line: f"{path}:{line}")
    content[0] = cut_footnote_scans(content[0], lambda line: f"{path}:{line}")
    _report_depth(app, content[0], lambda line: f"{path}:{line}")
    # MyST's {include} parses any file as Markdown (part.txt too); an rST
    # include of the same file reads it as rST: both are checked
    report_repeated_options(app.env, content[0], lambda line: f"{path}:{line}")
    report_dropped_text(app.env, content[0], lambda line: f"{path}:{line}")
    content[0] = cut_too_deep(app.env, content[0], lambda line: f"{path}:{line}", page)
    if path.suffix != ".md":  # perhaps read as reStructuredText
        line = _rst_deep_line(content[0].split("\n"))
        if line:
            _report_rst_depth(f"{path}:{line}")
            content[0] = ""


# -- KB054 encoding --------------------------------------------------------------


def utf8_problem(data: bytes) -> tuple[int, str] | None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return line, f"byte 0x{data[exc.start]:02x}"
    return None


MAX_PAGE_BYTES = 1 << 20


def generated_names(app) -> set[str]:
    """Pages the build writes itself: a document of the same name would be
    overwritten without a word (tags/ holds the tag pages, kb.pages.tags)."""
    return set(app.config.html_additional_pages) | {"search", "404", "genindex", "py-modindex"}


# Folders of the written site that the build fills with its own files: a page
# written into one would be taken for one of them (the HTML guard reads the
# copied files as assets, not as pages) or removed with them (Pagefind
# replaces pagefind/ whole); tags/ holds the tag pages (kb.pages.tags).
BUILD_FOLDERS = frozenset({"_static", "_images", "_downloads", "_sources", "pagefind", "downloads", "tags"})


def collision(app, docname: str) -> str | None:
    """Why a page of this name cannot be written where it would go, if so."""
    if docname in generated_names(app):
        return "would be overwritten by the page the site generates under that name; rename the file"
    folder = docname.split("/")[0]
    if "/" in docname and (folder in BUILD_FOLDERS or folder.startswith(".")):
        return (
            f"would be written into {folder}/, a folder of the site that the build fills with "
            "its own files; move the file to another folder"
        )
    return None


# A page's name is its web address: Sphinx writes the page under the name
# as it is and links it, lists it in the sitemap and checks it was written
# under the name percent-encoded (a space, a quote, Chinese).
PAGE_NAME = re.compile(r"[A-Za-z0-9._/-]+\Z")


def forget_reads(app, env, docnames: list[str]) -> None:
    """Every page read from here on counts its reads from zero. Here, before
    any page is read (kb.guard.untrusted counts a page's includes ahead, in its
    own source-read handler): a second build in this process must not start
    from the first one's counts."""
    _included.clear()


def on_env_before_read_docs(app, env, docnames: list[str]) -> None:
    bad = False
    for docname in sorted(env.found_docs):
        if not PAGE_NAME.match(docname):
            logger.warning(
                "KB093 the page %s has a name its web address spells otherwise (%s); name "
                "pages with ASCII letters, digits, '-' and '_': rename the file",
                docname,
                quote(docname),
                location=(docname, 1),
                type="kb",
                subtype="collision",
            )
            bad = True
        why = collision(app, docname)
        if why:
            logger.warning(
                "KB057 the page %s %s",
                docname,
                why,
                location=(docname, 1),
                type="kb",
                subtype="collision",
            )
            bad = True
    for docname in docnames:
        path = env.doc2path(docname)
        size = path.stat().st_size
        if size > MAX_PAGE_BYTES:
            logger.warning(
                "KB056 the page is %.1f MiB, over the limit of %d MiB: split it into "
                "several pages (or move data out of it)",
                size / (1 << 20),
                MAX_PAGE_BYTES >> 20,
                location=(docname, 1),
                type="kb",
                subtype="size",
            )
            bad = True
            continue
        problem = utf8_problem(path.read_bytes())
        if problem:
            line, what = problem
            logger.warning(
                "KB054 the page is not UTF-8 (%s on this line); save it as UTF-8",
                what,
                location=(docname, line),
                type="kb",
                subtype="encoding",
            )
            bad = True
    if bad:
        raise BuildStopped


# -- KB055 circular toctree -------------------------------------------------------


def toctree_cycles(includes: dict[str, list[str]], root: str) -> list[tuple[str, str]]:
    """(parent, child) toctree entries that lead back to a page above them.

    Depth first with an explicit stack: a chain of thousands of pages must
    not hit Python's recursion limit here either."""
    cycles: list[tuple[str, str]] = []
    done: set[str] = set()
    for start in [root, *sorted(includes)]:
        if start in done:
            continue
        on_path = {start}
        stack = [(start, iter(includes.get(start, ())))]
        while stack:
            doc, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                on_path.discard(doc)
                done.add(doc)
            elif child in on_path:
                cycles.append((doc, child))
            elif child not in done:
                on_path.add(child)
                stack.append((child, iter(includes.get(child, ()))))
    return cycles


# Pages listed in pages listed in pages …: the site has three levels (home,
# guide, article). The writers walk the contents with Python calls, a few per
# level: a chain of some hundred pages passed Python's recursion limit.
MAX_TOCTREE_DEPTH = 12


def toctree_too_deep(includes: dict[str, list[str]]) -> tuple[str, str] | None:
    """The first (parent, child) toctree entry below MAX_TOCTREE_DEPTH levels
    of pages listing pages, on the longest chain (toctrees without cycles)."""
    indegree: dict[str, int] = {}
    for parent, children in includes.items():
        indegree.setdefault(parent, 0)
        for child in children:
            indegree[child] = indegree.get(child, 0) + 1
    depth = dict.fromkeys(indegree, 0)
    ready = sorted(doc for doc, n in indegree.items() if n == 0)
    while ready:
        doc = ready.pop()
        for child in includes.get(doc, ()):
            if depth[doc] + 1 > depth[child]:
                depth[child] = depth[doc] + 1
                if depth[child] > MAX_TOCTREE_DEPTH:
                    return doc, child
            indegree[child] -= 1
            if indegree[child] == 0:
                ready.append(child)
    return None


def _entry_line(env, parent: str, child: str) -> int | None:
    """The line of ``child`` in the toctree of ``parent``'s source."""
    name = child.rsplit("/", 1)[-1]
    entry = re.compile(rf"^\s*(?:[^<]*<)?/?(?:[\w./-]*/)?{re.escape(name)}(?:\.md)?>?\s*$")
    lines = env.doc2path(parent).read_text(encoding="utf-8").split("\n")
    return next((i + 1 for i, line in enumerate(lines) if entry.match(line)), None)


def on_env_updated(app, env) -> None:
    cycles = toctree_cycles(kb_store.toctrees(env), app.config.root_doc)
    for parent, child in cycles:
        logger.warning(
            "KB055 circular toctree: %s lists %s, which is already above it in the "
            "site's contents; list every page in one toctree only, under its guide",
            parent,
            child,
            location=(parent, _entry_line(env, parent, child)),
            type="kb",
            subtype="toctree",
        )
    if cycles:
        raise BuildStopped
    deep = toctree_too_deep(kb_store.toctrees(env))
    if deep:
        parent, child = deep
        logger.warning(
            "KB055 toctrees nested more than %d pages deep: %s lists %s at the end of a "
            "chain of pages listing pages; list articles in their guide's toctree",
            MAX_TOCTREE_DEPTH,
            parent,
            child,
            location=(parent, _entry_line(env, parent, child)),
            type="kb",
            subtype="toctree",
        )
        raise BuildStopped


# -- KB061 a page file the build does not read, KB132 Python under docs/ --------------

# Suffixes of files that look like pages (a contributor means them to be one)
PAGE_LIKE = frozenset({".md", ".markdown", ".mdown", ".mkd", ".mdx", ".rst", ".ipynb"})

# KB132: what pytest would load from a folder it collects (conftest.py, test_*.py and
# any module they import; its settings files) and Python reads at start-up
# (.pth): under docs/ none is part of the site, and none is run. The pages'
# samples run in the sandbox of tools/run_samples.py, which copies only the
# pages; a file like these would be a pull request's code that a reviewer
# might think runs, or a page's code in the wrong place.
PYTHON_LIKE = frozenset({".py", ".pyc", ".pyw", ".pth"})
# (pytest 9 reads pytest.toml and .pytest.toml too)
TEST_SETTINGS = frozenset(
    {"pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini", "setup.cfg", "pyproject.toml"}
)


def stray_files(app) -> tuple[list[Path], list[Path]]:
    """One walk of docs/ for the files the build leaves aside without a word:
    (files that look like pages but have a suffix the build does not read,
    .MD, .markdown, .rst: KB061; Python code or test settings: KB132).
    A .md file that is no document is one conf.py excludes on purpose
    (README.md notes, the importer's files, the books' leaving out articles.md)."""
    srcdir = Path(app.srcdir)
    suffixes = set(app.config.source_suffix)
    unread, python = [], []
    for path in sorted(srcdir.rglob("*")):
        if path.relative_to(srcdir).parts[0] == "_build" or not path.is_file():
            continue
        if path.suffix.lower() in PAGE_LIKE and path.suffix not in suffixes:
            unread.append(path)
        elif path.suffix.lower() in PYTHON_LIKE or path.name.lower() in TEST_SETTINGS:
            python.append(path)
    return unread, python


def on_env_before_read_docs_stray(app, env, docnames: list[str]) -> None:
    unread, python = stray_files(app)
    for path in unread:
        logger.warning(
            "KB061 %s looks like a page but the build does not read it: pages are "
            "Markdown files ending in lowercase .md; rename it, or remove it",
            path.relative_to(app.srcdir).as_posix(),
            location=f"{path}:1",
            type="kb",
            subtype="unread",
        )
    for path in python:
        logger.warning(
            "KB132 %s is Python code or test settings under docs/: the site does not show it "
            "and the tests do not run it (a page's code samples are its ```python blocks, run "
            "in a sandbox; their shared setup lives in tests/snippet_fixtures.py); remove it",
            path.relative_to(app.srcdir).as_posix(),
            location=f"{path}:1",
            type="kb",
            subtype="python",
        )


# -- KB062 {only} true in no build --------------------------------------------------------

# The builds of the site and the tags Sphinx sets for each (the builder's name,
# builder_<name>, format_<format>), with the project's: the site (make html)
# and the books (make epub, make pdf: -t book)
BUILDS = {
    "html": ("html", "builder_html", "format_html"),
    "epub": ("epub", "builder_epub", "format_html", "book"),
    "latex": ("latex", "builder_latex", "format_latex", "book"),
}


def shown_in(expr: str) -> list[str] | str:
    """The builds in which an only block's condition holds, or why it cannot
    be read. Sphinx reads the condition with Jinja's expression parser
    (TemplateSyntaxError for `html and (`; ValueError for a number), its
    evaluation refuses what is not a tag (TypeError for `true`, `none`, or
    `html if book` without an else), and both recurse (RecursionError: 1,000
    brackets, or 1,000 tags joined by `or`). Sphinx's own evaluation catches
    every Exception, and keeps the block."""
    from sphinx.util.tags import Tags

    try:
        return [name for name, tags in BUILDS.items() if Tags(list(tags)).eval_condition(expr)]
    except RecursionError:
        return "is too long or nested too deep to be read: write a few tags"
    except Exception:  # noqa: BLE001 (as Sphinx's own evaluation: whatever the parser raises)
        return (
            "cannot be read: write tags joined by 'and', 'or', 'not' and brackets, such as "
            "'html' or 'book or latex' ('true', 'false' and 'none' are not tags)"
        )


# The page's tree as a whole: what the checks of each text cannot add up
# (nesting through includes, cells, captions, emphasis in emphasis). Sphinx
# pickles the tree and writes it recursively, and about 195 levels pass
# Python's recursion limit (a RecursionError traceback).
MAX_TREE_DEPTH = 150


def cut_deep_tree(app, doctree) -> None:
    """Report (KB053) and empty each element nested MAX_TREE_DEPTH deep in the
    page's tree, measured without recursion, before anything else walks it."""
    stack = [(doctree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth < MAX_TREE_DEPTH:
            stack.extend((child, depth + 1) for child in getattr(node, "children", ()))
        elif getattr(node, "children", None):
            holder = node
            while holder is not None and not holder.line:
                holder = holder.parent
            logger.warning(
                "KB053 blocks and emphasis nested more than %d levels deep here: Sphinx would "
                "exceed Python's recursion limit saving the page; flatten the nesting",
                MAX_TREE_DEPTH,
                location=holder if holder is not None else doctree,
                type="kb",
                subtype="nesting",
            )
            node.children = []


def on_doctree_read_only(app, doctree) -> None:
    from sphinx import addnodes

    for node in doctree.findall(addnodes.only):
        expr = node.get("expr", "")
        builds = shown_in(expr)
        if builds and isinstance(builds, list):
            continue
        if isinstance(builds, str):
            problem = builds
        else:
            problem = (
                "holds in no build of this site (the site: html; the books: epub and latex, "
                "with the tag book): its content would be in none; fix the condition, or "
                "remove the block"
            )
        logger.warning(
            "KB062 the only block's condition %s %s",
            clipped(repr(expr), 100),
            problem,
            location=node,
            type="kb",
            subtype="only",
        )


def setup(app) -> dict[str, Any]:
    app.setup_extension("myst_parser")
    app.setup_extension("kb.core.store")  # the toctrees, for the cycle check
    app.connect("source-read", on_source_read)
    app.connect("include-read", on_include_read)
    app.connect("env-before-read-docs", forget_reads)
    app.connect("env-before-read-docs", on_env_before_read_docs)
    app.connect("env-before-read-docs", on_env_before_read_docs_stray)
    app.connect("doctree-read", cut_deep_tree, priority=1)
    app.connect("doctree-read", on_doctree_read_only)
    app.connect("env-updated", on_env_updated)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
