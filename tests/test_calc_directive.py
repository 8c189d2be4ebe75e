"""kb.calc.directive and kb.calc.gpus on tiny projects (tests/roots/test-ext-calc*):
the static table of the article's example in every format, the browser's
configuration and assets on calculator pages only, and each bad directive or
bad line of data/gpus.yaml as a KB08x warning at its line."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest
from ext_helpers import build_root  # noqa: F401 (fixture)
from kb.calc import formulas, gpus

pytest_plugins = ("sphinx.testing.fixtures",)

ROOT = Path(__file__).resolve().parent.parent


def configs(page: str) -> list[dict]:
    return [
        json.loads(html.unescape(m))
        for m in re.findall(r'<div class="kb-calc" data-pagefind-ignore data-kb-calc="([^"]*)">', page)
    ]


def warnings(app) -> list[tuple[int, str]]:
    """(line, code) of each KB warning, in order."""
    return [
        (int(line), code)
        for line, code in re.findall(r"index\.md:(\d+): WARNING: (KB\d+)", app.warning.getvalue())
    ]


def test_calculators_carry_the_articles_example_and_load_their_script_only_where_used(build_root):
    app = build_root("ext-calc")
    assert app.warning.getvalue() == ""
    out = Path(app.outdir)
    page = (out / "index.html").read_text(encoding="utf-8")
    found = configs(page)
    assert [c["name"] for c in found] == [
        "inference-cost",
        "rent-vs-buy",
        "training-memory",
        "inference-memory",
    ]
    # the static table: computed at build time by the formulas module
    for shown in (
        "0.00185 元/秒",
        "0.00239 元/秒",
        "0.0000478 元",
        "25.3 个月",  # 80,000 元: the article's card price, the one-off cost of its note
        "2.11 年",
        "14 GB",
        "16.1 GB",
    ):
        assert f"<p>{shown}</p>" in page, shown
    # the directive's options reach the browser and the static table
    training = found[2]
    assert training["values"] | {"zero": "3", "gpus": 8, "card": "h100-sxm"} == training["values"]
    assert {c["id"] for c in training["cards"]} == {c["id"] for c in gpus.cards(ROOT / "data")}
    assert training["inputs"][0]["label"] == "参数量" and training["text"]["fix"]
    # each calculator says what its defaults are (not every one is the article's example)
    assert [c["text"]["reset"] for c in found] == ["恢复默认值"] * 4
    for caption in (
        "（文章的例子，折旧按编者注更正，见下方说明；开启 JavaScript 后可以改输入）",
        "（文章的数字，一次性投入按编者注更正，见下方说明；开启 JavaScript 后可以改输入）",
        "（本页设定的输入，其余见下方说明；开启 JavaScript 后可以改输入）",  # training: options set
        "（文章的 7B FP16 例子，上下文长度与 batch 由编者设定，见下方说明；开启 JavaScript 后可以改输入）",
    ):
        assert caption in page, caption
    assert re.search(
        r'<script [^>]*src="_static/kb-calc/calc\.js[^"]*"[^>]*type="module"', page
    ) or re.search(r'<script [^>]*type="module"[^>]*src="_static/kb-calc/calc\.js', page)
    assert "kb-calc/calc.css" in page
    assert (out / "_static" / "kb-calc" / "formulas.js").exists()
    plain = (out / "plain.html").read_text(encoding="utf-8")
    assert "kb-calc" not in plain


def test_other_formats_get_the_static_table_only(build_root):
    app = build_root("ext-calc", buildername="text")
    assert app.warning.getvalue() == ""
    text = (Path(app.outdir) / "index.txt").read_text(encoding="utf-8")
    assert "0.00239 元/秒" in text and "25.3 个月" in text and "回本点" in text
    assert "data-kb-calc" not in text and "{" not in text


def test_latex_gets_the_static_table_too(build_root):
    app = build_root("ext-calc", buildername="latex")
    assert "KB08" not in app.warning.getvalue() and "Traceback" not in app.warning.getvalue()
    tex = next(Path(app.outdir).glob("*.tex")).read_text(encoding="utf-8")
    assert "0.00239 元/秒" in tex and "kb-calc" not in tex


def test_bad_directives_are_warnings_at_their_lines(build_root):
    app = build_root("ext-calc-bad")
    assert warnings(app) == [
        (3, "KB080"),  # unknown name
        (6, "KB080"),  # no name
        (9, "KB081"),  # unknown option
        (13, "KB081"),  # out of range
        (17, "KB081"),  # unknown card
        (21, "KB081"),  # not a ZeRO stage
        (25, "KB083"),  # the spec table takes no option
        (29, "KB081"),  # too small to show (a rent of 1e-320 元/小时)
        (34, "KB081"),  # 48 heads do not divide a hidden size of 1,600
        (39, "KB081"),  # too small to write out (1e-320: an OverflowError in the static table)
    ]
    assert "Traceback" not in app.warning.getvalue()
    assert "data-kb-calc" not in (Path(app.outdir) / "index.html").read_text(encoding="utf-8")


def test_the_spec_table_shows_sources_dense_figures_and_gaps(build_root):
    app = build_root("ext-calc")
    page = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    table = page[page.index('class="kb-gpu-specs') :]
    assert "未核实" in table  # a figure no vendor document gave
    assert "989.5 TFLOPS" in table and "稀疏 1,979 的一半" in table
    assert "（数据截至 2022-11；2026-12-01 查阅）" in table and "（未注明日期；2026-12-01 查阅）" in table
    assert 'href="https://archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html"' in table
    # a figure only a third-party page states: shown, marked, and its source says so
    assert re.search(r"1,008 GB/s †\[\d+\]", table)
    assert "† 第三方转述，未能直接读到厂商文件" in table and "所据厂商文件：" in table
    # a price the register found a source for names it; the column no longer says 无来源 of all
    assert re.search(r"\$1,600（与 2022 年 10 月上市时的建议零售价 \$1,599 相符） \[\d+\] †\[\d+\]", table)
    assert "文章中的价格（无来源）" not in table


# -- data/gpus.yaml -----------------------------------------------------------------------


def bad_data(tmp_path: Path, old: str, new: str) -> Path:
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    text = (data / "gpus.yaml").read_text(encoding="utf-8")
    assert old in text, old
    (data / "gpus.yaml").write_text(text.replace(old, new, 1), encoding="utf-8")
    return data


def line_of(data: Path, needle: str) -> int:
    """The last line holding ``needle`` (a repeated id is reported where it repeats)."""
    lines = (data / "gpus.yaml").read_text(encoding="utf-8").splitlines()
    return max(i for i, line in enumerate(lines, 1) if needle in line)


@pytest.mark.parametrize(
    ("old", "new", "code", "at", "says"),
    [
        ("- id: a100-80gb-pcie", "- id: a100-40gb-pcie", "KB082", "- id: a100-40gb-pcie\n", "already used"),
        (
            "{value: 3350, source: hpctech-h100}",
            "{value: 3350, source: nowhere}",
            "KB082",
            "nowhere",
            "not under",
        ),
        (
            "{value: 864, source: mullet-l40s}",
            "{value: 864, source: gpu-rental-guide}",
            "KB082",
            "864",
            "vendor's documents",
        ),
        (
            "{value: 989.5, source: hpctech-h100, from_sparse: 1979",
            "{value: 1979, source: hpctech-h100, from_sparse: 1979",
            "KB082",
            "value: 1979, source: hpctech-h100, from_sparse: 1979",
            "half",
        ),
        (
            "{value: 362.05, source: mullet-l40s, accumulate: unstated}",
            "{value: 362.05, source: mullet-l40s}",
            "KB082",
            "362.05",
            "accumulate",
        ),
        (
            "accumulate: fp32, accumulate_source: gigagpu-rtx-4090}",
            "accumulate: fp32}",
            "KB082",
            "165.15",
            "accumulate_source",
        ),
        (
            "accumulate: fp32, accumulate_source: gigagpu-rtx-4090}",
            "accumulate: fp32, accumulate_source: pcgamer-rtx-4090x}",
            "KB082",
            "165.15",
            "accumulate_source",
        ),
        ("{low: 8, high: 12", "{low: 12, high: 8", "KB082", "low: 12", "swap"),
        (
            "confirmed_by: pcgamer-rtx-4090",
            "confirmed_by: gpu-rental-guide",
            "KB082",
            "confirmed_by: gpu-rental-guide",
            "vendor-copy or secondary",
        ),
        (
            "memory_gb: {value: 40, source: model-name}",
            "memory_gb: {value: 48, source: model-name}",
            "KB082",
            "value: 48, source: model-name",
            "model name",
        ),
        (
            "tdp_w: {value: 700, source: hpctech-h100}",
            "tdp_w: {value: -700, source: hpctech-h100}",
            "KB043",
            "-700",
            "",
        ),
        (
            "tdp_w: {value: 350, source: mullet-l40s}",
            "tdp_w: {value: 350}",
            "KB043",
            "tdp_w: {value: 350}",
            "",
        ),
    ],
)
def test_a_bad_line_of_gpus_yaml_is_named_with_its_code(tmp_path, old, new, code, at, says):
    data = bad_data(tmp_path, old, new)
    problems = gpus.read(data).problems
    assert [(p.code, p.line) for p in problems][:1] == [(code, line_of(data, at.strip()))], problems
    assert says in problems[0].message


def test_the_real_gpus_yaml_is_clean_and_every_spec_is_from_a_vendor_document():
    loaded = gpus.read(ROOT / "data")
    assert loaded.problems == []
    kinds = {k: s["kind"] for k, s in loaded.data["sources"].items()}
    for card in loaded.data["cards"]:
        for field in gpus.SPEC_FIELDS:
            spec = card[field]
            assert ("value" in spec) != spec.get("unsourced", False), (card["id"], field)
            if "value" in spec:
                assert kinds[spec["source"]] in gpus.SPEC_KINDS, (card["id"], field)


def test_a_bad_gpus_yaml_fails_the_build_at_its_line(build_root, tmp_path):
    data = bad_data(tmp_path, "{low: 8, high: 12", "{low: 12, high: 8")
    app = build_root("ext-calc", confoverrides={"kb_data_dir": str(data)})
    line = line_of(data, "low: 12")
    assert re.search(
        rf"gpus\.yaml:{line}: WARNING: KB082 rent low 12 is above high 8", app.warning.getvalue()
    )


def test_a_card_of_two_chips_fits_what_one_chip_holds():
    from kb.calc.directive import card_label, fits

    cards = gpus.cards(ROOT / "data")
    mlu = next(c for c in cards if c["id"] == "mlu370-x8")
    assert gpus.chips_of(mlu) == 2 and "2 颗芯片各 24 GB" in card_label(mlu)
    assert mlu["model"] in fits(cards, 24) and mlu["model"] not in fits(cards, 30)
    assert "L40S" in fits(cards, 30)


def test_every_calculator_default_card_exists():
    ids = {c["id"] for c in gpus.cards(ROOT / "data")}
    for spec in formulas.specs().values():
        for item in spec["inputs"]:
            if item.get("choices") == "gpus":
                assert item["default"] in ids


def test_a_page_with_the_spec_table_is_rebuilt_when_gpus_yaml_changes(build_root, tmp_path):
    """The directives note data/gpus.yaml as a dependency: an incremental build
    writes the table again (without it, the page kept the old table)."""
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    first = build_root("ext-calc", confoverrides={"kb_data_dir": str(data)})
    page = Path(first.outdir) / "index.html"
    assert "362.05 TFLOPS" in page.read_text(encoding="utf-8")
    path = data / "gpus.yaml"
    path.write_text(
        path.read_text(encoding="utf-8").replace("value: 362.05,", "value: 362.5,"), encoding="utf-8"
    )
    second = build_root("ext-calc", confoverrides={"kb_data_dir": str(data)})
    assert "index" in second.env.found_docs and "362.5 TFLOPS" in page.read_text(encoding="utf-8")


def test_an_epub_gets_the_static_table_and_no_script(build_root):
    app = build_root("ext-calc", buildername="epub")
    assert "KB08" not in app.warning.getvalue()
    page = (Path(app.outdir) / "index.xhtml").read_text(encoding="utf-8")
    assert "<p>0.00239 元/秒</p>" in page
    assert "data-kb-calc" not in page and "calc.js" not in page
