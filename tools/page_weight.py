"""Page weight: bytes a reader downloads per page type (HTML + CSS + JS + fonts).

Loads each page of a built site in Debian's chromium (Playwright, cold cache)
from a local server and adds up the response bodies by kind, including what
scripts fetch after load (Pagefind's index) and the images shown (a diagram's SVG). Prints a
Markdown table per page type (the largest page of each type) and the heaviest
page of the site. The goal for an article without diagrams is ≤ 150 KB.

Run:  python tools/page_weight.py [_build/html]      (after make html)
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from local_site import gzip_size, launch, serve, served_file

ROOT = Path(__file__).resolve().parent.parent

KINDS = {
    ".html": "html",
    ".css": "css",
    ".js": "js",
    ".mjs": "js",
    ".woff": "fonts",
    ".woff2": "fonts",
    ".ttf": "fonts",
    ".otf": "fonts",
}


def page_type(rel: str, html: str) -> str:
    if rel in ("index.html",):
        return "home"
    if rel.endswith("/index.html") and not rel.startswith("tags/"):
        return "guide landing"
    if rel.startswith("tags/"):
        return "tag page"
    if rel in ("search.html", "404.html", "glossary.html", "articles.html", "errata.html"):
        return rel.removesuffix(".html")
    return "article with diagram" if 'class="kb-diagram' in html else "article without diagram"


def weigh(site: Path) -> list[dict]:
    from playwright.sync_api import sync_playwright

    rows = []
    served = []  # (path, bytes) the server sent, workers' requests included
    with sync_playwright() as pw, serve(site, served) as base:
        browser = launch(pw)
        for path in sorted(site.rglob("*.html")):
            rel = path.relative_to(site).as_posix()
            if rel.startswith(("_static/", "pagefind/")):
                continue
            ctx = browser.new_context()
            pg = ctx.new_page()
            served.clear()
            pg.goto(f"{base}/{rel}")
            pg.wait_for_load_state("networkidle")
            ctx.close()
            sizes = defaultdict(int)
            for url_path, size in served:
                file = served_file(site, url_path)
                sizes[KINDS.get(file.suffix, "other")] += size
                sizes["gzip"] += gzip_size(file)
            total = sum(v for k, v in sizes.items() if k != "gzip")
            rows.append(
                {
                    "page": rel,
                    "type": page_type(rel, path.read_text(encoding="utf-8")),
                    **sizes,
                    "total": total,
                }
            )
        browser.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", type=Path, default=ROOT / "_build" / "html")
    args = parser.parse_args(argv)
    rows = weigh(args.site)
    kb = lambda n: f"{n / 1024:.0f} KB"  # noqa: E731
    print("| page type | pages | heaviest page | HTML | CSS | JS | fonts | other | total | total, gzip |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    by_type = defaultdict(list)
    for row in rows:
        by_type[row["type"]].append(row)
    for kind, items in sorted(by_type.items()):
        top = max(items, key=lambda r: r["total"])
        print(
            f"| {kind} | {len(items)} | {top['page']} | {kb(top.get('html', 0))} | "
            f"{kb(top.get('css', 0))} | {kb(top.get('js', 0))} | {kb(top.get('fonts', 0))} | "
            f"{kb(top.get('other', 0))} | {kb(top['total'])} | {kb(top.get('gzip', 0))} |"
        )
    heaviest = max(rows, key=lambda r: r["total"])
    print(
        f"\nheaviest page: {heaviest['page']} ({kb(heaviest['total'])}); "
        "bytes are what the local server sent (headers and bodies, uncompressed, "
        "workers' requests included), cold cache; "
        "gzip: the bodies as a compressing server sends them (text at level 6)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
