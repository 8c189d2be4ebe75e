"""The knowledge base as a web: cross-references, glossary, tags, related, diagrams."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlparse

import pytest
import yaml
from kb.pages.glossary import names
from test_site import articles

ROOT = Path(__file__).resolve().parent.parent


class _Links(HTMLParser):
    """Internal links inside the article body, outside the generated footer."""

    def __init__(self):
        super().__init__()
        self.depth = 0  # inside <article>
        self.footer = 0
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "article":
            self.depth += 1
        if self.depth and "kb-article-footer" in (attrs.get("class") or ""):
            self.footer = self.depth
        if (
            tag == "a"
            and self.depth
            and not self.footer
            and "reference internal" in (attrs.get("class") or "")
        ):
            self.links.append(attrs.get("href", ""))

    def handle_endtag(self, tag):
        if tag == "article":
            self.depth -= 1


def section_links(site: Path, docname: str) -> set[str]:
    """Other articles this article links to at a section (href with #)."""
    parser = _Links()
    parser.feed((site / f"{docname}.html").read_text(encoding="utf-8"))
    base = f"http://x/{docname}.html"
    out = set()
    for href in parser.links:
        url = urlparse(urljoin(base, href))
        target = url.path.lstrip("/").removesuffix(".html")
        if url.fragment and target != docname and target in articles():
            out.add(target)
    return out


@pytest.mark.parametrize("docname", sorted(articles()))
def test_every_article_links_into_three_other_articles(site, docname):
    linked = section_links(site, docname)
    assert len(linked) >= 3, f"{docname} links to sections of only {sorted(linked)}"


def test_every_glossary_term_is_used_and_there_are_sixty():
    glossary = yaml.safe_load((ROOT / "data" / "glossary.yaml").read_text(encoding="utf-8"))
    assert len(glossary) >= 60
    used = set()
    for page in (ROOT / "docs").rglob("*.md"):
        for match in re.findall(r"\{term\}`(?:[^`<]*<)?([^`>]+)>?`", page.read_text(encoding="utf-8")):
            used.add(match.strip().lower())
    unused = [e["id"] for e in glossary if not {n.lower() for n in names(e)} & used]
    assert not unused, f"glossary entries no page links with {{term}}: {unused}"
    for entry in glossary:
        assert entry.get("en") and entry.get("def"), entry["id"]
        assert 1 <= entry["def"].count("。") <= 3, f"{entry['id']}: one to three sentences"


def test_glossary_page_lists_terms_with_links_to_where_they_are_treated(site):
    html = (site / "glossary.html").read_text(encoding="utf-8")
    # one readable anchor per entry, from its id; its other names link there too
    assert len(re.findall(r'<dt class="kb-headword" id="term-[a-z0-9-]+"', html)) >= 60
    assert "详见：" in html and "出现在：" in html
    assert 'id="term-mixed-precision"' in html


def test_the_glossary_anchors_of_before_still_land_on_their_entry(site):
    """Bookmarks to the numbered anchors the glossary had (#term-12,
    #term-DeepSpeed) reach the entry that holds the term now: each is an id
    inside that entry's headword, and no id is there twice."""
    html = (site / "glossary.html").read_text(encoding="utf-8")
    old = yaml.safe_load((ROOT / "data/glossary-old-anchors.yaml").read_text(encoding="utf-8"))
    assert len(old) > 300  # every name of the 9ddc300 glossary that is not an entry's anchor now
    headwords = {
        m.group(1): set(re.findall(r'<span id="([^"]+)"></span>', m.group(2)))
        for m in re.finditer(r'<dt class="kb-headword" id="term-([a-z0-9-]+)">(.*?)</dt>', html, re.S)
    }
    assert {anchor: entry for entry, anchors in headwords.items() for anchor in anchors} == old
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert len(ids) == len(set(ids))


def test_articles_link_a_term_at_first_use(site):
    html = (site / "training/llm-training-10-tips.html").read_text(encoding="utf-8")
    assert re.search(r'href="\.\./glossary\.html#term-[^"]+"', html)


def test_tag_pages_list_the_articles_with_that_tag(site):
    tags = yaml.safe_load((ROOT / "data" / "tags.yaml").read_text(encoding="utf-8"))
    arts = articles()
    for tag in tags:
        page = (site / "tags" / f"{tag}.html").read_text(encoding="utf-8")
        expected = {d for d, m in arts.items() if tag in m["tags"]}
        listed = {
            h.removeprefix("../").removesuffix(".html")
            for h in re.findall(
                r'<a class="reference internal" href="([^"]+)"', page.split('class="kb-tag-list"')[1]
            )
        }
        assert listed == expected, tag
    assert (site / "tags" / "index.html").exists()


def test_every_article_ends_with_tags_and_related(site):
    for docname, meta in articles().items():
        html = (site / f"{docname}.html").read_text(encoding="utf-8")
        footer = html.split('class="kb-article-footer')[1].split("</article>")[0]
        for tag in meta["tags"]:
            assert f"tags/{tag}.html" in footer, (docname, tag)
        related = re.findall(r'<li><p><a class="reference internal" href="([^"]+)"', footer)
        assert 1 <= len(related) <= 3 and all(f"{docname.split('/')[1]}.html" != r for r in related)


def test_front_matter_keywords_are_shown_and_indexed(site):
    """keywords (other and English names of an article) are on the page,
    outside the footer that the search index leaves out, in the block whose
    id tells the search page not to show them as the page's text."""
    with_keywords = {doc: meta["keywords"] for doc, meta in articles().items() if meta.get("keywords")}
    assert with_keywords
    for docname, keywords in with_keywords.items():
        html = (site / f"{docname}.html").read_text(encoding="utf-8")
        body = html.split('class="kb-article-footer')[0]
        shown = re.sub(
            r'<span class="kb-aka" hidden>.*?</span>|<[^>]+>',
            "",
            body.split('<p class="kb-keywords" id="kb-keywords">')[1].split("</p>")[0],
        )
        assert shown == "关键词：" + " · ".join(keywords), (docname, shown)


def test_diagrams_are_local_and_only_where_needed(site):
    with_diagram = [p for p in site.rglob("*.html") if 'class="kb-diagram' in p.read_text(encoding="utf-8")]
    assert len(with_diagram) >= 5
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert "cdn.jsdelivr" not in html and "unpkg.com" not in html, page
        # drawn ahead of time (make diagrams): no mermaid runtime on any page
        assert "vendor/mermaid" not in html, page
    assert not (site / "_static/vendor/mermaid").exists()


@pytest.mark.browser
def test_diagrams_show_as_svg_images_without_foreign_requests(page, server):
    page.goto(f"{server}/training/training-platform-from-scratch.html")
    image = page.locator(".kb-diagram img:visible").first
    image.scroll_into_view_if_needed()
    page.wait_for_function(
        "[...document.querySelectorAll('.kb-diagram img')]"
        ".some(i => i.getClientRects().length && i.complete && i.naturalWidth > 0)"
    )
    assert page.locator("details.admonition").count() >= 1  # the ASCII original, collapsed
    assert page.console_errors == [] and page.foreign_requests == []


def test_next_links_read_straight_through_the_site(site):
    """From the home page, "下一篇" visits every article once, across guides."""
    seen, page = [], "index"
    while True:
        html = (site / f"{page}.html").read_text(encoding="utf-8")
        match = re.search(r'<a class="next-page" href="([^"]+)"', html)
        if not match:
            break
        target = urlparse(urljoin(f"http://x/{page}.html", match.group(1))).path.lstrip("/")
        page = target.removesuffix(".html")
        assert page not in seen, f"next-page loops back to {page}"
        seen.append(page)
    assert set(articles()) <= set(seen), sorted(set(articles()) - set(seen))
