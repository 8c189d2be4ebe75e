"""make lint's Chinese copywriting check reports path:line: KB030, and is quiet on clean text."""

from __future__ import annotations

import lint_copy


def test_a_copywriting_problem_is_reported_at_its_line(tmp_path, capsys):
    page = tmp_path / "x.md"
    page.write_text("# 标题\n\n正文。\n\n用PyTorch训练。\n", encoding="utf-8")
    assert lint_copy.main([str(page)]) == 1
    out = capsys.readouterr().out
    assert f"{page}:5: KB030 copywriting: '用PyTorch训练。' → '用 PyTorch 训练。'" in out, out


def test_clean_text_passes(tmp_path, capsys):
    page = tmp_path / "x.md"
    page.write_text("# 标题\n\n用 PyTorch 训练。\n", encoding="utf-8")
    assert lint_copy.main([str(page)]) == 0
