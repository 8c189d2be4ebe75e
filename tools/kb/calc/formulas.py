"""The knowledge base's formulas, one home: the calculators in the articles, their
no-JavaScript tables and the claims register (tests/test_claims.py) compute with
these functions; ``_static/kb-calc/formulas.js`` is their port for the browser.
``tests/calc_cases.yaml`` holds the shared cases (inputs -> outputs) that
pytest checks here and ``node --test`` checks there, with one tolerance.

Each calculator is a function of a dict of named inputs (names, units, limits
and defaults: ``specs.json`` beside this file, which the pages embed for the
browser) returning a dict of named outputs:

- ``inference_cost``: 元 per second (hardware depreciation, electricity, ops),
  per request and per million tokens (推理成本拆解).
- ``rent_vs_buy``: cumulative cost of owning and of renting month by month, and
  the break-even month (GPU 算力租赁完全指南).
- ``training_memory``: GB per GPU of weights, gradients, optimizer states and
  activations. Model states follow the ZeRO paper (Rajbhandari et al. 2020,
  https://arxiv.org/abs/1910.02054, §3.1 and Fig. 1): mixed-precision Adam keeps
  2Ψ bytes of fp16 weights, 2Ψ of fp16 gradients and KΨ of optimizer states
  with K = 12 (fp32 master weights, momentum, variance); ZeRO-1 divides the
  optimizer states by the number of data-parallel GPUs N, ZeRO-2 also the
  gradients, ZeRO-3 also the weights. Activations follow Korthikanti et al. 2022,
  "Reducing Activation Recomputation in Large Transformer Models"
  (https://arxiv.org/abs/2205.05198, §4.1, eq. 1): sbh(34 + 5as/h) bytes per
  layer with 16-bit activations and no parallelism; with full recomputation only
  each layer's input, 2sbh bytes, is kept. In FP32 the 16-bit values take 4
  bytes but the dropout masks (sbh after attention, as²b after softmax, sbh
  after the MLP) stay at 1 byte: sbh(66 + 9as/h) per layer, 4sbh recomputed. Both read 2026-12-01 (the activation
  formula as restated in AWS Neuron's documentation, "Activation Memory
  Reduction", and the paper's abstract on huggingface.co/papers/2205.05198).
- ``inference_memory``: GB of weights and of the KV cache
  (2 × layers × KV heads × head dim × context × batch × bytes).

GB are 10^9 bytes, as the articles count them (7B × 2 bytes = 14GB); a card's
nominal capacity ("80 GB") is binary, 80 GiB ≈ 85.9 × 10^9 bytes: the fit checks
compare with the nominal figure and say so (kb.calc.directive.FITS_FORMULA).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kb.core.i18n import N_

GB = 1e9
HORIZON_MONTHS = 36
SPECS_FILE = Path(__file__).with_name("specs.json")


def specs() -> dict[str, Any]:
    """The calculators' inputs and outputs (labels, units, limits, defaults)."""
    return json.loads(SPECS_FILE.read_text(encoding="utf-8"))


# -- scalar formulas (the claims register calls these too) ---------------------------


def depreciation_per_second(price_cny: float, years: float, days: float, hours: float) -> float:
    """元 per second of use: the price spread over the seconds of use."""
    return price_cny / (years * days * hours * 3600)


def electricity_per_second(watts: float, kwh_price: float) -> float:
    """元 per second: watts / 1000 kW × 元/kWh / 3600 s."""
    return watts / 1000 * kwh_price / 3600


def break_even_months(
    purchase: float, upkeep_per_year: float, rent_per_hour: float, hours_per_month: float, resale: float = 0
) -> float | None:
    """Months until owning has cost no more than renting; None if never (renting
    costs no more per month than owning's upkeep)."""
    saving = rent_per_hour * hours_per_month - upkeep_per_year / 12
    if saving <= 0:
        return None
    return max(purchase - resale, 0) / saving


def weights_gb(params_billion: float, bytes_per_param: float) -> float:
    """GB of weights: parameters × bytes per parameter."""
    return params_billion * 1e9 * bytes_per_param / GB


def kv_cache_gb(
    layers: int, kv_heads: int, head_dim: int, context: int, batch: int, bytes_per_value: float
) -> float:
    """GB of KV cache: K and V for every layer, KV head, position and sequence."""
    return 2 * layers * kv_heads * head_dim * context * batch * bytes_per_value / GB


def activations_gb(
    seq: int, micro_batch: int, hidden: int, layers: int, heads: int, recompute: bool, fp32: bool = False
) -> float:
    """GB of activations kept for the backward pass (Korthikanti et al. 2022, eq. 1;
    full recomputation keeps 2sbh per layer). In FP32 the 16-bit values double and
    the dropout masks (2sbh + as²b of 1 byte) do not: sbh(66 + 9as/h), or 4sbh."""
    sbh = seq * micro_batch * hidden
    if recompute:
        per_layer = (4 if fp32 else 2) * sbh
    else:
        per_layer = sbh * ((66 + 9 * heads * seq / hidden) if fp32 else (34 + 5 * heads * seq / hidden))
    return per_layer * layers / GB


# -- the four calculators ---------------------------------------------------------------


def inference_cost(v: dict[str, float]) -> dict[str, Any]:
    gpus = v["gpus"]
    depreciation = (
        depreciation_per_second(v["gpu_price"] * v["usd_cny"], v["years"], v["days"], v["hours"]) * gpus
    )
    electricity = electricity_per_second(v["watts"], v["kwh_price"]) * gpus
    ops = depreciation * v["ops_share"] / 100
    per_second = depreciation + electricity + ops
    per_request = per_second / v["qps"]
    return {
        "depreciation": depreciation,
        "electricity": electricity,
        "ops": ops,
        "per_second": per_second,
        "per_request": per_request,
        "per_million_tokens": per_request / v["tokens"] * 1e6,
    }


def rent_vs_buy(v: dict[str, float]) -> dict[str, Any]:
    rent_month = v["rent"] * v["hours"]
    own_month = v["upkeep"] / 12
    net = max(v["purchase"] - v["resale"], 0)  # 0, not -5.6e-17, when they are equal
    months = range(HORIZON_MONTHS + 1)
    even = break_even_months(v["purchase"], v["upkeep"], v["rent"], v["hours"], v["resale"])
    return {
        "rent_per_month": rent_month,
        "own_per_month": own_month,
        "break_even_months": even,
        "break_even_years": None if even is None else even / 12,
        "own_36": net + own_month * HORIZON_MONTHS,
        "rent_36": rent_month * HORIZON_MONTHS,
        "own_curve": [net + own_month * m for m in months],
        "rent_curve": [rent_month * m for m in months],
    }


# bytes per parameter: (weights, gradients, optimizer states K) by precision and optimizer
MODEL_STATE_BYTES = {
    ("mixed", "adam"): (2, 2, 12),
    ("mixed", "sgd-momentum"): (2, 2, 8),  # fp32 master weights + momentum
    ("fp32", "adam"): (4, 4, 8),  # momentum + variance; the weights are the master copy
    ("fp32", "sgd-momentum"): (4, 4, 4),
}


def training_memory(v: dict[str, Any]) -> dict[str, Any]:
    mixed = "mixed" if v["precision"] in ("fp16-amp", "bf16-amp") else "fp32"
    w, g, k = MODEL_STATE_BYTES[mixed, v["optimizer"]]
    stage, n = int(v["zero"]), v["gpus"]
    weights = weights_gb(v["params"], w) / (n if stage >= 3 else 1)
    gradients = weights_gb(v["params"], g) / (n if stage >= 2 else 1)
    optimizer = weights_gb(v["params"], k) / (n if stage >= 1 else 1)
    activations = activations_gb(
        v["seq"],
        v["micro_batch"],
        v["hidden"],
        v["layers"],
        v["heads"],
        v["checkpointing"] == "full",
        mixed == "fp32",
    )
    return {
        "weights": weights,
        "gradients": gradients,
        "optimizer": optimizer,
        "activations": activations,
        "total": weights + gradients + optimizer + activations,
    }


WEIGHT_BYTES = {"fp16": 2, "int8": 1, "int4": 0.5}
KV_BYTES = {"fp16": 2, "int8": 1}


def inference_memory(v: dict[str, Any]) -> dict[str, Any]:
    weights = weights_gb(v["params"], WEIGHT_BYTES[v["weight_precision"]])
    kv = kv_cache_gb(
        v["layers"], v["kv_heads"], v["head_dim"], v["context"], v["batch"], KV_BYTES[v["kv_precision"]]
    )
    return {"weights": weights, "kv_cache": kv, "total": weights + kv}


def fit(memory_gb: float | None, chips: int, total_gb: float) -> str | None:
    """Whether total_gb fits one device of a card: "yes", "no", or None when the
    card's memory has no source. A card of several chips (the MLU370-X8: two
    chips, 24 GB each) is as many devices, each with its share of the memory, so
    the total is compared with one chip's memory, not the card's."""
    if memory_gb is None:
        return None
    return "yes" if total_gb <= memory_gb / chips else "no"


CALCULATORS = {
    "inference-cost": inference_cost,
    "rent-vs-buy": rent_vs_buy,
    "training-memory": training_memory,
    "inference-memory": inference_memory,
}


# -- inputs: what a reader (or a directive option, or a URL) typed ----------------------


# decimal or exponent notation only: not "inf", "nan", "1_000" or "0x10" (formulas.js: the same)
NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)(e[+-]?[0-9]+)?", re.IGNORECASE)
# what a Chinese input method types in full width: digits, point, signs (formulas.js: the same)
FULL_WIDTH = str.maketrans("０１２３４５６７８９．＋－ｅＥ", "0123456789.+-eE")


# What a refused input is told, by kind ("{limit}": the limit, formatted):
# the catalog's source strings (kb.core.i18n). formulas.js has the same table.
MESSAGES = {
    "choose": N_("请从列表中选择"),
    "empty": N_("请填写数值"),
    "number": N_("请输入数字"),
    "integer": N_("请输入整数"),
    "min": N_("不能小于 {limit}"),
    "max": N_("不能大于 {limit}"),
    "range": N_("结果超出了能显示的范围：请检查输入的数值是否合理"),
    "tiny": N_("太小了：请输入 0 或不小于 {limit} 的数"),
    "divides": N_("要能整除{other}（{value}）"),
    "at_most": N_("不能大于{other}的 {value}"),
}


def untranslated(kind: str, **values: str) -> str:
    return MESSAGES[kind].format(**values)


def parse_input(
    spec: dict, raw: Any, choices: list[str] | None = None, say: Callable[..., str] = untranslated
) -> tuple[Any, str | None]:
    """(value, None) or (None, message): one rule for the page and the browser
    (formulas.js parseInput): a number within the limits, an integer where asked,
    or one of the choices. ``say(kind, **values)`` words the message (the
    page's language: kb.calc.directive passes its translation)."""
    if "choices" in spec:
        keys = choices if choices is not None else list(spec["choices"])
        text = str(raw).strip()
        return (text, None) if text in keys else (None, say("choose"))
    text = str(raw).strip().translate(FULL_WIDTH).replace(",", "").replace("，", "")
    if text == "":
        return None, say("empty")
    if not NUMBER.fullmatch(text):
        return None, say("number")
    value = float(text)
    if not math.isfinite(value):
        return None, say("number")
    if spec.get("integer") and value != int(value):
        return None, say("integer")
    if value < spec["min"]:
        return None, say("min", limit=format_number(spec["min"]))
    if value > spec["max"]:
        return None, say("max", limit=format_number(spec["max"]))
    if value != 0 and abs(value) < SHOWN_MIN:  # 1e-320 cannot be written out (nor shown)
        return None, say("tiny", limit=format_number(SHOWN_MIN))
    return (int(value) if spec.get("integer") else value), None


def relation_problems(
    spec: dict, values: dict[str, Any], say: Callable[..., str] = untranslated
) -> dict[str, str]:
    """The inputs that each pass alone but not together (formulas.js
    relationProblems), as specs.json names them on the input: ``divides`` (a
    model's attention heads split its hidden size, so the heads must divide it)
    and ``at_most`` (a card's resale value is no more than its price).
    {input name: message}."""
    labels = {item["name"]: item["label"] for item in spec["inputs"]}
    problems = {}
    for item in spec["inputs"]:
        name = item["name"]
        for kind, refused in (
            ("divides", lambda mine, other: other % mine != 0),
            ("at_most", lambda mine, other: mine > other),
        ):
            other = item.get(kind)
            if other and name in values and other in values and refused(values[name], values[other]):
                problems[name] = say(kind, other=labels[other], value=format_number(values[other]))
    return problems


def defaults(name: str) -> dict[str, Any]:
    return {i["name"]: i["default"] for i in specs()[name]["inputs"]}


def compute(name: str, values: dict[str, Any]) -> dict[str, Any]:
    return CALCULATORS[name](values)


# -- numbers as readers read them ---------------------------------------------------------

MONEY = ("元", "美元")
# the amounts that round to 1 万 (a whole 元) and to 1 亿 (four significant digits of 万)
WAN_FROM = 9999.5
YI_FROM = 99995000


def _at_least_one(x: float) -> float:
    """From the thresholds above the amount rounds to 1 or more of its unit: 0.99995
    (which floating point may hold as 0.999949…) is 1."""
    return math.copysign(1, x) if abs(x) < 1 else x


def _fixed(value: float, decimals: int) -> str:
    """``value`` rounded half away from zero to ``decimals`` places, by integer
    arithmetic (the same steps as formulas.js, so both print the same digits)."""
    n = math.floor(abs(value) * 10**decimals + 0.5)
    digits = str(n).rjust(decimals + 1, "0")
    text = digits[: len(digits) - decimals] + ("." + digits[len(digits) - decimals :] if decimals else "")
    return ("-" if value < 0 and n else "") + text


def _significant(value: float, digits: int = 3) -> str:
    """``digits`` significant digits, in plain notation, without trailing zeros."""
    magnitude = math.floor(math.log10(abs(value)))
    text = _fixed(value, max(digits - 1 - magnitude, 0))
    return text.rstrip("0").rstrip(".") if "." in text else text


def _grouped(value: float) -> str:
    text = _fixed(value, 0)
    sign, body = ("-", text[1:]) if text.startswith("-") else ("", text)
    groups = []
    while len(body) > 3:
        body, groups = body[:-3], [body[-3:], *groups]
    return sign + ",".join([body, *groups])


# Results beyond these are not shown (as "—", with the message "range"): they
# come only from absurd inputs (a rent of 1e-320 元/小时), and the digits
# would be noise, or "Infinity".
SHOWN_MIN, SHOWN_MAX = 1e-9, 1e15


def showable(value: float) -> bool:
    return math.isfinite(value) and (value == 0 or SHOWN_MIN <= abs(value) < SHOWN_MAX)


def format_input(value: float, unit: str = "") -> str:
    """An input as given (the static table of a page without JavaScript): whole
    numbers with thousands separators (82,225 元, not 8.223 万元), others to
    six significant digits."""
    whole = value == int(value) and abs(value) < SHOWN_MAX
    text = _grouped(value) if whole else _significant(value, 6)
    return f"{text} {unit}" if unit else text


def out_of_range(result: dict[str, Any]) -> list[str]:
    """The names of a result's numbers (or lists of numbers) that cannot be
    shown (formulas.js outOfRange)."""

    def numbers(value: Any) -> list[float]:
        if isinstance(value, bool) or value is None:
            return []
        if isinstance(value, (int, float)):
            return [value]
        return [x for item in value for x in numbers(item)] if isinstance(value, (list, tuple)) else []

    return sorted(name for name, value in result.items() if not all(showable(x) for x in numbers(value)))


def format_number(value: float | None, unit: str = "") -> str:
    """A number as the page shows it (formulas.js formatNumber does the same):
    amounts of money that round to 10,000 or more in 万 or 亿 (9,999.5 元 is
    "1 万元", not "10,000 元"); from 100 a whole number with thousands
    separators; below, three significant digits."""
    if value is None or not showable(value):
        return "—"
    a = abs(value)
    suffix = ""
    if a == 0:
        text = "0"
    elif unit.startswith(MONEY) and a >= YI_FROM:
        text, suffix = _significant(_at_least_one(value / 1e8), 4), " 亿"
    elif unit.startswith(MONEY) and a >= WAN_FROM:
        text, suffix = _significant(_at_least_one(value / 1e4), 4), " 万"
    elif a >= 100:
        text = _grouped(value)
    else:
        text = _significant(value)
    if not unit:
        return text + suffix
    return f"{text}{suffix}{unit}" if suffix else f"{text} {unit}"
