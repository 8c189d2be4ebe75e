"""Scaffold a new article with valid front matter in the right guide (make new).

Writes ``docs/<guide>/<slug>.md`` with front matter checked against the one
schema the build uses (``data/front-matter.schema.json`` and the tag list in
``data/tags.yaml``) and adds the page to the guide's reading order (the
toctree of ``docs/<guide>/index.md``). It refuses a slug that is not ASCII
kebab-case, that any guide already uses or that names a page of the site
(``glossary``, ``search``, …), an unknown guide, unknown tags, and an empty or
multi-line title, and any value holding a control character (C0, DEL, C1
such as U+0085, or U+2028/U+2029) or bytes that are not UTF-8, each with a
message that says what to do. Nothing is written on an error.

The title and summary are kept verbatim: YAML-quoted in the front matter, and
backslash-escaped in the Markdown (H1 and lead quote) so that MyST shows
``*``, ``_``, backticks, ``{role}``, ``<tag>`` or a trailing ``#`` as typed,
and a start that MyST would read as block syntax (``% comment``, ``---``,
``+++``, ``(label)=``, ``- item``, ``1. item``, ``:::``, ``:field:`` …) as text.

Run:  python tools/new_article.py --guide training --slug zero-offload \\
          --title "ZeRO-Offload 实战" --tags memory,distributed-training \\
          --summary "一句话摘要。"
      make new GUIDE=training SLUG=zero-offload TITLE="ZeRO-Offload 实战" TAGS=memory
      (make passes its variables through the environment: --from-make)
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

import yaml
from kb.pages.frontmatter import GUIDES, validate

ROOT = Path(__file__).resolve().parent.parent

# Matched with fullmatch: "$" would also match before a trailing newline.
SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
DEFAULT_SUMMARY = "（一句话摘要，发布前请修改。）"

# Pages the build makes itself: an article may not take their names.
GENERATED_PAGES = ("search", "genindex", "404", "tags")

# What `make new` passes, by option: the Makefile exports each make variable
# unexpanded under these names (see the `new` target).
MAKE_ENV = {
    "guide": "KB_NEW_GUIDE",
    "slug": "KB_NEW_SLUG",
    "title": "KB_NEW_TITLE",
    "tags": "KB_NEW_TAGS",
    "summary": "KB_NEW_SUMMARY",
}

# ASCII characters that start Markdown/MyST markup inside a line: emphasis,
# code, links and images, roles and substitutions ({…}), raw HTML and entities,
# and a heading's closing #s. Escaped, each shows as itself.
_MARKUP = re.compile(r"([\\`*_\[\]{}<>#&|~!])")

# At the start of a line MyST reads more ASCII punctuation as block syntax
# (% comments, --- and *** rules, +++ block breaks, (label)= targets, - + list
# items, ::: fences, :field: lists, $$ math …), and digits followed by . or )
# as an ordered list. Any ASCII punctuation may be backslash-escaped and then
# shows as itself, so the first one is always escaped.
_LEADING_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")
_ORDERED_LIST = re.compile(r"(\d+)([.)])")

# What no value of `make new` may hold: C0 controls (tab and newline
# included), DEL, C1 controls (U+0085 NEL is a line break to YAML and
# docutils), the Unicode line and paragraph separators, and lone surrogates
# (how Python passes on bytes from the environment that are not UTF-8).
FORBIDDEN = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


class ScaffoldError(Exception):
    pass


def markdown_text(text: str) -> str:
    """``text`` as Markdown that renders exactly as ``text`` (one line), also
    at the start of a line or after ``> ``."""
    text = _MARKUP.sub(r"\\\1", text)
    ordered = _ORDERED_LIST.match(text)
    if ordered:
        return f"{ordered[1]}\\{ordered[2]}{text[ordered.end() :]}"
    if _LEADING_PUNCTUATION.match(text) and not text.startswith("\\"):
        return "\\" + text
    return text


def forbidden(value: str) -> str | None:
    """What is wrong with ``value``'s first forbidden character, or None."""
    found = FORBIDDEN.search(value)
    if found is None:
        return None
    char = found.group()
    if "\udc80" <= char <= "\udcff":
        return f"the byte 0x{ord(char) - 0xDC00:02X}, which is not UTF-8"
    if char in "\u2028\u2029":
        return f"a line or paragraph separator (U+{ord(char):04X})"
    return f"a control character (U+{ord(char):04X})"


def check_line(name: str, value: str) -> str:
    """A title or summary: one non-empty line, without control characters."""
    bad = forbidden(value)
    if bad is not None:
        raise ScaffoldError(
            f"KB075 the {name} {value!r} holds {bad}; "
            f"a {name} is one line of UTF-8 text without control characters"
        )
    value = value.strip()
    if not value:
        raise ScaffoldError(f'KB075 empty {name}; give the article a {name} (make new … {name.upper()}="…")')
    return value


def check_tags(tags: list[str]) -> None:
    """Tags are checked against data/tags.yaml by the schema; a control
    character gets its own message (the tag would look right when printed)."""
    for tag in tags:
        bad = forbidden(tag)
        if bad is not None:
            raise ScaffoldError(
                f"KB004 unknown tag {tag!r}: it holds {bad}; "
                "tags are comma-separated names from data/tags.yaml"
            )


def split_tags(value: str) -> list[str]:
    """The TAGS argument as a list; checked before any stripping."""
    parts = value.split(",")
    check_tags(parts)
    return [t.strip() for t in parts if t.strip()]


def page_names(docs: Path) -> dict[str, str]:
    """Names already used by pages that are not articles: slug -> where."""
    names = {name: "a page the build generates" for name in GENERATED_PAGES}
    for page in sorted(docs.rglob("*.md")):
        rel = page.relative_to(docs)
        if len(rel.parts) == 1 or page.stem == "index":
            names.setdefault(page.stem, str(Path("docs") / rel))
    return names


def check_slug(docs: Path, slug: str) -> None:
    if not SLUG.fullmatch(slug):
        bad = forbidden(slug)
        raise ScaffoldError(
            f"KB076 slug {slug!r} is not ASCII kebab-case (e.g. zero-offload)"
            + (f": it holds {bad}" if bad else "")
        )
    taken = sorted(docs.glob(f"*/{slug}.md"))
    if taken:
        raise ScaffoldError(
            f"KB076 slug {slug!r} already exists: "
            f"{Path('docs') / taken[0].relative_to(docs)}; "
            "pick another (slugs are never reused)"
        )
    reserved = page_names(docs)
    if slug in reserved:
        raise ScaffoldError(f"KB076 slug {slug!r} is the name of {reserved[slug]}; pick another")


def scaffold(root: Path, guide: str, slug: str, title: str, tags: list[str], summary: str) -> Path:
    docs = root / "docs"
    if guide not in GUIDES:
        bad = forbidden(guide)
        raise ScaffoldError(
            f"KB077 unknown guide {guide!r}"
            + (f": it holds {bad}" if bad else "")
            + f"; use one of: {', '.join(GUIDES)}"
        )
    check_slug(docs, slug)
    check_tags(tags)
    title = check_line("title", title)
    summary = check_line("summary", summary)
    meta = {"title": title, "guide": guide, "tags": tags, "summary": summary}
    text = (
        "---\n"
        + yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=10_000)
        + f"---\n\n# {markdown_text(title)}\n\n> {markdown_text(summary)}\n\n"
        "正文从这里开始。\n"
    )
    _, errors = validate(text, f"{guide}/{slug}", root / "data")
    if errors:
        raise ScaffoldError("; ".join(msg for _, msg in errors))
    index = docs / guide / "index.md"
    toc = index.read_text(encoding="utf-8")
    start = toc.index("```{toctree}")
    end = toc.index("```", start + 3)
    page = docs / guide / f"{slug}.md"
    page.write_text(text, encoding="utf-8")
    index.write_text(toc[:end] + f"{slug}\n" + toc[end:], encoding="utf-8")
    return page


def argv_from_make(environ: dict[str, str]) -> list[str]:
    """Options from the variables of `make new`, passed as ``--name=value``.

    The ``=`` form keeps a value that starts with ``-`` a value; an empty
    SUMMARY means "not given".
    """
    argv = []
    for option, name in MAKE_ENV.items():
        value = environ.get(name, "")
        if option != "summary" or value:
            argv.append(f"--{option}={value}")
    return argv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--guide", required=True, help=" | ".join(GUIDES))
    parser.add_argument("--slug", required=True, help="ASCII kebab-case file name, no .md")
    parser.add_argument("--title", required=True)
    parser.add_argument("--tags", required=True, help="comma-separated, from data/tags.yaml")
    parser.add_argument("--summary", default=DEFAULT_SUMMARY)
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    parser.add_argument(
        "--from-make",
        action="store_true",
        help="take the arguments from make's KB_NEW_* environment variables",
    )
    if argv is None:
        argv = sys.argv[1:]
    if "--from-make" in argv:
        argv = [*argv, *argv_from_make(os.environ)]
    args = parser.parse_args(argv)
    try:
        tags = split_tags(args.tags)
        page = scaffold(args.root, args.guide, args.slug, args.title, tags, args.summary)
    except ScaffoldError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(
        f"created {page.relative_to(args.root)}; added to docs/{args.guide}/index.md "
        "(move the line to set its place in the reading order)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
