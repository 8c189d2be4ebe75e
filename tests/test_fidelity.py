"""Nothing of the original is lost: every piece of every article is on its page.

Parses the committed export with the importer's own parser (markdown-it-py)
and checks that every heading, table cell, list item, prose line and code
line of each article appears in the text of that article's built HTML page,
compared with whitespace and inline markup removed.

Editorial changes never delete the author's text: a correction sits next to
the original in an 编者注, so the expected coverage is 100 % in every class.
"""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import import_export as imp
import yaml

ROOT = Path(__file__).resolve().parent.parent


def _inline_lines(token) -> list[str]:
    """The text of an inline token, one entry per source line, markup removed."""
    text = []

    def walk(children):
        for child in children or []:
            if child.type in ("text", "code_inline", "html_inline"):
                text.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                text.append("\n")
            elif child.children:
                walk(child.children)

    walk(token.children)
    return [x for x in "".join(text).split("\n") if x.strip()]


def pieces(markdown: list[str]) -> list[tuple[str, str]]:
    """(kind, text) for every heading, cell, list item, prose line and code line."""
    tokens = imp._md.parse("\n".join(markdown) + "\n")
    out: list[tuple[str, str]] = []
    context: list[str] = []
    for tok in tokens:
        if tok.nesting == 1:
            context.append(tok.type)
        elif tok.nesting == -1:
            context.pop()
        elif tok.type in ("fence", "code_block"):
            out += [("code", line) for line in tok.content.split("\n") if line.strip()]
        elif tok.type == "inline":
            parent = context[-1] if context else ""
            if parent == "heading_open":
                kind = "heading"
            elif parent in ("th_open", "td_open"):
                kind = "table cell"
            elif "list_item_open" in context:
                kind = "list item"
            else:
                kind = "prose"
            out += [(kind, line) for line in _inline_lines(tok)]
    return out


class _ArticleText(HTMLParser):
    """Text a reader sees inside the page's main <article> element (not the
    [hidden] names that pages carry for the search index)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.hidden: list[str] = []  # open tags from a [hidden] element in
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if self.hidden or any(name == "hidden" for name, _ in attrs):
            self.hidden.append(tag)
        elif tag == "article" or self.depth:
            self.depth += tag == "article"

    def handle_endtag(self, tag):
        if self.hidden:
            if tag == self.hidden[-1]:
                self.hidden.pop()
        elif tag == "article" and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth and not self.hidden:
            self.parts.append(data)


def squash(text: str) -> str:
    """Whitespace removed, and ``**`` beside a quotation mark: CommonMark
    leaves the author's bold as text where the asterisks sit between CJK text
    and a quote (了**"…"**的), and the page renders it bold (the {strong}
    role); the words are the same."""
    return re.sub(r'\s+|\*\*(?=["“])|(?<=["”])\*\*', "", text)


def page_text(html_file: Path) -> str:
    parser = _ArticleText()
    parser.feed(html_file.read_text(encoding="utf-8"))
    return squash("".join(parser.parts))


def test_every_piece_of_every_article_is_on_its_page(site, capsys):
    articles, _ = imp.split_export(ROOT / "sources" / "export.txt")
    mapping = yaml.safe_load((ROOT / "data" / "articles.yaml").read_text(encoding="utf-8"))
    total, found = Counter(), Counter()
    missing = []
    for art in articles:
        slug = mapping[art.title]["slug"]
        text = page_text(site / f"{slug}.html")
        for kind, piece in pieces(art.markdown):
            total[kind] += 1
            if squash(piece) in text:
                found[kind] += 1
            else:
                missing.append(f"docs/{slug}.md: {kind} missing: {piece.strip()}")
    with capsys.disabled():
        print("\nfidelity (found / total):")
        for kind in ("heading", "table cell", "list item", "prose", "code"):
            print(f"  {kind:10} {found[kind]:5} / {total[kind]:5}")
    assert set(total) == {"heading", "table cell", "list item", "prose", "code"}
    assert not missing, "\n".join(missing)


def test_pieces_cover_each_kind_of_markdown():
    """The extractor itself: each construct is found and classified."""
    md = [
        "# 标题",
        "",
        "> 导语 **粗体**",
        "",
        "| a | b |",
        "|---|---|",
        "| 1 | `x` |",
        "",
        "- 第一项",
        "- 第二项",
        "",
        "段落一行",
        "第二行",
        "",
        "    code = 1",
        "",
        "```python",
        "y = 2",
        "```",
    ]
    got = pieces(md)
    assert ("heading", "标题") in got and ("prose", "导语 粗体") in got
    assert ("table cell", "x") in got and ("list item", "第二项") in got
    assert ("prose", "第二行") in got and ("code", "code = 1") in got and ("code", "y = 2") in got
