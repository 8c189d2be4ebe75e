"""Content the build would leave out without a word (kb.guard.silent_loss):

- KB061 a file under docs/ that looks like a page but is not read: another
  suffix than .md (.MD, .markdown, .rst);
- KB062 an ``only`` block whose condition holds in no build of the site
  (html; epub and latex with -t book): its content would be in none;
- KB063 a page that reads more than its budget of files (includes,
  literalincludes, csv-table files): the rest is left out, and said so;
- KB132 Python code or pytest settings under docs/: not part of the site,
  and never run (the samples' sandbox copies only the pages).
"""

from __future__ import annotations

import os
import re

import pytest
from test_data_errors import assert_fails_at, build, tiny_project

# in this process; a hang ends the test process (pytest-timeout): a failure, not a stall
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300, method="thread")]

PAGE = "---\ntitle: 页\n---\n\n# 页\n\n正文。\n"


@pytest.mark.parametrize("name", ["y.MD", "z.rst", "w.markdown"])
def test_a_page_file_the_build_does_not_read_is_named(tmp_path, name):
    root = tiny_project(tmp_path / "kb")
    (root / "docs/training" / name).write_text(PAGE, encoding="utf-8")
    assert_fails_at(root, f"docs/training/{name}:1: WARNING: KB061 training/{name} looks like a page")


@pytest.mark.parametrize(
    "name", ["conftest.py", "test_page.py", "helper.PY", "pytest.ini", "pytest.toml", "x.pth"]
)
def test_python_code_or_test_settings_under_docs_are_named(tmp_path, name):
    """KB132: never part of the site, and never run (tools/run_samples.py
    copies only the pages)."""
    root = tiny_project(tmp_path / "kb")
    (root / "docs/training" / name).write_text("import os\n", encoding="utf-8")
    assert_fails_at(root, f"docs/training/{name}:1: WARNING: KB132 training/{name} is Python code")


def test_a_readme_is_a_note_for_the_repository_not_a_page(tmp_path):
    root = tiny_project(tmp_path / "kb")
    (root / "docs/training/README.md").write_text("# 说明\n\n给贡献者看的说明。\n", encoding="utf-8")
    code, out = build(root)
    assert code == 0 and "KB061" not in out, out[-3000:]


@pytest.mark.parametrize("condition", ["nothing", "man", "html and latex", "not html and not book"])
def test_an_only_block_no_build_shows_is_named(tmp_path, condition):
    root = tiny_project(tmp_path / "kb")
    page = root / "docs/training/x.md"
    text = page.read_text(encoding="utf-8")
    line = text.count("\n") + 2
    page.write_text(
        text + f"\n```{{only}} {condition}\n这一段在任何构建里都不会出现。\n```\n", encoding="utf-8"
    )
    assert_fails_at(
        root, f"x.md:{line}: WARNING: KB062 the only block's condition {condition!r} holds in no build"
    )


def test_an_only_block_for_the_books_is_fine(tmp_path):
    root = tiny_project(tmp_path / "kb")
    page = root / "docs/training/x.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\n```{only} book or latex\n书里才有的一段。\n```\n",
        encoding="utf-8",
    )
    code, out = build(root)
    assert code == 0 and "KB062" not in out, out[-3000:]


def test_includes_that_multiply_stop_at_a_budget(tmp_path):
    """30 files that each include the next twice would be 2**29 includes: the
    build ends, at the page, with KB063 (it never finished before)."""
    root = tiny_project(tmp_path / "kb")
    parts = root / "docs/training/parts"
    parts.mkdir()
    for i in range(29):
        (parts / f"p{i}.txt").write_text(
            f"```{{include}} parts/p{i + 1}.txt\n```\n\n```{{include}} parts/p{i + 1}.txt\n```\n",
            encoding="utf-8",
        )
    (parts / "p29.txt").write_text("叶子。\n", encoding="utf-8")
    page = root / "docs/training/x.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n```{include} parts/p0.txt\n```\n", encoding="utf-8")
    # at the include past the budget, in the file that holds it
    out = assert_fails_at(root, "WARNING: KB063 the page reads more than 200 files")
    assert re.search(r"parts/p\d+\.txt:\d+: WARNING: KB063", out), out[-3000:]


def appended(root, addition: str) -> int:
    """Append ``addition`` to the tiny project's page training/x.md, after a
    blank line; the line it starts on."""
    page = root / "docs/training/x.md"
    text = page.read_text(encoding="utf-8") + "\n"
    page.write_text(text + addition, encoding="utf-8")
    return text.count("\n") + 1


@pytest.mark.parametrize(
    "directive, size, times, over",
    [
        ("```{literalinclude} data.txt\n```", 100, 300, 201),  # more than 200 files
        (":::{csv-table}\n:file: data.txt\n:::", 100, 300, 201),
        # the fifth 256 KiB is more than 1 MiB (as text: the 1 MiB read before it
        # is written to the page, and highlighting it as Python takes 11 s)
        ("```{literalinclude} data.txt\n:language: text\n```", 256 << 10, 8, 5),
    ],
)
def test_a_page_that_reads_one_file_over_and_over_stops_at_the_budget(tmp_path, directive, size, times, over):
    """A 1 MiB page holds 20,000 literalincludes of one large file, each
    copied into the page: gigabytes written. The reads share the budget of
    includes (KB063), reported at the first directive past it."""
    root = tiny_project(tmp_path / "kb")
    folder = root / "docs/training"
    (folder / "data.txt").write_text(("1,2\n" * size)[:size], encoding="utf-8")
    page = folder / "x.md"
    text = page.read_text(encoding="utf-8") + "\n"
    first = text.count("\n") + 1  # the first directive's line
    per = directive.count("\n") + 2
    page.write_text(text + "".join(directive + "\n\n" for _ in range(times)), encoding="utf-8")
    line = first + (over - 1) * per
    assert_fails_at(root, f"x.md:{line}: WARNING: KB063 the page reads more than 200 files or 1 MiB")


@pytest.mark.parametrize(
    "block",
    [
        # rST includes read as text (Sphinx's include-read never sees them)
        "```{eval-rst}\n" + ".. include:: data.txt\n   :literal:\n\n" * 210 + "```",
        "```{eval-rst}\n" + ".. include:: data.txt\n   :code: text\n\n" * 210 + "```",
        # MyST includes: counted before MyST reads them, at their line
        "```{include} data.txt\n```\n\n" * 210,
    ],
    ids=["rst-literal", "rst-code", "myst-include"],
)
def test_includes_of_one_file_over_and_over_stop_at_the_budget(tmp_path, block):
    root = tiny_project(tmp_path / "kb")
    folder = root / "docs/training"
    (folder / "data.txt").write_text("一行。\n", encoding="utf-8")
    page = folder / "x.md"
    text = page.read_text(encoding="utf-8") + "\n"
    page.write_text(text + block, encoding="utf-8")
    out = assert_fails_at(root, "WARNING: KB063 the page reads more than 200 files")
    assert re.search(r"x\.md:\d+: WARNING: KB063", out), out[-3000:]


def test_a_diff_file_is_checked_by_the_name_it_is_read_by(tmp_path):
    """:diff: "b.txt " read the file with the trailing space, which the
    checks (KB011, the budget) never looked at: the name is read as checked."""
    root = tiny_project(tmp_path / "kb")
    folder = root / "docs/training"
    (folder / "a.txt").write_text("a\n", encoding="utf-8")
    (folder / "b.txt").write_text("b\n", encoding="utf-8")
    (folder / "b.txt ").write_text("x\n" * 2_200_000, encoding="utf-8")  # 4.2 MiB
    page = folder / "x.md"
    page.write_text(
        page.read_text(encoding="utf-8") + '\n```{literalinclude} a.txt\n:diff: "b.txt "\n```\n',
        encoding="utf-8",
    )
    code, out = build(root)
    # a name with a space is itself refused (kb.guard.untrusted.name_problem) ...
    warnings = [line for line in out.splitlines() if "WARNING" in line]
    assert code != 0 and len(warnings) == 1, out[-3000:]
    assert "docs/training/b.txt :1: WARNING: KB018 the name holds characters" in warnings[0], out[-3000:]
    # ... and the diff is of a.txt and b.txt, not of the 4.2 MiB file the checks never saw
    assert (root / "_build/html/training/x.html").stat().st_size < 1 << 20


def test_a_csv_table_file_named_from_docs_builds(tmp_path):
    """:file: /training/t.csv is docs/training/t.csv, as Sphinx reads it (the
    cell check read it from the file system's root and failed the build)."""
    root = tiny_project(tmp_path / "kb")
    (root / "docs/training/t.csv").write_text("甲,乙\n1,2\n", encoding="utf-8")
    page = root / "docs/training/x.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\n:::{csv-table}\n:file: /training/t.csv\n:::\n", encoding="utf-8"
    )
    code, out = build(root)
    assert code == 0 and "WARNING" not in out and "CRITICAL" not in out, out[-3000:]


@pytest.mark.parametrize("inline", [False, True], ids=["file", "inline"])
def test_a_csv_table_of_too_many_cells_is_refused(tmp_path, inline):
    """Each cell is parsed as Markdown on its own: 120 KB of cells took 43 s,
    a 1 MiB table would take many minutes."""
    root = tiny_project(tmp_path / "kb")
    rows = "".join(f"{i},{i + 1},{i + 2}\n" for i in range(2_000))  # 6,000 cells
    page = root / "docs/training/x.md"
    text = page.read_text(encoding="utf-8") + "\n"
    line = text.count("\n") + 1
    if inline:
        table = ":::{csv-table}\n" + rows + ":::\n"
    else:
        (root / "docs/training/t.csv").write_text(rows, encoding="utf-8")
        table = ":::{csv-table}\n:file: t.csv\n:::\n"
    page.write_text(text + table, encoding="utf-8")
    assert_fails_at(root, f"x.md:{line}: WARNING: KB094 the csv-table has 6000 cells, more than the 5000")


def test_a_directive_in_an_included_file_is_reported_at_that_file(tmp_path):
    """A refused literalinclude in a file the page includes, in Markdown and
    in {eval-rst}: at the included file's line (it was the page's path with
    the included file's line, a line the page may not have)."""
    root = tiny_project(tmp_path / "kb")
    folder = root / "docs/training"
    outside = "../../../../../../../../etc/hostname"
    (folder / "part.txt").write_text(
        f"一行。\n\n\n```{{literalinclude}} {outside}\n```\n\n```{{eval-rst}}\n.. literalinclude:: {outside}\n```\n",
        encoding="utf-8",
    )
    page = folder / "x.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n```{include} part.txt\n```\n", encoding="utf-8")
    assert_fails_at(
        root,
        "docs/training/part.txt:4: WARNING: KB011 literalinclude of",
        "docs/training/part.txt:8: WARNING: KB011 literalinclude of",
    )


def test_an_include_in_a_csv_table_cell_is_refused_before_it_is_read(tmp_path):
    """Each cell is parsed as Markdown on its own, where the page's check of
    includes does not look: MyST read the file first (a FIFO outside the
    repository hung the build)."""
    root = tiny_project(tmp_path / "kb")
    os.mkfifo(tmp_path / "fifo")
    line = appended(root, ':::{csv-table}\n"```{include} ../../../fifo\n```",b\n:::\n')
    assert_fails_at(root, f"x.md:{line}: WARNING: KB011 a cell of this csv-table holds {{include}}")


def test_an_rst_include_is_counted_whole_though_sliced(tmp_path):
    """docutils reads the whole file, then keeps :end-line: 1 of it."""
    root = tiny_project(tmp_path / "kb")
    (root / "docs/training/big.txt").write_text("一行。\n" * 300_000, encoding="utf-8")  # 3 MiB
    line = appended(root, "```{eval-rst}\n.. include:: big.txt\n   :end-line: 1\n```\n") + 1
    assert_fails_at(root, f"x.md:{line}: WARNING: KB063 the page reads more than 200 files or 1 MiB")


def test_includes_in_an_included_file_count_from_what_the_page_read(tmp_path):
    """100 includes in the page, then a file with 150 more: the 101st of those
    is past the budget and is not read (each text was counted from zero, and
    an included file not named .md was not looked at)."""
    root = tiny_project(tmp_path / "kb")
    folder = root / "docs/training"
    (folder / "leaf.txt").write_text("叶子。\n", encoding="utf-8")
    (folder / "a.txt").write_text("```{include} leaf.txt\n```\n\n" * 150, encoding="utf-8")
    page = folder / "x.md"
    page.write_text(
        page.read_text(encoding="utf-8")
        + "\n"
        + "```{include} leaf.txt\n```\n\n" * 100
        + "```{include} a.txt\n```\n",
        encoding="utf-8",
    )
    # the page's 100 and a.txt make 101 reads; a.txt's 100th include (line 298) is the 201st
    assert_fails_at(root, "docs/training/a.txt:298: WARNING: KB063 the page reads more than 200 files")


def test_an_include_outside_in_an_included_txt_file_is_refused_at_its_line(tmp_path):
    root = tiny_project(tmp_path / "kb")
    os.mkfifo(tmp_path / "fifo")
    folder = root / "docs/training"
    (folder / "part.txt").write_text("一行。\n\n```{include} ../../../fifo\n```\n", encoding="utf-8")
    page = folder / "x.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n```{include} part.txt\n```\n", encoding="utf-8")
    assert_fails_at(root, "docs/training/part.txt:3: WARNING: KB011 include of")


def test_a_diff_of_long_files_is_refused(tmp_path):
    """difflib takes time with the square of the lines (160,000 took two minutes)."""
    root = tiny_project(tmp_path / "kb")
    folder = root / "docs/training"
    (folder / "a.txt").write_text("".join(f"{i % 101}\n" for i in range(6_000)), encoding="utf-8")
    (folder / "b.txt").write_text("".join(f"{i % 97}\n" for i in range(6_000)), encoding="utf-8")
    line = appended(root, "```{literalinclude} a.txt\n:diff: b.txt\n```\n")
    assert_fails_at(root, f"x.md:{line}: WARNING: KB094 :diff: of a.txt, a file of 6000 lines")


@pytest.mark.parametrize(
    "where, blank",
    [
        ("page", "    \n\t\n"),
        ("page", "\u3000\n\xa0\n"),  # Unicode's whitespace is as slow
        ("literalinclude", "    \n\t\n"),
        ("include", "    \n\t\n"),
        ("rst-code-include", "    \n\t\n"),
    ],
)
def test_a_long_run_of_whitespace_lines_is_refused(tmp_path, where, blank):
    """Pygments takes time with the square of a run of lines that hold only
    spaces or tabs (20,000 lines: a minute; a 1 MiB page of them: hours)."""
    root = tiny_project(tmp_path / "kb")
    folder = root / "docs/training"
    blank = blank * 1_000
    page = folder / "x.md"
    text = page.read_text(encoding="utf-8") + "\n"
    line = text.count("\n") + 1
    if where == "page":
        text += "```\n" + blank + "```\n"
        message = f"x.md:{line + 1}: WARNING: KB094 more than 500 lines"
    else:
        (folder / "blank.txt").write_text("x = 1\n" + blank, encoding="utf-8")
        text += {
            "literalinclude": "```{literalinclude} blank.txt\n```\n",
            "include": "```{include} blank.txt\n```\n",
            "rst-code-include": "```{eval-rst}\n.. include:: blank.txt\n   :code: python\n```\n",
        }[where]
        message = {
            "literalinclude": f"x.md:{line}: WARNING: KB094 more than 500 lines",
            "include": "docs/training/blank.txt:2: WARNING: KB094 more than 500 lines",
            "rst-code-include": f"x.md:{line + 1}: WARNING: KB094 more than 500 lines",
        }[where]
    page.write_text(text, encoding="utf-8")
    assert_fails_at(root, message)


@pytest.mark.parametrize(
    ("rst", "offset", "name"),
    [
        (".. note: 重要的提醒。\n", 1, "note"),
        ("正文。\n\n.. figure:x.png\n", 3, "figure"),
        ("- 列表\n\n  .. warning :小心。\n", 3, "warning"),
    ],
)
def test_a_directive_with_one_colon_in_eval_rst_is_named_not_dropped(tmp_path, rst, offset, name):
    """KB133: ``.. note: text`` is an rST comment, which docutils drops
    without a word; the build names it at its line."""
    from test_data_errors import add_to_page

    root = tiny_project(tmp_path / "kb")
    line = add_to_page(root, "```{eval-rst}\n" + rst + "```\n")
    assert_fails_at(root, f"docs/training/x.md:{line + offset}: WARNING: KB133 '.. {name}:' with one colon")


@pytest.mark.parametrize(
    ("rst", "shown"),
    [
        (".. note：全角冒号。\n", "'.. note：全角冒号。' is not the directive note"),
        (".. warning  :: 两个空格。\n", "'.. warning  :: 两个空格。' is not the directive warning"),
        (".. 注意：中文名。\n", "'.. 注意：中文名。' is not the directive 注意"),
        (".. Note 没有冒号。\n", "'.. Note 没有冒号。' is not the directive Note"),
    ],
)
def test_other_ways_of_mistyping_a_directive_in_eval_rst_are_named(tmp_path, rst, shown):
    """KB133 is about what docutils reads: any explicit markup line naming a
    directive (by docutils' lookup, the page's language included) that is
    not one (docutils' pattern: one optional space, then "::")."""
    from test_data_errors import add_to_page

    root = tiny_project(tmp_path / "kb")
    line = add_to_page(root, "```{eval-rst}\n" + rst + "```\n")
    assert_fails_at(root, f"docs/training/x.md:{line + 1}: WARNING: KB133 {shown} but an rST comment")


def test_a_directive_comment_or_target_in_eval_rst_is_not_a_mistyped_directive(tmp_path):
    from test_data_errors import add_to_page

    root = tiny_project(tmp_path / "kb")
    add_to_page(
        root,
        "```{eval-rst}\n.. note:: 提醒。\n\n.. note :: 一个空格也是指令。\n\n.. _x-target:\n\n"
        ".. 这是给编辑看的注释：不是指令。\n\n段落。\n```\n",
    )
    code, out = build(root)
    assert code == 0 and "KB133" not in out, out[-3000:]
