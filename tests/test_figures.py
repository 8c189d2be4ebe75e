"""The articles' arithmetic, recomputed (data/figures.yaml, data/counted-claims.yaml).

For every derived figure: recompute it from the inputs the article states
(plus named assumptions such as the exchange rate), decide whether the
printed figure follows (within 5 %), and require that verdict to be the one
recorded. The printed claim must still be on the page; a mismatch must have
its 编者注 on the page, showing the recomputed value. Titles that promise N
items are counted against the body.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
FIGURES = yaml.safe_load((ROOT / "data" / "figures.yaml").read_text(encoding="utf-8"))
COUNTED = yaml.safe_load((ROOT / "data" / "counted-claims.yaml").read_text(encoding="utf-8"))
TOLERANCE = 0.05
_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Load, ast.Constant,
            ast.Add, ast.Sub, ast.Mult, ast.Div, ast.USub)


def evaluate(formula: str, inputs: dict) -> float:
    """Arithmetic only: + - * / and the named inputs."""
    tree = ast.parse(formula, mode="eval")
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise ValueError(f"{formula!r}: only + - * / and input names are allowed")
    return eval(compile(tree, "<formula>", "eval"), {"__builtins__": {}}, dict(inputs))  # noqa: S307


def page_text(docname: str) -> str:
    return (ROOT / "docs" / f"{docname}.md").read_text(encoding="utf-8")


def note_text(text: str, label: str) -> str:
    match = re.search(rf":::\{{editor-note\}}\n:label: {re.escape(label)}\n(.*?)\n:::", text, re.S)
    return match.group(1) if match else ""


def _plain(text: str) -> str:
    """Page text with the term roles and links of the KB removed."""
    return re.sub(r"\{term\}`([^`<]*?)(?: <[^`]*>)?`", r"\1", text)


@pytest.mark.parametrize("fig", FIGURES, ids=[f["id"] for f in FIGURES])
def test_figure_is_recomputed_and_flagged(fig):
    value = evaluate(fig["formula"], fig["inputs"])
    off = abs(value - fig["stated"]) / abs(fig["stated"])
    verdict = "ok" if off <= fig.get("tolerance", TOLERANCE) else "mismatch"
    assert verdict == fig["verdict"], (
        f"{fig['id']}: {fig['formula']} = {value:.6g}, stated {fig['stated']} "
        f"({off:.0%} off): verdict is {verdict}, recorded {fig['verdict']}")
    text = page_text(fig["page"])
    assert fig["claim"] in _plain(text), f"{fig['page']}: the original figure {fig['claim']!r} must stay"
    if verdict == "mismatch":
        note = note_text(text, fig["note"])
        assert note, f"{fig['page']}: no 编者注 labelled {fig['note']}"
        assert fig["shows"] in note, f"{fig['note']} does not show the recomputed {fig['shows']!r}"


@pytest.mark.parametrize("claim", COUNTED, ids=[c["page"] for c in COUNTED])
def test_counted_claim_matches_the_body(claim):
    text = page_text(claim["page"])
    counted = len(re.findall(claim["pattern"], text, re.M))
    verdict = "ok" if counted == claim["promised"] else "mismatch"
    assert verdict == claim["verdict"], f"{claim['page']}: {counted} items, title says {claim['promised']}"
    assert claim["claim"] in text
    if verdict == "mismatch":
        assert str(counted) in note_text(text, claim["note"])


def test_formulas_refuse_anything_but_arithmetic():
    with pytest.raises(ValueError):
        evaluate("__import__('os')", {})
    assert evaluate("a * b / c", {"a": 2, "b": 3, "c": 4}) == 1.5
