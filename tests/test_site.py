"""The built site: generated listings, guide landing pages, home page, search."""

from __future__ import annotations

import re
from collections import Counter
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import import_export as imp
import pytest
import tinycss2
import yaml
from kb.core import anchors as kb_anchors
from kb.guard.untrusted import CONTENT_CLASSES, refused_class
from kb.pages import frontmatter as kb_frontmatter
from one_build import register

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

CONF = (Path(__file__).resolve().parent.parent / "conf.py").read_text(encoding="utf-8")


def articles() -> dict[str, dict]:
    """docname -> front matter of every article page in docs/."""
    out = {}
    for path in sorted(DOCS.rglob("*.md")):
        docname = path.relative_to(DOCS).with_suffix("").as_posix()
        if kb_frontmatter.is_article(docname):
            yaml_text, _ = kb_frontmatter.split_front_matter(path.read_text(encoding="utf-8"))
            out[docname] = yaml.safe_load(yaml_text)
    return out


def links(html: str) -> list[str]:
    """Targets of the title links of a generated listing (not the tag links)."""
    return re.findall(r'<strong><a class="reference internal" href="([^"#]+)', html)


def exported_pages() -> dict[str, str]:
    """docname -> title of every page of the source export (sources/export.txt,
    mapped to pages by data/articles.yaml): what the site must carry at least."""
    exported, _ = imp.split_export(ROOT / "sources" / "export.txt")
    mapping = imp.load_map(imp.DEFAULT_MAP)
    return {mapping[article.title]["slug"]: article.title for article in exported}


def test_every_article_of_the_export_is_a_page_and_the_guides_are_four():
    """The export's articles are all here (contributors add more: any number)."""
    pages, arts = exported_pages(), articles()
    assert len(pages) >= 12  # 11 articles and the welcome page (sources/README.md)
    for docname, title in pages.items():
        assert (DOCS / f"{docname}.md").is_file(), (docname, title)
    exported = {d for d in pages if kb_frontmatter.is_article(d)}
    assert exported <= set(arts)
    assert {arts[d]["guide"] for d in exported} == {"training", "inference", "hardware", "industry"}
    assert {m["guide"] for m in arts.values()} <= set(kb_frontmatter.guide_keys())


def test_all_articles_page_lists_every_article_by_guide(site):
    html = unescape((site / "articles.html").read_text(encoding="utf-8"))
    for docname, meta in articles().items():
        shown = meta.get("listing_title") or meta["title"]
        assert f'href="{docname}.html"' in html, docname
        assert shown in html and meta["summary"] in html
    # grouped in guide order
    headings = re.findall(r'<p class="[^"]*kb-guide-heading[^"]*">([^<]+)</p>', html)
    assert headings == ["训练", "推理", "硬件", "行业"]
    assert f"共 {len(articles())} 篇文章" in html


@pytest.mark.parametrize("guide", ["training", "inference", "hardware", "industry"])
def test_guide_landing_lists_its_articles_in_reading_order(site, guide):
    html = (site / guide / "index.html").read_text(encoding="utf-8")
    listing = html.split("kb-article-list")[1].split("</ol>")[0]
    own = re.findall(
        r"```\{toctree\}.*?\n\n(.*?)```", (DOCS / guide / "index.md").read_text(encoding="utf-8"), re.S
    )[0].split()
    extra = sorted(d for d, m in articles().items() if guide in m.get("also_in", []))
    expected = [f"{d}.html" for d in own] + [f"../{d}.html" for d in extra]
    assert links(listing) == expected


def test_second_guides_list_lpu_and_rental_articles(site):
    assert "../hardware/nvidia-lpu.html" in (site / "inference/index.html").read_text("utf-8")
    assert "../hardware/gpu-rental-guide.html" in (site / "industry/index.html").read_text("utf-8")


def test_home_is_the_welcome_page_with_the_guides_as_way_in(site):
    html = (site / "index.html").read_text(encoding="utf-8")
    assert re.search(r"<h1[^>]*>(<span[^>]*></span>)*欢迎来到 51 算力", html)
    guides = html.split("kb-guides")[1].split("</ul>")[0]
    assert links(guides) == [f"{g}/index.html" for g in ("training", "inference", "hardware", "industry")]


def test_every_heading_is_linked_by_a_name_not_a_number(site):
    """Section links stay put when a section is added above (kb.core.anchors):
    each heading's id is its label or its title in pinyin, never docutils'
    running number; the search's section links and the permalinks use it."""
    numbered = {}
    for page in site.rglob("*.html"):
        ids = re.findall(r'<h[1-6] id="([^"]+)"', page.read_text(encoding="utf-8"))
        bad = [i for i in ids if re.fullmatch(r"id\d+", i) or not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", i)]
        if bad:
            numbered[str(page.relative_to(site))] = bad
    assert numbered == {}


class _IdsAroundTheText(HTMLParser):
    """The ids of a page's elements outside its text (``<article>`` and what
    it holds), and every id of the page with how often it is given."""

    VOID = frozenset({"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"})

    def __init__(self):
        super().__init__()
        self.depth, self.around, self.count = 0, set(), Counter()

    def handle_starttag(self, tag, attrs):
        node_id = dict(attrs).get("id")
        if node_id is not None:
            self.count[node_id] += 1
            if not self.depth:
                self.around.add(node_id)
        if self.depth or tag == "article":
            self.depth += tag not in self.VOID

    def handle_endtag(self, tag):
        if self.depth and tag not in self.VOID:
            self.depth -= 1


def test_the_ids_the_site_gives_around_the_text_are_the_ones_pages_may_not_take(site):
    """KB085 refuses a heading or label with an id the page template gives
    (kb.core.anchors.site_id): every id outside a page's text is one it
    names, so a furo that adds one fails here. And no page gives an id twice."""
    around, twice = set(), {}
    for page in site.rglob("*.html"):
        ids = _IdsAroundTheText()
        ids.feed(page.read_text(encoding="utf-8"))
        around |= ids.around
        if repeated := [node_id for node_id, n in ids.count.items() if n > 1]:
            twice[str(page.relative_to(site))] = repeated
    assert {"furo-main-content", "__navigation", "toctree-checkbox-1"} <= around  # the parser found them
    assert sorted(node_id for node_id in around if not kb_anchors.site_id(node_id)) == []
    assert twice == {}


def _rules(nodes):
    """The style rules of a style sheet, those inside any at-rule too."""
    for node in nodes:
        if node.type == "qualified-rule":
            yield node
        elif node.type == "at-rule" and node.content is not None:
            yield from _rules(
                tinycss2.parse_blocks_contents(node.content, skip_comments=True, skip_whitespace=True)
            )


def _classes(tokens) -> set[str]:
    """Every class a selector names, inside :is(), :not() and the like too."""
    found, before = set(), None
    for token in tokens:
        if token.type == "function":
            found |= _classes(token.arguments)
        elif token.type in ("() block", "[] block"):
            found |= _classes(token.content)
        elif (
            token.type == "ident" and before is not None and before.type == "literal" and before.value == "."
        ):
            found.add(token.value)
        before = token
    return found


# what a script selects elements by: a selector, or a class name
_SELECTORS = re.compile(r"""(?:querySelector(?:All)?|closest|matches)\(\s*(["'`])(.*?)\1""")
_CLASS_NAMES = re.compile(
    r"""(?:getElementsByClassName|classList\.(?:add|remove|toggle|contains|replace))\(([^)]*)\)"""
)


def _script_classes(text: str) -> set[str]:
    found = set()
    for _quote, selector in _SELECTORS.findall(text):
        found |= set(re.findall(r"\.([A-Za-z_][\w-]*)", selector))
    for arguments in _CLASS_NAMES.findall(text):
        for name in re.findall(r"""["'`]([^"'`]*)["'`]""", arguments):
            found |= set(name.split())
    return found


def test_every_class_the_sites_style_sheets_and_scripts_use_is_refused_or_content(site):
    """KB086 refuses the classes the site gives its own page parts, which its
    style sheets and scripts hide, place or act on (kb.guard.untrusted:
    kb-…, THEME_CLASSES, LEFT_OUT_CLASSES); CONTENT_CLASSES style a page's
    content as content. Every class a style sheet or script the pages load
    uses is one or the other: a furo that adds a class fails here until it is
    sorted, and the two lists do not meet."""
    config = SimpleNamespace(copybutton_exclude=re.search(r'copybutton_exclude = "(.*)"', CONF).group(1))
    assert not [name for name in CONTENT_CLASSES if refused_class(name, config)]
    sheets, scripts = set(), set()
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        sheets |= {
            (page.parent / h).resolve()
            for h in re.findall(r'<link rel="stylesheet"[^>]*href="([^"?]+)', html)
        }
        scripts |= {(page.parent / h).resolve() for h in re.findall(r'<script[^>]*src="([^"?]+)', html)}
    # and the modules they import (the search page's)
    todo = list(scripts)
    while todo:
        importer = todo.pop()
        for target in re.findall(
            r"""\bfrom\s+["'](\.{1,2}/[^"']+)["']""", importer.read_text(encoding="utf-8")
        ):
            if (module := (importer.parent / target).resolve()) not in scripts:
                scripts.add(module)
                todo.append(module)
    used: dict[str, set[str]] = {}
    for sheet in sheets:
        stylesheet = tinycss2.parse_stylesheet(
            sheet.read_text(encoding="utf-8"), skip_comments=True, skip_whitespace=True
        )
        for rule in _rules(stylesheet):
            for name in _classes(rule.prelude):
                used.setdefault(name, set()).add(sheet.name)
    for script in scripts:
        for name in _script_classes(script.read_text(encoding="utf-8")):
            used.setdefault(name, set()).add(script.name)
    # sphinx-copybutton's script leaves out what its configuration names
    for name in re.findall(r"\.([\w-]+)", config.copybutton_exclude):
        used.setdefault(name, set()).add("conf.py: copybutton_exclude")
    # what the reading above must find: in an @media block, in :not(), in furo's script, in ours
    assert {
        "only-dark",
        "visually-hidden",
        "toc-content-icon",
        "kb-calc-status",
        "theme-toggle",
        "kb-term-tip",
        "gp",
    } <= set(used)
    unsorted = {
        name: sorted(where)
        for name, where in used.items()
        if not refused_class(name, config) and name not in CONTENT_CLASSES
    }
    assert unsorted == {}


NEW_ARTICLE = (
    "---\ntitle: 新文章 {n}\nguide: training\ntags: [memory]\nsummary: 新文章 {n} 的摘要。\n---\n\n"
    "# 新文章 {n}\n\n正文。\n"
)


def _placed_article(repo, at) -> str:
    (repo / "docs/training/new-article.md").write_text(NEW_ARTICLE.format(n=at.tag), encoding="utf-8")
    index = repo / "docs/training/index.md"
    index.write_text(
        index.read_text(encoding="utf-8").replace(
            "training-platform-from-scratch\n", "training-platform-from-scratch\nnew-article\n"
        ),
        encoding="utf-8",
    )
    return f"新文章 {at.tag} 的摘要。"


def _unplaced_article(repo, at) -> str:
    (repo / "docs/training/unplaced.md").write_text(NEW_ARTICLE.format(n=at.tag), encoding="utf-8")
    return "docs/training/unplaced.md"


# the valid contribution joins the build of the group "valid", the one that
# forgot the toctree the group "pages" (tests/one_build.py)
register("valid", "site", {"new-article": _placed_article})
register("pages", "site", {"unplaced-article": _unplaced_article})


def test_a_new_article_with_valid_front_matter_is_listed(one_build):
    """Adding a page is enough: no listing is edited by hand."""
    # an article outside every toctree is a warning: the contributor must place it
    r = one_build("pages")["site/unplaced-article"]
    assert f"{r.value}: WARNING: KB105 document isn't included in any toctree" in r.out, r.out[-3000:]
    r = one_build("valid")["site/new-article"]
    assert r.run.proc.returncode == 0, r.out[-3000:]
    assert r.value in (r.repo / "_build/html/articles.html").read_text(encoding="utf-8")
    assert r.value in (r.repo / "_build/html/training/index.html").read_text(encoding="utf-8")
