"""tools/link_terms.py links a glossary term at its first use in the author's
text, never inside the editors' blocks, however deeply those nest."""

from __future__ import annotations

import link_terms
from kb.core.markdown import colon_directives


def test_nested_editor_blocks_are_left_alone():
    text = (
        "# 标题\n\n::::{editor-note}\n:label: n\n**判定。** 混合精度的说明。\n:::{original}\n"
        "原文。\n:::\n混合精度的后文。\n::::\n\n正文用混合精度训练。\n"
    )
    lines = text.split("\n")
    prose = [lines[n] for n in link_terms.prose_lines(text)]
    assert prose == ["正文用混合精度训练。"], prose


def test_colon_directives_close_with_their_own_fence():
    lines = ["::::{editor-note}", "a", ":::{original}", "b", ":::", "c", "::::", "d"]
    assert colon_directives(lines) == [
        ["editor-note"],
        ["editor-note"],
        ["editor-note", "original"],
        ["editor-note", "original"],
        ["editor-note", "original"],
        ["editor-note"],
        ["editor-note"],
        [],
    ]
