"""Every Sphinx builder works under -W with our extensions (issue 21, item 6).

A small knowledge base (tests/small_site.py: the real conf.py and
extensions, a listing with tag links, an 编者注, a table, code and a mermaid
diagram) is built in this process with each builder. Each build must pass
with no warning and write the article's text where that builder puts it.
The site features switch themselves off where there is no website
(kb.core.builders): no search index, feed, sitemap, robots.txt, llms.txt,
404 or tag pages in a book, a single page or a text export; dirhtml is a
website and gets them all.

linkcheck needs the internet for the real pages; here it runs on pages
whose only links are internal, to show that it starts and that our
extensions do not break it.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from small_site import ARTICLE_TEXT, NOTE_VERDICT, build, make_small_site

pytestmark = pytest.mark.slow

SITE_FILES = ("feed.xml", "sitemap.xml", "robots.txt", "llms.txt", "llms-full.txt")

# builder -> the file holding the article's text
ARTICLE_FILE = {
    "html": "training/x.html",
    "dirhtml": "training/x/index.html",
    "singlehtml": "index.html",
    "text": "training/x.txt",
    "gettext": "training.pot",  # gettext_compact: one catalog per folder
    "latex": "51.tex",
}


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    return make_small_site(tmp_path_factory.mktemp("builders") / "kb")


@pytest.fixture(scope="module")
def built(small):
    """builder -> (exit code, output, output folder), each built once."""
    runs: dict[str, tuple[int, str, Path]] = {}

    def get(builder: str):
        if builder not in runs:
            runs[builder] = build(small, builder)
        return runs[builder]

    return get


def _passes(run) -> Path:
    code, log, out = run
    assert code == 0 and "WARNING" not in log and "Traceback" not in log, log[-3000:]
    return out


@pytest.mark.parametrize("builder", sorted(ARTICLE_FILE))
def test_builder_passes_under_W_and_writes_the_article(built, builder):
    out = _passes(built(builder))
    files = [p for p in out.rglob("*") if p.is_file()]
    name = ARTICLE_FILE[builder]
    if builder == "latex":  # its file is named after the project
        (tex,) = [p for p in files if p.suffix == ".tex"]
        name = tex.name
    text = (out / name).read_text(encoding="utf-8")
    assert ARTICLE_TEXT in text and NOTE_VERDICT in text


@pytest.mark.parametrize("builder", ["html", "dirhtml"])
def test_website_builders_get_the_site_features(built, builder):
    out = _passes(built(builder))
    for name in SITE_FILES:
        assert (out / name).is_file(), name
    assert (out / "pagefind/pagefind-entry.json").is_file()
    uri = "" if builder == "html" else "/index"
    assert (out / f"tags/memory{'.html' if builder == 'html' else uri + '.html'}").is_file()
    assert (out / ("404.html" if builder == "html" else "404/index.html")).is_file()


@pytest.mark.parametrize("builder", ["singlehtml", "text", "latex", "gettext"])
def test_other_builders_write_no_site_features(built, builder):
    out = _passes(built(builder))
    written = {p.relative_to(out).as_posix() for p in out.rglob("*")}
    assert not written & {*SITE_FILES, "pagefind", "404.html", "search.html", "tags"}, sorted(written)


def test_epub_is_a_book_of_the_pages_without_the_site_pages(built):
    out = _passes(built("epub"))
    (book,) = out.glob("*.epub")
    with zipfile.ZipFile(book) as z:
        names = set(z.namelist())
        article = z.read(
            "OEBPS/training/x.xhtml" if "OEBPS/training/x.xhtml" in names else "training/x.xhtml"
        )
        opf = next(z.read(n) for n in names if n.endswith(".opf")).decode("utf-8")
        pages = {n: z.read(n) for n in names if n.endswith(".xhtml")}
    assert ARTICLE_TEXT in article.decode("utf-8")
    # a book reader reads XHTML: every page is well-formed XML (no attribute
    # without a value, as the search index's marks are written for browsers)
    from lxml import etree

    for name, page in pages.items():
        try:
            etree.fromstring(page)
        except etree.XMLSyntaxError as error:
            pytest.fail(f"{name}: {error}")
    # the site's pages and files have no place in a book
    assert not any(n.split("/")[-1] in ("404.xhtml", "search.xhtml", *SITE_FILES) for n in names), sorted(
        names
    )
    assert not any("/tags/" in f"/{n}" for n in names), sorted(names)
    assert "_headers" not in "\n".join(names)
    # the edition (conf.py's version): epub leaves it empty and warns otherwise
    assert '<meta property="ibooks:version">2026.12</meta>' in opf


def test_latex_shows_tag_names_as_text_and_diagrams_as_their_source(built):
    """LaTeX has no tag pages (listings linked them: a crash) and draws a
    diagram only with mermaid-cli, not installed: its source is shown."""
    out = _passes(built("latex"))
    (tex,) = out.glob("*.tex")
    text = tex.read_text(encoding="utf-8")
    assert "tags/memory" not in text
    assert "graph LR\n  A[小批次]" in text  # as a verbatim block


def test_a_file_in_the_latex_folder_that_sphinx_did_not_write_fails_the_build(built, small):
    """make, latexmk and TeX read what is in the LaTeX folder (a makefile, a
    latexmkrc, any .tex or .sty): make pdf runs them only if every file there
    is Sphinx's, TeX's output of an earlier run, or an image (KB130)."""
    tex = next(_passes(built("latex")).glob("*.tex")).name
    out = small / "_build" / "latex-planted"
    out.mkdir()
    planted = [
        "makefile",
        "GNUmakefile",
        "x.tex",
        "sphinx-extra.sty",
        ".latexmkrc",
        "texmf.cnf",
        ".hidden.png",
    ]
    kept = [tex.replace(".tex", ".aux"), tex.replace(".tex", ".pdf"), "figure.png", "diagram-light.pdf"]
    for name in planted + kept:
        (out / name).write_text("\\input{/etc/passwd}\n")
    (out / "folder").mkdir()
    (out / "linked.png").symlink_to(out / "figure.png")
    code, log, _ = build(small, "latex", out=out)
    refused = sorted(re.findall(r"latex-planted/([^:\n]+):1: WARNING: KB130 ", log))
    assert code != 0 and refused == sorted([*planted, "folder", "linked.png"]), log[-3000:]
    assert "Traceback" not in log


@pytest.mark.parametrize("prefix", ["", "h:"], ids=["plain", "namespace-prefix"])
def test_a_template_writing_a_redirect_or_a_remote_request_into_the_epub_fails_it(tmp_path, prefix):
    """The book is published beside the site and a reader follows redirects
    and loads from other hosts as a browser does: its pages get the checks of
    a document (kb.guard.html, KB015), and the failed book is deleted."""
    root = make_small_site(tmp_path / "kb")
    xmlns = 'xmlns:h="http://www.w3.org/1999/xhtml" ' if prefix else ""
    with (root / "_templates/page.html").open("a", encoding="utf-8") as page:
        page.write(
            '{% block extrahead %}{{ super() }}{% if builder == "epub" %}'
            f'<{prefix}meta {xmlns}http-equiv="refresh" content="5;url=https://evil.example/"/>'
            f'<{prefix}link {xmlns}rel="preconnect" href="https://evil.example/"/>{{% endif %}}{{% endblock %}}'
        )
    code, log, out = build(root, "epub")
    assert code != 0 and "Traceback" not in log, log[-3000:]
    assert re.search(r"\.xhtml:\d+: WARNING: KB015 <meta http-equiv='refresh'> can redirect", log), log[
        -3000:
    ]
    assert "KB015 <link href='https://evil.example/'>" in log, log[-3000:]
    assert not list(out.glob("*.epub"))


def test_tex_that_reads_files_or_instructs_the_pdf_driver_fails_the_latex_build(built, small, tmp_path):
    """Sphinx escapes what it writes; a text that reached the .tex unescaped
    (here the date, from a setting; a translation's is refused earlier, KB039)
    and that reads files or hands xdvipdfmx a special is KB131 at its line,
    before make runs TeX: openin_any does not bind xdvipdfmx's pdf:fstream."""
    from kb.site.book import tex_problems

    assert tex_problems("\\catcode`^^^^00a0\\active\n\\begin{document}\ntext\n") == []
    assert tex_problems("a\n\\date{\\special{pdf:fstream @x (/etc/passwd)}}\n") == [(2, "\\special")]
    assert tex_problems("a\nb ^^5cinput^^7b/etc/passwd^^7d\n") == [(2, "^^")]
    # a command named indirectly
    for indirect in [
        "\\UseName{special}{x}",
        "\\makeatletter\\@nameuse{special}{x}",
        "\\catcode`\\|=0 |special{x}",
    ]:
        assert tex_problems(indirect), indirect
    assert tex_problems("\\ifnum\\catcode`\\==\\active\\shorthandoff{=}\\fi") == []  # Sphinx's own
    assert tex_problems("\\immediate\\write18{id}\\openin3=x") == [
        (1, "\\immediate"),
        (1, "\\openin"),
        (1, "\\write18"),
    ]
    out = tmp_path / "latex"
    code, log, _ = build(small, "latex", "-D", "today=1\\special{pdf:fstream @x (/etc/hostname)}", out=out)
    assert code != 0 and "Traceback" not in log, log[-3000:]
    assert re.search(r"51suanli-kb\.tex:\d+: WARNING: KB131 the book's LaTeX holds \\special", log), log[
        -3000:
    ]


def test_linkcheck_starts_and_passes_the_internal_links(built):
    out = _passes(built("linkcheck"))
    assert (out / "output.json").is_file() and (out / "output.txt").is_file()
