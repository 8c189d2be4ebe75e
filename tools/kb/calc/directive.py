"""Calculators and the GPU comparison table in the articles.

In a page::

    ```{calculator} inference-cost
    ```

    ```{calculator} training-memory
    :zero: 2
    :card: h100-sxm
    ```

    ```{gpu-spec-table}
    ```

``{calculator} NAME`` (one of ``kb.calc.formulas.CALCULATORS``) shows that
calculator with its defaults (``specs.json``: the article's example, an
editor-corrected one or a paper's, which its ``defaults`` and ``reset`` words
say, and its note explains); an option named after an input sets that input
instead, checked like a reader's input. An unknown name is KB080, an unknown option or a bad value KB081, both
at the directive's line, and the directive is left out.

Every builder gets a static table of the example, computed at build time by
``kb.calc.formulas``: the inputs, then each result with its unit and formula.
That is all a reader without JavaScript (or an epub, a PDF) sees. In HTML the
table sits in ``<div class="kb-calc" data-kb-calc="…">`` whose attribute holds
the inputs' labels, limits and values, the outputs, the cards of
``data/gpus.yaml`` and the messages; ``_static/kb-calc/calc.js`` turns it into
a form (inputs in the URL's fragment, so a result can be shared), loaded with
``calc.css`` on pages with a calculator only.

``{gpu-spec-table}`` is the comparison table of ``data/gpus.yaml`` (kb.calc.gpus):
empty cells say 未核实, a figure only a third-party page states is marked †,
prices and rents are marked as the articles' figures (with the source a register
found for one, if any), and the sources follow with what they are and the date
they were read. Options are refused (KB083).

Both directives note their data files as dependencies, so a page is read
again when they change. Nothing is kept in the environment.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

from kb.calc import formulas, gpus
from kb.core.i18n import N_, _
from kb.core.log import getLogger
from kb.core.store import documents
from kb.guard.untrusted import own

logger = getLogger(__name__)


SCRIPT = "kb-calc/calc.js"
STYLE = "kb-calc/calc.css"


class calculator(nodes.General, nodes.Element):
    """A calculator: its static table as children; ``config`` for the browser."""


class spec_table_scroll(nodes.General, nodes.Element):
    """The wide comparison table: in HTML a scroll region that takes keyboard focus
    (axe: scrollable-region-focusable); elsewhere just the table."""


def _warn(code: str, message: str, location, subtype: str = "calc") -> None:
    logger.warning(f"{code} {message}", location=location, type="kb", subtype=subtype)


class AnyOption(dict):
    """An option spec that takes any name, so that an unknown option is our
    KB081 at its line rather than the parser's generic error."""

    def __missing__(self, key):
        return str

    def __bool__(self) -> bool:  # MyST reads options only when the spec is truthy
        return True


def _data_dir(env) -> Path:
    """data/ as an absolute path (kb_calc_data_dir, resolved when the configuration is read)."""
    return Path(env.config.kb_calc_data_dir)


def _table(header: list[str], rows: list[list[str]], widths: list[int], classes: list[str]) -> nodes.table:
    table = own(nodes.table(classes=classes))  # the site's classes: KB086 refuses them in pages
    group = nodes.tgroup(cols=len(header))
    table += group
    group.extend(nodes.colspec(colwidth=w) for w in widths)
    head, body = nodes.thead(), nodes.tbody()
    group += head
    group += body
    for target, cells in ((head, [header]), (body, rows)):
        for cells_of_row in cells:
            row = nodes.row()
            for text in cells_of_row:
                row += nodes.entry("", nodes.paragraph(text=text))
            target += row
    return table


URL = re.compile(r"https?://[^\s，。；）]+")


def linked_paragraph(text: str, classes: list[str]) -> nodes.paragraph:
    """A note's text with its sources' addresses as links (the reader follows them;
    the page requests nothing from them)."""
    para = own(nodes.paragraph(classes=classes))
    at = 0
    for match in URL.finditer(text):
        para += nodes.Text(text[at : match.start()])
        para += nodes.reference(match.group(), match.group(), refuri=match.group())
        at = match.end()
    para += nodes.Text(text[at:])
    return para


# GB are 10^9 bytes (formulas.GB); a card's nominal "80 GB" is 80 GiB, about 7 % more
FITS_FORMULA = (
    "合计（GB，10⁹ 字节）≤ 显卡的标称显存（标称容量实为 GiB，约多 7%，不折算；"
    "多芯片的卡按一颗芯片的显存比较，如 MLU370-X8 为 48 GB ÷ 2）"
)


def card_label(card: dict) -> str:
    memory = gpus.memory_of(card)
    if memory is None:
        return card["model"]
    chips = gpus.chips_of(card)
    if chips > 1:
        return _("{model}（{memory}，{chips} 颗芯片各 {each}）").format(
            model=card["model"],
            memory=formulas.format_number(memory, "GB"),
            chips=chips,
            each=formulas.format_number(memory / chips, "GB"),
        )
    return f"{card['model']}（{formulas.format_number(memory, 'GB')}）"


def fits(cards: list[dict], total_gb: float) -> list[str]:
    """The cards a total fits on (one chip's memory for a card of several)."""
    return [
        card["model"]
        for card in cards
        if formulas.fit(gpus.memory_of(card), gpus.chips_of(card), total_gb) == "yes"
    ]


class CalculatorDirective(SphinxDirective):
    optional_arguments = 1
    has_content = False
    option_spec = AnyOption()

    def run(self) -> list[nodes.Node]:
        location = self.get_location()
        specs = formulas.specs()
        name = self.arguments[0] if self.arguments else ""
        if name not in specs:
            _warn(
                "KB080",
                (f"unknown calculator {name!r}" if name else "the calculator has no name")
                + f"; write one of: {', '.join(specs)}",
                location,
            )
            return []
        self.env.note_dependency(str(formulas.SPECS_FILE))
        data_dir = _data_dir(self.env)
        self.env.note_dependency(str(data_dir / "gpus.yaml"))
        cards = gpus.cards(data_dir)
        spec = specs[name]
        inputs = {item["name"]: item for item in spec["inputs"]}
        values = formulas.defaults(name)
        ok = True
        for option, raw in self.options.items():
            item = inputs.get(option)
            if item is None:
                _warn(
                    "KB081",
                    f"{option!r} is not an input of {name}; use one of: {', '.join(inputs)}",
                    location,
                )
                ok = False
                continue
            choices = [c["id"] for c in cards] if item.get("choices") == "gpus" else None
            value, message = formulas.parse_input(item, raw, choices)
            if message:
                _warn(
                    "KB081",
                    f":{option}: {raw!r} is refused ({message}); "
                    + (
                        f"use one of: {', '.join(choices or item['choices'])}"
                        if "choices" in item
                        else f"give a number from {item['min']:g} to {item['max']:g}"
                    ),
                    location,
                )
                ok = False
            else:
                values[option] = value
        card_ids = [c["id"] for c in cards]
        if "card" in values and values["card"] not in card_ids:
            _warn("KB081", f"the default card {values['card']!r} is not in data/gpus.yaml", location)
            ok = False
        for option, message in formulas.relation_problems(spec, values).items():
            _warn("KB081", f":{option}: {values[option]!r} is refused ({message})", location)
            ok = False
        if ok and (beyond := formulas.out_of_range(formulas.compute(name, values))):
            _warn(
                "KB081",
                f"these options give results that cannot be shown ({', '.join(beyond)}): "
                "give values a reader would use",
                location,
            )
            ok = False
        if not ok:
            return []
        node = own(calculator(classes=["kb-calc"]))
        node["name"] = name
        node["config"] = self.config_for_browser(name, spec, values, cards)
        node += self.static_content(name, spec, values, cards)
        self.set_source_info(node)
        documents(self.env, "assets")[self.env.docname] = "calculator"
        return [node]

    def config_for_browser(self, name: str, spec: dict, values: dict, cards: list[dict]) -> dict:
        def localized(item: dict) -> dict:
            out = {**item, "label": _(item["label"])}
            if "unit" in item:
                out["unit"] = _(item["unit"])
            if isinstance(item.get("choices"), dict):
                out["choices"] = {k: _(v) for k, v in item["choices"].items()}
            elif item.get("choices") == "gpus":
                out["choices"] = {c["id"]: card_label(c) for c in cards}
            return out

        return {
            "name": name,
            "title": _(spec["title"]),
            "inputs": [localized(i) for i in spec["inputs"]],
            "outputs": [
                {**o, "label": _(o["label"]), "unit": _(o["unit"]), "formula": _(o["formula"])}
                for o in spec["outputs"]
            ],
            "values": values,
            "cards": [
                {
                    "id": c["id"],
                    "model": c["model"],
                    "memory_gb": gpus.memory_of(c),
                    "chips": gpus.chips_of(c),
                }
                for c in cards
            ],
            "text": {
                "inputs": _("输入"),
                "results": _("结果"),
                "item": _("项目"),
                "value": _("数值"),
                "formula": _("公式"),
                "fix": _("请先更正标出的输入，结果才会更新。"),
                "share": _("本结果的链接（含以上输入）"),
                "reset": _(spec["reset"]),
                "never": _("按这些输入，自建不会比租赁便宜"),
                "own": _("自建累计"),
                "rent": _("租赁累计"),
                "chart": _("36 个月累计成本：自建与租赁"),
                "chartSummary": _("{chart}：{own} {own_value}，{rent} {rent_value}；{break_even} {months}"),
                "yuan": _("元"),
                "fitsOn": _("放得下的卡（只计显存容量）"),
                "fitsNone": _("规格表中没有放得下的卡"),
                "fitsYes": _("放得下"),
                "fitsNo": _("放不下"),
                "unknown": _("显存没有来源的卡不列出"),
                "breakEven": _("回本点"),
                "fitsFormula": _(FITS_FORMULA),
                "breakEvenYears": _("回本点（年）"),
                "years": _("年"),
                "yearsFormula": _("回本月数 ÷ 12"),
                "months": _("个月"),
                "messages": {kind: _(message) for kind, message in formulas.MESSAGES.items()},
            },
        }

    def static_content(self, name: str, spec: dict, values: dict, cards: list[dict]) -> list[nodes.Node]:
        result = formulas.compute(name, values)
        choices = {c["id"]: card_label(c) for c in cards}
        rows_in = []
        for item in spec["inputs"]:
            value = values[item["name"]]
            if item.get("choices") == "gpus":
                shown = choices.get(value, value)
            elif "choices" in item:
                shown = _(item["choices"][str(value)])
            else:
                shown = formulas.format_input(value, _(item.get("unit", "")))
            rows_in.append([_(item["label"]), shown])
        rows_out = [
            [_(o["label"]), formulas.format_number(result[o["name"]], _(o["unit"])), _(o["formula"])]
            for o in spec["outputs"]
        ]
        if name == "rent-vs-buy":
            rows_out.insert(
                3,
                [
                    _("回本点（年）"),
                    formulas.format_number(result["break_even_years"], _("年")),
                    _("回本月数 ÷ 12"),
                ],
            )
            for month in (12, 24):
                rows_out.append(
                    [
                        _("{m} 个月累计：自建 / 租赁").format(m=month),
                        formulas.format_number(result["own_curve"][month], "元")
                        + " / "
                        + formulas.format_number(result["rent_curve"][month], "元"),
                        _("同上，按 {m} 个月").format(m=month),
                    ]
                )
        if name == "training-memory":
            card = next((c for c in cards if c["id"] == values["card"]), None)
            memory = gpus.memory_of(card) if card else None
            verdict = {None: _("显存没有来源"), "yes": _("放得下"), "no": _("放不下")}[
                formulas.fit(memory, gpus.chips_of(card) if card else 1, result["total"])
            ]
            rows_out.append(
                [
                    _("是否放得下：{card}").format(card=choices[values["card"]]),
                    verdict,
                    _(FITS_FORMULA),
                ]
            )
        if name == "inference-memory":
            ok = fits(cards, result["total"])
            rows_out.append(
                [
                    _("放得下的卡（只计显存容量）"),
                    "、".join(ok) if ok else _("规格表中没有放得下的卡"),
                    _(FITS_FORMULA),
                ]
            )
        title = own(nodes.paragraph(classes=["kb-calc-title"]))
        title += nodes.strong(text=_(spec["title"]))
        defaults = _("本页设定的输入，其余见下方说明") if self.options else _(spec["defaults"])
        title += nodes.Text(_("（{defaults}；开启 JavaScript 后可以改输入）").format(defaults=defaults))
        note = linked_paragraph(_(spec["note"]), ["kb-calc-note"])
        return [
            title,
            _table([_("输入"), _("数值")], rows_in, [24, 20], ["kb-calc-static", "kb-calc-static-inputs"]),
            _table(
                [_("结果"), _("数值"), _("公式")],
                rows_out,
                [22, 24, 50],
                ["kb-calc-static", "kb-calc-static-results"],
            ),
            note,
        ]


def interactive(builder) -> bool:
    """Pages a browser runs scripts on: the HTML builders, not an e-book."""
    return builder.format == "html" and not builder.name.startswith("epub")


def visit_calculator_html(self, node: calculator) -> None:
    if not interactive(self.builder):  # epub: the static table only
        self.body.append('<div class="kb-calc">\n')
        return
    config = html.escape(json.dumps(node["config"], ensure_ascii=False, separators=(",", ":")), quote=True)
    # not in the search index: the example's numbers would outweigh the article's
    # own words in its section (Pagefind ranks sections by what they hold)
    self.body.append(f'<div class="kb-calc" data-pagefind-ignore data-kb-calc="{config}">\n')


def depart_calculator_html(self, node: calculator) -> None:
    self.body.append("</div>\n")


def visit_spec_table_scroll_html(self, node: spec_table_scroll) -> None:
    label = html.escape(_("GPU 规格对比表（可左右滚动）"), quote=True)
    self.body.append(f'<div class="kb-gpu-specs-scroll" tabindex="0" role="region" aria-label="{label}">\n')


def depart_spec_table_scroll_html(self, node: spec_table_scroll) -> None:
    self.body.append("</div>\n")


def visit_spec_table_scroll_latex(self, node: spec_table_scroll) -> None:
    """The book: nine columns of a ninth of the line each; at the body's size
    FP16/BF16, p4d.24xlarge and the like, which TeX cannot break, ran up to
    14 pt into the next column. In footnote size, with less space between
    the columns, every one fits (tools/check_books.py checks it)."""
    self.body.append("\n\\begingroup\\footnotesize\\setlength{\\tabcolsep}{3pt}\n")


def depart_spec_table_scroll_latex(self, node: spec_table_scroll) -> None:
    self.body.append("\n\\endgroup\n")


def visit_passthrough(self, node) -> None:
    """Other formats: the static table only (the node's children)."""


def depart_passthrough(self, node) -> None:
    pass


# -- the comparison table --------------------------------------------------------------

SPEC_COLUMNS = (
    ("memory_gb", N_("显存"), "GB"),
    ("bandwidth_gbs", N_("显存带宽"), "GB/s"),
    ("fp16_tflops", N_("FP16/BF16 稠密算力"), "TFLOPS"),
    ("int8_tops", N_("INT8 稠密算力"), "TOPS"),
    ("tdp_w", N_("最大功耗"), "W"),
)


def exact(value: float, unit: str = "") -> str:
    """A vendor's figure as printed (no rounding), with thousands separators."""
    text = f"{int(value):,}" if value == int(value) else f"{value:,}"
    return f"{text} {unit}".strip()


ACCUMULATE = {"fp32": N_("FP32 累加"), "fp16": N_("FP16 累加"), "unstated": N_("累加精度未注明")}
SECONDARY_MARK = "†"
SOURCE_KINDS = {
    "vendor-copy": N_("经销商等转载的厂商数字"),
    "secondary": N_("† 第三方转述，未能直接读到厂商文件"),
}


class GpuSpecTableDirective(SphinxDirective):
    has_content = False
    option_spec = AnyOption()

    def run(self) -> list[nodes.Node]:
        if self.options or self.arguments:
            _warn("KB083", "gpu-spec-table takes no argument or option; remove them", self.get_location())
            return []
        data_dir = _data_dir(self.env)
        self.env.note_dependency(str(data_dir / "gpus.yaml"))
        loaded = gpus.read(data_dir)
        sources = loaded.data["sources"]
        marks: dict[str, int] = {}

        def mark(source_id: str) -> str:
            marks.setdefault(source_id, len(marks) + 1)
            dagger = SECONDARY_MARK if sources[source_id]["kind"] == gpus.SECONDARY else ""
            return f"{dagger}[{marks[source_id]}]"

        rows = []
        for card in loaded.data["cards"]:
            row = [card["model"], card["vendor"]]
            for field, _label, unit in SPEC_COLUMNS:
                spec = card[field]
                if "value" not in spec:
                    row.append(_("未核实"))
                    continue
                text = f"{exact(spec['value'], unit)} {mark(spec['source'])}"
                if "from_sparse" in spec:
                    text += _("（稀疏 {v} 的一半）").format(v=exact(spec["from_sparse"]))
                if field == "memory_gb" and "chips" in card:
                    chips = card["chips"]
                    text += _("（{n} 颗芯片各 {each} {mark}）").format(
                        n=chips["value"],
                        each=exact(spec["value"] / chips["value"], unit),
                        mark=mark(chips["source"]),
                    )
                if "accumulate" in spec:
                    basis = f" {mark(spec['accumulate_source'])}" if "accumulate_source" in spec else ""
                    text += f"（{_(ACCUMULATE[spec['accumulate']])}{basis}）"
                row.append(text)
            prices = [
                ("$" if p["currency"] == "USD" else "¥")
                + exact(p["value"])
                + (f"（{p['note']}）" if p.get("note") else "")
                + " "
                + mark(p["source"])
                + (" " + mark(p["confirmed_by"]) if p.get("confirmed_by") else "")
                for p in card.get("prices", [])
            ]
            rents = [
                "¥"
                + (exact(r["low"]) if r["low"] == r["high"] else f"{exact(r['low'])}–{exact(r['high'])}")
                + _("/小时")
                + (f"（{r['note']}）" if r.get("note") else "")
                + " "
                + mark(r["source"])
                for r in card.get("rents", [])
            ]
            row += ["；".join(prices) or "—", "；".join(rents) or "—"]
            rows.append(row)
        header = (
            [_("型号"), _("厂商")]
            + [f"{_(label)}（{unit}）" for _f, label, unit in SPEC_COLUMNS]
            + [
                _("文章中的价格"),
                _("文章中的租价（无来源）"),
            ]
        )
        table = _table(header, rows, [16, 8, 10, 12, 24, 18, 8, 24, 28], ["kb-gpu-specs"])
        note = nodes.paragraph(
            text=_(
                "规格取自厂商文件（官网、数据手册），或经销商、合作伙伴转载的厂商数字（来源中注明转载者）；"
                "读不到厂商文件时，用第三方页面（规格库、媒体报道、个人整理的规格页）转述的数字，标 †："
                "据第三方转述，未能直接读到厂商文件，与本站各文章登记册对同一数字的判定相同；"
                "两者都没有的留空，标为“未核实”。"
                "算力均为稠密（不计 2:4 稀疏）值，照来源印出的数字给出、不四舍五入（文章可能写作约数，"
                "如 H100 SXM 的 989.5 写作 989）。同一型号的 PCIe 版与 SXM 版规格不同，分行列出。"
                "价格与租价是本站文章中的数字，文章没有给出来源；有来源与之相符的，另列该来源。"
            )
        )
        listing = own(nodes.enumerated_list(classes=["kb-gpu-sources"]))
        for source_id, _n in sorted(marks.items(), key=lambda kv: kv[1]):
            source = sources[source_id]
            item = nodes.paragraph()
            if "url" in source:
                item += nodes.reference("", source["title"], refuri=source["url"])
            elif "article" in source:
                ref = addnodes.pending_xref(
                    "", refdomain="std", reftype="doc", reftarget=f"/{source['article']}", refexplicit=True
                )
                ref += nodes.inline("", source["title"])
                item += ref
            else:
                item += nodes.Text(source["title"])
            kind = SOURCE_KINDS.get(source["kind"])
            if kind:
                item += nodes.Text(f"（{_(kind)}）")
            if source.get("cites"):
                item += nodes.Text(_("（所据厂商文件：{cites}）").format(cites=source["cites"]))
            as_of = (
                _("未注明日期")
                if source["as_of"] == "undated"
                else _("数据截至 {date}").format(date=source["as_of"])
            )
            item += nodes.Text(_("（{as_of}；{date} 查阅）").format(as_of=as_of, date=source["accessed"]))
            listing += nodes.list_item("", item)
        scroll = spec_table_scroll()
        scroll += table
        documents(self.env, "assets").setdefault(self.env.docname, "spec-table")
        return [scroll, note, listing]


def add_assets(app, pagename, templatename, context, doctree) -> None:
    """calc.js and calc.css on pages with a calculator, calc.css where the spec
    table is, and nothing elsewhere (as noted when the page was read: walking
    every doctree again costs about 10 ms a page)."""
    if not interactive(app.builder) or doctree is None:
        return
    kind = documents(app.env, "assets").get(pagename)
    if kind:
        app.add_css_file(STYLE)
    if kind == "calculator":
        app.add_js_file(SCRIPT, type="module")


def check_data(app, config) -> None:
    """data/gpus.yaml's problems once per build, at their lines (KB040–KB043, KB082)."""
    from kb.core import data as kb_data

    data_dir = Path(config.kb_data_dir)
    if not data_dir.is_absolute():
        data_dir = Path(app.confdir) / data_dir
    # the directives read it from the config (an environment has no documented
    # way to the conf.py folder once Sphinx 11 drops env.app)
    config.kb_calc_data_dir = str(data_dir)
    kb_data.report(app, gpus.read(data_dir).problems)


def setup(app) -> dict[str, Any]:
    app.setup_extension("kb.core.data")  # kb_data_dir
    app.setup_extension("kb.core.store")  # which pages need calc.js and calc.css
    app.add_config_value("kb_calc_data_dir", "", "", types=[str])  # set from kb_data_dir
    app.add_node(
        calculator,
        html=(visit_calculator_html, depart_calculator_html),
        latex=(visit_passthrough, depart_passthrough),
        text=(visit_passthrough, depart_passthrough),
        man=(visit_passthrough, depart_passthrough),
        texinfo=(visit_passthrough, depart_passthrough),
    )
    app.add_node(
        spec_table_scroll,
        html=(visit_spec_table_scroll_html, depart_spec_table_scroll_html),
        latex=(visit_spec_table_scroll_latex, depart_spec_table_scroll_latex),
        text=(visit_passthrough, depart_passthrough),
        man=(visit_passthrough, depart_passthrough),
        texinfo=(visit_passthrough, depart_passthrough),
    )
    app.add_directive("calculator", CalculatorDirective)
    app.add_directive("gpu-spec-table", GpuSpecTableDirective)
    app.connect("config-inited", check_data)
    app.connect("html-page-context", add_assets)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
