"""Check a built book (make epub, make pdf run this after building).

    python tools/check_books.py epub _build/epub/51suanli-kb.epub
    python tools/check_books.py pdf _build/latex/51suanli-kb.pdf

- **epub**: Debian's epubcheck finds no error or warning; the text of its
  pages holds every article (below).
- **pdf**: the text pdftotext extracts holds every article: its title and
  the plain paragraphs of its source (those without Markdown or MyST markup,
  whose text is the same in the book; derived from docs/, never a list kept
  here); every font is embedded (pdffonts); xelatex's log has no "Missing
  character" (a glyph no font has: a box on the page) and no undefined
  reference (a link that leads nowhere).

"Every article" is every page under a guide's folder (docs/<guide>/*.md,
the guide's index included). Text is compared without spaces, line breaks,
punctuation or hyphens (a PDF breaks lines anywhere) and in NFKC (ligatures,
the raised digits of 10⁶).

Each problem is one line ``path:LINE: KBnnn message`` (the article's line
for a missing paragraph); the exit status is 1 if there is any.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import Path

from kb.core.log import plain

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
EPUBCHECK = Path("/usr/share/java/epubcheck.jar")
# inline markup whose rendered text differs from the source's characters
MARKUP = re.compile(r"[`{}\[\]<>*_|$\\]|^\s*:|https?://")
# inline markup whose text the book shows as written: a term's or a
# labelled reference's words, a link's words, inline code, bold
INLINE = [
    (re.compile(r"\{(?:term|abbr)\}`([^`<]+?)(?:\s*<[^>]*>)?`"), r"\1"),
    (re.compile(r"\{(?:ref|doc)\}`([^`<]+?)\s*<[^>]*>`"), r"\1"),
    (re.compile(r"\[([^\]]+)\]\([^)\s]+\)"), r"\1"),
    (re.compile(r"`([^`]+)`"), r"\1"),
    (re.compile(r"\*\*"), ""),
]
# The text area of an A4 page (conf.py's papersize), in points: without the
# running header and footer, which break a paragraph at a page break.
BODY = ["-x", "0", "-y", "55", "-W", "596", "-H", "730"]
FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)


@dataclass(frozen=True)
class Sample:
    path: Path
    line: int
    text: str


def normalize(text: str) -> str:
    """Letters, digits and CJK characters only, in NFKC."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text) if ch.isalnum())


def articles(docs: Path = DOCS) -> list[Path]:
    """Every page in a guide's folder (a README.md is none: conf.py's
    exclude_patterns leave it out of the site and the books)."""
    return sorted(
        p for p in docs.glob("*/*.md") if not p.parent.name.startswith(("_", ".")) and p.name != "README.md"
    )


def title_of(path: Path) -> Sample | None:
    text = path.read_text(encoding="utf-8")
    match = FRONT_MATTER.match(text)
    if match:
        for number, line in enumerate(match.group(1).splitlines(), start=2):
            if line.startswith("title:"):
                return Sample(path, number, line.partition(":")[2].strip().strip("\"'"))
    return None


def paragraphs(path: Path) -> list[Sample]:
    """The source's plain paragraphs: blocks of text lines outside code and
    diagram fences (a colon fence's text, a 编者注 or its explanation, is in
    the book), with no markup; headings, lists, tables, quotes and
    directive options end a block."""
    lines = path.read_text(encoding="utf-8").splitlines()
    match = FRONT_MATTER.match("\n".join(lines) + "\n")
    start = match.group(0).count("\n") if match else 0
    found: list[Sample] = []
    block: list[str] = []
    first = 0
    fence: str | None = None  # the open backtick or tilde fence

    def flush() -> None:
        text = " ".join(line.strip() for line in block)
        for pattern, replacement in INLINE:
            text = pattern.sub(replacement, text)
        if block and not MARKUP.search(text) and len(normalize(text)) >= 12:
            found.append(Sample(path, first, text))
        block.clear()

    for number, line in enumerate(lines[start:], start=start + 1):
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence) and stripped.strip(fence[0]) == "":
                fence = None
            continue
        opener = re.match(r"`{3,}|~{3,}", stripped)
        if opener:
            flush()
            fence = opener.group(0)
            continue
        if (
            not stripped
            or stripped.startswith(":")  # a colon fence, a directive's option
            or stripped[0] in "#-+>|!(=%"  # % is a MyST comment
            or re.match(r"\d+[.)]\s", stripped)
        ):
            flush()
            continue
        if not block:
            first = number
        block.append(line)
    flush()
    return found


def missing(samples: list[Sample], text: str) -> list[Sample]:
    """The samples whose text the book's text does not hold."""
    haystack = normalize(text)
    return [s for s in samples if normalize(s.text) not in haystack]


def expected(docs: Path = DOCS) -> list[Sample]:
    out: list[Sample] = []
    for path in articles(docs):
        title = title_of(path)
        if title is not None:
            out.append(title)
        out += paragraphs(path)
    return out


def _where(sample: Sample) -> str:
    try:
        return f"{sample.path.relative_to(ROOT)}:{sample.line}"
    except ValueError:
        return f"{sample.path}:{sample.line}"


def text_problems(book: Path, text: str, docs: Path = DOCS) -> list[str]:
    return [f"{_where(s)}: KB121 not in {book.name}: {s.text[:60]}" for s in missing(expected(docs), text)]


def lost_glyphs(log: str) -> list[str]:
    """xelatex's "Missing character" lines (the glyph is a box on the page)."""
    return sorted({line.strip() for line in log.splitlines() if "Missing character" in line})


def broken_links(log: str) -> list[str]:
    """xelatex's undefined references after its last run (a link that leads nowhere)."""
    warning = re.compile(r"LaTeX Warning: (?:Hyper reference|Reference) `([^']*)'")
    return sorted(set(warning.findall(log)))


def labels_twice(log: str) -> list[str]:
    """xelatex's labels defined more than once (a link to one may land on the other)."""
    return sorted(set(re.findall(r"LaTeX Warning: Label `([^']*)' multiply defined", log)))


def pages_overrun(log: str, tolerance: float = 10.0) -> list[str]:
    """xelatex's pages whose content ran past the page's foot (an overfull
    box the page builder itself could not fit: a figure or table too tall)."""
    found = re.findall(r"Overfull \\vbox \(([\d.]+)pt too high\) has occurred while \\output is active", log)
    return [f"{height}pt" for height in found if float(height) > tolerance]


def lines_overrun(log: str, tolerance: float = 1.0) -> list[tuple[str, str, str]]:
    """(points, .tex line, what TeX set) of each line xelatex could not fit
    in its measure: a word it cannot break (FP16/BF16, p4d.24xlarge) running
    into the margin or, in a table, into the next column. Each is reported
    once, at the paragraph's first line in the .tex file."""
    found = re.findall(
        r"Overfull \\hbox \(([\d.]+)pt too wide\) (?:in paragraph at lines (\d+)--\d+|detected at line (\d+))\n(.*)",
        log,
    )
    seen, out = set(), []
    for width, para, at, box in found:
        line = para or at
        if float(width) > tolerance and (line, box) not in seen:
            seen.add((line, box))
            out.append((f"{width}pt", line, box.strip()[:120]))
    return out


def unembedded_fonts(pdffonts: str) -> list[str]:
    """The rows of pdffonts' table whose font is not embedded (column emb)."""
    lines = pdffonts.splitlines()
    header = next((i for i, line in enumerate(lines) if line.startswith("name")), None)
    if header is None:
        return []
    # the last five columns: emb sub uni, the object number and generation
    return [line for line in lines[header + 2 :] if line.split() and line.split()[-5] != "yes"]


def _run(command: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True)


def epub_text(book: Path) -> str:
    from lxml import html

    with zipfile.ZipFile(book) as z:
        pages = [n for n in z.namelist() if n.endswith(".xhtml")]
        return "\n".join(html.fromstring(z.read(n)).text_content() for n in pages)


def epubcheck_problems(book: Path) -> list[str]:
    if shutil.which("java") is None or not EPUBCHECK.exists():
        return [f"{book}:1: KB122 epubcheck is not installed (Debian: apt-get install epubcheck)"]
    # A short run: HotSpot's quick compiler only (TieredStopAtLevel=1) and its
    # serial collector take 3 s of CPU instead of 6, with the same findings.
    java = ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
    proc = _run([*java, "-jar", str(EPUBCHECK), "--quiet", str(book)])
    reported = [
        line
        for line in (proc.stdout + proc.stderr).splitlines()
        if line.startswith(("ERROR", "FATAL", "WARNING"))
    ]
    if proc.returncode != 0 and not reported:
        reported = [f"epubcheck exited with {proc.returncode}"]
    return [f"{book}:1: KB122 epubcheck: {line}" for line in reported]


def check_epub(book: Path, docs: Path = DOCS) -> list[str]:
    if not book.is_file():
        return [f"{book}:1: KB123 no such book"]
    return epubcheck_problems(book) + text_problems(book, epub_text(book), docs)


def check_pdf(book: Path, docs: Path = DOCS) -> list[str]:
    if not book.is_file():
        return [f"{book}:1: KB123 no such book"]
    for tool in ("pdftotext", "pdffonts"):
        if shutil.which(tool) is None:
            return [f"{book}:1: KB122 {tool} is not installed (Debian: apt-get install poppler-utils)"]
    problems = []
    log = book.with_suffix(".log")
    if not log.is_file():
        problems.append(f"{log}:1: KB124 no xelatex log beside the PDF")
    else:
        text = log.read_text(encoding="utf-8", errors="replace")
        for line in lost_glyphs(text):
            problems.append(f"{log}:1: KB124 {line}")
        for label in broken_links(text):
            problems.append(f"{log}:1: KB126 a link to {label!r} leads nowhere (no such label in the PDF)")
        for height in pages_overrun(text):
            problems.append(
                f"{log}:1: KB128 a page's content runs {height} past its foot (a figure or table too tall)"
            )
        for width, line, box in lines_overrun(text):
            problems.append(
                f"{book.with_suffix('.tex')}:{line}: KB129 a line runs {width} past its measure "
                f"(a word TeX cannot break, in a narrow table column?): {box}"
            )
        for label in labels_twice(text):
            problems.append(
                f"{log}:1: KB127 the label {label!r} is defined twice: links to it may land on either"
            )
    for row in unembedded_fonts(_run(["pdffonts", str(book)]).stdout):
        problems.append(f"{book}:1: KB125 font not embedded: {row.split()[0]}")
    # -raw: the order the text was set in (the layout mode reorders some lines)
    text = _run(["pdftotext", "-raw", "-enc", "UTF-8", *BODY, str(book), "-"]).stdout
    return problems + text_problems(book, text, docs)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("epub", "pdf"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    kind, book = argv[0], Path(argv[1])
    problems = check_epub(book) if kind == "epub" else check_pdf(book)
    for line in problems:  # they quote the books' text and the pages' titles: printed plain
        print(plain(line), file=sys.stderr)
    if not problems:
        count = len(expected())
        print(
            f"{book}: {book.stat().st_size / 1e6:.1f} MB; {len(articles())} articles, {count} titles and paragraphs found"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
