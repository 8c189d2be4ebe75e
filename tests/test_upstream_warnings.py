"""Every warning of a build has a KB code and a fix, Sphinx's, docutils' and
MyST's too (kb.core.upstream_warnings), at the page's own path and line.

One tiny build holds a page with one ordinary mistake of each kind; each must
come out at its line with its kind's code. When Sphinx, docutils or MyST
reword a message or rename its type, the mistake comes out as KB100 (or at
another place) and this fails: mend the kind's ``types`` or ``words``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from kb.core import upstream_warnings as uw
from test_data_errors import add_to_page, build, tiny_project

ROOT = Path(__file__).resolve().parent.parent

# mistake -> the code it must get (each is written on a page of its own lines)
MISTAKES = {
    "```{notee}\n内容\n```\n": "KB101",
    "见 {reff}`x`。\n": "KB101",
    "见 {ref}`no-such-label`。\n": "KB102",
    "见 {doc}`/training/nope`。\n": "KB102",
    "见 [这里](nope.md)。\n": "KB102",
    "正文[^nope]。\n": "KB102",
    "![图](nope.png)\n": "KB103",
    "```{literalinclude} nope.py\n```\n": "KB103",
    "(dup-label)=\n## 甲\n\n正文。\n\n(dup-label)=\n## 乙\n": "KB104",
    "#### 跳级的标题\n": "KB105",
    "```nosuchlang\nx\n```\n": "KB106",
    "```{note}\n:nosuch: 1\n内容\n```\n": "KB107",
    "```{code-block} python\n:emphasize-lines: 9\n\nx = 1\n```\n": "KB107",
    "```{acks}\n不是列表\n```\n": "KB107",
    # a codec that fails on the file: the code a csv-table's gets (kb.guard.untrusted)
    "```{eval-rst}\n.. include:: part.txt\n   :encoding: utf-16\n```\n": "KB054",
    "```{literalinclude} part.txt\n:encoding: utf-32\n```\n": "KB054",
}


@pytest.fixture(scope="module")
def warnings(tmp_path_factory):
    root = tiny_project(tmp_path_factory.mktemp("upstream") / "kb")
    (root / "docs/training/part.txt").write_text("包含的文字\n", encoding="utf-8")
    lines = {}
    for text, code in MISTAKES.items():
        at = add_to_page(root, text)
        # the line the mistake is reported at: its first line (the second
        # label, the second heading or the directive's option where docutils
        # and MyST say so)
        lines[text] = (at, code)
    rc, out = build(root)
    assert rc != 0 and "Traceback" not in out, out[-3000:]
    # without the colours Sphinx gives a warning line where it colours them (CI)
    return lines, re.sub(r"\x1b\[[0-9;]*m", "", out)


def test_each_mistake_has_its_kinds_code_at_its_line(warnings):
    lines, out = warnings
    reported = re.findall(r"docs/training/x\.md:(\d+): (?:WARNING|ERROR|CRITICAL): (KB\d{3}) ", out)
    for text, (at, code) in lines.items():
        last = at + text.count("\n") - 1
        found = [c for line, c in reported if at <= int(line) <= last]
        assert found and set(found) == {code}, (text, at, reported, out[-4000:])


def test_no_warning_of_the_build_lacks_a_code(warnings):
    _lines, out = warnings
    problems = [line for line in out.splitlines() if re.search(r": (WARNING|ERROR|CRITICAL): ", line)]
    assert problems
    uncoded = [line for line in problems if not re.search(r": (WARNING|ERROR|CRITICAL): KB\d{3} ", line)]
    assert uncoded == []
    # a fix follows Sphinx's words, and its type stays at the end
    assert any("; check the name" in line and line.endswith("[myst.directive_unknown]") for line in problems)


def test_the_emphasized_line_out_of_range_is_reported_at_the_page_not_a_doubled_suffix(warnings):
    """sphinx/directives/code.py gives a (path, line) pair where Sphinx's
    logging expects (docname, line): kb.core.log.SourceLocation."""
    _lines, out = warnings
    assert "x.md.md" not in out
    assert re.search(r"docs/training/x\.md:\d+: WARNING: KB107 line number spec is out of range", out)


@pytest.mark.parametrize(
    ("message", "type_", "subtype", "code"),
    [
        ("undefined label: 'x'", "ref", "ref", "KB102"),
        ("Footnote [#] is not referenced.", "ref", "footnote", "KB108"),
        ('Unknown target name: "x".', "docutils", None, "KB102"),
        ('Duplicate explicit target name: "x".', "docutils", None, "KB104"),
        ("something new", "docutils", None, "KB100"),
        ("something new", None, None, "KB100"),
    ],
)
def test_a_kind_is_read_from_the_type_first_then_the_words(message, type_, subtype, code):
    assert uw.kind_of(message, type_, subtype).code == code


def test_a_message_is_coded_once_and_keeps_its_words_and_type():
    once = uw.coded("undefined label: 'x' [ref.ref]", "ref", "ref")
    assert once.startswith("KB102 undefined label: 'x'; ") and once.endswith(" [ref.ref]")
    assert uw.coded(once, "ref", "ref") == once
    assert uw.coded("KB012 ours", "kb", "x") == "KB012 ours"


def _package_messages():
    """The first argument of each logger.warning/error/critical call in the
    package: a string (or the start of an f-string or a concatenation)."""
    for path in sorted((ROOT / "tools" / "kb").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("warning", "error", "critical")
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "logger"
                and node.args
            ):
                first = node.args[0]
                while isinstance(first, ast.BinOp):
                    first = first.left
                if isinstance(first, ast.JoinedStr):
                    first = first.values[0] if first.values else first
                yield path.relative_to(ROOT), node.lineno, first


def test_every_warning_of_the_package_starts_with_its_code_and_every_code_is_documented():
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| (KB\d{3}) \|", contributing, re.M))
    uncoded, codes = [], set()
    for path, line, first in _package_messages():
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            if m := re.match(r"(KB\d{3}) ", first.value):
                codes.add(m[1])
                continue
        elif isinstance(first, (ast.FormattedValue, ast.Name)):
            # a message or code built elsewhere (f"{code} …", message): the
            # codes of the package are read below, and a message without one
            # would get KB100 at run time
            continue
        uncoded.append(f"{path}:{line}")
    assert uncoded == []
    for path in (ROOT / "tools").rglob("*.py"):
        codes |= set(re.findall(r"\"(KB\d{3})\"", path.read_text(encoding="utf-8")))
    kinds = {kind.code for kind in (*uw.KINDS, uw.OTHER)}
    assert kinds <= documented, kinds - documented
    assert codes <= documented, sorted(codes - documented)
