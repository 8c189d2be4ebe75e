"""Import the 51 算力 site export into MyST pages under ``docs/``.

What it does: splits ``sources/export.txt`` (format: ``sources/README.md``) into
articles, parses each article's Markdown with markdown-it-py, turns four-space
indented code into fenced blocks with a language, and writes one page per
article with YAML front matter (title, listing_title, guide, also_in, tags,
author/source/date where the article states them, summary).

Safety:
- the output is deterministic: re-running on unchanged input rewrites nothing;
- a page whose bytes differ from what the last import wrote (recorded in
  ``sources/import-manifest.json``) was edited by hand: the import refuses to
  overwrite it unless ``--force`` is given, and names the page;
- a malformed or truncated export, or a malformed ``data/articles.yaml`` or
  ``data/guides.yaml``, fails with ``file:LINE: KBnnn message`` and exit 2, and
  nothing is written (codes: see ``ExportError``);
- pages are staged in a hidden folder next to the output folder (never inside
  it, where Sphinx would read a folder left by a killed run), then moved into
  place one by one; the manifest is replaced in one step. Leftovers of
  interrupted runs are removed at the start.

Run:  python tools/import_export.py [--export FILE] [--out docs] [--force]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import yaml
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_EXPORT = ROOT / "sources" / "export.txt"
DEFAULT_MAP = ROOT / "data" / "articles.yaml"
DEFAULT_GUIDES = ROOT / "data" / "guides.yaml"
DEFAULT_OUT = ROOT / "docs"
MANIFEST_NAME = "import-manifest.json"


class EditedPagesError(Exception):
    """Pages edited by hand since the last import; listed in the message."""


class ExportError(Exception):
    """A problem in an input file, reported as ``path:line: KBnnn message``.

    Codes (listed in CONTRIBUTING.md):
    KB070 the export is incomplete (cut off, or an article of data/articles.yaml missing): re-export the site;
    KB071 the export holds the same article twice;
    KB072 two titles in data/articles.yaml share one slug;
    KB073 data/articles.yaml or data/guides.yaml is malformed;
    KB074 the export is malformed in another way, or the manifest is unreadable.
    """

    def __init__(self, path: Path | str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")


@dataclass
class Article:
    title: str
    line: int  # 1-based line of the `# Title` line in the export
    markdown: list[str]
    listing_title: str | None
    meta: dict = field(default_factory=dict)


# -- Reading the export ------------------------------------------------------

# The export ends with these two plain lines (sources/README.md). Matching them
# exactly is what tells a complete export from one cut off after a plain line.
SITE_NAME = "51 算力"
LISTING_HEADING = "全部文章"
REEXPORT = "the export is truncated: export the site again and replace the file"


def read_lines(path: Path) -> list[str]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ExportError(
            path, 1, f"KB074 cannot read the export ({exc.strerror}); pass an existing file with --export"
        ) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        if exc.end == len(data) and exc.reason == "unexpected end of data":
            # A multi-byte character cut in half: the file was cut off there.
            raise ExportError(
                path, line, f"KB070 the export ends in the middle of a character; {REEXPORT}"
            ) from None
        raise ExportError(
            path, line, f"KB074 not valid UTF-8 (byte 0x{data[exc.start]:02x}); re-export the site as UTF-8"
        ) from None
    return text.lstrip("\ufeff").replace("\r\n", "\n").split("\n")


def _is_html_start(lines: list[str], i: int) -> bool:
    return lines[i] == "<p>" and i + 1 < len(lines) and lines[i + 1].startswith("<h1>")


def _is_plain(line: str) -> bool:
    return bool(line.strip()) and not line.lstrip().startswith("<")


def find_starts(lines: list[str]) -> list[int]:
    """Indexes of `# ` lines that start an article (rules in sources/README.md)."""
    starts = []
    for i, line in enumerate(lines):
        if not line.startswith("# "):
            continue
        at_top = all(not x.strip() for x in lines[:i])
        after_listing = i >= 3 and lines[i - 1] == "" and lines[i - 2] == "" and _is_plain(lines[i - 3])
        if at_top or after_listing:
            starts.append(i)
    return starts


# Elements without an end tag, and those whose start closes an open <p>
# (HTML's rule for the optional </p>, which the exporter relies on).
_VOID = frozenset(
    ["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"]
)
_CLOSES_P = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "details",
        "div",
        "dl",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "table",
        "ul",
    ]
)


class _OpenElements(HTMLParser):
    """Track which elements of an HTML rendering are still open.

    Why: an export cut off inside an article's HTML leaves an element open
    (often a code block, whose lines then look like plain text). The rule is
    HTML's own: every element is closed by its end tag, except that ``</p>``
    is optional (a block element's start closes the paragraph) and void
    elements have no end tag. The exporter does not escape ``<`` inside
    ``<code>``, so code is read as raw text up to ``</code>``.
    """

    CDATA_CONTENT_ELEMENTS = ("script", "style", "code")

    def __init__(self, first_line: int):
        super().__init__(convert_charrefs=False)
        self.first_line = first_line  # 1-based line of the text fed first
        self.open: list[tuple[str, int]] = []  # (tag, 1-based line)

    def _close_through(self, tag: str) -> None:
        if any(t == tag for t, _ in self.open):
            while self.open.pop()[0] != tag:
                pass

    def handle_starttag(self, tag, attrs):
        if tag in _CLOSES_P:
            self._close_through("p")
        if tag not in _VOID:
            self.open.append((tag, self.first_line + self.getpos()[0] - 1))

    def handle_startendtag(self, tag, attrs):
        if tag in _CLOSES_P:
            self._close_through("p")

    def handle_endtag(self, tag):
        self._close_through(tag)  # a stray end tag (HTML ignores it) changes nothing


def unclosed_element(lines: list[str], first: int) -> tuple[str, int] | None:
    """The outermost element left open by ``lines`` (its tag and line), if any."""
    parser = _OpenElements(first + 1)
    parser.feed("\n".join(lines))
    if parser.open:
        return parser.open[0]
    if parser.rawdata.lstrip().startswith("<"):
        return "an unfinished tag", first + len(lines)
    return None


def split_export(path: Path) -> tuple[list[Article], list[str]]:
    """Return the articles and the trailer lines (site name, listing heading)."""
    lines = read_lines(path)
    starts = find_starts(lines)
    if not starts:
        raise ExportError(path, 1, "KB074 no article found: an article starts with a '# Title' line")
    articles: list[Article] = []
    trailer: list[str] = []
    for n, start in enumerate(starts):
        last = n + 1 == len(starts)
        end = starts[n + 1] if not last else len(lines)
        html = _find_rendering(path, lines, start, end, last)
        title = lines[start][2:].strip()
        plain_tail = _plain_tail(path, lines, title, html, end)
        if last:
            plain_tail, trailer = _check_trailer(path, lines, title, plain_tail)
        elif len(plain_tail) != 1:
            raise ExportError(
                path,
                end - 2,
                f"KB074 article '{title}' has no listing line: expected one plain line "
                "after its HTML rendering",
            )
        listing = plain_tail[0] if plain_tail else None
        body = lines[start:html]
        while body and not body[-1].strip():
            body.pop()
        articles.append(Article(title, start + 1, body, listing))
    _refuse_repeats(path, articles)
    return articles, trailer


def _find_rendering(path: Path, lines: list[str], start: int, end: int, last: bool) -> int:
    """Index of the ``<p>`` line that starts the article's HTML rendering."""
    title = lines[start][2:].strip()
    renderings = [i for i in range(start, end) if _is_html_start(lines, i)]
    if len(renderings) > 1:
        raise ExportError(
            path,
            renderings[1] + 1,
            f"KB074 a second HTML rendering inside article '{title}': an article before this "
            "line lacks its listing line (one plain line, two blank lines, then '# Title')",
        )
    if not renderings and last:
        raise ExportError(
            path,
            _last_line(lines),
            f"KB070 the export ends inside the Markdown of article '{title}' (line "
            f"{start + 1}): its HTML rendering and the trailer ('{SITE_NAME}', "
            f"'{LISTING_HEADING}') are missing; {REEXPORT}",
        )
    if not renderings:
        raise ExportError(
            path,
            start + 1,
            f"KB074 article '{title}' has no end: expected its HTML rendering "
            "(a line '<p>' followed by a line starting with '<h1>') before the next article",
        )
    html = renderings[0]
    h1 = re.sub(r"<[^>]+>", "", lines[html + 1].split("</h1>")[0])
    if h1.strip() != title:
        raise ExportError(
            path,
            html + 2,
            f"KB074 HTML rendering is titled '{h1.strip()}' but the article is '{title}'",
        )
    return html


def _plain_tail(path: Path, lines: list[str], title: str, html: int, end: int) -> list[str]:
    """The plain lines after a complete HTML rendering (listing line or trailer)."""
    filled = [i for i in range(html, end) if lines[i].strip()]
    cut = len(filled)
    while cut and _is_plain(lines[filled[cut - 1]]):
        cut -= 1
    html_end = filled[cut - 1] + 1  # one past the rendering's last HTML line
    left_open = unclosed_element(lines[html:html_end], html)
    if left_open:
        tag, line = left_open
        what = tag if tag.startswith("an ") else f"<{tag}> opened at line {line}"
        raise ExportError(
            path,
            _last_line(lines[:end]),
            f"KB070 the HTML rendering of article '{title}' (line {html + 1}) is cut off: "
            f"{what} is never closed before this line; {REEXPORT}",
        )
    return [lines[i].strip() for i in filled[cut:]]


def _check_trailer(
    path: Path, lines: list[str], title: str, plain_tail: list[str]
) -> tuple[list[str], list[str]]:
    """Split the last article's plain lines into (listing line, trailer); refuse a cut."""
    expected = [SITE_NAME, LISTING_HEADING]
    if plain_tail[-2:] != expected or len(plain_tail) > 3:
        found = " / ".join(f"'{x}'" for x in plain_tail[-2:]) or "nothing"
        raise ExportError(
            path,
            _last_line(lines),
            f"KB070 export has no trailer after the last article '{title}': expected the "
            f"site name and the listing heading ('{SITE_NAME}', '{LISTING_HEADING}') as its "
            f"last two lines, found {found}; the export is cut off or has extra lines at "
            "its end: export the site again and replace the file",
        )
    return plain_tail[:-2], plain_tail[-2:]


def _last_line(lines: list[str]) -> int:
    """1-based number of the last non-blank line (where a cut-off file stops)."""
    return max((i + 1 for i, x in enumerate(lines) if x.strip()), default=1)


def _refuse_repeats(path: Path, articles: list[Article]) -> None:
    """Refuse an article that appears twice: the second copy would silently win."""
    first: dict[str, int] = {}
    for art in articles:
        if art.title in first:
            raise ExportError(
                path,
                art.line,
                f"KB071 article '{art.title}' appears twice in the export: first at line "
                f"{first[art.title]}, again here; keep one copy (or re-export the site)",
            )
        first[art.title] = art.line


# -- Converting one article ----------------------------------------------------

_md = MarkdownIt("commonmark").enable("table")

_SHELL_START = re.compile(
    r"^(\$ |export |kubectl |nvidia-smi|pip |apt|cd |ls |git |docker |helm |bash |"
    r"python |torchrun |sudo |curl |wget |echo |mpirun |\./)"
)


def guess_language(code: str) -> str:
    """Language for an indented block: python if it parses, shell, else text."""
    lines = [x for x in code.splitlines() if x.strip() and not x.lstrip().startswith("#")]
    if lines and all(_SHELL_START.match(x.strip()) for x in lines):
        return "bash"
    try:
        ast.parse(code)
        return "python"
    except SyntaxError:
        return "text"


def fence_for(code: str, lang: str) -> list[str]:
    ticks = "```"
    while ticks in code:
        ticks += "`"
    body = [x.rstrip() for x in code.rstrip("\n").split("\n")]
    return [ticks + lang, *body, ticks]


def convert_body(lines: list[str]) -> list[str]:
    """Rewrite code blocks as fenced blocks with a language; keep the rest verbatim."""
    text = "\n".join(lines) + "\n"
    out = list(lines)
    replacements: list[tuple[int, int, list[str]]] = []
    for tok in _md.parse(text):
        if tok.type == "code_block":
            code = tok.content
            replacements.append((tok.map[0], tok.map[1], fence_for(code, guess_language(code))))
        elif tok.type == "fence" and not tok.info.strip():
            # An unlabelled fence: error output, a formula or a diagram in ASCII.
            replacements.append((tok.map[0], tok.map[1], fence_for(tok.content, "text")))
    for start, end, new in sorted(replacements, reverse=True):
        # a code_block's map includes trailing blank lines; keep them as blank lines
        trailing = 0
        while end - trailing - 1 > start and not out[end - trailing - 1].strip():
            trailing += 1
        out[start:end] = new + [""] * trailing
    return [x.rstrip() if not x.strip() else x for x in out]


_BYLINE = [
    (re.compile(r"^作者[:：]\s*(.+?)\s*$"), "author"),
    (re.compile(r"^来源[:：]\s*(.+?)\s*$"), "source"),
    (re.compile(r"^(\d{4}) 年 (\d{1,2}) 月\s*\|\s*(.+?)\s*$"), "date|author"),
]


def _inline_text(tokens) -> str:
    """Plain text of an inline token, without markup."""
    parts = []
    for child in tokens.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
    return "".join(parts)


def front_matter(article: Article) -> dict:
    """Title, byline and summary, as the article states them."""
    tokens = _md.parse("\n".join(article.markdown) + "\n")
    fm: dict = {"title": article.title}
    if article.listing_title and article.listing_title != article.title:
        fm["listing_title"] = article.listing_title
    lead: list[str] = []
    first_paragraph = None
    depth = 0
    for i, tok in enumerate(tokens):
        if tok.type == "blockquote_open":
            depth += 1
        elif tok.type == "blockquote_close":
            depth -= 1
            if lead:
                break
        elif tok.type == "inline" and tokens[i - 1].type == "paragraph_open":
            if depth and not first_paragraph:
                lead.extend(_inline_text(tok).split("\n"))
            elif not depth and first_paragraph is None and lead:
                first_paragraph = _inline_text(tok)
        elif tok.type == "hr" and not lead:
            break  # no lead quote before the first rule
    byline: dict = {}
    summary_lines = []
    for line in (x.strip() for x in lead):
        for rx, key in _BYLINE:
            m = rx.match(line)
            if m:
                if key == "date|author":
                    byline["date"] = f"{int(m[1]):04d}-{int(m[2]):02d}"
                    byline["author"] = m[3]
                else:
                    byline[key] = m[1]
                break
        else:
            if line:
                summary_lines.append(line)
    if summary_lines:
        fm["summary"] = "".join(summary_lines)
    else:
        # The lead quote is only a byline: the first paragraph serves as summary.
        fm["summary"] = _first_body_paragraph(tokens)
    for key in ("author", "source", "date"):
        if key in byline:
            fm[key] = byline[key]
    return fm


def _first_body_paragraph(tokens) -> str:
    depth = 0
    for i, tok in enumerate(tokens):
        depth += tok.type == "blockquote_open"
        depth -= tok.type == "blockquote_close"
        if tok.type == "inline" and tokens[i - 1].type == "paragraph_open" and not depth:
            return _inline_text(tok).replace("\n", "")
    return ""


def render_page(article: Article, entry: dict, guides: list[dict]) -> str:
    fm = front_matter(article)
    if entry.get("home"):
        fm = {"title": fm["title"], "summary": fm["summary"]}
    else:
        fm["guide"] = entry["guide"]
        if entry.get("also_in"):
            fm["also_in"] = list(entry["also_in"])
        fm["tags"] = list(entry.get("tags") or [])
        order = ["title", "listing_title", "guide", "also_in", "tags", "author", "source", "date", "summary"]
        fm = {k: fm[k] for k in order if k in fm}
    head = yaml.safe_dump(fm, allow_unicode=True, sort_keys=False, width=10_000)
    body = convert_body(article.markdown)
    page = ["---", head.rstrip("\n"), "---", "", *body]
    if entry.get("home"):
        page += home_trailer(guides)
    return "\n".join(page).rstrip("\n") + "\n"


def home_trailer(guides: list[dict]) -> list[str]:
    """The home page's way in: the four guides, then the site's table of contents."""
    lines = [
        "",
        "---",
        "",
        "## 从这里开始",
        "",
        "```{kb-guides}",
        "```",
        "",
        "```{toctree}",
        ":hidden:",
        ":maxdepth: 1",
        "",
    ]
    lines += [f"{g['title']} <{g['key']}/index>" for g in guides]
    lines += ["全部文章 <articles>", "```"]
    return lines


# -- Reading the map and the guides ----------------------------------------------

_KEBAB = r"[a-z0-9]+(?:-[a-z0-9]+)*"
_SLUG = re.compile(rf"^{_KEBAB}(?:/{_KEBAB})?$")
_ENTRY_FIELDS = ("slug", "guide", "also_in", "tags", "home")
_STR = "tag:yaml.org,2002:str"


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _compose(path: Path) -> yaml.Node | None:
    """The YAML node tree of a data file; a syntax error becomes KB073 at its line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ExportError(path, 1, f"KB073 cannot read {path.name} ({exc}); restore it from git") from None
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        context = getattr(exc, "context_mark", None)
        where = (
            f" ({exc.context} at line {context.line + 1})"
            if context and mark and context.line != mark.line
            else ""
        )
        raise ExportError(
            path,
            mark.line + 1 if mark else 1,
            f"KB073 {path.name} is not valid YAML: {getattr(exc, 'problem', None) or exc}{where}",
        ) from None


def _scalar(path: Path, node: yaml.Node, what: str) -> str:
    """A plain string value (a title, a slug, a guide key), or KB073 at its line."""
    if not isinstance(node, yaml.ScalarNode) or node.tag != _STR or not node.value.strip():
        raise ExportError(path, _line(node), f"KB073 {what} must be a non-empty string")
    return node.value


def _string_list(path: Path, node: yaml.Node, what: str) -> list[str]:
    if not isinstance(node, yaml.SequenceNode):
        raise ExportError(path, _line(node), f"KB073 {what} must be a list, like [a, b]")
    return [_scalar(path, item, f"each item of {what}") for item in node.value]


def _pairs(path: Path, node: yaml.Node | None, what: str) -> list[tuple[str, int, yaml.Node]]:
    """(key, key's line, value node) of a mapping; refuses a repeated key (YAML keeps the last)."""
    if not isinstance(node, yaml.MappingNode):
        raise ExportError(
            path, _line(node) if node else 1, f"KB073 {what} must be a mapping ('key: value' lines)"
        )
    seen: dict[str, int] = {}
    pairs = []
    for key_node, value in node.value:
        key = _scalar(path, key_node, f"each key of {what}")
        if key in seen:
            raise ExportError(
                path,
                _line(key_node),
                f"KB073 '{key}' appears twice in {what} (first at line "
                f"{seen[key]}); keep one (the second would silently win)",
            )
        seen[key] = _line(key_node)
        pairs.append((key, _line(key_node), value))
    return pairs


def load_guides(path: Path = DEFAULT_GUIDES) -> list[dict]:
    """data/guides.yaml: a list of guides, each with a key and a title."""
    root = _compose(path)
    if not isinstance(root, yaml.SequenceNode) or not root.value:
        raise ExportError(
            path, _line(root) if root else 1, f"KB073 {path.name} must be a list of guides ('- key: …' items)"
        )
    guides = []
    for item in root.value:
        fields = {key: value for key, _, value in _pairs(path, item, "a guide")}
        guide = {}
        for name in ("key", "title"):
            if name not in fields:
                raise ExportError(path, _line(item), f"KB073 guide has no '{name}'; add it")
            guide[name] = _scalar(path, fields[name], f"the guide's {name}")
        if not re.fullmatch(_KEBAB, guide["key"]):
            raise ExportError(
                path, _line(fields["key"]), f"KB073 guide key '{guide['key']}' is not ASCII kebab-case"
            )
        guides.append(guide)
    return guides


def load_map(path: Path, guides_path: Path = DEFAULT_GUIDES) -> dict:
    """data/articles.yaml, checked entry by entry; each problem is reported at its line."""
    keys = [g["key"] for g in load_guides(guides_path)]
    data: dict = {}
    slugs: dict[str, tuple[str, int]] = {}
    for title, line, node in _pairs(path, _compose(path), path.name):
        entry, slug_line = _map_entry(path, title, line, node, keys)
        slug = entry["slug"]
        if slug in slugs:
            other, other_line = slugs[slug]
            raise ExportError(
                path,
                slug_line,
                f"KB072 '{title}' maps to slug '{slug}', as does '{other}' (line {other_line}): "
                "one page would overwrite the other; give each article its own slug",
            )
        slugs[slug] = (title, slug_line)
        data[title] = entry
    return data


def _map_entry(path: Path, title: str, line: int, node: yaml.Node, keys: list[str]) -> tuple[dict, int]:
    """One article's entry (slug, guide, also_in, tags, or home: true) and its slug's line."""
    fields = {}
    for name, name_line, value in _pairs(path, node, f"the entry of '{title}'"):
        if name not in _ENTRY_FIELDS:
            raise ExportError(
                path,
                name_line,
                f"KB073 '{title}': unknown field '{name}'; allowed: {', '.join(_ENTRY_FIELDS)}",
            )
        fields[name] = value
    home = "home" in fields
    if home and yaml.safe_load(yaml.serialize(fields["home"])) is not True:
        raise ExportError(path, _line(fields["home"]), f"KB073 '{title}': home must be true")
    for name in ("slug",) if home else ("slug", "guide"):
        if name not in fields:
            raise ExportError(path, line, f"KB073 '{title}' has no '{name}'; add '{name}:' to its entry")
    entry: dict = {"home": True} if home else {}
    entry["slug"] = _scalar(path, fields["slug"], f"'{title}': slug")
    slug_line = _line(fields["slug"])
    if not _SLUG.match(entry["slug"]):
        raise ExportError(
            path,
            slug_line,
            f"KB073 '{title}': slug '{entry['slug']}' must be <guide>/<name> in "
            "ASCII kebab-case (e.g. training/zero-offload)",
        )
    if home:
        return entry, slug_line
    guide = entry["guide"] = _scalar(path, fields["guide"], f"'{title}': guide")
    if guide not in keys:
        raise ExportError(
            path, _line(fields["guide"]), f"KB073 '{title}': guide must be one of {', '.join(keys)}"
        )
    if entry["slug"].split("/")[0] != guide:
        raise ExportError(
            path, slug_line, f"KB073 '{title}': slug '{entry['slug']}' must start with its guide, '{guide}/'"
        )
    for name in ("also_in", "tags"):
        if name in fields:
            entry[name] = _string_list(path, fields[name], f"'{title}': {name}")
    bad = [g for g in entry.get("also_in", []) if g not in keys]
    if bad:
        raise ExportError(
            path,
            _line(fields["also_in"]),
            f"KB073 '{title}': also_in guide '{bad[0]}' must be one of {', '.join(keys)}",
        )
    return entry, slug_line


def render_all(export: Path, map_path: Path, guides_path: Path) -> dict[str, str]:
    articles = split_export(export)[0]  # the export's closing text is not a page
    mapping = load_map(map_path, guides_path)
    guides = load_guides(guides_path)
    pages: dict[str, str] = {}
    for art in articles:
        entry = mapping.get(art.title)
        if entry is None:
            raise ExportError(
                export,
                art.line,
                f"KB074 article '{art.title}' is not in {map_path.name}: add its slug, guide and tags",
            )
        pages[entry["slug"] + ".md"] = render_page(art, entry, guides)
    _refuse_missing(export, map_path, mapping, articles)
    return pages


def _refuse_missing(export: Path, map_path: Path, mapping: dict, articles: list[Article]) -> None:
    """An export cut between two articles parses cleanly: what data/articles.yaml
    lists and the export lacks tells that it is incomplete."""
    present = {art.title for art in articles}
    missing = [
        (title, line)
        for title, line, _ in _pairs(map_path, _compose(map_path), map_path.name)
        if title not in present
    ]
    if missing:
        title, line = missing[0]
        last = export.read_text(encoding="utf-8").count("\n") + 1
        raise ExportError(
            export,
            last,
            f"KB070 the export lacks article '{title}', which {map_path.name} lists at line {line}"
            + (f" ({len(missing) - 1} more missing)" if len(missing) > 1 else "")
            + ": the export is incomplete; re-export the site, or remove the entry if the "
            "article was deleted",
        )


# -- Writing -------------------------------------------------------------------

# Temporary files and folders are named ".<target name>.import-<pid>-<random>" and
# live next to their target, on the same file system (os.replace needs that),
# never inside the output folder: a folder left there by a killed run would be
# read by Sphinx as part of the site.
_TEMP_NAME = re.compile(r"^\..+\.import-(\d+)-")
# What tempfile.TemporaryDirectory(prefix=".import-") made inside the output
# folder before staging moved out of it (not the manifest ".import-manifest.json").
_LEGACY_STAGING = re.compile(r"^\.import-[a-z0-9_]{8}$")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def remove_leftovers(out: Path, manifest_path: Path) -> None:
    """Delete what interrupted runs (even kill -9) left: staging folders, manifest temps.

    A leftover whose process still runs belongs to a concurrent import and is
    kept. Older versions staged inside the output folder (``docs/.import-*``);
    those break the build and are removed too.
    """
    for folder in {out.resolve().parent, manifest_path.resolve().parent}:
        for path in folder.glob(".*.import-*"):
            m = _TEMP_NAME.match(path.name)
            if m and not _pid_alive(int(m[1])):
                _remove(path)
    for path in out.glob(".import-*"):
        if _LEGACY_STAGING.match(path.name) and path.is_dir():
            _remove(path)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _temp_prefix(target: Path) -> str:
    return f".{target.name}.import-{os.getpid()}-"


def read_manifest(manifest_path: Path) -> dict[str, str]:
    """The hashes the last import recorded; a damaged manifest is KB074 at its line."""
    if not manifest_path.exists():
        return {}
    text = manifest_path.read_text(encoding="utf-8", errors="replace")
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ExportError(
            manifest_path,
            exc.lineno,
            f"KB074 manifest is not valid JSON "
            f"({exc.msg}); restore it with git, or delete it and re-run "
            "with --force",
        ) from None
    if not isinstance(manifest, dict) or not all(isinstance(v, str) for v in manifest.values()):
        raise ExportError(
            manifest_path,
            1,
            "KB074 manifest must map page paths to hashes; "
            "restore it with git, or delete it and re-run with --force",
        )
    return manifest


def write_pages(pages: dict[str, str], out: Path, manifest_path: Path, force: bool) -> list[str]:
    """Write pages atomically; return the pages that changed."""
    manifest = read_manifest(manifest_path)
    edited, changed = [], []
    for rel, text in sorted(pages.items()):
        target = out / rel
        if not target.exists():
            changed.append(rel)
            continue
        current = target.read_text(encoding="utf-8", errors="replace")
        if current == text:
            continue
        if manifest.get(rel) != _sha(current):
            edited.append(rel)
        changed.append(rel)
    if edited and not force:
        names = "\n".join(f"  {out / rel}: edited since import" for rel in edited)
        raise EditedPagesError(
            f"refusing to overwrite {len(edited)} page(s) edited since the last import:\n"
            f"{names}\nre-run with --force to overwrite them (their edits are lost)"
        )
    new_manifest = {rel: _sha(text) for rel, text in sorted(pages.items())}
    if changed:
        _replace_pages({rel: pages[rel] for rel in changed}, out)
    if new_manifest != manifest:
        write_atomically(manifest_path, json.dumps(new_manifest, indent=2, ensure_ascii=False) + "\n")
    return changed


def _replace_pages(pages: dict[str, str], out: Path) -> None:
    """Write every page into a staging folder next to ``out``, then move each into place."""
    out.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(dir=out.resolve().parent, prefix=_temp_prefix(out)))
    try:
        for rel, text in pages.items():
            path = staged / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        for rel in pages:
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged / rel, out / rel)
    finally:
        shutil.rmtree(staged, ignore_errors=True)


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` in one step: readers see the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_temp_prefix(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--export", type=Path, default=DEFAULT_EXPORT)
    parser.add_argument("--map", type=Path, default=DEFAULT_MAP)
    parser.add_argument("--guides", type=Path, default=DEFAULT_GUIDES)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--manifest",
        type=Path,
        default=None,
        help="hash record of imported pages (default: OUT/../sources/"
        f"{MANIFEST_NAME} for the default OUT, else OUT/.{MANIFEST_NAME})",
    )
    parser.add_argument("--force", action="store_true", help="overwrite pages edited since the last import")
    args = parser.parse_args(argv)
    manifest = args.manifest
    if manifest is None:
        manifest = (
            ROOT / "sources" / MANIFEST_NAME
            if args.out.resolve() == DEFAULT_OUT
            else args.out / f".{MANIFEST_NAME}"
        )
    try:
        remove_leftovers(args.out, manifest)
        pages = render_all(args.export, args.map, args.guides)
        changed = write_pages(pages, args.out, manifest, args.force)
    except ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except EditedPagesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{len(pages)} pages, {len(changed)} written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
