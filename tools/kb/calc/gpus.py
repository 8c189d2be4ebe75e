"""data/gpus.yaml: GPU and accelerator specs, read once and checked.

The file's shape is checked against ``data/schemas/gpus.schema.json`` by
kb.core.data (KB040–KB043); this module checks what a schema cannot, each as
``data/gpus.yaml:LINE: KB082 …`` with what to do:

- card ids are unique, and every ``source`` names an entry of ``sources``;
- specs come from vendor documents (kinds ``vendor``, ``vendor-copy``,
  ``model-name``) or from a third-party page that states them (``secondary``,
  which the table marks), never from an article; prices and rents from an
  article, and a price's ``confirmed_by`` names a source that is not one;
- a dense figure derived from a sparse one is half of it; an FP16 figure
  says its accumulate basis, and an ``fp32`` or ``fp16`` basis names the source
  that states it (``accumulate_source``); a capacity taken from the model name
  is in it; a card of several chips (``chips``) names the source that says so;
- a rent's low end is not above its high end.

Cards with a problem are left out (the others are used), so ``-W`` fails the
build with every problem listed, never with a traceback. The calculators
(kb.calc.directive) and the comparison table read :func:`cards`.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from kb.core import data as kb_data

SCHEMA = "gpus.schema.json"
CODE = "KB082"
SPEC_FIELDS = ("memory_gb", "bandwidth_gbs", "fp16_tflops", "int8_tops", "tdp_w")
SPEC_KINDS = ("vendor", "vendor-copy", "secondary", "model-name")
# a figure only a third-party page states: marked in the table
SECONDARY = "secondary"


def _problems_of(card: dict, sources: dict, where) -> list[tuple[list, str]]:
    found = []
    for field in SPEC_FIELDS:
        spec = card[field]
        if "value" not in spec:
            continue
        source = sources.get(spec["source"])
        if source is None:
            found.append(
                ([field, "source"], f"source {spec['source']!r} is not under `sources`; add it there")
            )
            continue
        if source["kind"] not in SPEC_KINDS:
            found.append(
                (
                    [field, "source"],
                    f"{field} cites {spec['source']!r}, a source of kind {source['kind']!r}: specs must come "
                    "from the vendor's documents (vendor, vendor-copy, model-name) or a third-party page "
                    "that states them (secondary); leave it `{unsourced: true}` if none was read",
                )
            )
        if source["kind"] == "model-name" and (
            field != "memory_gb" or f"{spec['value']:g}GB" not in card["model"].replace(" ", "")
        ):
            found.append(
                ([field], f"{field} {spec['value']:g} is not a capacity in the model name {card['model']!r}")
            )
        if "from_sparse" in spec and abs(spec["from_sparse"] / 2 - spec["value"]) > 1e-9 * spec["value"]:
            found.append(
                (
                    [field, "value"],
                    f"dense {field} must be half the sparse {spec['from_sparse']:g}, not {spec['value']:g}",
                )
            )
        if field == "fp16_tflops" and "accumulate" not in spec:
            found.append(([field], "say the accumulate basis: `accumulate: fp32`, `fp16` or `unstated`"))
        if spec.get("accumulate") in ("fp32", "fp16"):
            basis = spec.get("accumulate_source")
            if basis is None:
                found.append(
                    (
                        [field, "accumulate"],
                        f"accumulate {spec['accumulate']} needs `accumulate_source`: the source that says so "
                        "(or write `accumulate: unstated`)",
                    )
                )
            elif sources.get(basis, {}).get("kind") not in SPEC_KINDS:
                found.append(
                    (
                        [field, "accumulate_source"],
                        f"accumulate_source {basis!r} must name a source under `sources` of kind vendor, "
                        "vendor-copy or secondary",
                    )
                )
        elif "accumulate_source" in spec:
            found.append(
                (
                    [field, "accumulate_source"],
                    "accumulate_source goes with `accumulate: fp32` or `fp16` only",
                )
            )
    chips = card.get("chips")
    if chips is not None and sources.get(chips["source"], {}).get("kind") not in SPEC_KINDS:
        found.append(
            (
                ["chips", "source"],
                f"chips cites {chips['source']!r}: name a source under `sources` of kind vendor, "
                "vendor-copy or secondary",
            )
        )
    for key in ("prices", "rents"):
        for i, item in enumerate(card.get(key, [])):
            source = sources.get(item["source"])
            if source is None:
                found.append(
                    ([key, i, "source"], f"source {item['source']!r} is not under `sources`; add it there")
                )
            elif source["kind"] != "article":
                found.append(
                    (
                        [key, i, "source"],
                        "prices and rents are the articles' figures: cite a source of kind `article`",
                    )
                )
            confirmed = item.get("confirmed_by")
            if confirmed is not None and sources.get(confirmed, {}).get("kind") not in (
                "vendor",
                "vendor-copy",
                SECONDARY,
            ):
                found.append(
                    (
                        [key, i, "confirmed_by"],
                        f"confirmed_by {confirmed!r} must name a source under `sources` of kind vendor, "
                        "vendor-copy or secondary",
                    )
                )
            if key == "rents" and item["low"] > item["high"]:
                found.append(
                    ([key, i], f"rent low {item['low']:g} is above high {item['high']:g}; swap them")
                )
    return found


@functools.lru_cache(maxsize=8)
def _read(path: Path, schema: Path, stamps) -> kb_data.Loaded:
    loaded = kb_data.read_yaml(path, schema)
    if loaded.problems or not isinstance(loaded.data, dict):
        return kb_data.Loaded({"sources": {}, "cards": []}, loaded.problems, loaded.root)
    sources = loaded.data["sources"]
    problems: list[kb_data.Problem] = []
    for name, source in sources.items():
        needs = {"vendor": "url", "vendor-copy": "url", SECONDARY: "url", "article": "article"}.get(
            source["kind"]
        )
        if needs and needs not in source:
            problems.append(
                kb_data.Problem(
                    path,
                    kb_data.line_of(loaded.root, ["sources", name]),
                    CODE,
                    f"source {name!r} of kind {source['kind']!r} needs `{needs}`",
                )
            )
    kept, lines, seen = [], [], {}
    for i, card in enumerate(loaded.data["cards"]):
        line = kb_data.line_of(loaded.root, ["cards", i])
        bad = _problems_of(card, sources, line)
        if card["id"] in seen:
            bad.append(
                (
                    [],
                    f"card id {card['id']!r} is already used on line {seen[card['id']]}; give each card its own id",
                )
            )
        seen.setdefault(card["id"], line)
        for where, message in bad:
            problems.append(
                kb_data.Problem(path, kb_data.line_of(loaded.root, ["cards", i, *where]), CODE, message)
            )
        if not bad:
            kept.append(card)
            lines.append(line)
    return kb_data.Loaded({"sources": sources, "cards": kept}, problems, loaded.root, lines)


def read(data_dir: Path) -> kb_data.Loaded:
    """The usable cards and the sources (data: {"sources", "cards"}), with every problem."""
    path = (Path(data_dir) / "gpus.yaml").resolve()
    schema = kb_data.schema_path(data_dir, SCHEMA)
    return _read(path, schema, (kb_data.file_stamp(path), kb_data.file_stamp(schema)))


def cards(data_dir: Path) -> list[dict[str, Any]]:
    return read(data_dir).data["cards"]


def memory_of(card: dict) -> float | None:
    return card["memory_gb"].get("value")


def chips_of(card: dict) -> int:
    """How many chips (devices) share the card's memory: 1 unless `chips` says so."""
    return int(card.get("chips", {}).get("value", 1))
