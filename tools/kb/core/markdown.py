"""A look at a page's Markdown blocks as MyST sees them, before MyST reads it.

Used by ``kb.guard.untrusted`` (MyST includes, found before MyST reads the file)
and ``kb.guard.silent_loss`` (nesting deeper than the parser keeps, options
given twice). The parser is MyST's own (``create_md_parser`` with the
project's ``myst_enable_extensions``), so fences, colon fences, lists and
quotes are found exactly where MyST finds them.

MyST parses some text again on its own, and ``walk`` visits each such text
as MyST cuts it:

- a directive's body, cut with MyST's ``parse_directive_text`` (in MyST's
  API reference, ``myst_parser.parsers.directives``): after the option
  block, and with the text of the first line for a directive that takes no
  argument (``:::{note} text``); the directive class is the one Sphinx runs
  (``directive_class``);
- the text of a colon fence that is no directive (``:::name``): MyST makes
  it a div and parses its text (since MyST-Parser 0.19,
  executablebooks/MyST-Parser#713); a backtick fence that is no directive
  (```` ```{note}x ````) is code.

Which fences are directives, and the div, are not in MyST's API:
tests/test_upstream_contract.py checks the walk against MyST's own parse.
"""

from __future__ import annotations

import re
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from docutils import frontend, utils
from docutils.parsers import rst
from docutils.parsers.rst import Directive
from docutils.parsers.rst import directives as rst_directives
from docutils.parsers.rst import languages as rst_languages
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.directives import MarkupError, parse_directive_text
from myst_parser.parsers.mdit import create_md_parser
from sphinx.errors import ExtensionError

# Directives whose body is not Markdown: code, diagrams, rST, tables of paths.
LITERAL_BODIES = frozenset(
    {
        "code",
        "code-block",
        "sourcecode",
        "code-cell",
        "literalinclude",
        "include",
        "mermaid",
        "math",
        "eval-rst",
        "raw",
        "csv-table",
        "toctree",
        "glossary",
        # read as lines of inline text, not as blocks
        "parsed-literal",
        "line-block",
    }
)

_PARSERS: dict[tuple, MarkdownIt] = {}


def parser(extensions, max_nesting: int | None = None) -> MarkdownIt:
    """MyST's Markdown parser for these extensions (optionally with another
    nesting limit), made once per process."""
    key = (tuple(sorted(extensions)), max_nesting)
    if key not in _PARSERS:
        md = create_md_parser(MdParserConfig(enable_extensions=set(extensions)), RendererHTML)
        if max_nesting is not None:
            md.options["maxNesting"] = max_nesting
        _PARSERS[key] = md
    return _PARSERS[key]


def probe(app, max_nesting: int | None = None) -> MarkdownIt:
    return parser(app.config.myst_enable_extensions, max_nesting)


# The checks at source-read (KB053's nesting, rST depth, includes) each read
# the same page and directive bodies with the same parser: each text is
# parsed once. The tokens are only read, never changed. Bounded by the
# characters held (a 1 MiB page nests bodies of about its size).
_PARSED: OrderedDict[tuple[int, str], list[Token]] = OrderedDict()
_PARSED_CHARS = [0]
MAX_PARSED_CHARS = 8 << 20


def parsed(md: MarkdownIt, text: str) -> list[Token]:
    """``md.parse(text)``, from the cache when this parser read this text."""
    key = (id(md), text)
    if key in _PARSED:
        _PARSED.move_to_end(key)
        return _PARSED[key]
    tokens = md.parse(text)
    _PARSED[key] = tokens
    _PARSED_CHARS[0] += len(text)
    while _PARSED_CHARS[0] > MAX_PARSED_CHARS and len(_PARSED) > 1:
        (_, old), _tokens = _PARSED.popitem(last=False)
        _PARSED_CHARS[0] -= len(old)
    return tokens


# Directives inside directives: MyST parses each body a few dozen Python calls
# deeper, and passes Python's recursion limit at about 120 levels (so would
# the walk below, at about 500). Deeper than this is refused (KB053).
MAX_DIRECTIVE_DEPTH = 30


class _Unknown(Directive):
    """Stands for a directive Sphinx does not know (MyST reports the name and
    reads no body; the walk reads it anyway): with options and an argument,
    as every domain's directive has."""

    option_spec = {"class": rst_directives.class_option}
    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True


@cache
def _lookup_document():
    """A document for docutils' directive lookup to put its notes in (unread)."""
    settings = frontend.get_default_settings(rst.Parser)
    settings.report_level = settings.halt_level = 5
    return utils.new_document("<kb>", settings)


# Per build environment: each name's directive class, and the classes whose
# bodies are not Markdown (a page has dozens of directives, a site thousands).
_LOOKUPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LITERALS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def directive_class(env, name: str) -> type[Directive] | None:
    """The directive class Sphinx runs for ``{name}`` in a page, found in the
    order Sphinx looks while MyST parses (sphinx.util.docutils.sphinx_domains):
    the domain named (``py:function``), else the primary domain; then the
    standard domain; then docutils' registry, under the page language's
    names too (``{注意}``). None for a name none of them knows. (A page may
    not change the default domain: ``default-domain`` is refused, KB017.)"""
    known = _LOOKUPS.setdefault(env, {})
    name = name.lower()
    if name not in known:
        if ":" in name:
            domain, _, short = name.partition(":")
        else:
            domain, short = env.config.primary_domain, name
        found = None
        for where in (domain, "std"):
            try:
                found = env.get_domain(where).directive(short) if where else None
            except ExtensionError:  # no such domain
                found = None
            if found:
                break
        if not found:
            language = rst_languages.get_language(env.config.language or "en")
            found = rst_directives.directive(name, language, _lookup_document())[0]
        known[name] = found
    return known[name]


def is_literal(env, name: str, cls: type | None) -> bool:
    """Whether MyST does not parse a directive's body as Markdown: one of
    LITERAL_BODIES, by any of its names (or a subclass of one)."""
    if name.lower() in LITERAL_BODIES:
        return True
    if env not in _LITERALS:
        _LITERALS[env] = tuple(
            found for literal in LITERAL_BODIES if (found := directive_class(env, literal)) is not None
        )
    return cls is not None and issubclass(cls, _LITERALS[env])


def block_class(env, name: str) -> type[Directive] | None:
    """The class of the directive ``{name}`` of a page (None for eval-rst,
    which MyST handles itself, and for a name Sphinx does not know)."""
    return None if name == "eval-rst" else directive_class(env, name)


# Per build environment: each directive's text as MyST reads it (the walk reads
# the bodies; the checks read options, bodies of literal directives too)
_DIRECTIVE_TEXTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def parsed_directive(env, block: Block):
    """MyST's reading of a directive of a page (``parse_directive_text``:
    options, body, body_offset), or None where MyST reports the directive
    and runs nothing. A name Sphinx does not know is read as ``_Unknown``.
    Read once per directive and environment."""
    known = _DIRECTIVE_TEXTS.setdefault(env, {})
    if block not in known:
        try:
            known[block] = parse_directive_text(
                block_class(env, block.name) or _Unknown, block.argument, block.content
            )
        except MarkupError:
            known[block] = None
        while len(known) > 4096:  # a page's directives, a few pages' worth
            del known[next(iter(known))]
    return known[block]


@dataclass(frozen=True)
class Block:
    """A MyST directive of a page: ``{name} argument`` on its first line."""

    name: str
    argument: str
    start: int  # 0-based line of the page of its first line
    end: int  # 0-based line of the page after its last line
    content: str  # the text after the first line, as MyST gives it to the directive
    # the 0-based line of the page of each line of ``content`` (split at "\n")
    content_lines: tuple[int, ...]
    takes_options: bool  # MyST reads an option block at the start of ``content``
    # (start, end) of the block of the page it is in (itself, or the directive
    # or div around it): what to blank so that MyST never reads it
    outermost: tuple[int, int]


@dataclass
class Text:
    """A text MyST parses as Markdown on its own: the page, or a body in it."""

    text: str
    tokens: list[Token]
    lines: list[int]  # the 0-based line of the page of each line of ``text``
    depth: int  # how many bodies it is inside
    levels: int  # blocks it is inside, in all: its own fences' and those of the texts around it
    blocks: list[Block]  # its directives
    outermost: tuple[int, int] | None  # (start, end) of the page's directive or div it is in
    deeper: bool = False  # it holds a text nested past MAX_DIRECTIVE_DEPTH or MAX_LEVELS

    def line(self, line: int) -> int:
        """The 0-based line of the page of ``line`` of this text (or of the
        line after its end)."""
        if line < len(self.lines):
            return self.lines[line]
        return self.lines[-1] + 1 + line - len(self.lines) if self.lines else line


def _split_info(token: Token) -> tuple[str, str]:
    """The first word of a fence's info string and the rest (as MyST splits it)."""
    parts = token.info.strip().split(maxsplit=1)
    return (parts[0] if parts else ""), (parts[1] if len(parts) > 1 else "")


def _piece_lines(text: str, first: int, at) -> list[int]:
    """The line of the page of each piece of ``text.splitlines()`` (which also
    breaks at \x0b, \x85, \u2028 …), ``text`` starting on line ``first`` of
    a text whose lines ``at`` maps to the page's."""
    out, line = [], first
    for piece in text.splitlines(keepends=True):
        out.append(at(line))
        line += piece.count("\n")
    return out


def _inner(env, token: Token, where: Text) -> tuple[Block | None, tuple[str, list[int]] | None]:
    """What MyST makes of a fence or colon fence of the text ``where``: the
    directive it is (if it is one), and the text it parses as Markdown on its
    own with the line of the page of each of its lines (a directive's body,
    or a colon fence that is no directive: a div)."""
    if token.type not in ("fence", "colon_fence") or not token.map:
        return None, None
    first, argument = _split_info(token)
    start, end = where.line(token.map[0]), where.line(token.map[1] - 1) + 1
    outermost = where.outermost or (start, end)
    if not (first.startswith("{") and first.endswith("}") and len(first) > 2):
        if token.type == "colon_fence":  # a div: MyST parses its text as it is
            count = token.content.count("\n") + 1
            return None, (token.content, [where.line(token.map[0] + 1 + i) for i in range(count)])
        return None, None  # code
    name = first[1:-1]
    content, added = token.content, 0
    if token.type == "colon_fence" and content.startswith(":::"):
        # MyST adds a line, so that a nested fence is not read as options
        content, added = "\n" + content, 1
    count = content.count("\n") + 1
    content_lines = tuple(
        where.line(token.map[0] + 1 - added + i) if i >= added else start for i in range(count)
    )
    cls = block_class(env, name)
    parse_as = cls or _Unknown
    block = Block(
        name,
        argument,
        start,
        end,
        content,
        content_lines,
        name != "eval-rst" and bool(parse_as.option_spec),
        outermost,
    )
    if name == "eval-rst" or is_literal(env, name, cls):
        return block, None
    body = parsed_directive(env, block)
    if body is None:  # MyST reports it, and reads no body
        return block, None
    # MyST cuts the body from the lines of ``content`` (str.splitlines), after
    # the option block and a blank line; the first line's text, when it is
    # the body's first line, is on the directive's own line
    pieces = _piece_lines(content, token.map[0] + 1 - added, where.line)
    merged = body.body_offset < 0 or (
        bool(argument.strip()) and not (parse_as.required_arguments or parse_as.optional_arguments)
    )
    consumed = body.body_offset + (1 if merged else 0)
    lines = ([start] if merged else []) + pieces[consumed:]
    lines += [lines[-1] + 1 + i for i in range(len(body.body) - len(lines))] if lines else []
    return block, ("\n".join(body.body), lines[: len(body.body)] or [start])


# Blocks inside blocks, over all the texts MyST parses on its own: MyST renders
# each level a few Python calls deeper (and Sphinx pickles the doctree as
# deep), and about 250 levels pass Python's recursion limit. Deeper than this
# is refused (KB053).
MAX_LEVELS = 100

# The checks of one page walk it a few times (nesting, options, includes):
# the last few walks are kept.
_WALKED: OrderedDict[tuple[int, int, str], tuple[weakref.ref, list[Text]]] = OrderedDict()
WALKS_KEPT = 4


def walk(md: MarkdownIt, env, text: str) -> list[Text]:
    """The page, then each text in it that MyST parses as Markdown on its own
    (directive bodies as MyST cuts them: after the option block, with the
    first line's text for a directive that takes no argument; the text of a
    colon fence that is no directive), down to MAX_DIRECTIVE_DEPTH texts and
    MAX_LEVELS blocks deep (a text past them is marked ``deeper``)."""
    key = (id(md), id(env), text)
    kept = _WALKED.get(key)
    if kept is None or kept[0]() is not env:  # (an id is used again once its object is gone)
        kept = _WALKED[key] = (weakref.ref(env), list(_walk(md, env, text)))
        while len(_WALKED) > WALKS_KEPT:
            _WALKED.popitem(last=False)
    return kept[1]


def _walk(md: MarkdownIt, env, text: str) -> Iterator[Text]:
    todo = [Text(text, [], list(range(text.count("\n") + 1)), 0, 0, [], None)]
    while todo:
        found = todo.pop()
        found.tokens = parsed(md, found.text)
        inner = []
        for token in found.tokens:
            block, nested = _inner(env, token, found)
            if block is not None:
                found.blocks.append(block)
            if nested is None:
                continue
            levels = found.levels + token.level + 1
            if found.depth >= MAX_DIRECTIVE_DEPTH or levels > MAX_LEVELS:
                found.deeper = True
                continue
            around = found.outermost or (found.line(token.map[0]), found.line(token.map[1] - 1) + 1)
            inner.append(Text(nested[0], [], nested[1], found.depth + 1, levels, [], around))
        yield found
        todo.extend(reversed(inner))


def too_deep_blocks(md: MarkdownIt, env, text: str) -> list[tuple[int, int]]:
    """(first, end) 0-based lines of each outermost directive or div of
    ``text`` that holds texts nested more than MAX_DIRECTIVE_DEPTH levels, or
    blocks more than MAX_LEVELS, deep."""
    return sorted({found.outermost for found in walk(md, env, text) if found.deeper and found.outermost})


def directives(md: MarkdownIt, env, text: str) -> Iterator[Block]:
    """Every MyST directive of ``text``, directives inside directives (and
    inside divs) included; lines are 0-based lines of ``text``."""
    for found in walk(md, env, text):
        yield from found.blocks


_COLON_OPEN = re.compile(r"^(:{3,})\{([\w-]+)\}")


def colon_directives(lines: list[str]) -> list[list[str]]:
    """For each line, the names of the colon-fence directives open on it
    (``:::{name}`` … ``:::``), outermost first; a fence closes with as many
    colons as it opened with, so ``::::{editor-note}`` holding ``:::{original}``
    nests. The opening and closing lines count as inside."""
    stack: list[tuple[str, str]] = []
    out = []
    for line in lines:
        opened = _COLON_OPEN.match(line)
        if opened:
            stack.append((opened.group(1), opened.group(2)))
            out.append([name for _, name in stack])
        elif stack and line.strip() == stack[-1][0]:
            out.append([name for _, name in stack])
            stack.pop()
        else:
            out.append([name for _, name in stack])
    return out
