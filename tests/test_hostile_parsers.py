"""What Sphinx's and MyST's own parsers would spend hours on, end in a
traceback over, or drop without a word: refused at the line, in one build
of the tiny project (each case on lines of its own, --keep-going).

- Sphinx's C and C++ domains (their backtracking parser doubles its time with
  each pair of nested parentheses: 20 pairs in a {cpp:expr} role took three
  minutes): every directive and role refused (KB017);
- the signature of any other object description (py, js, rst, std,
  describe) nested past MAX_SIGNATURE_NESTING brackets: Sphinx's parsers
  recurse past Python's limit (KB094);
- :no-typesetting: on an object description: only an anchor is made, its
  text reaches no page (KB017);
- docutils' restructuredtext-test-directive: its content becomes an info
  message (KB017);
- an image of zero size: on the page, seen by nobody (KB094);
- a rubric at :heading-level: 1: a second title (KB105);
- more than MAX_HEADINGS headings, the files a page includes counted with
  it: MyST makes their anchors in time that grows with the square of their
  number (KB094; 40,000 took four minutes);
- the any role: the C and C++ domains resolve no target (their parser would
  read it);
- a signature or option longer than MAX_SIGNATURE_LENGTH (time with the
  square of its length), or a chain of operators that nests without
  brackets (a RecursionError): KB094.
"""

from __future__ import annotations

import shutil

import pytest
from kb.guard.silent_loss import MAX_HEADINGS
from kb.guard.untrusted import MAX_SIGNATURE_NESTING
from test_data_errors import add_to_page, build, tiny_project

pytestmark = pytest.mark.timeout(300, method="thread")

DEEP = "[" * (MAX_SIGNATURE_NESTING + 1)
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d4944415478da63f8cfc0f01f0005000201ee8e8a1b0000000049454e44ae426082"
)
# (markup, the start of the message at its first line (or that many lines
# after it); the case's marker must reach no page)
CASES = [
    ("{cpp:expr}`" + "(" * 20 + "1" + ")" * 20 + "`\n", "KB017 the cpp:expr role: Sphinx's C and C++"),
    ("```{cpp:var} int x = " + "(" * 16 + "1" + ")" * 16 + "\n```\n", "KB017 cpp:var: Sphinx's C and C++"),
    ("```{c:var} int x = " + "(" * 14 + "1" + ")" * 14 + "\n```\n", "KB017 c:var: Sphinx's C and C++"),
    # (in {eval-rst}: at the directive's own line, the one after the fence)
    ("```{eval-rst}\n.. cpp:function:: void f()\n```\n", "KB017 cpp:function: Sphinx's C and C++", 1),
    ("{c:func}`strlen`\n", "KB017 the c:func role"),
    (f"```{{py:function}} f({DEEP})\n```\n", "KB094 the signature of py:function nests brackets"),
    (f"```{{js:function}} f({DEEP})\n```\n", "KB094 the signature of js:function nests brackets"),
    (
        "```{py:function} spam(x)\n:no-typesetting:\n\nMARK-A 函数说明。\n```\n",
        "KB017 py:function's :no-typesetting:",
    ),
    (
        "```{option} --foo\n:no-typesetting:\n\nMARK-B 选项说明。\n```\n",
        "KB017 std:option's :no-typesetting:",
    ),
    ("```{describe} thing\n:no-typesetting:\n\nMARK-C 说明。\n```\n", "KB017 describe's :no-typesetting:"),
    (
        "```{restructuredtext-test-directive} arg\nMARK-D 测试指令\n```\n",
        "KB017 restructuredtext-test-directive",
    ),
    ("```{image} pic.png\n:alt: MARK-E\n:width: 0px\n```\n", "KB094 image 'pic.png' has :width: 0px"),
    ("```{image} pic.png\n:alt: MARK-F\n:scale: 0\n```\n", "KB094 image 'pic.png' has :scale: 0"),
    ("```{image} pic.png\n:alt: MARK-K\n:height: 0\n```\n", "KB094 image 'pic.png' has :height: 0"),
    ("```{rubric} 第二个标题\n:heading-level: 1\n```\n", "KB105 a rubric at :heading-level: 1"),
    # the any role asks every domain: the C and C++ ones answer nothing (18 pairs took 160 s)
    ("{any}`a<" + "(" * 18 + "1" + ")" * 18 + ">::b`\n", "KB102 'any' reference target not found"),
    # a chain of operators nests without brackets (a RecursionError in Sphinx's parser)
    (
        "```{py:data} x\n:type: " + "|".join(["a"] * 990) + "\n```\n",
        "KB094 the signature or an option of py:data",
    ),
    (
        "```{py:function} f(x=" + "+".join(["1"] * 450) + ")\n```\n",
        "KB094 the signature or an option of py:func",
    ),
    ("```{py:function} f(x=" + "-" * 900 + "1)\n```\n", "KB094 the signature or an option of py:func"),
    # long and shallow: time with the square of its length (9,000 parameters: a minute)
    (
        "```{py:function} f(" + ",".join(f"a{i}=1" for i in range(9000)) + ")\n```\n",
        "KB094 the signature and",
    ),
    ("```{figure} pic.png\n:figwidth: 0\n\n说明 MARK-I\n```\n", "KB094 image 'pic.png' has :figwidth: 0px"),
    ("```{image} pic.png\n:alt: MARK-J\n:width: 0.001px\n```\n", "KB094 image 'pic.png' has :width: 0.001px"),
]


def test_each_is_refused_at_its_line_and_the_build_ends_soon(tmp_path):
    root = tiny_project(tmp_path / "kb")
    (root / "docs/training/pic.png").write_bytes(PNG)
    lines = [add_to_page(root, markup) + (case[0] if case else 0) for markup, _message, *case in CASES]
    headings = add_to_page(root, "## 小节\n\n" * (MAX_HEADINGS + 5))
    code, out = build(root, timeout=240)
    assert code != 0 and "Traceback" not in out, out[-3000:]
    for line, (_markup, message, *_offset) in zip(lines, CASES, strict=True):
        assert f"docs/training/x.md:{line}: WARNING: {message}" in out, (message, out[-3000:])
    # the page's own two headings come first: the 1,001st is the case's 999th
    first_cut = headings + 2 * (MAX_HEADINGS - 2)
    assert f"docs/training/x.md:{first_cut}: WARNING: KB094 the page has {MAX_HEADINGS + 7} headings" in out
    page = (root / "_build/html/training/x.html").read_text(encoding="utf-8")
    assert page.count("<h1") == 1
    for mark in ("MARK-A", "MARK-B", "MARK-C", "MARK-D"):  # refused, as the build says
        assert mark not in page
    assert "pic.png" not in page  # a refused image is its alt text (kb.guard.untrusted._drop_image)


def test_what_the_checks_leave_alone_builds(tmp_path):
    """A Python function described with a nested signature, an option, a
    rubric at level 2, an image of a size, and as many headings as allowed."""
    root = tiny_project(tmp_path / "kb")
    shutil.copy(root / "_static/favicon.svg", root / "docs/training/pic.svg")
    add_to_page(
        root,
        "```{py:function} spam(x: list[dict[str, tuple[int, int]]]) -> None\n\n说明 MARK-G。\n```\n\n"
        "```{option} --foo\n\n选项 MARK-H。\n```\n\n"
        "```{rubric} 小标题\n:heading-level: 2\n```\n\n"
        "```{image} pic.svg\n:alt: 图标\n:width: 20px\n```\n\n" + "## 小节\n\n" * (MAX_HEADINGS - 2),
    )
    code, out = build(root, timeout=240)
    assert code == 0 and "WARNING" not in out, out[-3000:]
    page = (root / "_build/html/training/x.html").read_text(encoding="utf-8")
    assert "MARK-G" in page and "MARK-H" in page and page.count("<h1") == 1


def test_headings_of_included_files_count_with_the_page(tmp_path):
    """20 includes of a file of 999 headings: the page's 1,001st heading,
    the first include's last, is where the page is cut (each include past
    it is cut and named too); the build ends in seconds, not minutes."""
    root = tiny_project(tmp_path / "kb")
    (root / "docs/training/README.md").write_text("## a\n" * 999, encoding="utf-8")
    add_to_page(root, "```{include} README.md\n```\n\n" * 20)
    code, out = build(root, timeout=120)
    assert code != 0 and "Traceback" not in out, out[-3000:]
    # the page's two headings and the first include's 999 make 1,001: the first include's last
    assert (
        "docs/training/README.md:999: WARNING: KB094 the page has 1001 headings with the files it includes"
        in out
    )
    page = (root / "_build/html/training/x.html").read_text(encoding="utf-8")
    assert page.count("<h2") == MAX_HEADINGS - 1  # the page's own 引言, and 998 of the first include
