"""A Chinese interface throughout (issue #21, item 7).

- furo ships no Chinese: every string of its templates has a Chinese
  translation in locale/zh_CN/LC_MESSAGES/sphinx.po, and the labels furo
  writes outside gettext are still there for _templates/page.html to
  translate (if furo changes them, these tests say so);
- the built site shows no English interface string, in text or in labels;
- the strings our extensions write go through gettext: an English edition
  is a kb.po, not a code change, and ``sphinx-build -b gettext`` lists them.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import furo
from babel.messages.pofile import read_po
from ext_helpers import build_root  # noqa: F401 (fixture)
from jinja2.ext import babel_extract

pytest_plugins = ("sphinx.testing.fixtures",)

ROOT = Path(__file__).resolve().parent.parent
FURO = Path(furo.__file__).parent / "theme" / "furo"
PO = ROOT / "locale" / "zh_CN" / "LC_MESSAGES" / "sphinx.po"
CJK = re.compile(r"[\u4e00-\u9fff]")

# furo writes these outside gettext; _templates/page.html replaces them with
# the catalog's translation of the same text
PLAIN_LABELS = {
    "page.html": [
        'aria-label="Toggle site navigation sidebar"',
        'aria-label="Toggle table of contents sidebar"',
        'aria-label="Toggle Light / Dark / Auto color theme"',
    ],
    "partials/icons.html": [
        "<title>Contents</title>",
        "<title>Menu</title>",
        "<title>Expand</title>",
        "<title>Light mode</title>",
        "<title>Dark mode</title>",
        "<title>Auto light/dark, in light mode</title>",
        "<title>Auto light/dark, in dark mode</title>",
    ],
    "../../navigation.py": ['accessible_name = f"Toggle navigation of {'],
}

# English interface strings that must not reach a reader (furo's and Sphinx's)
ENGLISH = [
    "Contents",
    "Menu",
    "Expand",
    "Skip to content",
    "Back to top",
    "Edit this page",
    "View this page",
    "On this page",
    "Next",
    "Previous",
    "Home",
    "Made with",
    "Last updated",
    "Copyright",
    "Search",
    "Toggle",
    "Light",
    "Dark",
    "Auto",
    "navigation",
    "sidebar",
    "Error",
    "JavaScript to enable",
    "Versions",
    "Downloads",
    "Read the Docs",
    "On GitHub",
    "Project Home",
    "Builds",
    "Index",
    "About these documents",
    "Link to this",
    "Permalink",
    "Copy to clipboard",
]
ENGLISH_RE = re.compile(r"\b(" + "|".join(re.escape(w) for w in ENGLISH) + r")\b")


def catalog() -> dict[str, str]:
    with PO.open("rb") as f:
        return {m.id: m.string for m in read_po(f) if m.id}


def furo_strings() -> set[str]:
    found = set()
    for template in FURO.rglob("*.html"):
        with template.open("rb") as f:
            found |= {msg for _, _, msg, _ in babel_extract(f, ["_", "gettext", "ngettext"], [], {})}
    return found


def test_every_furo_template_string_has_a_chinese_translation():
    strings = furo_strings()
    assert "Back to top" in strings and "On this page" in strings  # the extraction works
    translated = catalog()
    missing = sorted(s for s in strings if not CJK.search(translated.get(s, "")))
    assert missing == [], f"add to {PO.relative_to(ROOT)}: {missing}"


def test_furo_still_writes_the_labels_our_page_template_translates():
    """If furo changes these labels (or passes them through gettext), the
    replacements in _templates/page.html no longer apply: update them."""
    for name, labels in PLAIN_LABELS.items():
        text = (FURO / name).resolve().read_text(encoding="utf-8")
        for label in labels:
            assert label in text, f"furo's {name} no longer has {label}"
    template = (ROOT / "_templates" / "page.html").read_text(encoding="utf-8")
    translated = catalog()
    replaced = [
        *PLAIN_LABELS["page.html"],
        *PLAIN_LABELS["partials/icons.html"],
        'aria-label="Toggle navigation of ',
    ]
    for label in replaced:
        assert f"('{label}'" in template, f"_templates/page.html does not replace {label}"
        text = label.split('"')[1] if '"' in label else re.sub(r"</?title>", "", label)
        assert CJK.search(translated.get(text, "")), text


class Interface(HTMLParser):
    """What a reader sees or hears of the theme: the text outside the article
    (sidebar, header, footer, table of contents) and every label."""

    def __init__(self) -> None:
        super().__init__()
        self.depth_article = 0
        self.skip = 0
        self.svg_title = False
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "style", "svg"):
            self.skip += 1
        self.svg_title = tag == "title" and self.skip > 0  # an icon's name
        if self.depth_article or (tag == "article" and attrs.get("role") == "main"):
            self.depth_article += 1
        for name in ("aria-label", "placeholder", "alt"):
            if attrs.get(name):
                self.found.append(f"{tag}[{name}]={attrs[name]}")
        # a title outside the article, or a headerlink's anywhere
        if attrs.get("title") and (not self.depth_article or "headerlink" in (attrs.get("class") or "")):
            self.found.append(f"{tag}[title]={attrs['title']}")

    def handle_endtag(self, tag):
        if tag in ("script", "style", "svg"):
            self.skip = max(0, self.skip - 1)
        if self.depth_article:
            self.depth_article -= 1

    def handle_data(self, data):
        if (self.svg_title or not (self.depth_article or self.skip)) and data.strip():
            self.found.append(data.strip())
        self.svg_title = False


def english_interface(html: str) -> list[str]:
    parser = Interface()
    parser.feed(html)
    return [text for text in parser.found if ENGLISH_RE.search(text)]


def test_the_interface_check_finds_furo_english():
    """The check itself: furo's own markup fails it."""
    html = (
        '<svg><symbol id="svg-toc"><title>Contents</title></symbol></svg>'
        '<input aria-label="Toggle site navigation sidebar"><a class="skip-to-content">Skip to content</a>'
        '<article role="main"><p>Next.js is fine in an article</p></article>'
        '<footer>Made with <a>Furo</a><div class="last-updated">Last updated on 2026-01-01</div></footer>'
    )
    assert english_interface(html) == [
        "Contents",
        "input[aria-label]=Toggle site navigation sidebar",
        "Skip to content",
        "Made with",
        "Last updated on 2026-01-01",
    ]


def test_the_built_site_has_no_english_interface_string(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 30
    found = {}
    for path in pages:
        if path.parent.name == "_static" or "_static" in path.parts:
            continue
        english = english_interface(path.read_text(encoding="utf-8"))
        if english:
            found[str(path.relative_to(site))] = english
    assert found == {}


def test_one_date_line_per_page(site):
    for name in ("training/llm-training-10-tips.html", "index.html"):
        html = (site / name).read_text(encoding="utf-8")
        assert "last-updated" not in html and "Last updated" not in html
        assert html.count("最后更新") <= 1


def write_po(path: Path, messages: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f'msgid "{k}"\nmsgstr "{v}"\n\n' for k, v in messages.items())
    path.write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n' + body, encoding="utf-8"
    )


def test_an_english_edition_is_a_translation_of_kb_po(build_root, tmp_path):
    locale = tmp_path / "locale"
    write_po(
        locale / "en" / "LC_MESSAGES" / "kb.po",
        {"全部 {count} 篇……": "All {count} articles…", "显示更多结果": "More results"},
    )
    # as conf.py does: the catalogs, checked, compiled into a folder of the build's own
    from kb.guard.locale import prepared_locale_dirs

    prepared = prepared_locale_dirs([str(locale)], "en", str(tmp_path / "_build" / "locale"))
    assert prepared == [str(tmp_path / "_build" / "locale")]
    app = build_root("ext-nav", confoverrides={"language": "en", "locale_dirs": prepared})
    html = (Path(app.outdir) / "guide" / "p08.html").read_text(encoding="utf-8")
    assert "All 15 articles…" in html
    assert "全部 15 篇" not in html
    # the search page's script says what kb.search.index hands it, from the same catalog
    from kb.search.index import search_text

    assert search_text()["more"] == "More results"


def test_gettext_builder_lists_the_extensions_and_templates_strings(build_root):
    app = build_root(
        "ext-nav", buildername="gettext", confoverrides={"templates_path": [str(ROOT / "_templates")]}
    )
    with (Path(app.outdir) / "kb.pot").open("rb") as f:
        ids = {m.id for m in read_po(f) if m.id}
    for message in (
        "相关文章",
        "全部 {count} 篇……",
        "编者注",
        "参考来源",
        "出现在：",
        "按拼音首字母：",
        "找到 {total} 篇相关页面，显示前 {shown} 篇。",  # the search page's script (kb.search.index)
        "不能小于 {limit}",  # the calculators' messages (kb.calc.formulas)
        "术语：",  # the search page's glossary card
        "{chart}：{own} {own_value}，{rent} {rent_value}；{break_even} {months}",  # a calculator's chart
    ):
        assert message in ids, message
    with (Path(app.outdir) / "sphinx.pot").open("rb") as f:
        ids = {m.id for m in read_po(f) if m.id}
    for message in ("Toggle site navigation sidebar", "Contents", "Next", "搜索", "需要 JavaScript"):
        assert message in ids, message
