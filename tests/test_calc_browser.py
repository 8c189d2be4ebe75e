"""The calculators as readers use them, in Debian's chromium on the built site:
change inputs and read the results (which must equal kb.calc.formulas for the
same inputs), open a shared URL, bad input gets a message and never NaN, the
page without JavaScript shows the article's example, keyboard and axe.

Screenshots of the four calculators go to test-results/screenshots/calc-*.png.
"""

from __future__ import annotations

import gzip
import urllib.parse
from html.parser import HTMLParser
from pathlib import Path

import axe_check
import pytest
from kb.calc import formulas
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "test-results" / "screenshots"

PAGES = {
    "inference-cost": "inference/inference-cost-breakdown.html",
    "inference-memory": "inference/inference-cost-breakdown.html",
    "rent-vs-buy": "hardware/gpu-rental-guide.html",
    "training-memory": "training/llm-training-10-tips.html",
}
SPECS = formulas.specs()


def calc(page, name: str):
    """The live calculator ``name`` on the page (once calc.js has set it up)."""
    root = page.locator(f".kb-calc.kb-calc-ready:has(input[id^='{name}-'], select[id^='{name}-'])")
    expect(root).to_have_count(1, timeout=10_000)
    return root


def shown(root, name: str, output: str) -> str:
    label = next(o["label"] for o in SPECS[name]["outputs"] if o["name"] == output)
    row = root.locator(".kb-calc-results tr", has=root.page.locator(f"th:text-is('{label}')"))
    return row.locator("td.kb-calc-value").inner_text()


def expected(name: str, output: str, **inputs) -> str:
    values = {**formulas.defaults(name), **inputs}
    unit = next(o["unit"] for o in SPECS[name]["outputs"] if o["name"] == output)
    return formulas.format_number(formulas.compute(name, values)[output], unit)


def set_input(root, name: str, field: str, value: str) -> None:
    control = root.locator(f"#{name}-{field}")
    if control.evaluate("e => e.tagName") == "SELECT":
        control.select_option(value)
    else:
        control.fill(value)


def open_page(page, server, name: str, fragment: str = ""):
    page.goto(f"{server}/{PAGES[name]}{fragment}")
    return calc(page, name)


CHANGES = {
    "inference-cost": (
        {"qps": "25", "gpus": "2", "tokens": "1000"},
        ["per_second", "per_request", "per_million_tokens"],
    ),
    "rent-vs-buy": ({"hours": "720", "resale": "20000"}, ["break_even_months", "own_36", "rent_36"]),
    "training-memory": (
        {
            "params": "7",
            "zero": "3",
            "gpus": "8",
            "checkpointing": "full",
            "seq": "4096",
            "micro_batch": "1",
            "hidden": "4096",
            "layers": "32",
            "heads": "32",
        },
        ["weights", "optimizer", "activations", "total"],
    ),
    "inference-memory": (
        {"params": "70", "weight_precision": "int4", "layers": "80", "kv_heads": "8"},
        ["weights", "kv_cache", "total"],
    ),
}


def typed(name: str, changes: dict) -> dict:
    out = {}
    for item in SPECS[name]["inputs"]:
        if item["name"] in changes:
            out[item["name"]] = formulas.parse_input(
                item,
                changes[item["name"]],
                None if item.get("choices") != "gpus" else [changes[item["name"]]],
            )[0]
    return out


@pytest.mark.parametrize("name", sorted(PAGES))
def test_a_calculator_starts_from_the_article_and_follows_the_inputs(page, server, name):
    root = open_page(page, server, name)
    for output in CHANGES[name][1]:
        assert shown(root, name, output) == expected(name, output)
    # the static table (what readers without JavaScript see) is hidden, and agreed
    static = root.locator("table.kb-calc-static-results")
    expect(static).to_be_hidden()
    changes, outputs = CHANGES[name]
    for field, value in changes.items():
        set_input(root, name, field, value)
    values = typed(name, changes)
    for output in outputs:
        assert shown(root, name, output) == expected(name, output, **values), output
    SHOTS.mkdir(parents=True, exist_ok=True)
    root.screenshot(path=str(SHOTS / f"calc-{name}.png"))
    # the URL carries the inputs: reopening it gives the same results
    url = page.url
    assert "#" in url and f"{name}." in urllib.parse.unquote(url)
    again = page.context.new_page()
    again.goto(url)
    reopened = calc(again, name)
    for output in outputs:
        assert shown(reopened, name, output) == expected(name, output, **values), output
    again.close()
    assert page.console_errors == [] and page.foreign_requests == []


def test_the_break_even_with_the_articles_numbers(page, server):
    """The article's numbers, the one-off cost the card alone as its note says (80,000 元)."""
    root = open_page(page, server, "rent-vs-buy")
    assert shown(root, "rent-vs-buy", "break_even_months") == "25.3 个月"  # 2.11 years, not 1
    years = root.locator(".kb-calc-results tr", has=page.locator("th:text-is('回本点（年）')"))
    assert years.locator("td.kb-calc-value").inner_text() == "2.11 年"
    assert root.locator("svg.kb-calc-chart polyline").count() == 2
    assert "25.3 个月" in root.locator("svg.kb-calc-chart").get_attribute("aria-label")


def test_a_shared_url_opens_with_its_inputs(page, server):
    root = open_page(page, server, "rent-vs-buy", "#rent-vs-buy.hours=720&rent-vs-buy.rent=15")
    expect(root.locator("#rent-vs-buy-hours")).to_have_value("720")
    assert shown(root, "rent-vs-buy", "break_even_months") == expected(
        "rent-vs-buy", "break_even_months", hours=720, rent=15
    )
    expect(root).to_be_in_viewport()  # it opens where the calculator is, not at the top


def test_a_section_anchor_in_the_url_does_not_become_an_input(page, server):
    root = open_page(page, server, "rent-vs-buy", "#rental-long-term")
    set_input(root, "rent-vs-buy", "rent", "30")
    assert page.evaluate("location.hash") == "#rent-vs-buy.rent=30"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("hours", "-5", "不能小于 0"),
        ("hours", "", "请填写数值"),
        ("rent", "abc", "请输入数字"),
        ("hours", "1e9", "不能大于 744"),
    ],
)
def test_bad_input_gets_a_message_and_never_nan(page, server, field, value, message):
    root = open_page(page, server, "rent-vs-buy")
    set_input(root, "rent-vs-buy", field, value)
    control = root.locator(f"#rent-vs-buy-{field}")
    expect(control).to_have_attribute("aria-invalid", "true")
    error = root.locator(f"#rent-vs-buy-{field}-error")
    expect(error).to_have_text(message)
    assert control.get_attribute("aria-describedby") == f"rent-vs-buy-{field}-error"
    expect(root.locator(".kb-calc-status")).not_to_be_empty()
    text = root.inner_text()
    assert "NaN" not in text and "Infinity" not in text
    set_input(root, "rent-vs-buy", field, "100")
    expect(error).to_have_text("")
    expect(control).not_to_have_attribute("aria-invalid", "true")


def test_a_bad_value_in_a_shared_url_is_shown_as_bad(page, server):
    root = open_page(page, server, "inference-cost", "#inference-cost.qps=0")
    expect(root.locator("#inference-cost-qps-error")).to_have_text("不能小于 0.001")
    assert "Infinity" not in root.inner_text()


@pytest.mark.parametrize(
    ("name", "field", "value", "message"),
    [
        ("inference-cost", "qps", "-5", "不能小于 0.001"),
        ("inference-cost", "gpu_price", "abc", "请输入数字"),
        ("training-memory", "params", "", "请填写数值"),
        ("training-memory", "gpus", "2.5", "请输入整数"),
        ("inference-memory", "layers", "-1", "不能小于 1"),
        ("inference-memory", "context", "abc", "请输入数字"),
        # each passes alone, not together with the hidden size (1,600)
        ("training-memory", "heads", "48", "要能整除隐藏维度（1,600）"),
    ],
)
def test_bad_input_in_every_calculator_gets_a_message(page, server, name, field, value, message):
    root = open_page(page, server, name)
    set_input(root, name, field, value)
    expect(root.locator(f"#{name}-{field}")).to_have_attribute("aria-invalid", "true")
    expect(root.locator(f"#{name}-{field}-error")).to_have_text(message)
    expect(root.locator(".kb-calc-results table")).to_have_count(0)
    text = root.locator(".kb-calc-live").inner_text()
    assert "NaN" not in text and "Infinity" not in text


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        # results too large or too small to show: never Infinity, nor 5e+22
        # 1e10 元 over a saving of 1e-9 元 a month: 1e19 months
        (
            "rent-vs-buy",
            "#rent-vs-buy.purchase=1e10&rent-vs-buy.rent=1e-9&rent-vs-buy.hours=1&rent-vs-buy.upkeep=0",
        ),
        # a break-even of 3.2e-9 months can be shown, 2.6e-10 years cannot
        ("rent-vs-buy", "#rent-vs-buy.purchase=1e-5"),
        (
            "rent-vs-buy",
            "#rent-vs-buy.rent=1&rent-vs-buy.upkeep=11.999999999999998&rent-vs-buy.hours=1&rent-vs-buy.purchase=1e10",
        ),
    ],
)
def test_results_that_cannot_be_shown_get_a_message(page, server, name, fragment):
    root = open_page(page, server, name, fragment)
    expect(root.locator(".kb-calc-status")).to_have_text("结果超出了能显示的范围：请检查输入的数值是否合理")
    text = root.locator(".kb-calc-live").inner_text()
    assert "Infinity" not in text and "NaN" not in text and "e+" not in text
    expect(root.locator(".kb-calc-results table")).to_have_count(0)


@pytest.mark.parametrize(
    ("name", "field", "value"),
    [
        ("training-memory", "zero", "9"),
        ("training-memory", "card", "toString"),
        ("inference-memory", "weight_precision", "fp8"),
    ],
)
def test_a_shared_url_with_a_choice_not_in_the_list_is_shown_as_bad(page, server, name, field, value):
    """Not replaced by the list's first entry without a word."""
    root = open_page(page, server, name, f"#{name}.{field}={value}")
    control = root.locator(f"#{name}-{field}")
    expect(control).to_have_attribute("aria-invalid", "true")
    expect(root.locator(f"#{name}-{field}-error")).to_have_text("请从列表中选择")
    expect(root.locator(".kb-calc-results table")).to_have_count(0)


def test_without_javascript_the_article_example_is_a_table(browser, server):
    context = browser.new_context(java_script_enabled=False)
    pg = context.new_page()
    for name, path in PAGES.items():
        pg.goto(f"{server}/{path}")
        root = pg.locator(".kb-calc", has=pg.locator(f"text={SPECS[name]['title']}"))
        expect(root).to_have_count(1)
        table = root.locator("table.kb-calc-static-results")
        expect(table).to_be_visible()
        first = SPECS[name]["outputs"][0]
        assert expected(name, first["name"]) in table.inner_text()
        assert root.locator("form").count() == 0
    context.close()


@pytest.mark.parametrize("name", sorted(PAGES))
def test_keyboard_and_labels(page, server, name):
    """Every control is reached with Tab, in the form's order, and has a
    label that names it; a list is operated with the keyboard."""
    root = open_page(page, server, name)
    inputs = SPECS[name]["inputs"]
    root.locator(f"#{name}-{inputs[0]['name']}").focus()
    for item in inputs[1:]:
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == f"{name}-{item['name']}"
        if "choices" in item:
            page.keyboard.press("ArrowDown")
    for item in inputs:
        expect(page.get_by_label(item["label"], exact=True)).to_have_count(1)


@pytest.mark.parametrize("path", sorted(set(PAGES.values())))
def test_axe_finds_nothing_serious_in_the_calculators(page, server, path):
    page.goto(f"{server}/{path}")
    expect(page.locator(".kb-calc-ready").first).to_be_visible()
    bad = axe_check.check(page, ".kb-calc")
    assert bad == [], bad


@pytest.mark.parametrize("name", sorted(PAGES))
def test_usable_on_a_phone_in_the_dark_theme(browser, server, name):
    context = browser.new_context(viewport={"width": 375, "height": 800}, color_scheme="dark")
    pg = context.new_page()
    pg.goto(f"{server}/{PAGES[name]}")
    root = calc(pg, name)
    assert pg.evaluate("document.documentElement.scrollWidth") <= 375
    box = root.bounding_box()
    assert box["width"] <= 375
    background = root.evaluate("e => getComputedStyle(e).backgroundColor")
    assert background != "rgb(255, 255, 255)" and background != "rgba(0, 0, 0, 0)"
    root.screenshot(path=str(SHOTS / f"calc-{name}-375-dark.png"))
    context.close()


class WithoutCalculators(HTMLParser):
    """A page's HTML without its calculators (each <div class="kb-calc">, as
    written by kb.calc.directive) and without their script and style."""

    def __init__(self):
        super().__init__(convert_charrefs=False)
        self.kept, self.depth = [], 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        calc_asset = "kb-calc/" in (a.get("src") or a.get("href") or "")
        if self.depth or (tag == "div" and "kb-calc" in (a.get("class") or "").split()):
            self.depth += tag == "div"
        elif not calc_asset:
            self.kept.append(self.get_starttag_text())

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= tag == "div"
        elif tag != "script" or not self.kept or "kb-calc/" not in self.kept[-1]:
            self.kept.append(f"</{tag}>")

    def handle_data(self, data):
        if not self.depth:
            self.kept.append(data)

    def handle_entityref(self, name):
        self.handle_data(f"&{name};")

    def handle_charref(self, name):
        self.handle_data(f"&#{name};")


def gzipped(data: bytes) -> int:
    return len(gzip.compress(data, 9))


@pytest.mark.parametrize("path", sorted(set(PAGES.values())))
def test_a_page_with_a_calculator_weighs_at_most_15_kb_gzip_more(site, path):
    """What the calculators add to their page: their markup, data and static
    table, and the script and style only these pages load."""
    html = (site / path).read_text(encoding="utf-8")
    parser = WithoutCalculators()
    parser.feed(html)
    without = "".join(parser.kept)
    assert "kb-calc" not in without
    assets = sum(
        gzipped((site / "_static/kb-calc" / name).read_bytes())
        for name in ("calc.js", "formulas.js", "calc.css")
    )
    added = gzipped(html.encode()) - gzipped(without.encode()) + assets
    print(f"{path}: +{added / 1024:.1f} KiB gzip")
    assert 0 < added <= 15 * 1024, added
