"""llms-full.txt's Markdown of a page (kb.site.llms.Markdown), on small
docutils trees: each node is written once, so the work grows with the page,
not with 2 ** its nesting (a list-table cell of 20 nested notes took 14 s,
three divs of nine nested definition lists over 15 minutes: a CI stall)."""

from __future__ import annotations

import pytest
from docutils.core import publish_doctree
from kb.site import llms


def indented(text: str, by: str = "   ") -> str:
    return "\n".join(by + line if line else "" for line in text.split("\n"))


def nested_definitions(depth: int) -> str:
    text = "最里面的定义"
    for level in range(depth):
        text = f"术语{level}\n" + indented(text)
    return text


def notes_in_a_cell(depth: int) -> str:
    body = "格子里的话"
    for _ in range(depth):
        body = ".. note::\n\n" + indented(body)
    return ".. list-table::\n\n   * - 甲\n     - 乙\n   * - 丙\n     -\n" + indented(body, " " * 7)


def table_in_a_cell() -> str:
    inner = ".. list-table::\n\n   * - 内一\n     - 内二\n"
    return ".. list-table::\n\n   * - 外一\n     - 外二\n   * - 外三\n     -\n" + indented(inner, " " * 7)


def visits(monkeypatch, text: str) -> tuple[str, int, int]:
    """The Markdown of the rST ``text``, how many times a node was written
    (block or inline), and how many nodes the tree has."""
    tree = publish_doctree(text, settings_overrides={"report_level": 5})
    count = [0]
    for name in ("block", "inline"):
        method = getattr(llms.Markdown, name)

        def counted(self, *args, _method=method):
            count[0] += 1
            return _method(self, *args)

        monkeypatch.setattr(llms.Markdown, name, counted)
    out = llms.to_markdown(tree, "https://example.org/x.html")
    return out, count[0], len(list(tree.findall()))


@pytest.mark.parametrize(
    "make", [nested_definitions, notes_in_a_cell], ids=["definitions", "notes-in-a-cell"]
)
def test_each_node_is_written_once_however_deep_it_nests(monkeypatch, make):
    for depth in (3, 16):
        out, calls, size = visits(monkeypatch, make(depth))
        # a node is visited as a block and once more inline at most
        assert calls <= 2 * size, (depth, calls, size)
    deepest = "最里面的定义" if make is nested_definitions else "格子里的话"
    assert out.count(deepest) == 1, out
    if make is nested_definitions:
        assert [f"**术语{level}**" in out for level in range(16)] == [True] * 16, out


def test_a_table_in_a_cell_is_that_cells_text_not_rows_of_the_outer_table(monkeypatch):
    out, _, _ = visits(monkeypatch, table_in_a_cell())
    rows = [line for line in out.splitlines() if line.startswith("|")]
    assert rows[0] == "| 外一 | 外二 |" and rows[1] == "| --- | --- |", out
    assert len(rows) == 3 and "外三" in rows[2] and "内一" in rows[2] and "内二" in rows[2], out
    assert out.count("内一") == 1, out


def test_a_note_holding_a_titled_table_is_labelled_as_a_note(monkeypatch):
    """An admonition's label is its own title, or its kind: not the title of a
    table inside it."""
    out, _, _ = visits(monkeypatch, ".. note::\n\n   .. list-table:: 表名\n\n      * - 甲\n")
    assert out.startswith("> **注意**") or out.startswith("> **Note**"), out
    assert "> **表名**" not in out.splitlines()[0] and "> *表名*" in out.splitlines(), out
