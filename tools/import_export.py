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
- a malformed export fails with ``export-file:LINE: message`` and exit 2, and no
  page is written: pages are rendered into a temporary folder first.

Run:  python tools/import_export.py [--export FILE] [--out docs] [--force]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
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
    """A problem in the export, reported as ``path:line: message``."""

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


def read_lines(path: Path) -> list[str]:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ExportError(
            path, line, f"not valid UTF-8 (byte 0x{data[exc.start]:02x}); "
            "re-export the site as UTF-8"
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
        after_listing = (
            i >= 3 and lines[i - 1] == "" and lines[i - 2] == "" and _is_plain(lines[i - 3])
        )
        if at_top or after_listing:
            starts.append(i)
    return starts


def split_export(path: Path) -> tuple[list[Article], list[str]]:
    """Return the articles and the trailer lines (site name, listing heading)."""
    lines = read_lines(path)
    starts = find_starts(lines)
    if not starts:
        raise ExportError(path, 1, "no article found: an article starts with a '# Title' line")
    articles: list[Article] = []
    trailer: list[str] = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        renderings = [i for i in range(start, end) if _is_html_start(lines, i)]
        html = renderings[0] if renderings else None
        title = lines[start][2:].strip()
        if len(renderings) > 1:
            raise ExportError(
                path, renderings[1] + 1,
                f"a second HTML rendering inside article '{title}': an article before this "
                "line lacks its listing line (one plain line, two blank lines, then '# Title')",
            )
        if html is None:
            raise ExportError(
                path, start + 1,
                f"article '{title}' has no end: expected its HTML rendering "
                "(a line '<p>' followed by a line starting with '<h1>') before the next article",
            )
        h1 = re.sub(r"<[^>]+>", "", lines[html + 1].split("</h1>")[0])
        if h1.strip() != title:
            raise ExportError(
                path, html + 2,
                f"HTML rendering is titled '{h1.strip()}' but the article is '{title}'",
            )
        tail = [x for x in lines[html:end] if x.strip()]
        plain_tail = []
        for x in reversed(tail):  # plain lines after the last HTML line
            if not _is_plain(x):
                break
            plain_tail.insert(0, x.strip())
        last = n + 1 == len(starts)
        if last:
            # The export ends with the site name and the listing heading.
            if len(plain_tail) < 2:
                raise ExportError(
                    path, len(lines),
                    "export has no trailer: expected the site name and the listing heading "
                    "as its last two lines",
                )
            trailer = plain_tail[-2:]
            plain_tail = plain_tail[:-2]
        elif len(plain_tail) != 1:
            raise ExportError(
                path, end - 2,
                f"article '{title}' has no listing line: expected one plain line "
                "after its HTML rendering",
            )
        listing = plain_tail[0] if plain_tail else None
        body = lines[start:html]
        while body and not body[-1].strip():
            body.pop()
        articles.append(Article(title, start + 1, body, listing))
    return articles, trailer


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
        order = ["title", "listing_title", "guide", "also_in", "tags",
                 "author", "source", "date", "summary"]
        fm = {k: fm[k] for k in order if k in fm}
    head = yaml.safe_dump(fm, allow_unicode=True, sort_keys=False, width=10_000)
    body = convert_body(article.markdown)
    page = ["---", head.rstrip("\n"), "---", "", *body]
    if entry.get("home"):
        page += home_trailer(guides)
    return "\n".join(page).rstrip("\n") + "\n"


def home_trailer(guides: list[dict]) -> list[str]:
    """The home page's way in: the four guides, then the site's table of contents."""
    lines = ["", "---", "", "## 从这里开始", "", "```{kb-guides}", "```", "",
             "```{toctree}", ":hidden:", ":maxdepth: 1", ""]
    lines += [f"{g['title']} <{g['key']}/index>" for g in guides]
    lines += ["全部文章 <articles>", "```"]
    return lines


# -- Writing -------------------------------------------------------------------


def load_map(path: Path, guides_path: Path = DEFAULT_GUIDES) -> dict:
    keys = [g["key"] for g in yaml.safe_load(guides_path.read_text(encoding="utf-8"))]
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    for title, entry in data.items():
        if entry.get("home"):
            continue
        if entry.get("guide") not in keys:
            raise ExportError(path, 1, f"'{title}': guide must be one of {', '.join(keys)}")
    return data


def render_all(export: Path, map_path: Path, guides_path: Path) -> dict[str, str]:
    articles, _trailer = split_export(export)
    mapping = load_map(map_path, guides_path)
    guides = yaml.safe_load(guides_path.read_text(encoding="utf-8"))
    pages: dict[str, str] = {}
    for art in articles:
        entry = mapping.get(art.title)
        if entry is None:
            raise ExportError(
                export, art.line,
                f"article '{art.title}' is not in {map_path.name}: add its slug, guide and tags",
            )
        pages[entry["slug"] + ".md"] = render_page(art, entry, guides)
    return pages


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_pages(pages: dict[str, str], out: Path, manifest_path: Path, force: bool) -> list[str]:
    """Write pages atomically; return the pages that changed."""
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    edited, changed = [], []
    for rel, text in sorted(pages.items()):
        target = out / rel
        if not target.exists():
            changed.append(rel)
            continue
        current = target.read_text(encoding="utf-8")
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
    # Render everything into a temporary folder, then move each file into place.
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out, prefix=".import-") as tmp:
        staged = Path(tmp)
        for rel in changed:
            path = staged / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(pages[rel], encoding="utf-8")
        for rel in changed:
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged / rel, out / rel)
    new_manifest = {rel: _sha(text) for rel, text in sorted(pages.items())}
    if new_manifest != manifest:
        manifest_path.write_text(json.dumps(new_manifest, indent=2, ensure_ascii=False) + "\n")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--export", type=Path, default=DEFAULT_EXPORT)
    parser.add_argument("--map", type=Path, default=DEFAULT_MAP)
    parser.add_argument("--guides", type=Path, default=DEFAULT_GUIDES)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--manifest", type=Path, default=None,
                        help="hash record of imported pages (default: OUT/../sources/"
                        f"{MANIFEST_NAME} for the default OUT, else OUT/.{MANIFEST_NAME})")
    parser.add_argument("--force", action="store_true",
                        help="overwrite pages edited since the last import")
    args = parser.parse_args(argv)
    manifest = args.manifest
    if manifest is None:
        manifest = (ROOT / "sources" / MANIFEST_NAME if args.out.resolve() == DEFAULT_OUT
                    else args.out / f".{MANIFEST_NAME}")
    try:
        pages = render_all(args.export, args.map, args.guides)
    except ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        changed = write_pages(pages, args.out, manifest, args.force)
    except EditedPagesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{len(pages)} pages, {len(changed)} written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
