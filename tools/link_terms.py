"""Link glossary terms at their first use on a page: ``混合精度`` → ``{term}`混合精度```.

For each entry of ``data/glossary.yaml`` not yet linked on the page, the
first occurrence of any of its names in running text (paragraphs, list
items, table cells) becomes a ``{term}`` role; the rendered words do not
change. Headings, code, comments, directive options, links, roles and
editor-added blocks (编者注, 参见) are left alone. Latin names match whole
words only (``CCL`` is not found inside ``NCCL``). Re-running changes nothing.

Run:  python tools/link_terms.py docs/training/new-article.md [...]
      python tools/link_terms.py --check docs   (exit 1 if a page would change)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from kb.core.markdown import colon_directives
from kb.pages.frontmatter import is_article
from kb.pages.glossary import load_glossary, names
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent

_md = MarkdownIt("commonmark").enable("table")
# spans that must not be touched: roles, inline code, links, bold markers stay
_PROTECTED = re.compile(r"\{[\w:-]+\}`[^`]*`|`[^`]*`|\[[^\]]*\]\([^)]*\)|<[^>]*>")
_TERM = re.compile(r"\{term\}`(?:[^`<]*<)?([^`>]+)>?`")


def prose_lines(text: str) -> list[int]:
    """0-based line numbers of running text outside editor blocks."""
    lines = text.split("\n")
    skip = set()
    if lines and lines[0] == "---":  # front matter
        end = lines.index("---", 1)
        skip.update(range(end + 1))
    for i, directives in enumerate(colon_directives(lines)):
        if {"editor-note", "seealso", "admonition"} & set(directives):
            skip.add(i)
    out = []
    tokens = _md.parse(text)
    for i, tok in enumerate(tokens):
        if tok.type != "inline" or tok.map is None:
            continue
        if tokens[i - 1].type == "heading_open":
            continue
        for n in range(*tok.map):
            line = lines[n]
            if n in skip or line.startswith(("%", ":", "(", "#", "```")) or not line.strip():
                continue
            out.append(n)
    return sorted(set(out))


def _find(line: str, name: str) -> int:
    """Index of ``name`` in the unprotected parts of ``line``, or -1."""
    masked = _PROTECTED.sub(lambda m: "\0" * len(m.group(0)), line)
    latin = re.fullmatch(r"[\x00-\x7f]+", name) is not None
    pattern = rf"(?<![A-Za-z0-9_.-]){re.escape(name)}(?![A-Za-z0-9_])" if latin else re.escape(name)
    match = re.search(pattern, masked)
    return match.start() if match else -1


def link_page(text: str, glossary: list[dict]) -> str:
    lines = text.split("\n")
    already = {t.lower() for t in _TERM.findall(text)}
    todo = [e for e in glossary if not {n.lower() for n in names(e)} & already]
    candidates = prose_lines(text)
    for entry in todo:
        best = None  # (line, column, name)
        for name in sorted(names(entry), key=len, reverse=True):
            for n in candidates:
                col = _find(lines[n], name)
                if col >= 0:
                    if best is None or (n, col) < best[:2]:
                        best = (n, col, name)
                    break
        if best:
            n, col, name = best
            lines[n] = lines[n][:col] + f"{{term}}`{name}`" + lines[n][col + len(name) :]
    return "\n".join(lines)


def pages(paths: list[Path]) -> list[Path]:
    out = []
    for path in paths:
        files = sorted(path.rglob("*.md")) if path.is_dir() else [path]
        for f in files:
            docname = f.resolve().relative_to(ROOT / "docs").with_suffix("").as_posix()
            if is_article(docname):
                out.append(f)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--check", action="store_true", help="report pages that would change")
    args = parser.parse_args(argv)
    glossary = load_glossary(ROOT / "data")
    changed = []
    for page in pages(args.paths):
        text = page.read_text(encoding="utf-8")
        new = link_page(text, glossary)
        if new != text:
            changed.append(page)
            if not args.check:
                page.write_text(new, encoding="utf-8")
    verb = "would link terms in" if args.check else "linked terms in"
    for page in changed:
        print(f"{page}: {verb} this page")
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
