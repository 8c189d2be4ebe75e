"""Scaffold a new article with valid front matter in the right guide (make new).

Writes ``docs/<guide>/<slug>.md`` with front matter checked against the one
schema the build uses (``data/front-matter.schema.json`` and the tag list in
``data/tags.yaml``) and adds the page to the guide's reading order (the
toctree of ``docs/<guide>/index.md``). It refuses a slug that is not ASCII
kebab-case or that any guide already uses, an unknown guide and unknown tags,
each with a message that says what to do. Nothing is written on an error.

Run:  python tools/new_article.py --guide training --slug zero-offload \\
          --title "ZeRO-Offload 实战" --tags memory,distributed-training \\
          --summary "一句话摘要。"
      make new GUIDE=training SLUG=zero-offload TITLE="ZeRO-Offload 实战" TAGS=memory
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools" / "extensions"))

from kb_frontmatter import GUIDES, validate  # noqa: E402

SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class ScaffoldError(Exception):
    pass


def scaffold(root: Path, guide: str, slug: str, title: str, tags: list[str], summary: str) -> Path:
    docs = root / "docs"
    if guide not in GUIDES:
        raise ScaffoldError(f"unknown guide {guide!r}; use one of: {', '.join(GUIDES)}")
    if not SLUG.match(slug):
        raise ScaffoldError(f"slug {slug!r} is not ASCII kebab-case (e.g. zero-offload)")
    taken = [p for p in docs.glob(f"*/{slug}.md")]
    if taken:
        raise ScaffoldError(f"slug {slug!r} already exists: {taken[0].relative_to(root)}; "
                            "pick another (slugs are never reused)")
    meta = {"title": title, "guide": guide, "tags": tags, "summary": summary}
    text = ("---\n" + yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=10_000)
            + f"---\n\n# {title}\n\n> {summary}\n\n正文从这里开始。\n")
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--guide", required=True, help=" | ".join(GUIDES))
    parser.add_argument("--slug", required=True, help="ASCII kebab-case file name, no .md")
    parser.add_argument("--title", required=True)
    parser.add_argument("--tags", required=True, help="comma-separated, from data/tags.yaml")
    parser.add_argument("--summary", default="（一句话摘要，发布前请修改。）")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    tags = [t.strip() for t in args.tags.split(",") if t.strip()]
    try:
        page = scaffold(args.root, args.guide, args.slug, args.title, tags, args.summary)
    except ScaffoldError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"created {page.relative_to(args.root)}; added to docs/{args.guide}/index.md "
          "(move the line to set its place in the reading order)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
