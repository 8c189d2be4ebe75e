"""The calculators' formulas (tools/kb/calc/formulas.py) against the shared cases
of tests/calc_cases.yaml; tests/js/calc.test.mjs checks the same cases against
the browser's port (_static/kb-calc/formulas.js), run here too."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from kb.calc import formulas
from node_sandbox import SITE_SCRIPT_READS, run_node

ROOT = Path(__file__).resolve().parent.parent
# JSON, which is YAML too: Node reads the same file without a YAML library
CASES = json.loads((ROOT / "tests" / "calc_cases.yaml").read_text(encoding="utf-8"))
TOLERANCE = CASES["tolerance"]


def close(got, want) -> bool:
    if want is None or got is None:
        return got is want
    return math.isclose(got, want, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


@pytest.mark.parametrize("case", CASES["compute"], ids=lambda c: c["case"])
def test_formulas_give_the_worked_out_values(case):
    values = {**formulas.defaults(case["calculator"]), **case["inputs"]}
    got = formulas.compute(case["calculator"], values)
    wrong = {k: (got[k], want) for k, want in case["expect"].items() if not close(got[k], want)}
    assert wrong == {}, f"{case['case']}: {wrong} ({case['why']})"


@pytest.mark.parametrize(("value", "unit", "shown"), CASES["format"])
def test_numbers_are_shown_with_their_unit_in_chinese_style(value, unit, shown):
    assert formulas.format_number(value, unit) == shown


@pytest.mark.parametrize(("low", "high", "integer", "raw", "value", "message"), CASES["parse"])
def test_what_a_reader_types_is_a_number_in_range_or_a_message(low, high, integer, raw, value, message):
    spec = {"min": low, "max": high, "integer": integer}
    assert formulas.parse_input(spec, raw) == (value, message)


@pytest.mark.parametrize(("memory", "chips", "total", "verdict"), CASES["fit"])
def test_a_total_fits_one_chips_memory(memory, chips, total, verdict):
    assert formulas.fit(memory, chips, total) == verdict


def test_every_calculator_has_cases_and_every_output_is_checked():
    specs = formulas.specs()
    assert set(specs) == set(formulas.CALCULATORS)
    for name, spec in specs.items():
        checked = {k for c in CASES["compute"] if c["calculator"] == name for k in c["expect"]}
        assert {o["name"] for o in spec["outputs"]} - {"own_36", "rent_36"} <= checked | {
            "rent_per_month",
            "own_per_month",
        }, name


def test_the_defaults_are_valid_inputs():
    for name, spec in formulas.specs().items():
        for item in spec["inputs"]:
            if item.get("choices") == "gpus":
                continue
            value, message = formulas.parse_input(item, item["default"])
            assert message is None, (name, item["name"], message)


def test_the_browser_port_passes_the_same_cases():
    """node --test on tests/js/calc.test.mjs: the same file of cases, the same tolerance."""
    proc = run_node(["tests/js/calc.test.mjs"], SITE_SCRIPT_READS)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    passed = int(re.search(r"^# pass (\d+)", proc.stdout, re.M).group(1))
    assert passed >= len(CASES["compute"]) + len(CASES["format"]) + len(CASES["parse"]) + len(CASES["fit"])


def test_the_browser_words_a_refused_input_as_the_catalog_does():
    """formulas.js has formulas.py's table of messages (the catalog's source
    strings); the page hands it their translations (text.messages), which a
    refused input then shows."""
    proc = run_node(
        [
            "--input-type=module",
            "-e",
            'import("./_static/kb-calc/formulas.js").then((m) => {'
            " const say = m.wording({ ...m.MESSAGES, min: 'at least {limit}' });"
            " console.log(JSON.stringify([m.MESSAGES, m.parseInput({ min: 1, max: 9 }, '0', null, say)[1]])); })",
        ],
        SITE_SCRIPT_READS,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    messages, refused = json.loads(proc.stdout)
    assert messages == formulas.MESSAGES
    assert refused == "at least 1"
    assert formulas.parse_input({"min": 1, "max": 9}, "0", say=lambda kind, **v: f"{kind} {v}") == (
        None,
        "min {'limit': '1'}",
    )


# The calculators start from the articles' corrected figures: each pair is a
# claims register entry (its `shows`, the value the 编者注 gives) and the
# calculator output that reproduces it with the article's inputs.
REGISTER_FIGURES = [
    ("inference/inference-cost-breakdown", "inference-depreciation", "inference-cost", {}, "depreciation"),
    ("inference/inference-cost-breakdown", "inference-ops", "inference-cost", {}, "ops"),
    ("inference/inference-cost-breakdown", "inference-total-per-second", "inference-cost", {}, "per_second"),
    ("inference/inference-cost-breakdown", "inference-cost-7b", "inference-cost", {}, "per_request"),
    (
        "inference/inference-cost-breakdown",
        "inference-cost-13b",
        "inference-cost",
        {"qps": 30},
        "per_request",
    ),
    (
        "inference/inference-cost-breakdown",
        "inference-cost-70b",
        "inference-cost",
        {"gpus": 2, "qps": 8},
        "per_request",
    ),
    ("hardware/gpu-rental-guide", "rental-crossover-months", "rent-vs-buy", {}, "break_even_months"),
]


@pytest.mark.parametrize(("doc", "claim", "name", "inputs", "output"), REGISTER_FIGURES, ids=lambda v: str(v))
def test_the_calculators_defaults_reproduce_the_registers_corrected_figures(doc, claim, name, inputs, output):
    from kb.editorial import claims as kb_claims

    registers, _ = kb_claims.load(ROOT / "data")
    entry = next(e for e in registers[doc] if e.get("id") == claim)
    shows = float(re.search(r"[\d.]+", entry["shows"].replace(",", "")).group())
    got = formulas.compute(name, {**formulas.defaults(name), **inputs})[output]
    assert math.isclose(got, shows, rel_tol=0.05), (claim, entry["shows"], got)


def test_inputs_are_shown_as_given():
    """The static table of a page without JavaScript shows the inputs a
    reader would type: 82,225 元 (the note's figure), not 8.223 万元."""
    assert formulas.format_input(82225, "元") == "82,225 元"
    assert formulas.format_input(0.6, "元/kWh") == "0.6 元/kWh"
    assert formulas.format_input(7.2, "") == "7.2"
    assert formulas.format_input(1e9, "") == "1,000,000,000"


@pytest.mark.parametrize(("name", "changed", "refused"), CASES["relations"])
def test_inputs_refused_together(name, changed, refused):
    spec = formulas.specs()[name]
    assert formulas.relation_problems(spec, {**formulas.defaults(name), **changed}) == refused
