"""The importer: idempotent, protects edited pages, refuses malformed exports."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import import_export as imp

ROOT = Path(__file__).resolve().parent.parent
EXPORT = ROOT / "sources" / "export.txt"


def run(tmp_path: Path, *args: str, export: Path = EXPORT) -> int:
    return imp.main(["--export", str(export), "--out", str(tmp_path / "out"), *args])


def snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    return {str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(),
                                         p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_import_writes_every_article(tmp_path, capsys):
    assert run(tmp_path) == 0
    pages = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*.md"))
    mapping = imp.load_map(imp.DEFAULT_MAP)
    assert pages == sorted(e["slug"] + ".md" for e in mapping.values())
    assert "12 pages, 12 written" in capsys.readouterr().out


def test_reimport_is_byte_identical_and_writes_nothing(tmp_path, capsys):
    assert run(tmp_path) == 0
    before = snapshot(tmp_path / "out")
    capsys.readouterr()
    assert run(tmp_path) == 0
    assert snapshot(tmp_path / "out") == before  # same bytes, same mtimes
    assert "0 written" in capsys.readouterr().out


def test_edited_page_is_protected_unless_forced(tmp_path, capsys):
    assert run(tmp_path) == 0
    page = tmp_path / "out" / "training" / "llm-training-10-tips.md"
    edited = page.read_text(encoding="utf-8") + "\n编辑过的内容\n"
    page.write_text(edited, encoding="utf-8")
    capsys.readouterr()
    assert run(tmp_path) == 1
    err = capsys.readouterr().err
    assert "llm-training-10-tips.md: edited since import" in err and "--force" in err
    assert page.read_text(encoding="utf-8") == edited
    assert run(tmp_path, "--force") == 0
    assert "编辑过的内容" not in page.read_text(encoding="utf-8")


def test_manifest_matches_committed_sources():
    """sources/import-manifest.json records what the importer makes of the committed export."""
    pages = imp.render_all(EXPORT, imp.DEFAULT_MAP, ROOT / "data" / "guides.yaml")
    manifest = json.loads((ROOT / "sources" / "import-manifest.json").read_text())
    assert manifest == {rel: imp._sha(text) for rel, text in pages.items()}


def test_indented_code_becomes_fenced_python(tmp_path):
    assert run(tmp_path) == 0
    text = (tmp_path / "out" / "training" / "llm-training-10-tips.md").read_text(encoding="utf-8")
    assert "```python\nfrom torch.cuda.amp import autocast, GradScaler\n" in text
    assert "\n    from torch" not in text


def test_front_matter_states_only_what_the_article_states(tmp_path):
    assert run(tmp_path) == 0
    out = tmp_path / "out"
    lpu = (out / "hardware" / "nvidia-lpu.md").read_text(encoding="utf-8")
    assert "author: 学习大鳄\nsource: 51 算力\n" in lpu
    report = (out / "industry" / "china-llm-report-2026.md").read_text(encoding="utf-8")
    assert "date: 2026-03\n" in report and "author: 51 算力研究院\n" in report
    tips = (out / "training" / "llm-training-10-tips.md").read_text(encoding="utf-8")
    head = tips.split("\n---\n")[0]
    assert "author" not in head and "date" not in head and "listing_title" not in head
    trends = (out / "industry" / "ai-compute-trends-2026.md").read_text(encoding="utf-8")
    assert "listing_title: 2026 年 AI 算力发展趋势：国产 GPU 崛起" in trends


def _mutate(tmp_path: Path, edit) -> Path:
    lines = EXPORT.read_text(encoding="utf-8").split("\n")
    data = edit(lines)
    bad = tmp_path / "bad-export.txt"
    bad.write_bytes(data if isinstance(data, bytes) else "\n".join(data).encode("utf-8"))
    return bad


def _line_of(predicate) -> int:
    lines = EXPORT.read_text(encoding="utf-8").split("\n")
    return next(i for i, x in enumerate(lines) if predicate(x, i, lines)) + 1


CHIP_TITLE = "# 国产 AI 芯片深度评测：昇腾 910B vs 寒武纪 MLU370"


def _drop_chip_rendering(lines):
    start = lines.index(CHIP_TITLE)
    i = next(k for k in range(start, len(lines)) if lines[k] == "<p>")
    return lines[:i] + lines[i + 2:]


def _drop_chip_listing(lines):
    start = lines.index(CHIP_TITLE)
    listing = lines.index("国产 AI 芯片深度评测：昇腾 910B vs 寒武纪 MLU370", start + 1)
    return lines[:listing] + ["<p>done</p>"] + lines[listing + 1:]


def _bad_bytes(lines):
    raw = "\n".join(lines).encode("utf-8").split(b"\n")
    raw[9] = raw[9] + b"\xff\xfe"
    return b"\n".join(raw)


MALFORMED = {
    "no-article": (lambda lines: ["只是一些文字", "没有标题"], 1, "no article found"),
    "article-without-end": (_drop_chip_rendering,
                            _line_of(lambda x, i, ls: x == CHIP_TITLE), "has no end"),
    "missing-listing-line": (_drop_chip_listing, None, "lacks its listing line"),
    "not-utf8": (_bad_bytes, 10, "not valid UTF-8"),
    "missing-trailer": (lambda lines: lines[:-4], None, "no trailer"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_export_fails_with_place_and_writes_nothing(tmp_path, capsys, case):
    edit, line, words = MALFORMED[case]
    bad = _mutate(tmp_path, edit)
    assert run(tmp_path, export=bad) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {bad}:"), err
    if line is not None:
        assert err.startswith(f"error: {bad}:{line}: "), err
    assert words in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*"))


def test_unmapped_article_names_the_export_line(tmp_path, capsys):
    mapping = tmp_path / "map.yaml"
    text = (ROOT / "data" / "articles.yaml").read_text(encoding="utf-8")
    mapping.write_text(text.replace('"一文拆解英伟达 LPU":', '"别的文章":'), encoding="utf-8")
    assert run(tmp_path, "--map", str(mapping)) == 2
    line = _line_of(lambda x, i, ls: x == "# 一文拆解英伟达 LPU")
    assert f"export.txt:{line}: article '一文拆解英伟达 LPU' is not in map.yaml" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
