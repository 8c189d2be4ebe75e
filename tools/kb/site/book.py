"""The knowledge base as a book: ``make epub`` and ``make pdf``.

The books are built from the same pages as the site, with Sphinx's epub and
LaTeX builders and the tag ``book`` (``-t book``), which conf.py reads into
``kb_book``. In a book build:

- **Contents.** The root page is the book's contents, not the home page: the
  guides in reading order (``data/guides.yaml``), then the pages of
  ``kb_book_back_matter`` (the glossary, the errata). Its source is replaced
  when it is read (Sphinx's ``source-read`` event); the file is not touched.
  conf.py leaves the all-articles listing out (``exclude_patterns``); search,
  tag pages and 404 are website features that other builders never get
  (kb.core.builders).
- **编者注.** A note is an admonition (a box in both books); its collapsed
  parts (``{details}``, ``{original}``) are shown open, each under its
  summary line in bold, and so is an admonition with ``:collapsible:``: a
  book has nothing to click.
- **Diagrams.** A mermaid diagram becomes an image of its drawn SVG (the
  light variant that kb.site.mermaid's ``make diagrams`` committed),
  converted by rsvg-convert to PDF for LaTeX and to PNG for the epub, with
  its caption. Without a drawn SVG the book shows the diagram's text
  version, its source, as the site does when the image is missing.

The site links to the books from the home page (``{kb-book-downloads}``):
each file of ``kb_book_files`` (paths from the site's output folder: make
builds the books beside it, ``_build/latex``, ``_build/epub``) that exists
when the site is built is copied to ``downloads/`` and linked; a site built
without the books (a plain ``make html``) shows no link, so it never has a
broken one.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import sphinx
from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms.images import ImageConverter
from sphinx.util.docutils import SphinxDirective

from kb.calc.directive import calculator
from kb.core import data as kb_data
from kb.core.builders import is_website
from kb.core.i18n import _
from kb.core.log import getLogger
from kb.core.store import documents, rebuild_when_changed
from kb.editorial.notes import kb_details, kb_summary
from kb.pages import listings as kb_listings
from kb.site import mermaid as kb_mermaid

logger = getLogger(__name__)

DOWNLOADS = "downloads"
# what a download's link says, by the file's extension
FORMATS = {".pdf": "PDF", ".epub": "EPUB"}


def is_book(app) -> bool:
    """A book build: ``-t book`` (conf.py's ``kb_book``) with epub or LaTeX."""
    return bool(app.config.kb_book) and app.builder.name in ("epub", "latex")


# -- contents -----------------------------------------------------------------


def contents(app) -> list[str]:
    """The book's chapters: each guide's index in the guides' order, then the back matter."""
    guides = kb_data.guides(Path(app.config.kb_data_dir)).data or []
    return [f"{guide['key']}/index" for guide in guides] + list(app.config.kb_book_back_matter)


def root_source(app) -> str:
    """The book's root page: its title and the contents (MyST)."""
    title = app.config.project
    entries = "\n".join(contents(app))
    return f"---\ntitle: {title}\n---\n\n# {title}\n\n```{{toctree}}\n:maxdepth: 2\n\n{entries}\n```\n"


def on_source_read(app, docname: str, source: list[str]) -> None:
    if is_book(app) and docname == app.config.root_doc:
        source[0] = root_source(app)


# -- the pages' parts as a book shows them --------------------------------------------


def open_details(doctree: nodes.Node) -> None:
    """Each collapsed part shown open: a {details} or {original} as its summary in
    bold, then its content; a collapsible admonition as a plain one."""
    for details in list(doctree.findall(kb_details)):
        shown = nodes.container(classes=["kb-details-open"])
        shown.source, shown.line = details.source, details.line
        for child in details.children:
            if isinstance(child, kb_summary):
                shown += nodes.paragraph("", "", nodes.strong(child.astext(), child.astext()))
            else:
                shown += child.deepcopy()
        details.replace_self(shown)
    # an admonition's :collapsible: (Sphinx's option, written as <details> in HTML)
    for admonition in doctree.findall(nodes.Admonition):
        if "collapsible" in admonition:
            del admonition["collapsible"]


def caption_of(node: nodes.Node) -> str:
    """The caption of the figure a diagram is in, if any."""
    figure = node.parent if isinstance(node.parent, nodes.figure) else None
    caption = figure.next_node(nodes.caption) if figure is not None else None
    return caption.astext().strip() if caption is not None else ""


# The LaTeX writer's pixel (latex_elements["pxunit"], 0.75bp) in points, and
# the height a diagram may take in the PDF: about two thirds of an A4 page's
# text, so that its caption and a line before it fit on the same page.
PX_PT = 0.75 * 72.27 / 72
MAX_DIAGRAM_PT = 450


def diagrams_as_images(app, doctree: nodes.Node) -> None:
    """Each mermaid diagram as an image of its drawn SVG (light variant), or,
    without one, as its text version (the diagram's source)."""
    srcdir = Path(app.srcdir)
    for node in list(doctree.findall(kb_mermaid.mermaid)):
        svg = kb_mermaid.svg_paths(app, node["code"])["light"]
        if svg.is_file() and svg.resolve().is_relative_to(srcdir.resolve()):
            shown = nodes.image(uri="/" + svg.resolve().relative_to(srcdir.resolve()).as_posix())
            shown["alt"] = caption_of(node) or _("图示")
            shown["classes"].append("kb-diagram")
            size = kb_mermaid.svg_size(svg)
            if app.builder.name == "latex" and size and float(size[1]) * PX_PT > MAX_DIAGRAM_PT:
                # a tall diagram at its own size runs past the page's foot
                # with its caption (LaTeX caps an image at the text's height)
                shown["height"] = f"{MAX_DIAGRAM_PT}pt"
        else:
            shown = nodes.literal_block(node["code"], node["code"], language="text")
        shown.source, shown.line = node.source, node.line
        node.replace_self(shown)


def calculators_as_tables(doctree: nodes.Node) -> None:
    """A calculator is its static table in a book: a book runs no script."""
    for node in list(doctree.findall(calculator)):
        node.replace_self(node.children)


def toctrees_at_top(doctree: nodes.Node) -> None:
    """A toctree inside a subsection moves to the end of the page's top
    section: LaTeX puts the listed pages where the toctree is, and a guide's
    articles are its chapters, not subsections of its last heading; the
    page's own headings become rubrics."""
    top = doctree.next_node(nodes.section)
    if top is None:
        return
    toctrees = list(doctree.findall(addnodes.toctree))
    for toctree in toctrees:
        wrapper = toctree.parent if isinstance(toctree.parent, nodes.compound) else toctree
        if wrapper.parent is not top:
            wrapper.parent.remove(wrapper)
            top += wrapper
    if toctrees:
        headings_as_rubrics(top)


def headings_as_rubrics(top: nodes.section) -> None:
    """A guide's own headings (适合谁读, 阅读路径 …) as rubrics: its articles are
    the chapters, not its introduction's headings (and the contents list the
    articles under each guide)."""
    for section in [child for child in top.children if isinstance(child, nodes.section)]:
        headings_as_rubrics(section)
        title = section.next_node(nodes.title)
        rubric = nodes.rubric("", "", *[child.deepcopy() for child in title.children])
        rubric["ids"], rubric["names"] = list(section["ids"]), list(section["names"])
        rubric.source, rubric.line = title.source, title.line
        section.replace_self([rubric, *[child for child in section.children if child is not title]])


def label_targets(doctree: nodes.Node) -> None:
    """LaTeX: the ids of an admonition (a 编者注's label) or a rubric (the
    glossary's letters, a guide's headings) on a target just before it:
    Sphinx's LaTeX writer writes no label for either, so the links to them
    (the 勘误 page, the guides' tables, the glossary's letter bar) led nowhere.
    An id that a target already there names (``(label)=`` before a guide's
    heading) is left to it: LaTeX would see the label twice."""
    for node in list(doctree.findall(lambda n: isinstance(n, (nodes.Admonition, nodes.rubric)))):
        if node["ids"] and node.parent is not None:
            at = node.parent.index(node)
            named = set()
            for before in reversed(node.parent.children[:at]):
                if not isinstance(before, nodes.target):
                    break
                named.update([before.get("refid"), *before["ids"]])
            ids = [i for i in node["ids"] if i not in named]
            node["ids"] = []
            if ids:
                node.parent.insert(at, nodes.target("", "", ids=ids))


def tables_break_across_pages(app, doctree: nodes.Node) -> None:
    """LaTeX: every table a longtable, which breaks across pages (a tabulary
    runs off the page's foot)."""
    if app.builder.name == "latex":
        for table in doctree.findall(nodes.table):
            if "longtable" not in table["classes"]:
                table["classes"].append("longtable")


def on_doctree_read(app, doctree) -> None:
    """Before the image collector (priority 500): the diagrams' SVGs are the
    book's images, copied or converted like any other."""
    if is_book(app):
        open_details(doctree)
        toctrees_at_top(doctree)
        diagrams_as_images(app, doctree)
        calculators_as_tables(doctree)
        tables_break_across_pages(app, doctree)


class DiagramConverter(ImageConverter):
    """The books' diagrams drawn from their SVG by rsvg-convert (Debian's
    librsvg2-bin): PDF for LaTeX, PNG for the epub (e-book readers draw SVG
    unevenly, and EPUB's SVG schema refuses what mermaid writes: ``<rect>``
    sized by CSS). Their text in Noto Sans CJK SC (FONTS)."""

    conversion_rules = [("image/svg+xml", "application/pdf"), ("image/svg+xml", "image/png")]
    # the book builders only (SphinxPostTransform's documented ``builders``;
    # a transform's ``app`` goes in Sphinx 11)
    builders = ("epub", "latex")

    def match(self, node: nodes.image) -> bool:
        if not (self.config.kb_book and "kb-diagram" in node["classes"]):
            return False
        if "image/svg+xml" not in self.guess_mimetypes(node):
            return False
        if self.available is None:
            self.__class__.available = self.is_available()
        return bool(self.available)

    def is_available(self) -> bool:
        if shutil.which(RSVG) is None:
            logger.warning(
                "KB120 %s is not installed: the book's diagrams need it "
                "(Debian: apt-get install librsvg2-bin)",
                RSVG,
                type="kb",
                subtype="book",
            )
            return False
        return True

    def convert(self, _from: str | Path, _to: str | Path) -> bool:
        kind = "pdf" if str(_to).endswith(".pdf") else "png"
        # a PNG at twice the SVG's size: sharp on a high-density screen
        zoom = ["--zoom", "2"] if kind == "png" else []
        subprocess.run(
            [RSVG, *zoom, "--format", kind, "--output", str(_to), str(_from)],
            check=True,
            env={**os.environ, "FONTCONFIG_FILE": str(FONTS)},
        )
        return True


RSVG = "rsvg-convert"
FONTS = Path(__file__).with_name("latex") / "diagram-fonts.conf"
STATIC = Path(__file__).with_name("epub")


def on_config_inited(app, config) -> None:
    if config.kb_book:  # the epub's own styles (html_static_path is read by the epub builder)
        config.html_static_path = [*config.html_static_path, str(STATIC)]


def on_builder_inited(app) -> None:
    if is_book(app) and app.builder.name == "epub":
        app.add_css_file("kb-book.css")


def guide_listings(app, doctree) -> None:
    """LaTeX resolves the whole book as its root page: a guide's list of
    articles is made here from the page it is on (its source)."""
    env = app.env
    pages = documents(env, "pages")
    for node in list(doctree.findall(kb_listings.kb_listing)):
        docname = env.path2doc(node.source) if node.source else None
        if node["kind"] != "guide" or docname is None:
            continue
        blist = nodes.enumerated_list(enumtype="arabic", prefix="", suffix=".")
        for doc in kb_listings.guide_order(env, docname.split("/")[0]):
            para = nodes.paragraph()
            para += nodes.strong("", "", kb_listings.link(app, docname, doc, kb_listings.title_of(env, doc)))
            summary = pages.get(doc, {}).get("summary")
            if summary:
                para += nodes.Text(_("：{summary}").format(summary=summary))
                para += kb_listings.summary_note_nodes(app, docname, doc)
            blist += nodes.list_item("", para)
        node.replace_self(blist)


def on_doctree_resolved_book(app, doctree, docname: str) -> None:
    if is_book(app) and app.builder.name == "latex":
        guide_listings(app, doctree)


def on_doctree_resolved_late(app, doctree, docname: str) -> None:
    """After the other extensions filled in their lists (the glossary's letters)."""
    if is_book(app) and app.builder.name == "latex":
        label_targets(doctree)


# -- the LaTeX folder: what make, latexmk and TeX will read ---------------------------

# Files the LaTeX builder writes besides its templates (``texinputs``) and
# the book's .tex: a new one in a later Sphinx is refused here until it is
# added, a loud failure rather than a file nobody looked at.
LATEX_WRITTEN = frozenset({"sphinxhighlight.sty", "sphinxmessages.sty"})
# what a previous xelatex/latexmk run left beside the .tex (a second
# sphinx-build into the same folder)
TEX_OUTPUTS = frozenset(
    {".aux", ".fdb_latexmk", ".fls", ".idx", ".ilg", ".ind", ".log", ".out", ".pdf", ".toc", ".xdv"}
)
# images the book can hold once converted (kb.guard.untrusted limits a
# page's images to IMAGE_TYPES; LaTeX takes these, the SVGs become PDF)
LATEX_IMAGES = frozenset({".pdf", ".png", ".jpg", ".jpeg"})


def latex_expected(documents: list[str]) -> set[str]:
    """The names Sphinx's LaTeX builder may write (``documents``: the .tex
    files of ``latex_documents``)."""
    texinputs = Path(sphinx.package_dir) / "texinputs"
    return {p.name.removesuffix(".jinja") for p in texinputs.iterdir()} | LATEX_WRITTEN | set(documents)


def latex_folder_problems(outdir: Path, documents: list[str]) -> list[tuple[str, str]]:
    """(name, problem) for each entry of the LaTeX output folder that is not
    a file Sphinx writes there, TeX's output from an earlier run, or an
    image: make reads any ``makefile``, latexmk any ``latexmkrc``, TeX any
    ``.tex``, ``.sty`` or ``.cfg``, and a name of a contributor's choosing
    must not be among them."""
    expected = latex_expected(documents)
    stems = {Path(d).stem for d in documents}
    problems = []
    for entry in sorted(os.scandir(outdir), key=lambda e: e.name):
        name, path = entry.name, Path(entry.name)
        if not entry.is_file(follow_symlinks=False):
            problems.append((name, "is not a regular file (a folder, link or device)"))
        elif name in expected or (path.stem in stems and path.suffix in TEX_OUTPUTS):
            continue
        elif path.suffix.lower() not in LATEX_IMAGES or name.startswith("."):
            problems.append((name, "is not a file Sphinx's LaTeX builder writes, nor an image of the book"))
    return problems


# TeX commands that read or write files or hand the PDF driver raw
# instructions (xdvipdfmx's pdf:fstream copies any file of the machine into
# the PDF, whatever openin_any says). Sphinx escapes every text it writes,
# and neither it nor the site's preamble uses them: in the .tex they are text
# that reached it unescaped (a translation, a setting), and the PDF is not made.
# A list cannot be complete (a command can be named indirectly), so it also
# holds the ways of naming one: \UseName{special}, \@nameuse, expl3's
# \tex_special:D, \scantokens, and \catcode`…=0 (a new escape character).
TEX_COMMANDS = re.compile(
    r"\\(?:special|input|include|openin|openout|read|immediate|write\d*|directlua|csname|pdfobj|XeTeX[A-Za-z]*"
    r"|UseName|nameuse|@nameuse|ExplSyntaxOn|scantokens|tex_[A-Za-z_]+:D)(?![A-Za-z])"
    r"|\\catcode\s*`\\?.\s*=\s*0(?!\d)"
)
# ^^xx is any character to TeX (^^5c is a backslash): Sphinx's preamble
# writes it once, as ^^^^00a0 (the no-break space), and nothing else may
CARETS = re.compile(r"\^\^")
SPHINX_CARETS = "^^^^00a0"


def tex_problems(text: str) -> list[tuple[int, str]]:
    """(line, command) for each command of TEX_COMMANDS in the .tex, and each
    ^^ but Sphinx's own."""
    found = [(m.start(), m[0]) for m in TEX_COMMANDS.finditer(text)]
    blanked = text.replace(SPHINX_CARETS, " " * len(SPHINX_CARETS))  # the same lines and offsets
    found += [(m.start(), "^^") for m in CARETS.finditer(blanked)]
    return sorted({(text.count("\n", 0, at) + 1, what) for at, what in found})


def check_latex_folder(app, exception) -> None:
    """KB130 (build-finished) for a file in the LaTeX folder that make,
    latexmk or TeX could read and Sphinx did not write; ``make pdf`` then
    stops before running them (the build fails under ``-W``)."""
    if exception is not None or app.builder.name != "latex":
        return
    documents = [Path(entry[1]).name for entry in app.config.latex_documents]
    for name in documents:
        tex = Path(app.outdir, name)
        if not tex.is_file():
            continue
        for line, command in tex_problems(tex.read_text(encoding="utf-8", errors="replace")):
            logger.warning(
                "KB131 the book's LaTeX holds %s, which reads or writes files or instructs the PDF "
                "driver: text reached it unescaped (a translation in locale/, a setting); the PDF is "
                "not made. Find the text at this line of the .tex and remove the command",
                command,
                location=f"{tex}:{line}",
                type="kb",
                subtype="book",
            )
    for name, problem in latex_folder_problems(Path(app.outdir), documents):
        logger.warning(
            "KB130 %s %s: make, latexmk and TeX read files from this folder, so the PDF is not "
            "made; delete the folder (make pdf starts from an empty one) and rename the page's "
            "image or file that put it there",
            name,
            problem,
            location=f"{Path(app.outdir, name)}:1",
            type="kb",
            subtype="book",
        )


# -- the site's links to the books -----------------------------------------------------


class book_downloads(nodes.General, nodes.Element):
    """Placeholder for the links to the books, filled in ``doctree-resolved``."""


class BookDownloads(SphinxDirective):
    """``{kb-book-downloads}``: 下载 PDF / EPUB, where the site has the books."""

    def run(self) -> list[nodes.Node]:
        node = book_downloads()
        self.set_source_info(node)
        return [node]


def available(app) -> list[Path]:
    """The book files that exist now (``kb_book_files``, from the output
    folder: the books built beside this site, so that a site built elsewhere,
    a test's, does not pick up the repository's)."""
    files = [(Path(app.outdir) / name).resolve() for name in app.config.kb_book_files]
    return [path for path in files if path.is_file()]


def _size(path: Path) -> str:
    return _("{size:.1f} MB").format(size=path.stat().st_size / 1e6)


def downloads_paragraph(app, fromdoc: str) -> nodes.Node | None:
    books = available(app) if is_website(app.builder) else []
    if not books:
        return None
    para = nodes.paragraph(classes=["kb-book-downloads"])
    para += nodes.Text(_("全书下载："))
    for i, path in enumerate(books):
        if i:
            para += nodes.Text(" · ")
        uri = app.builder.get_relative_uri(fromdoc, app.config.root_doc).rpartition("/")[0]
        href = (f"{uri}/" if uri else "") + f"{DOWNLOADS}/{path.name}"
        label = _("下载 {format}").format(format=FORMATS.get(path.suffix, path.suffix.lstrip(".").upper()))
        para += nodes.reference("", label, refuri=href)
        para += nodes.Text(_("（{size}）").format(size=_size(path)))
    return para


def on_doctree_resolved(app, doctree, docname: str) -> None:
    for node in list(doctree.findall(book_downloads)):
        para = downloads_paragraph(app, docname)
        if para is None:
            node.parent.remove(node)
        else:
            node.replace_self(para)


def copy_books(app):
    """The book files into ``<outdir>/downloads/`` (html-collect-pages: during the
    builder's finish, before the written files are checked)."""
    if not is_website(app.builder):
        return []
    out = Path(app.outdir) / DOWNLOADS
    books = available(app)
    if out.is_dir():  # a book deleted since the last build is not served stale
        for old in out.iterdir():
            if old.name not in {p.name for p in books}:
                old.unlink()
    for path in books:
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, out / path.name)
    return []


def _shown_books(app) -> list[Path]:
    """What the site's pages depend on (a book build links to no book)."""
    return [] if app.config.kb_book else available(app)


def setup(app) -> dict[str, Any]:
    app.add_config_value("kb_book", False, "env", types=[bool])
    app.add_config_value("kb_book_back_matter", [], "env", types=[list])
    app.add_config_value("kb_book_files", [], "html", types=[list])
    # a book added, rebuilt or deleted: the pages are written again (the links, the sizes)
    rebuild_when_changed(app, "kb_book_digest", "html", _shown_books)
    app.setup_extension("kb.core.i18n")
    app.setup_extension("kb.editorial.notes")
    app.add_node(book_downloads)
    app.add_post_transform(DiagramConverter)
    app.add_directive("kb-book-downloads", BookDownloads)
    app.connect("source-read", on_source_read)
    app.connect("config-inited", on_config_inited)
    app.connect("builder-inited", on_builder_inited)
    app.connect("doctree-read", on_doctree_read, priority=400)
    app.connect("doctree-resolved", on_doctree_resolved_book, priority=400)
    app.connect("doctree-resolved", on_doctree_resolved_late, priority=600)
    app.connect("doctree-resolved", on_doctree_resolved)
    app.connect("html-collect-pages", copy_books)
    app.connect("build-finished", check_latex_folder)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
