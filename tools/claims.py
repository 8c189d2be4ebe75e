"""List the number-bearing claims of article pages that the claims register
does not cover yet (data/claims/<guide>/<slug>.yaml; see kb.editorial.claims).

Run:  python tools/claims.py docs/training/llm-training-10-tips.md [...]
      python tools/claims.py --all        # every claim unit, registered or not
Prints ``docs/…md:LINE: text`` per claim unit; exit status 1 if any is uncovered.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kb.editorial import claims as kb_claims
from kb.pages.frontmatter import is_article

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="+", type=Path)
    parser.add_argument("--all", action="store_true", help="list covered units too")
    args = parser.parse_args(argv)
    registers, problems = kb_claims.load(ROOT / "data")
    for problem in problems:
        print(problem, file=sys.stderr)
    missing = 0
    # a folder stands for its guides' pages (make claims: the shell never sees their names)
    pages = [p for arg in args.pages for p in (sorted(arg.glob("*/*.md")) if arg.is_dir() else [arg])]
    for page in pages:
        doc = page.resolve().relative_to(ROOT / "docs").with_suffix("").as_posix()
        if not is_article(doc):
            continue  # guide landing pages, the glossary …: no claims of an author
        text = page.read_text(encoding="utf-8")
        entries = registers.get(doc, [])
        units = kb_claims.claim_units(text) if args.all else kb_claims.uncovered(text, entries)
        lines = text.split("\n")
        for line, unit in units:
            source = lines[line - 1].strip()
            context = f"    (row: {source})" if source.startswith("|") else ""
            print(f"docs/{doc}.md:{line}: {unit}{context}")
        missing += len(kb_claims.uncovered(text, entries))
    return 1 if missing or problems else 0


if __name__ == "__main__":
    sys.exit(main())
