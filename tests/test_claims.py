"""The claims register (data/claims/<guide>/<slug>.yaml) keeps every article honest.

- Every number-bearing claim of an article (kb_claims.claim_units: a table
  cell or sentence with a number and a unit, a currency, a percentage …) is
  covered by a register entry, and every entry is still on its page.
- Each verdict has its evidence: a source for ``verified``; the 编者注 on
  the page for ``corrected`` and ``unsourced``; for derived figures, the
  recomputation (formula over the inputs the article states, within 5 %),
  whose result decides between ``derived`` and ``corrected`` — a corrected
  figure's note shows the recomputed value; titles that promise N items are
  counted against the body.
- The same claim on several pages (one ``topic``) has one verdict, and every
  page carries the note or links to it.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest
from kb.calc import formulas as kb_formulas
from kb.editorial import claims as kb_claims
from one_build import register
from test_site import articles

ROOT = Path(__file__).resolve().parent.parent
REGISTERS, PROBLEMS = kb_claims.load(ROOT / "data")
TOLERANCE = 0.05
_ALLOWED = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.Name,
    ast.Load,
    ast.Constant,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.USub,
    ast.Call,
    ast.keyword,
)
# The formulas of the calculators (kb.calc.formulas) a register entry may call, so
# that the articles' corrected figures and the calculators compute the same way.
FORMULAS = {
    name: getattr(kb_formulas, name)
    for name in (
        "depreciation_per_second",
        "electricity_per_second",
        "break_even_months",
        "weights_gb",
        "kv_cache_gb",
    )
}
ENTRIES = [(doc, e) for doc, entries in sorted(REGISTERS.items()) for e in entries]


def page_text(doc: str) -> str:
    return (ROOT / "docs" / f"{doc}.md").read_text(encoding="utf-8")


def note_text(text: str, label: str) -> str:
    """The body of the 编者注 labelled ``label`` ("" if the page has none)."""
    match = re.search(
        rf"^(:{{3,}})\{{editor-note\}}\n:label: {re.escape(label)}\n(.*?)\n\1\s*$", text, re.S | re.M
    )
    return match.group(2) if match else ""


# A register's formula is a pull request's text that the tests run: short,
# and of numbers only ("x" * 3000000000 would ask for 3 GB; review 19)
MAX_FORMULA = 200


def evaluate(formula: str, inputs: dict) -> float:
    """Arithmetic only: + - * /, numbers, the named inputs and calls of FORMULAS."""
    if len(formula) > MAX_FORMULA:
        raise ValueError(f"{formula[:40]!r}…: a formula of more than {MAX_FORMULA} characters")
    tree = ast.parse(formula, mode="eval")
    for node in ast.walk(tree):
        if (
            not isinstance(node, _ALLOWED)
            or (
                isinstance(node, ast.Call)
                and not (isinstance(node.func, ast.Name) and node.func.id in FORMULAS)
            )
            or (isinstance(node, ast.Constant) and type(node.value) not in (int, float))
        ):
            raise ValueError(
                f"{formula!r}: only + - * /, input names and the formulas {', '.join(FORMULAS)} are allowed"
            )
    return eval(compile(tree, "<formula>", "eval"), {"__builtins__": {}, **FORMULAS}, dict(inputs))  # noqa: S307


def where(entry: dict) -> str:
    return f"{Path(entry['file']).relative_to(ROOT)}:{entry['line']}"


def test_the_registers_follow_their_schema():
    assert PROBLEMS == [], "\n".join(map(str, PROBLEMS))
    assert set(REGISTERS) <= set(articles()), set(REGISTERS) - set(articles())


@pytest.mark.parametrize("doc", articles())
def test_every_claim_of_the_page_is_registered(doc):
    missing = kb_claims.uncovered(page_text(doc), REGISTERS.get(doc, []))
    assert missing == [], (
        f"{len(missing)} claim(s) not in data/claims/{doc}.yaml (register each, or exclude it "
        "with a reason):\n" + "\n".join(f"docs/{doc}.md:{line}: {unit}" for line, unit in missing)
    )


@pytest.mark.parametrize("doc", sorted(REGISTERS))
def test_every_registered_claim_is_still_on_its_page(doc):
    text = page_text(doc)
    gone = [where(e) for e in REGISTERS[doc] if not kb_claims.on_page(text, e["claim"])]
    assert gone == [], f"claims no longer on docs/{doc}.md: {gone}"


@pytest.mark.parametrize(
    ("doc", "entry"),
    [(d, e) for d, e in ENTRIES if e.get("note")],
    ids=lambda v: v["claim"][:30] if isinstance(v, dict) else v,
)
def test_a_corrected_or_unsourced_claim_has_its_note_on_the_page(doc, entry):
    note = note_text(page_text(doc), entry["note"])
    assert note, f"{where(entry)}: docs/{doc}.md has no 编者注 labelled {entry['note']}"
    if entry["verdict"] == "unsourced":
        assert ":kind: unsourced" in note or "来源" in note, (
            f"{where(entry)}: the note must say no source was found"
        )


@pytest.mark.parametrize(
    ("doc", "entry"),
    [(d, e) for d, e in ENTRIES if "formula" in e],
    ids=lambda v: v.get("id", "") if isinstance(v, dict) else v,
)
def test_a_derived_figure_is_recomputed_and_flagged(doc, entry):
    value = evaluate(entry["formula"], entry["inputs"])
    off = abs(value - entry["stated"]) / abs(entry["stated"])
    verdict = "derived" if off <= entry.get("tolerance", TOLERANCE) else "corrected"
    assert verdict == entry["verdict"], (
        f"{where(entry)}: {entry['formula']} = {value:.6g}, stated {entry['stated']} "
        f"({off:.0%} off): the verdict is {verdict}, the register says {entry['verdict']}"
    )
    if verdict == "corrected":
        assert entry["shows"] in note_text(page_text(doc), entry["note"]), (
            f"{where(entry)}: {entry['note']} does not show the recomputed {entry['shows']!r}"
        )


@pytest.mark.parametrize(
    ("doc", "entry"),
    [(d, e) for d, e in ENTRIES if "pattern" in e],
    ids=lambda v: v.get("id", "") if isinstance(v, dict) else v,
)
def test_a_counted_claim_matches_the_body(doc, entry):
    text = page_text(doc)
    counted = len(re.findall(entry["pattern"], text, re.M))
    verdict = "derived" if counted == entry["promised"] else "corrected"
    assert verdict == entry["verdict"], f"{where(entry)}: {counted} items, the title says {entry['promised']}"
    if verdict == "corrected":
        assert str(counted) in note_text(text, entry["note"])


def test_one_claim_on_several_pages_has_one_verdict_and_every_page_its_note():
    topics: dict[str, list[tuple[str, dict]]] = {}
    for doc, entry in ENTRIES:
        if entry.get("topic"):
            topics.setdefault(entry["topic"], []).append((doc, entry))
    problems = []
    for topic, found in sorted(topics.items()):
        verdicts = {e["verdict"] for _, e in found}
        if len(verdicts) > 1:
            problems.append(
                f"topic {topic}: verdicts differ: "
                + ", ".join(f"{where(e)} {e['verdict']}" for _, e in found)
            )
        labels = {e["note"] for _, e in found if e.get("note")}
        for doc, entry in found:
            text = page_text(doc)
            if verdicts & {"corrected", "unsourced"} and not any(
                note_text(text, label) or re.search(rf"<{re.escape(label)}>`", text) for label in labels
            ):
                problems.append(
                    f"{where(entry)}: docs/{doc}.md repeats topic {topic} but neither "
                    f"carries nor links its note ({', '.join(sorted(labels))})"
                )
    assert problems == [], "\n".join(problems)


# -- the test can fail -----------------------------------------------------------------


def test_an_injected_claim_is_caught_at_its_line():
    doc = "training/llm-training-10-tips"
    text = page_text(doc) + "\n\n新版驱动让吞吐提升 37%，显存占用降到 11GB。\n"
    missing = kb_claims.uncovered(text, REGISTERS.get(doc, []))
    line = text.split("\n").index("新版驱动让吞吐提升 37%，显存占用降到 11GB。") + 1
    assert (line, "新版驱动让吞吐提升 37%，显存占用降到 11GB。") in missing


def test_claim_units_skip_code_notes_and_front_matter():
    text = (
        "---\ntitle: 10 个技巧\n---\n\n# 标题\n\n```python\nx = 50  # 50%\n```\n\n"
        ":::{editor-note}\n:label: n\n**改为 30%。**\n:::\n\n| 卡 | 价格 |\n|---|---|\n| A | ¥3/小时 |\n"
    )
    assert kb_claims.claim_units(text) == [(18, "¥3/小时")]


def test_formulas_refuse_anything_but_arithmetic():
    with pytest.raises(ValueError):
        evaluate("__import__('os')", {})
    with pytest.raises(ValueError):
        evaluate("(lambda: 1)()", {})
    assert evaluate("a * b / c", {"a": 2, "b": 3, "c": 4}) == 1.5
    # review 19: a string repeated 3e9 times, a power, a formula as long as a page
    for formula in ['"x" * 3000000000', "a ** 99999999", "a" + " * a" * 100]:
        with pytest.raises(ValueError):
            evaluate(formula, {"a": 2})
    assert evaluate("break_even_months(p, 0, 1, 10)", {"p": 50}) == 5


def test_the_calculators_formulas_give_the_registers_corrected_figures():
    """The register calls kb.calc.formulas for the figures the calculators show."""
    calls = {e["id"]: e["formula"] for _, e in ENTRIES if "formula" in e and "(" in e["formula"].split()[0]}
    assert {"inference-depreciation", "inference-electricity", "rental-crossover-months"} <= set(calls), calls


# -- what readers see ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("as_of", "stale"),
    [
        ("2025-11", True),
        ("2025-12", False),
        ("2026", False),
        ("2025", False),
        ("2024", True),
        ("2025-11-30", True),
    ],
)
def test_data_older_than_twelve_months_is_stale(as_of, stale):
    assert kb_claims.is_stale(as_of, __import__("datetime").date(2026, 12, 1)) is stale


def with_schemas(data_dir):
    """A data folder is checked against its own schemas (kb.core.data.schema_path)."""
    shutil.copytree(ROOT / "data" / "schemas", data_dir / "schemas")


def test_the_stale_data_report_names_file_line_and_page(tmp_path, capsys):
    import stale_data

    folder = tmp_path / "data" / "claims" / "hardware"
    folder.mkdir(parents=True)
    with_schemas(tmp_path / "data")
    (folder / "gpu-rental-guide.yaml").write_text(
        "- claim: '| RTX 4090 | 24GB | ¥3-5 |'\n  kind: price\n  verdict: unsourced\n"
        "  note: note-x\n  as_of: 2024-06\n",
        encoding="utf-8",
    )
    assert stale_data.main(["--data", str(tmp_path / "data"), "--today", "2026-12-01"]) == 1
    out = capsys.readouterr().out
    assert "data/claims/hardware/gpu-rental-guide.yaml:1: docs/hardware/gpu-rental-guide.md" in out
    assert stale_data.main(["--data", str(tmp_path / "data"), "--today", "2025-01-01"]) == 0


def _dated_price(repo, at) -> None:
    page = repo / "docs/hardware/gpu-rental-guide.md"
    row = next(
        line for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("| RTX 4090")
    )
    register = repo / "data/claims/hardware/gpu-rental-guide.yaml"
    register.write_text(
        register.read_text(encoding="utf-8")
        + (
            f"- claim: {row!r}\n  kind: price\n  verdict: verified\n  as_of: 2024-06\n"
            "  source: [{title: 某云厂商价格页, url: 'https://example.com/prices', accessed: 2026-12-01}]\n"
        ),
        encoding="utf-8",
    )


# a valid contribution: built with the others of the group "valid" (tests/one_build.py)
register("valid", "claims", {"dated-price": _dated_price})


def test_an_article_shows_its_sources_and_the_date_of_its_table_data(one_build):
    r = one_build("valid")["claims/dated-price"]
    proc = r.run.proc
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    html = (r.repo / "_build/html/hardware/gpu-rental-guide.html").read_text(encoding="utf-8")
    sources = html[html.index('id="kb-sources"') :]
    assert "参考来源" in sources and 'href="https://example.com/prices"' in sources
    assert "2026-12-01 查阅" in sources
    assert sources.index("kb-sources") < sources.index("kb-article-footer")
    assert "数据截至 2024 年 6 月" in html and "已超过 12 个月" in html


def test_undated_price_tables_say_so_and_are_not_called_fresh(site):
    """An undated register entry (no date in the article, no source) is shown as
    such under its table, with the advice to check; never as a guessed date."""
    html = (site / "hardware/gpu-rental-guide.html").read_text(encoding="utf-8")
    notices = re.findall(r'<p class="kb-as-of kb-stale">(.*?)</p>', html, re.S)
    assert len(notices) >= 2, notices  # the consumer and the professional price tables
    for notice in notices:
        assert "原文未注明日期" in notice and "使用前请核对最新来源" in notice, notice
        assert "数据截至" not in notice, notice


def test_as_of_is_a_date_or_undated(tmp_path):
    folder = tmp_path / "claims" / "hardware"
    folder.mkdir(parents=True)
    with_schemas(tmp_path)
    (folder / "x.yaml").write_text(
        "- claim: '| A | ¥3 |'\n  kind: price\n  verdict: unsourced\n  note: note-x\n  as_of: 最近\n",
        encoding="utf-8",
    )
    _, problems = kb_claims.load(tmp_path)
    assert [p.line for p in problems] == [5], problems
    assert kb_claims.is_stale("undated", __import__("datetime").date(2030, 1, 1)) is False


def test_the_sources_list_holds_what_the_notes_cite_with_their_date(site):
    """Every web source an article's 编者注 links to is in its 参考来源, dated."""
    import html as html_lib

    checked = 0
    for doc in articles():
        text = page_text(doc)
        cited = {
            url
            for match in re.finditer(r"^(:{3,})\{editor-note\}\n(.*?)^\1\s*$", text, re.S | re.M)
            for url in re.findall(r"\]\((https?://[^)\s]+)\)|<(https?://[^>\s]+)>", match.group(2))
            for url in url
            if url
        }
        if not cited:
            continue
        page = (site / f"{doc}.html").read_text(encoding="utf-8")
        sources = page[page.index('id="kb-sources"') :]
        listed = {html_lib.unescape(u) for u in re.findall(r'href="([^"]+)"', sources)}
        assert cited <= listed, (doc, sorted(cited - listed)[:5])
        assert re.search(r"（\d{4}-\d{2}-\d{2} 查阅）", sources), doc
        checked += len(cited)
    assert checked > 20  # the notes cite their sources


def test_a_claim_is_found_in_a_table_row_as_the_whole_row_or_as_text_of_a_cell():
    """What dates a table (its 数据截至 line): a claim written as a printed row
    (``| … | … |``) matches a row holding each of its cells; any other claim
    matches a row with a cell that contains it. Both read as a reader does
    (no emphasis marks, one space)."""
    _in_row = kb_claims._in_row
    cells = ["H100 SXM", "80 GB", "约 2.5 元/小时"]
    assert _in_row("| H100 SXM | **80 GB** |", cells)
    assert not _in_row("| H100 SXM | 94 GB |", cells)
    assert _in_row("2.5  元/小时", cells)
    assert _in_row("**2.5** 元", cells)
    assert not _in_row("3.5 元/小时", cells)
