"""A look at a page's Markdown blocks as MyST sees them, before MyST reads it.

Used by ``kb.guard.untrusted`` (MyST includes, found before MyST reads the file)
and ``kb.guard.silent_loss`` (nesting deeper than the parser keeps). The parser
is MyST's own (``create_md_parser`` with the project's
``myst_enable_extensions``), so fences, colon fences, lists and quotes are
found exactly where MyST finds them. Directive bodies are parsed again by
MyST on their own, so they are walked as separate texts here too.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser

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
# texts() below, at about 500). Deeper than this is refused (KB053).
MAX_DIRECTIVE_DEPTH = 30


def texts(md: MarkdownIt, text: str, offset: int = 0, depth: int = 0) -> Iterator[tuple[list[Token], int]]:
    """The page's tokens, then those of every directive body (each with the
    0-based line its text starts on), down to MAX_DIRECTIVE_DEPTH levels."""
    tokens = parsed(md, text)
    yield tokens, offset
    if depth >= MAX_DIRECTIVE_DEPTH:
        return
    for token in tokens:
        name = directive_name(token)
        if name is not None and name not in LITERAL_BODIES and token.map:
            yield from texts(md, token.content, token.map[0] + 1 + offset, depth + 1)


def directive_too_deep(md: MarkdownIt, text: str) -> tuple[int, int] | None:
    """(first, end) 0-based lines of the outermost directive of ``text`` that
    holds directives nested more than MAX_DIRECTIVE_DEPTH levels deep, if any."""
    for token in parsed(md, text):
        if directive_name(token) is None or not token.map or directive_name(token) in LITERAL_BODIES:
            continue
        bodies = [(token.content, 1)]
        while bodies:
            body, depth = bodies.pop()
            for inner in parsed(md, body):
                name = directive_name(inner)
                if name is None or not inner.map:
                    continue
                if depth >= MAX_DIRECTIVE_DEPTH:
                    return token.map[0], token.map[1]
                if name not in LITERAL_BODIES:
                    bodies.append((inner.content, depth + 1))
    return None


def directive_name(token: Token) -> str | None:
    if token.type not in ("fence", "colon_fence") or not token.info.strip().startswith("{"):
        return None
    return token.info.strip()[1:].partition("}")[0].strip()


def directives(md: MarkdownIt, text: str) -> Iterator[tuple[str, str, int, int]]:
    """(name, argument, first line, end line) of every MyST directive in
    ``text``, 0-based lines of ``text``, directives inside directives included."""
    for tokens, offset in texts(md, text):
        for token in tokens:
            name = directive_name(token)
            if name is not None and token.map:
                argument = token.info.strip()[1:].partition("}")[2].strip()
                yield name, argument, token.map[0] + offset, token.map[1] + offset


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
