"""Message catalogs from a pull request: only sphinx.po and kb.po, checked.

locale/ is read by Sphinx in ways docs/ review does not see: a
``sphinx.js`` there is published as ``_static/translations.js``, a
``<document>.po`` rewrites that page, a committed ``.mo`` is read instead of
its ``.po``, and a translation's placeholders are filled by our code and the
theme's templates. Each case builds the tiny project of test_data_errors with
the repository's locale/ and one hostile change, in a git checkout whose
.git/config holds a token, and asserts the KB line at the file, a failed
build, no traceback, and no token anywhere in the output
(kb.guard.locale).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from one_build import SECRET
from test_data_errors import ROOT, build, tiny_project

LC = "locale/zh_CN/LC_MESSAGES"
TIMEOUT = 300


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tiny_project(tmp_path / "kb")
    shutil.copytree(ROOT / "locale", root / "locale", ignore=shutil.ignore_patterns("*.mo"))
    _git(root, "init", "-q")
    with (root / ".git/config").open("a", encoding="utf-8") as config:
        config.write(f"[http]\n\textraheader = AUTHORIZATION: {SECRET}\n")
    return root


def _published(root: Path) -> str:
    out = root / "_build"
    return (
        "".join(
            p.read_bytes().decode("utf-8", "replace")
            for p in out.rglob("*")
            if p.is_file() and not p.is_symlink() and "locale" not in p.relative_to(out).parts[:1]
        )
        if out.exists()
        else ""
    )


def refused(root: Path, *messages: str) -> str:
    code, out = build(root, timeout=TIMEOUT)
    assert code != 0, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    for message in messages:
        assert message in out, out[-3000:]
    assert SECRET not in _published(root)
    return out


def write(root: Path, name: str, text: str | bytes) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


HEADER = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'


# -- 1. files other than the two catalogs ------------------------------------------


def test_a_symlinked_sphinx_js_is_refused_before_it_is_published(repo):
    (repo / LC / "sphinx.js").symlink_to("../../../.git/config")
    refused(repo, f"{LC}/sphinx.js:1: WARNING: KB011")
    assert not (repo / "_build/html/_static/translations.js").exists()


def test_a_sphinx_js_file_is_refused(repo):
    write(repo, f"{LC}/sphinx.js", "Documentation.addTranslations({});alert(1)\n")
    refused(repo, f"{LC}/sphinx.js:1: WARNING: KB019")
    assert not (repo / "_build/html/_static/translations.js").exists()


def test_a_locale_folder_that_is_a_symlink_is_refused(repo):
    shutil.rmtree(repo / "locale/zh_CN")
    (repo / "locale/zh_CN").symlink_to(ROOT / "locale/zh_CN")
    refused(repo, "locale/zh_CN:1: WARNING: KB011")


ARTICLE_PARAGRAPH = "{term}`梯度累积`让小显存也能用大 batch。"


@pytest.mark.parametrize(
    "msgstr",
    ["[这里下载](https://evil.example/patch.sh)", "\u200b", "[x](a%00b)"],
    ids=["link", "zero-width", "nul"],
)
def test_a_catalog_of_a_page_is_refused_and_the_page_is_not_rewritten(repo, msgstr):
    write(
        repo,
        f"{LC}/training.po",
        HEADER + f'msgid "{ARTICLE_PARAGRAPH}"\nmsgstr "{msgstr}"\n\nmsgid "梯度累积"\nmsgstr "\u200b"\n',
    )
    refused(repo, f"{LC}/training.po:1: WARNING: KB019")
    assert "evil.example" not in _published(repo)


def test_a_committed_mo_is_refused(repo):
    write(repo, f"{LC}/sphinx.mo", b"\xde\x12\x04\x95" + b"\0" * 24)
    _git(repo, "add", "-f", f"{LC}/sphinx.mo")
    refused(repo, f"{LC}/sphinx.mo:1: WARNING: KB019")


def test_a_mo_in_the_locale_folder_is_never_read(repo):
    """Newer than its .po, Sphinx would have read it instead of compiling the
    .po again: the build compiles the .po into its own folder, whatever lies
    beside it."""
    po = (repo / LC / "sphinx.po").read_text(encoding="utf-8")
    changed = write(repo, f"{LC}/changed.po", po.replace('msgstr "跳到正文"', 'msgstr "STALEMO"'))
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with changed.open("rb") as src, (repo / LC / "sphinx.mo").open("wb") as out:
        write_mo(out, read_po(src))
    changed.unlink()
    code, out = build(repo, timeout=TIMEOUT)
    assert code == 0, out[-3000:]
    assert "STALEMO" not in _published(repo) and "跳到正文" in _published(repo), out[-2000:]


def test_a_page_in_the_domain_of_an_interface_catalog_is_refused(repo):
    """docs/kb.md's translation domain is "kb": kb.po would rewrite it."""
    write(repo, "docs/kb.md", "# 说明\n\n正文段落。\n")
    index = repo / "docs/index.md"
    index.write_text(
        index.read_text(encoding="utf-8").replace("glossary\n", "glossary\nkb\n"), encoding="utf-8"
    )
    write(repo, f"{LC}/kb.po", HEADER + 'msgid "正文段落。"\nmsgstr "HIJACKED [x](https://evil.example/)"\n')
    refused(repo, "docs/kb.md:1: WARNING: KB019")
    assert "HIJACKED" not in _published(repo)


# -- 4. translations that would fail the build or change the HTML ----------------------


def test_a_kb_translation_with_another_placeholder_fails_at_its_line(repo):
    write(repo, f"{LC}/kb.po", HEADER + 'msgid "共 {count} 篇文章带有这个标签。"\nmsgstr "{nope}"\n')
    refused(repo, f"{LC}/kb.po:5: WARNING: KB039", "{nope}", "{count}")


def test_a_kb_translation_reaching_into_an_attribute_fails(repo):
    write(repo, f"{LC}/kb.po", HEADER + 'msgid "{count} 篇"\nmsgstr "{count.__class__} 篇"\n')
    refused(repo, f"{LC}/kb.po:5: WARNING: KB039")


def test_a_translation_with_a_bidi_control_fails_at_its_line(repo):
    write(repo, f"{LC}/kb.po", HEADER + 'msgid "{count} 篇"\nmsgstr "{count} \u202e篇"\n')
    refused(repo, f"{LC}/kb.po:5: WARNING: KB039", "U+202E")


def test_a_kb_catalog_that_is_not_utf8_fails_at_its_line(repo):
    write(repo, f"{LC}/kb.po", HEADER.encode() + b'msgid "\xff\xfe"\nmsgstr "x"\n')
    refused(repo, f"{LC}/kb.po:5: WARNING: KB029", "UTF-8")


def test_a_kb_catalog_that_is_not_a_po_file_fails_at_its_line(repo):
    write(repo, f"{LC}/kb.po", HEADER + 'msgid "x"\nnonsense "y"\n')
    refused(repo, f"{LC}/kb.po:6: WARNING: KB029")


def test_a_sphinx_translation_with_another_placeholder_fails_at_its_line(repo):
    po = repo / LC / "sphinx.po"
    text = po.read_text(encoding="utf-8")
    text = text.replace('msgstr "版权所有 &#169; %(copyright)s"', 'msgstr "版权所有 %(nope)s"')
    assert "%(nope)s" in text
    po.write_text(text, encoding="utf-8")
    line = text[: text.index('msgid "Copyright &#169; %(copyright)s"')].count("\n") + 1
    refused(repo, f"{LC}/sphinx.po:{line}: WARNING: KB039", "%(nope)s")


def test_a_sphinx_translation_adding_markup_fails(repo):
    po = repo / LC / "sphinx.po"
    text = po.read_text(encoding="utf-8").replace(
        'msgstr "跳到正文"', 'msgstr "<script src=//evil.example/x.js></script>"'
    )
    po.write_text(text, encoding="utf-8")
    line = text[: text.index('msgid "Skip to content"')].count("\n") + 1
    refused(repo, f"{LC}/sphinx.po:{line}: WARNING: KB039")
    assert "evil.example" not in _published(repo)


@pytest.mark.parametrize(
    "msgstr",
    [
        "%Y年%b%d日\\\\special{pdf:fstream @kbleak (/proc/self/environ)}",
        "%Y年%b%d日^^5cinput^^7b/etc/passwd^^7d",
    ],
    ids=["special", "caret-escapes"],
)
def test_a_sphinx_translation_adding_tex_commands_fails(repo, msgstr):
    """The book writes the date (the translation of "%b %d, %Y") into its
    LaTeX as it is: a backslash or brace there would be TeX, and xdvipdfmx's
    pdf:fstream copies any file of the machine into the PDF."""
    po = repo / LC / "sphinx.po"
    text = po.read_text(encoding="utf-8") + f'\nmsgid "%b %d, %Y"\nmsgstr "{msgstr}"\n'
    po.write_text(text, encoding="utf-8")
    line = text[: text.index('msgid "%b %d, %Y"')].count("\n") + 1
    refused(repo, f"{LC}/sphinx.po:{line}: WARNING: KB039", "characters TeX reads as commands")


# -- 3. a changed catalog: the incremental build equals a full one -------------------

KB_PO = HEADER + (
    'msgid "共 {count} 篇文章带有这个标签。"\nmsgstr "KBCOUNT {count}"\n\n'
    'msgid "全部标签"\nmsgstr "KBALLTAGS"\n\n'
    'msgid "按标签浏览文章。"\nmsgstr "KBBROWSE"\n'
)


def _pages(out: Path) -> dict[str, str]:
    return {
        p.relative_to(out).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(out.rglob("*.html"))
        if "_static" not in p.parts and "pagefind" not in p.parts
    }


def test_a_changed_catalog_rewrites_every_page(repo, tmp_path):
    code, out = build(repo, timeout=TIMEOUT)
    assert code == 0, out[-3000:]
    po = repo / LC / "sphinx.po"
    po.write_text(
        po.read_text(encoding="utf-8").replace('msgstr "跳到正文"', 'msgstr "SKIPCHANGED"'), encoding="utf-8"
    )
    write(repo, f"{LC}/kb.po", KB_PO)
    code, out = build(repo, timeout=TIMEOUT)
    assert code == 0 and "Traceback" not in out, out[-3000:]
    incremental = _pages(repo / "_build/html")
    assert all("跳到正文" not in html for html in incremental.values())
    assert "SKIPCHANGED" in incremental["training/x.html"]
    assert "KBCOUNT 1" in incremental["tags/memory.html"]
    assert "KBALLTAGS" in incremental["tags/index.html"]
    # the same project built from nothing
    shutil.rmtree(repo / "_build")
    code, out = build(repo, timeout=TIMEOUT)
    assert code == 0, out[-3000:]
    assert _pages(repo / "_build/html") == incremental


# -- what Sphinx reads before any extension: the interface catalog ---------------------


def test_a_symlinked_sphinx_po_is_not_read_before_it_is_refused(repo, tmp_path):
    """Sphinx compiles sphinx.po right after conf.py, before any extension:
    babel printed each line of the linked file it could not parse."""
    outside = tmp_path / "environ"
    outside.write_text(f"TOKEN={SECRET}\nmore {SECRET}\n", encoding="utf-8")
    (repo / LC / "sphinx.po").unlink()
    (repo / LC / "sphinx.po").symlink_to(outside)
    out = refused(repo, f"{LC}/sphinx.po:1: WARNING: KB011")
    assert SECRET not in out, out[-3000:]


@pytest.mark.parametrize("exists", [False, True], ids=["new", "older"])
def test_a_symlinked_sphinx_mo_is_not_written_through(repo, tmp_path, exists):
    victim = tmp_path / "victim.txt"
    if exists:
        victim.write_text("kept\n", encoding="utf-8")
        os.utime(victim, (0, 0))  # older than sphinx.po: Sphinx would compile over it
    (repo / LC / "sphinx.mo").symlink_to(victim)
    refused(repo, f"{LC}/sphinx.mo:1: WARNING: KB011")
    assert (victim.read_text(encoding="utf-8") == "kept\n") if exists else not victim.exists()


def test_a_folder_named_like_a_catalog_is_refused_not_a_traceback(repo):
    (repo / LC / "sphinx.po").unlink()
    (repo / LC / "sphinx.po").mkdir()
    refused(repo, f"{LC}/sphinx.po:1: WARNING: KB019")


@pytest.mark.timeout(300, method="thread")
def test_folders_nested_in_the_catalog_folder_are_refused_before_sphinx_walks_them(repo):
    top = str(repo / LC / "sub")
    made = [top]
    os.mkdir(top)
    for _ in range(1100):
        made.append(made[-1] + "/d")
        os.mkdir(made[-1])
    try:
        out = refused(repo, "WARNING: KB018 the folder nests folders more than 16 deep")
        assert "RecursionError" not in out
    finally:  # deepest first: shutil.rmtree (pytest's clean-up) recurses once a level too
        for folder in reversed(made):
            os.rmdir(folder)


def test_a_catalog_larger_than_a_catalog_may_be_is_refused(repo):
    with (repo / LC / "sphinx.po").open("a", encoding="utf-8") as po:
        po.write("#" + " " * (64 << 10) + "\n")
    refused(repo, f"{LC}/sphinx.po:1: WARNING: KB019", "larger than 64 KiB")


# -- catalogs that take Babel or gettext hours or gigabytes, or print lines ------------


def _mo_with_a_slow_header(lines: int, copies: int) -> bytes:
    """A .mo whose header (``copies`` entries with an empty msgid) has many
    lines without a colon: gettext joins them in time that grows with the
    square of the lines, once per copy."""
    import struct

    header = b"Content-Type: text/plain; charset=UTF-8\nX-A: b\n" + b"x\n" * lines
    originals, translations = 28, 28 + 8 * copies
    data = translations + 8 * copies
    out = struct.pack("<7I", 0x950412DE, 0, copies, originals, translations, 0, 0)
    out += struct.pack("<II", 0, data) * copies + struct.pack("<II", len(header), data + 1) * copies
    return out + b"\0" + header + b"\0"


def test_a_mo_that_gettext_would_read_for_hours_is_never_read(repo):
    (repo / LC / "sphinx.mo").write_bytes(_mo_with_a_slow_header(320_000, 60))
    po = repo / LC / "sphinx.po"
    po.write_text(po.read_text(encoding="utf-8").replace("Language:", "Language: ##[x"), encoding="utf-8")
    code, out = build(repo, timeout=60)  # Sphinx read the .mo when the .po did not parse
    assert code != 0 and "Traceback" not in out, out[-3000:]
    assert f"{LC}/sphinx.po:15: WARNING: KB029" in out, out[-3000:]


def _with_header(repo, line: str) -> Path:
    po = repo / LC / "sphinx.po"
    text = po.read_text(encoding="utf-8")
    po.write_text(
        text.replace('"Content-Transfer-Encoding: 8bit\\n"', f'"Content-Transfer-Encoding: 8bit\\n"\n{line}')
    )
    return po


def test_a_catalog_with_a_billion_plural_forms_is_refused_before_babel_reads_it(repo):
    po = _with_header(repo, '"Plural-Forms: nplurals=1000000000; plural=0;\\n"')
    with po.open("a", encoding="utf-8") as out:
        out.write('\nmsgid "a"\nmsgid_plural "b"\nmsgstr[0] "x"\n')
    refused(repo, f"{LC}/sphinx.po:", "KB029", "declares nplurals as '=1000000000")


def test_a_msgid_given_thousands_of_times_is_refused_at_its_second_line(repo):
    """Babel merges a repeated msgid's locations in time that grows with the
    square of the repeats (38,000 of them: half a minute a parse)."""
    po = repo / LC / "sphinx.po"
    with po.open("a", encoding="utf-8") as out:
        out.write("".join(f'\n#: x{i}\nmsgid "a"\nmsgstr ""\n' for i in range(2000)))
    refused(repo, f"{LC}/sphinx.po:", "KB029", "gives the msgid 'a' twice")


@pytest.mark.parametrize(
    "addition",
    [
        '\nmsgid "zz\\n::error file=docs/index.md,line=1::forged\\nconf.py:1: WARNING: KB000 forged\\n\x1b[31mred"\n',
        "\ngarbage ##[error]forged \x1b[2J\n",
    ],
    ids=["msgid", "invalid-line"],
)
def test_a_catalog_cannot_print_lines_of_its_own_into_the_log(repo, addition):
    """Sphinx compiled the catalog before any extension, and Babel printed
    what it could not parse to stdout as it is."""
    with (repo / LC / "sphinx.po").open("a", encoding="utf-8") as po:
        po.write(addition)
    out = refused(repo, f"{LC}/sphinx.po:", "KB029")
    lines = out.splitlines()
    assert not any(line.lstrip().startswith("::") or line.startswith("conf.py:1: WARNING") for line in lines)
    assert "##[" not in out and "\x1b[2J" not in out and "\x1b[31m" not in out, out[-3000:]


def test_many_stray_files_are_listed_twenty_then_counted(repo):
    for i in range(30):
        write(repo, f"{LC}/x{i:02d}.txt", "x\n")
    out = refused(repo, f"{LC}/x20.txt:1: WARNING: KB019", "and 10 more files or folders like those above")
    assert out.count("KB019") == 21, out[-3000:]


@pytest.mark.parametrize(
    "plurals",
    ["nplurals=+1000000000", "nplurals=1_000_000_000", 'nplurals=\\"1000000000\\"', "nplurals=" + "9" * 5000],
    ids=["plus", "underscores", "quoted", "5000-digits"],
)
def test_plural_forms_written_any_way_babel_reads_are_checked(repo, plurals):
    po = _with_header(repo, f'"Plural-Forms: {plurals}; plural=0;\\n"')
    with po.open("a", encoding="utf-8") as out:
        out.write('\nmsgid "a"\nmsgid_plural "b"\nmsgstr[0] "x"\n')
    code, out = build(repo, timeout=60)
    assert code != 0 and "Traceback" not in out and "KB029" in out, out[-3000:]


def test_plural_forms_split_across_strings_are_checked(repo):
    po = _with_header(repo, '"Plural-Forms: nplural"\n"s=1000000000; plural=0;\\n"')
    with po.open("a", encoding="utf-8") as out:
        out.write('\nmsgid "a"\nmsgid_plural "b"\nmsgstr[0] "x"\n')
    code, out = build(repo, timeout=60)
    assert code != 0 and "KB029" in out, out[-3000:]


@pytest.mark.parametrize(
    ("header", "refuse"),
    [('"Plural-Forms: nplurals=2; plural=(n!=;\\n"', True), ('"X-Note: x\\n"', False)],
    ids=["plural-expression", "harmless-header"],
)
def test_a_catalog_gettext_would_drop_is_refused_not_dropped_without_a_word(repo, header, refuse):
    """gettext refused the plural expression, and Sphinx went on without the
    catalog: furo's English on every page, exit 0."""
    _with_header(repo, header)
    code, out = build(repo, timeout=TIMEOUT)
    if refuse:
        assert code != 0 and f"{LC}/sphinx.po:1: WARNING: KB029" in out, out[-3000:]
    else:
        assert code == 0 and "编辑此页" in _published(repo), out[-3000:]


@pytest.mark.parametrize("charset", ["ascii", "rot13", "x\\n ::error file=conf.py,line=1::forged"])
def test_a_catalog_in_another_charset_is_refused_not_a_traceback(repo, charset):
    po = repo / LC / "sphinx.po"
    text = po.read_text(encoding="utf-8")
    po.write_text(text.replace("charset=UTF-8", f"charset={charset}", 1), encoding="utf-8")
    out = refused(repo, f"{LC}/sphinx.po:1: WARNING: KB029", "declares the charset")
    assert not any(line.lstrip().startswith("::") for line in out.splitlines()), out[-3000:]


def test_what_lies_in_the_build_s_catalog_folder_is_never_read(repo, tmp_path):
    """Read the Docs builds into another folder, so a committed _build/ is not
    refused there: a sphinx.po linked to the environment in _build/locale was
    compiled by Sphinx before any check, and printed into the log."""
    outside = tmp_path / "environ"
    outside.write_text(f"TOKEN={SECRET}\n", encoding="utf-8")
    planted = repo / "_build/locale/zh_CN/LC_MESSAGES"
    planted.mkdir(parents=True)
    (planted / "sphinx.po").symlink_to(outside)
    (planted / "other.mo").write_bytes(b"x")
    code, out = build(repo, timeout=TIMEOUT)
    assert code == 0 and SECRET not in out, out[-3000:]
    assert sorted(p.name for p in planted.iterdir()) == ["sphinx.mo"]


def test_another_language_given_on_the_command_line_gets_its_catalog(repo):
    shutil.move(repo / "locale/zh_CN", repo / "locale/en")  # conf.py's language has none
    po = repo / "locale/en/LC_MESSAGES/sphinx.po"
    po.write_text(po.read_text(encoding="utf-8").replace("Language: zh_CN", "Language: en"), encoding="utf-8")
    code, out = build(repo, timeout=TIMEOUT, options=("-D", "language=en"))
    assert code == 0 and "KB019" not in out, out[-3000:]


def test_the_same_catalog_compiles_to_the_same_bytes():
    from kb.guard.locale import compile_bytes, read_catalog

    """Babel states the time of the compile in a header that has none: the
    build's catalogs were written again every minute, and a build running
    beside another saw its temporary file."""
    import datetime

    po = ROOT / LC / "sphinx.po"
    first, second = read_catalog(po, "zh_CN"), read_catalog(po, "zh_CN")
    first.creation_date = first.revision_date = datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC)
    assert compile_bytes(first) == compile_bytes(second)


@pytest.mark.parametrize("language", ["x-y", "1"])
def test_a_catalog_in_a_folder_babel_does_not_know_as_a_language_is_refused(repo, language):
    shutil.copytree(repo / "locale/zh_CN", repo / "locale" / language)
    refused(
        repo, f"locale/{language}/LC_MESSAGES/sphinx.po:1: WARNING: KB019", "names no language Babel knows"
    )
