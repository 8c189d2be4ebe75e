"""The knowledge base as a book (issue 21, item 4): make epub, make pdf.

Fast (no TeX): tools/check_books.py's checks on made-up input: the samples
come from every article's source, and a missing paragraph, a lost glyph or a
font that is not embedded is reported at its place.

Slow: ``make books`` in a temporary build folder (the real
pages, -t book, xelatex, epubcheck; make fails if check_books finds
anything), then what kb.site.book does to the books, each with the check
that fails without it. They need Debian's TeX, fonts, rsvg-convert,
poppler-utils and epubcheck (``make book-tools``): missing, they are skipped
on a contributor's machine; in CI (``CI`` set) ``make book-tools`` installs
them first, and they fail if still missing: never skipped there. This is
where CI builds and checks the books (make check runs make test).

And the site's link to them (small site, in-process html builds): none
without the books, 下载 PDF / EPUB with them (the files served under
downloads/), gone again when a book is deleted.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import check_books
import pikepdf
import pytest
from one_build import STAMPS
from small_site import build, make_small_site

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
TOOLS = ("xelatex", "latexmk", "rsvg-convert", "pdftotext", "pdffonts", "java")


# -- the checks, on made-up input ---------------------------------------------------


def test_every_article_has_a_title_and_paragraphs_to_find():
    samples = check_books.expected()
    pages = check_books.articles()
    assert len(pages) >= 15
    for page in pages:
        mine = [s for s in samples if s.path == page]
        assert mine and mine[0].line == 2, page  # the front matter's title first
        if page.name != "index.md":
            assert len(mine) >= 3, (page, mine)  # and paragraphs of its body
    # derived from the sources: a paragraph is text as the book shows it
    for sample in samples:
        assert not re.search(r"[`{}*\[\]]", sample.text), sample


def test_a_missing_paragraph_is_reported_at_its_line(tmp_path):
    page = tmp_path / "training" / "x.md"
    page.parent.mkdir()
    page.write_text(
        "---\ntitle: 梯度累积\n---\n\n# 梯度累积\n\n第一段说的是显存不够时的办法，\n换行也算一段。\n\n"
        "```python\nprint('代码不算段落')\n```\n\n第二段用了 {term}`混合精度 <mixed precision>` 这个术语。\n",
        encoding="utf-8",
    )
    whole = "梯度累积\n第一段说的是显存不够时的办法，换行\n也算一段。第二段用了混合精\n度这个术语。"
    assert check_books.text_problems(Path("x.pdf"), whole, tmp_path) == []
    problems = check_books.text_problems(Path("x.pdf"), whole.replace("第二段", "第三段"), tmp_path)
    assert len(problems) == 1 and problems[0].endswith("KB121 not in x.pdf: 第二段用了 混合精度 这个术语。")
    assert f"{page}:14: " in problems[0]


def test_problems_are_printed_plain_and_a_readme_is_no_article(tmp_path, capsys, monkeypatch):
    """A problem quotes the book's text and a page's title, from a pull
    request: what GitHub would read as a workflow command is broken up. A
    README.md is left out of the books (exclude_patterns), so it is no
    article the book must hold."""
    docs = tmp_path / "docs"
    (docs / "training").mkdir(parents=True)
    (docs / "training" / "README.md").write_text("---\ntitle: x\n---\n", encoding="utf-8")
    (docs / "training" / "a.md").write_text("---\ntitle: 页\n---\n", encoding="utf-8")
    assert [p.name for p in check_books.articles(docs)] == ["a.md"]
    monkeypatch.setattr(
        check_books, "check_pdf", lambda book: ["docs/training/a.md:2: KB121 ::error::x ##[error]y"]
    )
    assert check_books.main(["pdf", str(tmp_path / "x.pdf")]) == 1
    err = capsys.readouterr().err
    assert "KB121" in err and "##[" not in err and "\n::" not in "\n" + err, err


def test_a_lost_glyph_a_font_not_embedded_and_a_broken_link_are_reported():
    log = "Overfull \\hbox\nMissing character: There is no ⭐ (U+2B50) in font TeX Gyre Termes/OT:script=latn;!\n"
    assert check_books.lost_glyphs(log) == [
        "Missing character: There is no ⭐ (U+2B50) in font TeX Gyre Termes/OT:script=latn;!"
    ]
    assert check_books.lost_glyphs("Output written on x.pdf\n") == []
    fonts = (
        "name                                 type              encoding         emb sub uni object ID\n"
        "------------------------------------ ----------------- ---------------- --- --- --- ---------\n"
        "ABCDEF+NotoSerifCJKsc-Regular-Identity-H CID Type 0C       Identity-H       yes yes yes      4  0\n"
        "Helvetica                            Type 1            WinAnsi          no  no  no       9  0\n"
    )
    (row,) = check_books.unembedded_fonts(fonts)
    assert row.startswith("Helvetica")
    # a link to a label the PDF does not have (Sphinx's LaTeX writes none for
    # an admonition or a rubric: kb.site.book puts a target before them)
    log = "LaTeX Warning: Hyper reference `glossary:glossary-a' on page 170 undefined on input line 9.\n"
    assert check_books.broken_links(log + log) == ["glossary:glossary-a"]
    assert check_books.broken_links("LaTeX Warning: Label(s) may have changed.\n") == []
    twice = "LaTeX Warning: Label `hardware/index:hardware-gpu-specs' multiply defined.\n"
    assert check_books.labels_twice(twice + twice) == ["hardware/index:hardware-gpu-specs"]
    assert check_books.labels_twice(log) == []
    overrun = "Overfull \\vbox (90.3001pt too high) has occurred while \\output is active []\n"
    assert check_books.pages_overrun(
        overrun + "Overfull \\vbox (8.05904pt too high) detected at line 3152\n"
    ) == ["90.3001pt"]
    assert (
        check_books.pages_overrun(
            "Overfull \\vbox (3.1pt too high) has occurred while \\output is active []\n"
        )
        == []
    )


def test_a_line_wider_than_its_column_is_named_at_its_tex_line():
    """xelatex's log of the spec table in nine equal columns, before it was set
    in footnote size: a cell's paragraph and its table row each at their .tex
    line; boxes within a point are let through."""
    log = (
        "Overfull \\hbox (12.25023pt too wide) in paragraph at lines 9393--9395\n"
        "[]\\TU/TeXGyreHeros(0)/m/n/10 FP16/BF16\n []\n\n"
        "Overfull \\hbox (12.25023pt too wide) detected at line 9396\n"
        "[]\\TU/TeXGyreHeros(0)/m/n/10 FP16/BF16\n []\n\n"
        "Overfull \\hbox (13.76022pt too wide) in paragraph at lines 9569--9571\n"
        "\\TU/TeXGyreTermes(0)/m/n/10 p4d.24xlarge\n []\n\n"
        "Overfull \\hbox (0.5pt too wide) in paragraph at lines 10--12\n"
        "\\TU/TeXGyreTermes(0)/m/n/10 almost\n []\n"
    )
    assert check_books.lines_overrun(log) == [
        ("12.25023pt", "9393", "[]\\TU/TeXGyreHeros(0)/m/n/10 FP16/BF16"),
        ("12.25023pt", "9396", "[]\\TU/TeXGyreHeros(0)/m/n/10 FP16/BF16"),
        ("13.76022pt", "9569", "\\TU/TeXGyreTermes(0)/m/n/10 p4d.24xlarge"),
    ]


def test_a_label_before_a_guide_heading_is_written_once():
    """A guide's heading becomes a rubric in the book; the ``(label)=`` before
    it and the rubric's own ids each give LaTeX a label, never the same twice."""
    from docutils import nodes
    from kb.site import book

    section = nodes.section("", nodes.title("", "规格对比"), nodes.paragraph("", "正文"))
    section["ids"] = ["hardware-gpu-specs", "id5"]
    top = nodes.section(
        "", nodes.title("", "硬件"), nodes.target("", "", refid="hardware-gpu-specs"), section
    )
    book.headings_as_rubrics(top)
    book.label_targets(top)
    labels = [i for t in top.findall(nodes.target) for i in [t.get("refid"), *t["ids"]] if i]
    assert sorted(labels) == ["hardware-gpu-specs", "id5"]
    assert not next(iter(top.findall(nodes.rubric)))["ids"]


# -- the books ------------------------------------------------------------------------


def _missing_tools() -> list[str]:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    return missing + ([] if check_books.EPUBCHECK.exists() else [str(check_books.EPUBCHECK)])


def _need_book_tools() -> None:
    if _missing_tools() and os.environ.get("CI"):
        subprocess.run(["make", "--no-print-directory", "book-tools"], cwd=ROOT)  # CI runs as root
    missing = _missing_tools()
    if missing:
        message = f"the books need {', '.join(missing)}: run `make book-tools`"
        if os.environ.get("CI"):
            pytest.fail(message)  # a skip in CI would hide a broken book
        pytest.skip(message)


@pytest.fixture(scope="module")
def books(tmp_path_factory) -> Path:
    """make books into a temporary build folder: the folder."""
    _need_book_tools()
    out = tmp_path_factory.mktemp("books")
    proc = subprocess.run(
        # -o: the installs are make test's to do; from a worktree whose .venv and
        # node_modules are links, npm ci would empty the shared node_modules
        ["make", "--no-print-directory", *[f"-o{stamp}" for stamp in STAMPS], "books", f"BUILDDIR={out}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    return out


@pytest.fixture(scope="module")
def tex(books) -> str:
    return (books / "latex" / "51suanli-kb.tex").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def epub(books) -> dict[str, bytes]:
    with zipfile.ZipFile(books / "epub" / "51suanli-kb.epub") as z:
        return {name: z.read(name) for name in z.namelist()}


def _titles() -> dict[str, str]:
    return {s.path.relative_to(DOCS).as_posix(): s.text for s in check_books.expected() if s.line == 2}


@pytest.mark.slow
def test_make_books_builds_both_and_their_checks_pass(books):
    """make fails when check_books finds anything (epubcheck, text, fonts, glyphs)."""
    for book in (books / "epub" / "51suanli-kb.epub", books / "latex" / "51suanli-kb.pdf"):
        assert book.stat().st_size > 100_000, book
    # the checks ran on this build (not only make's exit status)
    assert check_books.check_pdf(books / "latex" / "51suanli-kb.pdf") == []


@pytest.mark.slow
def test_the_pdf_numbers_its_parts_chapters_and_figures_as_chinese_books_do(books):
    """目录, 第 1 部分, 第 1 章 and 图 1 apart from its caption: no English name
    of LaTeX's (Contents, Part, Chapter) and no colon after a figure's number."""
    text = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(books / "latex" / "51suanli-kb.pdf"), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "目录" in text and re.search(r"第\s*1\s*部分\s*训练", text)
    assert re.search(r"第\s*1\s*章\s*大模型训练优化实战", text)
    assert re.search(r"^图\s*1$", text, re.M)  # the caption's text is set a quad apart
    assert not re.search(r"图\s*\d+\s*[:：]", text)
    assert not re.search(r"\b(Contents|Part|Chapter)\b", text)


@pytest.mark.slow
def test_the_book_is_the_guides_in_order_then_glossary_and_errata(tex):
    """The root page is the contents (kb.site.book's source-read): not the home page."""
    parts = re.findall(r"\\part\{([^}]*)\}", tex)
    assert parts == ["训练", "推理", "硬件", "行业", "术语表", "勘误与编者注"]
    assert "关注公众号" not in tex  # the home page's text
    assert "共 15 篇文章" not in tex and "全部文章" not in re.sub(r"\\label\{[^}]*\}", "", tex)


@pytest.mark.slow
def test_each_article_is_a_chapter_of_its_guide(tex):
    """A guide's toctree (inside its last subsection) moves to the page's top
    section: without that the articles were subsections of 要点速览; and
    the guide's own headings (适合谁读 …) were chapters beside them."""
    chapters = [re.sub(r"\\([%&#_$])", r"\1", c) for c in re.findall(r"\\chapter\{([^}]*)\}", tex)]
    for page, title in _titles().items():
        if not page.endswith("index.md"):
            assert title in chapters, (page, title)
    # and only they: a guide's own headings are rubrics in its introduction
    assert len(chapters) == len([p for p in _titles() if not p.endswith("index.md")]), chapters
    assert "\\rubric" not in tex and "适合谁读" in tex


def _listed(page: str, title: str) -> str:
    """The title a listing shows: the front matter's listing_title, if any."""
    found = re.search(r"^listing_title:\s*(.+)$", (DOCS / page).read_text(encoding="utf-8"), re.M)
    return found.group(1).strip() if found else title


@pytest.mark.slow
def test_a_guide_lists_its_own_articles(tex):
    """LaTeX resolves the book as its root page; the guide listing is made
    from the guide's page (an empty list was a LaTeX error)."""
    plain = re.sub(r"\\([%&#_$])", r"\1", tex)
    titles = _titles()
    parts = [m.start() for m in re.finditer(r"\\part\{", plain)] + [len(plain)]
    for guide, (start, end) in zip(("training", "inference", "hardware", "industry"), zip(parts, parts[1:])):
        pages = [page for page in titles if page.startswith(f"{guide}/") and page != f"{guide}/index.md"]
        mine = [_listed(page, titles[page]) for page in pages]
        intro = plain[start:end].split("\\chapter{")[0]  # the guide's page, before its first article
        for title in mine:
            assert title in intro, (guide, title)
    assert not re.search(r"\\begin\{enumerate\}\s*\\sphinxsetlistlabels[^\n]*\n\\end\{enumerate\}", tex)


@pytest.mark.slow
def test_notes_are_boxes_with_their_explanations_shown(tex, epub):
    assert tex.count("\\begin{sphinxadmonition}{note}{编者注") >= 40
    assert "\\sphinxstylestrong{展开说明}" in tex  # a {details} summary, as a bold line
    pages = b"".join(v for k, v in epub.items() if k.endswith(".xhtml")).decode("utf-8")
    assert '<div class="editor-note admonition"' in pages
    assert "<details" not in pages  # a book has nothing to click: shown open
    assert "div.admonition.editor-note" in epub["_static/kb-book.css"].decode("utf-8")


@pytest.mark.slow
def test_diagrams_are_images_drawn_from_their_svgs(books, tex, epub):
    diagrams = sum(p.read_text(encoding="utf-8").count("```{mermaid}") for p in DOCS.rglob("*.md"))
    assert diagrams >= 5
    # LaTeX: each converted to PDF; the epub: PNG (EPUB's SVG schema refuses mermaid's)
    included = re.findall(r"\\sphinxincludegraphics(?:\[[^\]]*\])?\{\{([^}]*)\}\.pdf\}", tex)
    assert len(included) == diagrams and all(name.endswith("-light") for name in included)
    for name in included:
        assert (books / "latex" / f"{name}.pdf").stat().st_size > 1000
    images = [n for n in epub if n.startswith("_images/")]
    assert len(images) == diagrams and all(n.endswith(".png") for n in images), images
    assert "graph LR" not in tex and "flowchart LR" not in tex  # not their source


@pytest.mark.slow
def test_tables_break_across_pages_and_code_wraps(tex):
    assert "\\begin{longtable}" in tex and "\\begin{tabulary}" not in tex
    assert "verbatimwrapslines=true" in tex and "verbatimforcewraps=true" in tex


@pytest.mark.slow
def test_the_epub_is_a_book_without_the_site(epub):
    names = set(epub)
    assert not any(n.endswith(("search.xhtml", "404.xhtml", "articles.xhtml")) for n in names), sorted(names)
    assert not any("/tags/" in f"/{n}" for n in names)
    assert "_static/kb.css" not in names  # furo's site styles
    pages = b"".join(v for k, v in epub.items() if k.endswith(".xhtml")).decode("utf-8")
    assert "furo-related-icon" not in pages and "data-pagefind" not in pages
    # a calculator is its table: a book runs no script (not calc.js's form and data)
    assert "kb-calc-static" in pages and '<div class="kb-calc"' not in pages
    assert b'xml:lang="zh-CN"' in epub["nav.xhtml"]


# -- the site's link to the books -----------------------------------------------------


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    root = make_small_site(tmp_path_factory.mktemp("book-links") / "kb")
    index = root / "docs" / "index.md"
    index.write_text(index.read_text(encoding="utf-8") + "\n```{kb-book-downloads}\n```\n", encoding="utf-8")
    return root


def _pdf_of(size: int) -> bytes:
    """A valid one-page PDF of about ``size`` bytes."""
    document = pikepdf.new()
    document.add_blank_page()
    document.pages[0].Contents = document.make_stream(b" " * size)
    out = io.BytesIO()
    document.save(out, compress_streams=False)
    return out.getvalue()


def _home(root: Path) -> str:
    code, log, out = build(root, "html")
    assert code == 0 and "WARNING" not in log, log[-3000:]
    return (out / "index.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_home_page_links_the_books_only_when_they_are_built(small):
    out = small / "_build" / "html"
    home = _home(small)
    assert "downloads/" not in home and not (out / "downloads").exists()

    pdf, book = small / "_build/latex/51suanli-kb.pdf", small / "_build/epub/51suanli-kb.epub"
    for path in (pdf, book):
        path.parent.mkdir(parents=True, exist_ok=True)
    pdf.write_bytes(_pdf_of(2_500_000))  # a PDF: the site's check reads a published one (kb.guard.pdf)
    book.write_bytes(b"%" * 900_000)
    home = _home(small)  # incremental: the books' digest makes the pages written again
    assert '<a class="reference external" href="downloads/51suanli-kb.pdf">下载 PDF</a>（2.5 MB）' in home
    assert '<a class="reference external" href="downloads/51suanli-kb.epub">下载 EPUB</a>（0.9 MB）' in home
    assert (out / "downloads/51suanli-kb.pdf").read_bytes() == pdf.read_bytes()

    pdf.unlink()
    home = _home(small)
    assert "downloads/51suanli-kb.pdf" not in home and not (out / "downloads/51suanli-kb.pdf").exists()
    assert "downloads/51suanli-kb.epub" in home


def test_ci_installs_the_packages_make_book_tools_installs():
    """.ci/run installs the books' Debian packages itself (as it does chromium):
    the same list as the Makefile's BOOK_PACKAGES."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    listed = re.search(r"^BOOK_PACKAGES := ((?:.*\\\n)*.*)$", makefile, re.M).group(1)
    wanted = set(listed.replace("\\\n", " ").split())
    script = (ROOT / ".ci/run").read_text(encoding="utf-8").replace("\\\n", " ")
    (install,) = [line for line in script.splitlines() if "--no-install-recommends" in line]
    assert wanted and wanted <= set(install.split()), wanted - set(install.split())
    assert 'export CI="${CI:-true}"' in script  # the book tests never skip in CI


SHOTS = ROOT / "test-results" / "books"


def _page_texts(pdf: Path) -> list[str]:
    """The text of each page (pdftotext separates pages with a form feed)."""
    text = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    return text.split("\f")


@pytest.mark.slow
def test_pictures_of_two_pdf_pages_for_a_reviewer(books):
    """test-results/books/: a page with a table, code and an 编者注 as the book
    sets them, and a page with a diagram (pdftoppm, from poppler-utils, which
    the books' checks use too)."""
    pdf = books / "latex" / "51suanli-kb.pdf"
    pages = _page_texts(pdf)
    # a table (rows of four or more cells apart), Python code and a note's title, on one page
    row = re.compile(r" *[^\s#=(]\S*( {2,}\S+){3,} *")
    rows = [sum(bool(row.fullmatch(line)) for line in t.splitlines()) for t in pages]
    # the page that shows most of the three (a page's break moves as the text grows)
    note = 1 + max(
        range(len(pages)),
        key=lambda i: ("编者注" in pages[i], rows[i] >= 3, "import " in pages[i], rows[i]),
    )
    assert "编者注" in pages[note - 1] and rows[note - 1] >= 3, note
    diagram = next(i for i, t in enumerate(pages, 1) if re.search(r"^\s*图\s*\d+(\s|$)", t, re.M))
    SHOTS.mkdir(parents=True, exist_ok=True)
    for name, page in (("pdf-table-code-note", note), ("pdf-diagram", diagram)):
        for old in SHOTS.glob(f"{name}*.png"):
            old.unlink()
        subprocess.run(
            [
                "pdftoppm",
                "-png",
                "-r",
                "80",
                "-f",
                str(page),
                "-l",
                str(page),
                "-singlefile",
                str(pdf),
                str(SHOTS / name),
            ],
            check=True,
        )
        assert (SHOTS / f"{name}.png").stat().st_size > 10_000
