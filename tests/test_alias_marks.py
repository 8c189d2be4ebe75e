"""Glossary names reach search by query-time expansion, never by the pages.

Pages hold only the text a reader sees: no hidden spans of other names, no
alias marks, in any built page (reader modes, translation tools and crawlers
read hidden text too). The search page gets the alias groups instead, and
expands a query that names a term into its other names
(_static/kb-search/query.js; tests/js and tests/test_search.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
MARKS = re.compile(r"⟦|⟧|kb-aka")


def test_no_page_carries_alias_marks(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 20
    carrying = [str(p.relative_to(site)) for p in pages if MARKS.search(p.read_text(encoding="utf-8"))]
    assert carrying == [], carrying


def test_the_search_page_gets_every_glossary_name(site):
    """What replaces the marks: the alias groups, one per glossary entry (and,
    marked `synonym`, one per group of data/search-synonyms.yaml)."""
    html = (site / "search.html").read_text(encoding="utf-8")
    data = re.search(r'<script type="application/json" id="kb-search-aliases">(.*?)</script>', html, re.S)
    groups = json.loads(data.group(1))
    glossary = yaml.safe_load((ROOT / "data" / "glossary.yaml").read_text(encoding="utf-8"))
    synonyms = yaml.safe_load((ROOT / "data" / "search-synonyms.yaml").read_text(encoding="utf-8"))
    assert [g["names"][0] for g in groups if not g.get("synonym")] == [e["zh"] for e in glossary]
    assert [g["names"] for g in groups if g.get("synonym")] == synonyms
    assert all("def" not in g and "url" not in g for g in groups if g.get("synonym"))
    mixed = next(g for g in groups if g["names"][0] == "混合精度")
    assert {"mixed precision", "AMP"} <= set(mixed["names"])
    assert mixed["url"].startswith("glossary.html#")
