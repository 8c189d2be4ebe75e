"""Front-matter validation: each mistake is reported at its line with a KB code."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import kb_frontmatter as fm
from conftest import sphinx_build

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"

GOOD = """---
title: 梯度累积
guide: training
tags:
- memory
- training-optimization
date: 2026-03
summary: 用小显存模拟大 batch。
---

# 梯度累积
"""


def check(text: str, docname: str = "training/x"):
    return fm.validate(text, docname, DATA)


def test_valid_front_matter_passes():
    data, errors = check(GOOD)
    assert errors == [] and data["tags"] == ["memory", "training-optimization"]


@pytest.mark.parametrize("edit, line, code, words", [
    (lambda t: t.replace("title: 梯度累积\n", ""), 2, "KB002", "missing required field 'title'"),
    (lambda t: t.replace("guide: training", "guide: traning"), 3, "KB003", "unknown guide 'traning'"),
    (lambda t: t.replace("- training-optimization", "- trainnig"), 6, "KB004", "unknown tag 'trainnig'"),
    (lambda t: t.replace("date: 2026-03", "date: 2026/03"), 7, "KB005", "not YYYY-MM"),
    (lambda t: t.replace("date: 2026-03", "autor: 张三"), 7, "KB006", "unknown field(s) 'autor'"),
    (lambda t: t.replace("tags:\n", "tags: [\n"), 5, "KB001", "not valid YAML"),
    (lambda t: t.split("---\n", 2)[2], 1, "KB001", "no front matter"),
])
def test_each_mistake_names_line_and_code(edit, line, code, words):
    data, errors = check(edit(GOOD))
    assert data is None
    assert any(ln == line and msg.startswith(code) and words in msg for ln, msg in errors), errors


def test_guide_must_match_folder():
    _, errors = check(GOOD, docname="hardware/x")
    assert errors == [(3, "KB007 guide 'training' does not match the page's folder "
                          "docs/hardware/; move the page or fix the field")]


def test_an_unquoted_full_date_is_accepted():
    data, errors = check(GOOD.replace("date: 2026-03", "date: 2026-03-05"))
    assert errors == [] and data["date"] == "2026-03-05"


def test_bad_tag_fails_the_build_with_path_and_line(tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    page = docs / "training" / "llm-training-10-tips.md"
    page.write_text(page.read_text(encoding="utf-8").replace("- memory\n", "- memroy\n"),
                    encoding="utf-8")
    proc = sphinx_build(docs, tmp_path / "html")
    assert proc.returncode != 0
    assert f"{page}:7: WARNING: KB004 unknown tag 'memroy'" in proc.stderr, proc.stderr
