"""The importer: idempotent, protects edited pages, refuses malformed exports."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import import_export as imp
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXPORT = ROOT / "sources" / "export.txt"


def run(tmp_path: Path, *args: str, export: Path = EXPORT) -> int:
    return imp.main(["--export", str(export), "--out", str(tmp_path / "out"), *args])


def snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    return {
        str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


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
    return lines[:i] + lines[i + 2 :]


def _drop_chip_listing(lines):
    start = lines.index(CHIP_TITLE)
    listing = lines.index("国产 AI 芯片深度评测：昇腾 910B vs 寒武纪 MLU370", start + 1)
    return lines[:listing] + ["<p>done</p>"] + lines[listing + 1 :]


def _bad_bytes(lines):
    raw = "\n".join(lines).encode("utf-8").split(b"\n")
    raw[9] = raw[9] + b"\xff\xfe"
    return b"\n".join(raw)


MALFORMED = {
    "no-article": (lambda lines: ["只是一些文字", "没有标题"], 1, "no article found"),
    "article-without-end": (_drop_chip_rendering, _line_of(lambda x, i, ls: x == CHIP_TITLE), "has no end"),
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
    assert (
        f"export.txt:{line}: KB074 article '一文拆解英伟达 LPU' is not in map.yaml" in capsys.readouterr().err
    )
    assert not (tmp_path / "out").exists()


# -- hostile and broken contributions (issue 18) ---------------------------------

LAST_TITLE = "# AI 模型训练优化技巧"


def _nothing_written(tmp_path: Path) -> None:
    """No page, no manifest, no staging folder: the failed run left no trace."""
    out = tmp_path / "out"
    assert not out.exists() or not any(out.rglob("*")), sorted(out.rglob("*"))
    assert not [p for p in tmp_path.iterdir() if ".import-" in p.name]


def _expect_refusal(tmp_path, capsys, bad: Path, line: int, words: str, *args: str) -> str:
    assert run(tmp_path, *args, export=bad) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {bad}:{line}: "), err
    assert words in err, err
    assert "Traceback" not in err
    _nothing_written(tmp_path)
    return err


def _last_rendering() -> int:
    """0-based index of the last article's '<p>' line."""
    lines = EXPORT.read_text(encoding="utf-8").split("\n")
    start = lines.index(LAST_TITLE)
    return next(k for k in range(start, len(lines)) if lines[k] == "<p>")


def _cut_after(predicate):
    """An export cut off after the first line of the last article's HTML matching predicate."""

    def edit(lines):
        i = next(k for k in range(_last_rendering(), len(lines)) if predicate(lines[k]))
        return lines[: i + 1]

    return edit


def _cut_lines(edit) -> int:
    return len(edit(EXPORT.read_text(encoding="utf-8").split("\n")))


TRUNCATED = {
    # cut inside a code block of the HTML half: the code lines look like plain
    # text, and HEAD took two of them as the trailer
    "inside-html-code": (
        _cut_after(lambda x: x.startswith("for i, batch in enumerate")),
        "<pre> opened at line",
    ),
    # cut inside the HTML's last paragraph, before its </p>
    "inside-html-paragraph": (_cut_after(lambda x: x.startswith("<strong>建议")), "<p> opened at line"),
    # cut inside the Markdown half of the last article
    "inside-markdown": (
        lambda lines: lines[: lines.index(LAST_TITLE) + 5],
        "ends inside the Markdown of article 'AI 模型训练优化技巧'",
    ),
    # cut after the HTML, in the middle of the trailer's last line
    "inside-trailer": (lambda lines: lines[:-1] + ["全部"], "found '51 算力' / '全部'"),
}


@pytest.mark.parametrize("case", sorted(TRUNCATED))
def test_truncated_export_is_refused_at_its_end(tmp_path, capsys, case):
    edit, words = TRUNCATED[case]
    bad = _mutate(tmp_path, edit)
    err = _expect_refusal(tmp_path, capsys, bad, _cut_lines(edit), words)
    assert "KB070" in err and "export the site again" in err


def test_export_cut_inside_a_character_is_truncated(tmp_path, capsys):
    bad = _mutate(tmp_path, lambda lines: "\n".join(lines).encode("utf-8")[:-2])
    lines = EXPORT.read_text(encoding="utf-8").split("\n")
    _expect_refusal(tmp_path, capsys, bad, len(lines), "KB070 the export ends in the middle of a character")


def test_every_article_of_the_real_export_has_a_complete_rendering():
    """The completeness rule holds for all twelve renderings of the committed export."""
    articles, trailer = imp.split_export(EXPORT)
    assert len(articles) == 12 and trailer == ["51 算力", "全部文章"]
    lines = imp.read_lines(EXPORT)
    starts = imp.find_starts(lines)
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        html = next(k for k in range(start, end) if imp._is_html_start(lines, k))
        last = max(k for k in range(html, end) if lines[k].strip() and not imp._is_plain(lines[k]))
        assert imp.unclosed_element(lines[html : last + 1], html) is None, articles[n].title


def test_html_balance_reads_code_as_text_and_p_end_tags_as_optional():
    assert imp.unclosed_element(["<p>", "<h1>t</h1><p><pre><code>a <b> c</code></pre></p>"], 0) is None
    assert imp.unclosed_element(["<p>", "<h1>t</h1><p><pre><code>x = 1"], 0) == ("pre", 2)
    assert imp.unclosed_element(["<ul><li>a</li>", "<li>b"], 9) == ("ul", 10)


def test_article_twice_in_the_export_is_refused(tmp_path, capsys):
    """The same article twice: HEAD let the second copy silently win."""
    lines = EXPORT.read_text(encoding="utf-8").split("\n")
    first = lines.index("# 一文拆解英伟达 LPU")
    listing = next(
        k
        for k in range(first + 1, len(lines))
        if lines[k + 1 : k + 3] == ["", ""] and lines[k + 3].startswith("# ") and imp._is_plain(lines[k])
    )
    copy = lines[first : listing + 3]  # the article, its listing line, two blank lines
    at = lines.index(LAST_TITLE)
    bad = _mutate(tmp_path, lambda ls: ls[:at] + copy + ls[at:])
    err = _expect_refusal(
        tmp_path,
        capsys,
        bad,
        at + 1,
        "KB071 article '一文拆解英伟达 LPU' appears twice in the export: "
        f"first at line {first + 1}, again here",
    )
    assert "keep one copy" in err


def test_export_missing_a_whole_article_is_refused(tmp_path, capsys):
    """Cut between two articles, the export parses: HEAD imported 11 of 12 pages."""
    lines = EXPORT.read_text(encoding="utf-8").split("\n")
    first = lines.index("# 一文拆解英伟达 LPU")
    listing = next(
        k
        for k in range(first + 1, len(lines))
        if lines[k + 1 : k + 3] == ["", ""] and lines[k + 3].startswith("# ") and imp._is_plain(lines[k])
    )
    bad = _mutate(tmp_path, lambda ls: ls[:first] + ls[listing + 3 :])
    last = bad.read_text(encoding="utf-8").count("\n") + 1
    map_line = _line_in(imp.DEFAULT_MAP, '"一文拆解英伟达 LPU":')
    _expect_refusal(
        tmp_path,
        capsys,
        bad,
        last,
        f"KB070 the export lacks article '一文拆解英伟达 LPU', which articles.yaml lists at line {map_line}",
    )


def _map_with(tmp_path: Path, old: str, new: str) -> Path:
    mapping = tmp_path / "articles.yaml"
    text = imp.DEFAULT_MAP.read_text(encoding="utf-8")
    assert old in text
    mapping.write_text(text.replace(old, new, 1), encoding="utf-8")
    return mapping


def _line_in(path: Path, needle: str, nth: int = 1) -> int:
    lines = path.read_text(encoding="utf-8").split("\n")
    return [i for i, x in enumerate(lines) if needle in x][nth - 1] + 1


def test_two_titles_with_one_slug_are_refused(tmp_path, capsys):
    mapping = _map_with(tmp_path, "slug: hardware/gpu-rental-guide", "slug: hardware/nvidia-lpu")
    assert run(tmp_path, "--map", str(mapping)) == 2
    err = capsys.readouterr().err
    first = _line_in(mapping, "slug: hardware/nvidia-lpu")
    second = _line_in(mapping, "slug: hardware/nvidia-lpu", 2)
    assert (
        f"{mapping}:{second}: KB072 'GPU 算力租赁完全指南' maps to slug 'hardware/nvidia-lpu', "
        f"as does '一文拆解英伟达 LPU' (line {first})"
    ) in err, err
    _nothing_written(tmp_path)


BAD_MAPS = {
    # invalid YAML: an unclosed flow list
    "invalid-yaml": (
        "slug: hardware/nvidia-lpu",
        "slug: hardware: nvidia-lpu",
        "slug: hardware: nvidia-lpu",
        "KB073 articles.yaml is not valid YAML",
    ),
    "missing-slug": (
        "  slug: hardware/nvidia-lpu\n",
        "",
        '"一文拆解英伟达 LPU":',
        "KB073 '一文拆解英伟达 LPU' has no 'slug'",
    ),
    "missing-guide": (
        "  guide: hardware\n  also_in: [inference]",
        "  also_in: [inference]",
        '"一文拆解英伟达 LPU":',
        "KB073 '一文拆解英伟达 LPU' has no 'guide'",
    ),
    "entry-not-a-mapping": (
        '"一文拆解 AI PCB 产业链":\n',
        '"一文拆解 AI PCB 产业链": oops\n"x":\n',
        '"一文拆解 AI PCB 产业链": oops',
        "KB073 the entry of '一文拆解 AI PCB 产业链' must be a mapping",
    ),
    "slug-escapes-docs": (
        "slug: hardware/nvidia-lpu",
        "slug: ../../outside",
        "slug: ../../outside",
        "must be <guide>/<name>",
    ),
    "duplicate-title": (
        '"AI 模型训练优化技巧":',
        '"一文拆解英伟达 LPU":',
        '"一文拆解英伟达 LPU":',
        "KB073 '一文拆解英伟达 LPU' appears twice",
    ),
    "unknown-field": (
        "  tags: [nvidia,",
        "  tag: [nvidia,",
        "  tag: [nvidia,",
        "KB073 '一文拆解英伟达 LPU': unknown field 'tag'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_MAPS))
def test_bad_articles_yaml_fails_at_its_line(tmp_path, capsys, case):
    old, new, where, words = BAD_MAPS[case]
    mapping = _map_with(tmp_path, old, new)
    nth = 2 if case == "duplicate-title" else 1
    assert run(tmp_path, "--map", str(mapping)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {mapping}:{_line_in(mapping, where, nth)}: "), err
    assert words in err and "Traceback" not in err, err
    _nothing_written(tmp_path)


@pytest.mark.parametrize(
    "text, line, words",
    [
        ("- key: training\n  title: 训练\n- key: inference: x\n", 3, "KB073 guides.yaml is not valid YAML"),
        ("key: training\n", 1, "KB073 guides.yaml must be a list of guides"),
        ("- key: training\n  title: 训练\n- title: 推理\n", 3, "KB073 guide has no 'key'"),
        ("", 1, "KB073 guides.yaml must be a list of guides"),
    ],
)
def test_bad_guides_yaml_fails_at_its_line(tmp_path, capsys, text, line, words):
    guides = tmp_path / "guides.yaml"
    guides.write_text(text, encoding="utf-8")
    assert run(tmp_path, "--guides", str(guides)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {guides}:{line}: {words}"), err
    _nothing_written(tmp_path)


def test_damaged_manifest_fails_at_its_line(tmp_path, capsys):
    assert run(tmp_path) == 0
    manifest = tmp_path / "out" / ".import-manifest.json"
    manifest.write_text('{\n  "a.md": "x",\n  oops\n}\n', encoding="utf-8")
    before = snapshot(tmp_path / "out")
    capsys.readouterr()
    assert run(tmp_path) == 2
    err = capsys.readouterr().err
    assert f"{manifest}:3: KB074 manifest is not valid JSON" in err, err
    assert snapshot(tmp_path / "out") == before


def test_staging_is_never_inside_the_output_folder(tmp_path, monkeypatch):
    """A run killed between staging and moving leaves nothing Sphinx would read."""
    out = tmp_path / "out"
    moves = []
    real_replace = imp.os.replace

    def spy(src, dst):
        if str(dst).endswith(".md"):
            moves.append(Path(src))
        real_replace(src, dst)

    monkeypatch.setattr(imp.os, "replace", spy)
    assert run(tmp_path) == 0
    assert moves and not [m for m in moves if out in m.parents], moves[:3]
    assert not [p for p in tmp_path.iterdir() if ".import-" in p.name]


def _dead_pid() -> int:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    return int(proc.stdout)


def test_killed_run_leaves_no_staging_in_the_site_and_the_next_run_cleans_up(tmp_path):
    """kill -9 in the middle of moving pages: the leftover is outside out/, then removed."""
    out = tmp_path / "out"
    kill = (
        "import os, signal, sys; sys.path.insert(0, 'tools'); import import_export as imp\n"
        "real = os.replace\n"
        "def replace(src, dst):\n"
        "    if str(dst).endswith('.md'): os.kill(os.getpid(), signal.SIGKILL)\n"
        "    real(src, dst)\n"
        "imp.os.replace = replace\n"
        f"imp.main(['--out', {str(out)!r}])\n"
    )
    proc = subprocess.run([sys.executable, "-c", kill], cwd=ROOT, capture_output=True)
    assert proc.returncode == -9
    assert not [
        p
        for p in out.rglob("*")
        if ".import-" in str(p.relative_to(out)) and p.name != ".import-manifest.json"
    ]
    left = [p for p in tmp_path.iterdir() if p.name.startswith(".out.import-")]
    assert left and (left[0] / "index.md").exists()
    (out / ".import-old12345").mkdir()  # what the previous version left inside docs/
    (out / ".import-old12345" / "index.md").write_text("stale", encoding="utf-8")
    assert imp.main(["--out", str(out)]) == 0
    assert not [p for p in tmp_path.iterdir() if ".import-" in p.name]
    assert not (out / ".import-old12345").exists()
    assert (out / ".import-manifest.json").exists()


def test_leftover_of_a_running_import_is_kept(tmp_path):
    busy = tmp_path / f".out.import-{os.getpid()}-abcdefgh"
    dead = tmp_path / f".out.import-{_dead_pid()}-abcdefgh"
    busy.mkdir()
    dead.mkdir()
    assert run(tmp_path) == 0
    assert busy.exists() and not dead.exists()


def test_manifest_is_replaced_in_one_step(tmp_path, monkeypatch):
    """The manifest is written to a temporary file in its folder, then renamed."""
    assert run(tmp_path) == 0
    manifest = tmp_path / "out" / ".import-manifest.json"
    manifest.write_text("{}\n", encoding="utf-8")
    renamed = []
    real_replace = imp.os.replace
    monkeypatch.setattr(
        imp.os, "replace", lambda s, d: (renamed.append((Path(s), Path(d))), real_replace(s, d))
    )
    assert run(tmp_path) == 0
    assert [(s.parent, d) for s, d in renamed] == [(manifest.parent, manifest)]
    assert json.loads(manifest.read_text())
