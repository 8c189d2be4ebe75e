"""The files around the pages (issue 21, item 8): feed.xml, robots.txt,
llms.txt, llms-full.txt, and the 404 page served under a path.

One in-process build of the small knowledge base (tests/small_site.py), as
Read the Docs would serve it under ``/zh-cn/latest/`` (``kb_served_at``).

- feed.xml is valid against RFC 4287's RELAX NG schema and its Schematron
  rules (tests/schemas/atom.rng, Appendix B), has an author, and its
  ``<updated>`` is its newest entry's;
- robots.txt names the sitemap;
- llms.txt follows llmstxt.org (title, summary quote, sections of links with
  their summaries); llms-full.txt holds the articles as Markdown, 编者注
  included, without the page's reading aids;
- the 404 page, answered for a missing URL several folders deep under
  /zh-cn/latest/, loads its styles and scripts and links the site's pages
  (over HTTP: every URL in it is fetched); it is noindex and names no
  canonical URL.
"""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import urljoin, urlparse
from urllib.request import urlopen

import pytest
from local_site import QuietHandler, serve
from small_site import ARTICLE_TEXT, NOTE_VERDICT, build, make_small_site

pytestmark = pytest.mark.slow

SCHEMA = Path(__file__).parent / "schemas/atom.rng"
ATOM = "{http://www.w3.org/2005/Atom}"
SERVED_AT = "/zh-cn/latest/"


@pytest.fixture(scope="module")
def html(tmp_path_factory) -> Path:
    root = make_small_site(tmp_path_factory.mktemp("site-files") / "kb")
    code, log, out = build(root, "html", "-D", f"kb_served_at=https://kb-preview.example{SERVED_AT}")
    assert code == 0 and "WARNING" not in log, log[-3000:]
    return out


# -- feed.xml --------------------------------------------------------------------------


def atom_errors(feed: bytes) -> list[str]:
    """What RFC 4287's grammar and rules find wrong in a feed."""
    from lxml import etree, isoschematron

    schema = etree.parse(str(SCHEMA))
    doc = etree.fromstring(feed)
    relax, rules = etree.RelaxNG(schema), isoschematron.Schematron(schema)
    errors = [] if relax.validate(doc) else [str(e) for e in relax.error_log]
    if not rules.validate(doc):
        errors += [str(e) for e in rules.error_log]
    return errors


def test_feed_is_valid_atom(html):
    feed = (html / "feed.xml").read_bytes()
    assert atom_errors(feed) == []


def test_the_schema_catches_what_the_feed_lacked():
    """The check is real: the feed as it was (no author) and a date that is no
    RFC 3339 date fail it."""
    good = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><id>https://x/</id>'
        b"<updated>2026-12-01T00:00:00Z</updated>AUTHOR<entry><title>e</title>"
        b'<link href="https://x/e.html"/><id>https://x/e.html</id><updated>DATE</updated></entry></feed>'
    )
    ok = good.replace(b"AUTHOR", b"<author><name>a</name></author>").replace(b"DATE", b"2026-12-01T00:00:00Z")
    assert atom_errors(ok) == []
    assert any("atom:author" in e for e in atom_errors(ok.replace(b"<author><name>a</name></author>", b"")))
    assert atom_errors(
        ok.replace(b"<updated>2026-12-01T00:00:00Z</updated></entry>", b"<updated>2026-12</updated></entry>")
    )


def test_feed_names_its_author_and_is_as_new_as_its_newest_entry(html):
    from lxml import etree

    feed = etree.parse(str(html / "feed.xml")).getroot()
    assert feed.findtext(f"{ATOM}author/{ATOM}name") == "51 算力"
    entries = feed.findall(f"{ATOM}entry")
    assert entries
    assert feed.findtext(f"{ATOM}updated") == max(e.findtext(f"{ATOM}updated") for e in entries)
    # an article that names its author (front matter) carries it
    (article,) = [e for e in entries if e.findtext(f"{ATOM}title") == "梯度累积"]
    assert article.findtext(f"{ATOM}author/{ATOM}name") == "张三"


# -- robots.txt, llms.txt, llms-full.txt ----------------------------------------------------


def test_robots_txt_points_to_the_sitemap(html):
    robots = (html / "robots.txt").read_text(encoding="utf-8")
    assert re.search(r"^User-agent: \*$", robots, re.M)
    assert "Disallow: /\n" not in robots
    assert re.search(r"^Sitemap: https://kb\.51suanli\.com/sitemap\.xml$", robots, re.M)
    assert (html / "sitemap.xml").is_file()


def test_llms_txt_lists_the_articles_by_guide_with_their_summaries(html):
    text = (html / "llms.txt").read_text(encoding="utf-8")
    lines = text.splitlines()
    # llmstxt.org: an H1 with the site's name first, then a summary, then H2 sections of links
    assert lines[0] == "# 51 算力知识库"
    assert "## 训练" in lines
    assert "- [梯度累积](https://kb.51suanli.com/training/x.html): 用小显存模拟大 batch。" in lines
    assert "https://kb.51suanli.com/llms-full.txt" in text
    assert lines.index("## 训练") < lines.index("## Optional")
    assert all(not line.startswith("# ") for line in lines[1:])


def test_llms_full_txt_holds_the_articles_as_markdown_with_their_editor_notes(html):
    text = (html / "llms-full.txt").read_text(encoding="utf-8")
    assert "# 梯度累积" in text and "## 引言" in text
    assert ARTICLE_TEXT in text
    # the 编者注 as a quote, its verdict and its collapsed explanation
    assert f"> **编者注**\n>\n> **{NOTE_VERDICT}**" in text
    assert ">\n> **展开说明**\n>\n> 等效 batch 等于每步 batch 乘以累积步数。" in text
    # a table, code and a diagram as Markdown
    assert "| 方法 | 显存 |\n| --- | --- |\n| 直接大 batch | 多 |" in text
    assert "```python\nloss = model(x).sum()\nloss.backward()\n```" in text
    assert "```mermaid\ngraph LR\n" in text
    # links absolute; no HTML; none of the page's reading aids (reading time, tags, related)
    assert "(https://kb.51suanli.com/glossary.html#term-" in text
    assert "<" not in text.replace("<-", "")
    assert "阅读时间" not in text and "标签：" not in text


def test_llms_full_txt_is_written_again_only_when_what_it_holds_changed(tmp_path):
    """A build that writes no article leaves llms-full.txt alone (it is the
    largest file of a build with no change); an edit, or the file gone,
    writes it again, as a full build would."""
    root = make_small_site(tmp_path / "kb")
    assert (built := build(root, "html"))[0] == 0, built[1][-3000:]
    full = root / "_build/html/llms-full.txt"
    written = full.stat().st_mtime_ns
    assert (built := build(root, "html"))[0] == 0, built[1][-3000:]
    assert full.stat().st_mtime_ns == written
    article = root / "docs/training/x.md"
    article.write_text(
        article.read_text(encoding="utf-8").replace(ARTICLE_TEXT, ARTICLE_TEXT + "编辑后的一句。"),
        encoding="utf-8",
    )
    assert (built := build(root, "html"))[0] == 0, built[1][-3000:]
    edited = full.read_text(encoding="utf-8")
    assert "编辑后的一句。" in edited
    full.unlink()
    assert (built := build(root, "html"))[0] == 0, built[1][-3000:]
    assert full.read_text(encoding="utf-8") == edited
    shutil.rmtree(root / "_build")
    assert (built := build(root, "html"))[0] == 0, built[1][-3000:]
    assert full.read_text(encoding="utf-8") == edited


def test_a_carriage_return_in_an_article_reaches_llms_full_txt_as_a_line_end(tmp_path):
    """An entity can put a CR in a page's text (&#13;); llms-full.txt, made
    from each article's cached Markdown, has LF line ends only."""
    root = make_small_site(tmp_path / "kb")
    article = root / "docs/training/x.md"
    article.write_text(
        article.read_text(encoding="utf-8").replace(ARTICLE_TEXT, ARTICLE_TEXT + "回车&#13;之后。"),
        encoding="utf-8",
    )
    assert (built := build(root, "html"))[0] == 0, built[1][-3000:]
    full = (root / "_build/html/llms-full.txt").read_bytes()
    assert "回车\n之后。".encode() in full and b"\r" not in full


# -- 404 under /zh-cn/latest/ ----------------------------------------------------------------


class UnderPath(QuietHandler):
    """The site at /zh-cn/latest/ as Read the Docs serves a version; any
    other URL, or a missing file, is answered with the site's 404.html."""

    def translate_path(self, path: str) -> str:
        if not path.startswith(SERVED_AT):
            return str(Path(self.directory) / "no-such-file")
        return super().translate_path("/" + path[len(SERVED_AT) :])


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.base, self.urls, self.meta, self.rels = None, [], {}, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "base":
            self.base = a.get("href")
        if tag == "meta" and "name" in a:
            self.meta[a["name"]] = a.get("content")
        if tag == "link":
            self.rels.append(a.get("rel"))
        for name in ("href", "src"):
            if a.get(name) and tag in ("a", "link", "script", "img"):
                self.urls.append((tag, a[name]))


def check_404_under_served_path(site: Path) -> None:
    """Serve `site` at /zh-cn/latest/; a missing URL three folders deep gets
    the 404 page, whose every same-site URL (styles, scripts, links) answers."""
    with serve(site, handler_class=UnderPath) as server:
        missing = f"{server}{SERVED_AT}training/no/such/page.html"
        with pytest.raises(HTTPError) as answer:
            urlopen(missing)
        assert answer.value.code == 404
        page = answer.value.read().decode("utf-8")
        assert "页面不存在" in page
        links = Links()
        links.feed(page)
        assert links.base == SERVED_AT
        assert links.meta.get("robots") == "noindex"
        assert "canonical" not in links.rels
        base = urljoin(missing, links.base)
        fetched = []
        for tag, url in links.urls:
            target = urljoin(base, url)
            if urlparse(target).netloc != urlparse(server).netloc:
                continue  # (none: the site requests no other host)
            path = urlparse(target).path
            assert path.startswith(SERVED_AT), (tag, url, target)
            with urlopen(target.split("#")[0]) as got:  # a 404 raises
                assert got.status == 200
            fetched.append((tag, path))
        kinds = {tag for tag, _ in fetched}
        assert {"link", "script", "a"} <= kinds, fetched
        assert ("a", f"{SERVED_AT}index.html") in fetched, fetched


def test_404_page_works_from_a_nested_missing_url_under_the_served_path(html):
    check_404_under_served_path(html)


def test_other_pages_keep_their_canonical_url(html):
    links = Links()
    links.feed((html / "training/x.html").read_text(encoding="utf-8"))
    assert "canonical" in links.rels and links.base is None and "robots" not in links.meta


# -- a summary the editors correct -----------------------------------------------------


def test_a_summary_the_editors_correct_shows_the_verdict_wherever_it_is_listed(tmp_path):
    """front matter's listing_notes: the 编者注 that correct what the title or
    summary says. Every list that shows the summary (全部文章, the tag pages,
    llms.txt, the feed) shows their verdicts beside it, linked to the note;
    without it (the html fixture's site) none does."""
    root = make_small_site(tmp_path / "kb")
    page = root / "docs/training/x.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(
        text.replace(
            "summary: 用小显存模拟大 batch。\n",
            "summary: 用小显存模拟大 batch。\nlisting_notes: [note-x-steps]\n",
        ),
        encoding="utf-8",
    )
    code, log, out = build(root, "html")
    assert code == 0 and "WARNING" not in log, log[-3000:]
    verdict = f"编者注：{NOTE_VERDICT}"
    for listing, href in (("articles.html", "training/x.html"), ("tags/memory.html", "../training/x.html")):
        html_text = (out / listing).read_text(encoding="utf-8")
        assert re.search(
            rf"用小显存模拟大 batch。（<a [^>]*href=\"{re.escape(href)}#note-x-steps\"[^>]*>{re.escape(verdict)}</a>）",
            html_text,
        ), listing
    llms = (out / "llms.txt").read_text(encoding="utf-8")
    assert f"用小显存模拟大 batch。（{verdict} https://kb.51suanli.com/training/x.html#note-x-steps）" in llms
    assert f"<summary>用小显存模拟大 batch。（{verdict}）</summary>" in (out / "feed.xml").read_text(
        encoding="utf-8"
    )


def test_without_listing_notes_no_list_shows_a_verdict(html):
    for name in ("articles.html", "tags/memory.html", "llms.txt", "feed.xml"):
        assert f"编者注：{NOTE_VERDICT}" not in (html / name).read_text(encoding="utf-8"), name


@pytest.mark.parametrize("label", ["note-x-stepz", "title"])
def test_listing_notes_must_name_a_note_of_the_page(tmp_path, label):
    """At the line of listing_notes that names it (a label the page says
    elsewhere too, as "title", is not looked for there)."""
    root = make_small_site(tmp_path / "kb")
    page = root / "docs/training/x.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(
        text.replace("author: 张三\n", f"author: 张三\nlisting_notes: [{label}]\n"), encoding="utf-8"
    )
    line = text[: text.index("author: 张三")].count("\n") + 2
    code, log, _out = build(root, "html")
    assert code != 0 and "Traceback" not in log, log[-3000:]
    assert (
        f"docs/training/x.md:{line}: WARNING: KB026 listing_notes names '{label}', which is not the "
        ":label: of a 编者注 on this page" in log
    ), log[-3000:]
    assert "(note-x-steps)" in log  # the page's notes, to choose from
