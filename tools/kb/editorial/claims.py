"""The claims register: every claim an engineer could act on, with its verdict.

``data/claims/<guide>/<slug>.yaml`` holds the register of one article (one
schema, ``data/schemas/claims.schema.json``; one loader, ``kb.core.data``). Each
entry names the claim as printed on the page, its kind, and a verdict:

- ``verified``: a source (title, URL, the date it was read);
- ``derived``: recomputed from the inputs the article states (``formula``,
  ``inputs``, ``stated``) or counted on the page (``pattern``, ``promised``);
- ``corrected``: the label of the 编者注 that corrects it (a recomputed
  figure that does not follow is ``corrected`` too, with what the note
  ``shows``);
- ``unsourced``: no source was found; the label of the 编者注 that says so;
- ``opinion`` or ``excluded``: with the reason (a year in a title is not a
  claim).

Prices and specs say what date the data is as of (``as_of``), or
``undated`` when neither the article nor a source says: a guessed date
would tell readers the data is fresher (or older) than anyone knows. Claims that
appear on several pages share a ``topic``: one verdict, and every page
carries the note or links to it.

What counts as a claim is decided by :func:`claim_units`: every table cell
and every sentence of the article's own text (not code, not the 编者注)
holding a number with a unit, a currency, a percentage or a multiple.
``tests/test_claims.py`` fails on a unit no entry covers, and on an entry
no longer on its page. ``python tools/claims.py docs/x.md`` lists the
units of a page that the register does not cover yet.

On the pages (HTML only): an article ends with a 参考来源 list of the
sources its entries cite and its 编者注 link to (each with the date it was
read); a table holding dated claims (DATED_KINDS: prices, specs, costs,
company and market figures) says 数据截至 …, and
when that date is more than 12 months before the build, or the data is
undated, that it may be out of date
(the scheduled workflow ``stale-data`` reports such tables; a build never
fails because of the calendar).
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

from docutils import nodes

from kb.core import data as kb_data
from kb.core.anchors import SOURCES_ID
from kb.core.i18n import _
from kb.core.store import documents

SCHEMA = "claims.schema.json"

# -- what is a claim ----------------------------------------------------------------

UNIT = (
    r"%|％|‰|倍|元|美元|美金|万亿|千亿|百亿|亿|万|千|GB/s|TB/s|Gb/s|Gbps|Tbps|GiB|TiB|GB|TB|MB|KB|PB|"
    r"EB|kW|KW|MW|GW|千瓦|瓦|W|TFLOPS|PFLOPS|EFLOPS|GFLOPS|TOPS|FLOPS|tokens?|token|B(?![a-zA-Z])|"
    r"M(?![a-zA-Z])|K(?![a-zA-Z])|k(?![a-zA-Z])|年|个月|月|日|天|周|小时|分钟|秒|毫秒|ms|μs|us|ns|nm|GHz|"
    r"MHz|Hz|核|张|块|台|个|卡|层|家|款|人|条|项|位|bit|x(?![a-zA-Z])|×|℃|°C|mm|QPS|qps|倍速|"
    r"颗|片|座|轮|步|次|篇|节点|nodes?|GPUs?|ms"
)
NUMBER = r"\d[\d,，]*(?:\.\d+)?"
CLAIM = re.compile(
    rf"(?:[¥￥$€]\s?{NUMBER})|(?<!第)(?<![\w.]){NUMBER}\s?(?:[-~～—–至到]\s?{NUMBER}\s?)?(?:{UNIT})",
    re.IGNORECASE,
)

# Directives whose body is not the author's claims: code, diagrams, the
# editors' own notes, tables of contents.
SKIPPED = {
    "editor-note",
    "code-block",
    "code",
    "sourcecode",
    "mermaid",
    "math",
    "eval-rst",
    "toctree",
    "literalinclude",
    "include",
    "raw",
    "csv-table",
    "kb-article-list",
    "kb-guide-articles",
    "kb-guides",
    "kb-glossary",
    "kb-editor-notes",
    "admonition",
}
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})\s*(\{([\w-]+)\})?")
ROLE = re.compile(r"\{[\w:-]+\}`([^`<]*?)(?:\s*<[^`]*>)?`")
LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
SENTENCE = re.compile(r"[^。！？；!?;]+[。！？；!?;]?")


def plain(text: str) -> str:
    """Text as a reader reads it: roles and links as their text, no emphasis
    marks, one space for any run of white space."""
    text = ROLE.sub(r"\1", text)
    text = LINK.sub(r"\1", text)
    text = text.replace("**", "").replace("__", "")
    return re.sub(r"\s+", " ", text).strip()


def _author_lines(text: str):
    """(1-based line, text) of the article's own prose and tables: no front
    matter, code, comments, labels, or the bodies of SKIPPED directives."""
    lines = text.split("\n")
    i = 0
    if lines and lines[0].strip() == "---":
        i = next((k for k in range(1, len(lines)) if lines[k].strip() == "---"), len(lines) - 1) + 1
    stack: list[tuple[str, bool]] = []  # open fences: (marker, skipped)
    while i < len(lines):
        line = lines[i]
        match = FENCE.match(line)
        if (
            match
            and stack
            and match.group(2)[0] == stack[-1][0][0]
            and len(match.group(2)) >= len(stack[-1][0])
            and not match.group(3)
            and not line.strip()[len(match.group(2)) :].strip()
        ):
            stack.pop()  # a closing fence
        elif match and (match.group(3) or match.group(2)[0] != ":"):
            name = match.group(4)
            code = match.group(2)[0] != ":" and not name
            skipped = code or name in SKIPPED or (stack and stack[-1][1])
            stack.append((match.group(2), bool(skipped)))
        elif not (stack and stack[-1][1]):
            stripped = line.strip()
            if not (
                stripped.startswith(("%", "("))
                and stripped.endswith((")=",))
                or stripped.startswith("%")
                or re.match(r"^:[\w-]+:", stripped)
            ):
                yield i + 1, line
        i += 1


def claim_units(text: str) -> list[tuple[int, str]]:
    """(line, text) of every table cell and sentence holding a number-bearing claim."""
    units = []
    for number, line in _author_lines(text):
        stripped = line.strip()
        if stripped.startswith("|"):
            if re.fullmatch(r"\|[\s|:-]+\|?", stripped):
                continue  # the row under a table's head
            parts = [c for c in stripped.strip("|").split("|")]
        else:
            parts = SENTENCE.findall(re.sub(r"^(\s*([-*+]|\d+[.)]|#+|>)\s+)+", "", line))
        for part in parts:
            text_of = plain(part)
            if CLAIM.search(text_of):
                units.append((number, text_of))
    return units


# -- the register ---------------------------------------------------------------------


def register_files(data_dir: Path) -> dict[str, Path]:
    """docname -> its register file."""
    folder = Path(data_dir) / "claims"
    return {p.relative_to(folder).with_suffix("").as_posix(): p for p in sorted(folder.glob("*/*.yaml"))}


def load(data_dir: Path) -> tuple[dict[str, list[dict]], list[kb_data.Problem]]:
    """Every register: docname -> entries (each with its ``line`` in the file),
    and the problems found (schema, YAML)."""
    registers, problems = {}, []
    for doc, path in register_files(data_dir).items():
        problems += kb_data.read_yaml(path, kb_data.schema_path(data_dir, SCHEMA)).problems
        registers[doc] = _entries(path, data_dir)
    return registers, problems


def covers(entry_claim: str, unit: str) -> bool:
    claim = plain(entry_claim)
    return claim in unit or unit in claim


def uncovered(text: str, entries: list[dict]) -> list[tuple[int, str]]:
    """The claim units of a page that no entry covers."""
    return [
        (line, unit) for line, unit in claim_units(text) if not any(covers(e["claim"], unit) for e in entries)
    ]


def on_page(text: str, claim: str) -> bool:
    """Whether a registered claim is still printed on the page."""
    return plain(claim) in plain(text) or plain(claim) in "\n".join(
        plain(line) for _number, line in _author_lines(text)
    )


def _register(app, docname: str) -> list[dict]:
    """One article's register, for its page (not every register for every page)."""
    data_dir = Path(app.config.kb_data_dir)
    path = data_dir / "claims" / f"{docname}.yaml"
    return _entries(path, data_dir) if path.is_file() else []


def _entries(path: Path, data_dir: Path) -> list[dict]:
    """The entries of one register file, each with its file and line ([] if
    the file has problems: they are reported once, at config-inited)."""
    loaded = kb_data.read_yaml(path, kb_data.schema_path(data_dir, SCHEMA))
    if loaded.problems or not isinstance(loaded.data, list):
        return []
    return [
        {**entry, "line": node.start_mark.line + 1, "file": path}
        for entry, node in zip(loaded.data, loaded.root.value)
    ]


# -- on the pages -------------------------------------------------------------------------

MONTHS_OLD = 12
# Claims whose worth depends on when they were true: their tables say so.
DATED_KINDS = ("price", "spec", "cost", "company", "market")


UNDATED = "undated"


def as_of_text(as_of: str) -> str:
    if as_of == UNDATED:
        return _("原文未注明")
    parts = as_of.split("-")
    if len(parts) > 1:
        return _("{year} 年 {month} 月").format(year=int(parts[0]), month=int(parts[1]))
    return _("{year} 年").format(year=int(parts[0]))


def is_stale(as_of: str, today: dt.date) -> bool:
    if as_of == UNDATED:
        return False  # no date to age: the page says so (see on_doctree_resolved)
    parts = [int(p) for p in as_of.split("-")] + [12, 28][len(as_of.split("-")) - 1 :]
    year, month = parts[0], parts[1]
    return (today.year - year) * 12 + (today.month - month) > MONTHS_OLD


def sources_of(entries: list[dict]) -> list[dict]:
    """The sources an article's entries cite, each once, in order."""
    seen, out = set(), []
    for entry in entries:
        for source in entry.get("source", []):
            if source["url"] not in seen:
                seen.add(source["url"])
                out.append(source)
    return out


def note_sources(app, doctree, docname: str) -> list[dict]:
    """The web sources the page's 编者注 link to, dated by their note's :date:."""
    dates = {n["id"]: n.get("date", "") for n in documents(app.env, "editor_notes").get(docname, [])}
    out = []
    for note in doctree.findall(nodes.admonition):
        if "editor-note" not in note["classes"]:
            continue
        date = next((dates[i] for i in note["ids"] if i in dates), "")
        for ref in note.findall(nodes.reference):
            url = ref.get("refuri", "")
            if url.startswith(("https://", "http://")) and date:
                out.append({"title": ref.astext(), "url": url, "accessed": date})
    return out


def _references(entries: list[dict], extra: list[dict] = ()) -> nodes.section | None:
    sources = sources_of([*entries, {"source": list(extra)}])
    if not sources:
        return None
    section = nodes.section(ids=[SOURCES_ID], classes=["kb-sources"])
    section += nodes.title("", _("参考来源"))
    items = nodes.enumerated_list(enumtype="arabic", prefix="", suffix=".")
    for source in sources:
        para = nodes.paragraph()
        para += nodes.reference("", source["title"], refuri=source["url"])
        para += nodes.Text(_("（{date} 查阅）").format(date=source["accessed"]))
        items += nodes.list_item("", para)
    section += items
    return section


def _cells(claim: str) -> list[str]:
    return [plain(c) for c in claim.strip().strip("|").split("|") if plain(c)]


def _in_row(claim: str, cells: list[str]) -> bool:
    """Whether a claim (a whole row as printed, or text of one cell) is in a
    table row (``cells``: its cells' plain text)."""
    if claim.strip().startswith("|"):
        return all(c in cells for c in _cells(claim))
    wanted = plain(claim)
    return any(wanted in cell for cell in cells)


def _table_dates(table: nodes.table, entries: list[dict]) -> list[str]:
    """The as-of dates of the price and spec claims in a table, oldest first
    (``undated`` last)."""
    rows = [[plain(entry.astext()) for entry in row.findall(nodes.entry)] for row in table.findall(nodes.row)]
    return sorted(
        {
            e["as_of"]
            for e in entries
            if e.get("as_of")
            and e["kind"] in DATED_KINDS
            and any(_in_row(e["claim"], cells) for cells in rows)
        },
        key=lambda d: (d == UNDATED, d),
    )


def on_doctree_resolved(app, doctree, docname: str) -> None:
    if app.builder.format != "html":
        return
    entries = _register(app, docname)
    if not entries:
        return
    today = dt.date.today()
    for table in list(doctree.findall(nodes.table)):
        dates = _table_dates(table, entries)
        if not dates:
            continue
        dated = [d for d in dates if d != UNDATED]
        para = nodes.paragraph(classes=["kb-as-of"])
        if dated:
            dates_text = _("、").join(as_of_text(d) for d in dated)
            para += nodes.Text(_("数据截至 {dates}。").format(dates=dates_text))
        if UNDATED in dates:
            para += nodes.Text(
                _("其余数据原文未注明日期，也没有找到来源。")
                if dated
                else _("表中数据原文未注明日期，也没有找到来源。")
            )
        if UNDATED in dates or is_stale(dated[0], today):
            para["classes"].append("kb-stale")
            if dated and is_stale(dated[0], today):
                said = _("这些数据已超过 {months} 个月，价格与规格可能已经变化，使用前请核对最新来源。")
            else:
                said = _("价格与规格可能已经变化，使用前请核对最新来源。")
            para += nodes.strong("", said.format(months=MONTHS_OLD))
        table.parent.insert(table.parent.index(table) + 1, para)
    section = next(iter(doctree.findall(nodes.section)), None)
    references = _references(entries, note_sources(app, doctree, docname))
    if section is not None and references is not None:
        # the sources belong to the article: before its keywords and footer (kb.pages.tags)
        after = next(
            (
                i
                for i, child in enumerate(section.children)
                if {"kb-keywords", "kb-article-footer"} & set(child.get("classes", []))
            ),
            len(section.children),
        )
        section.insert(after, references)


def undated_claims(data_dir: Path) -> list[tuple[str, dict]]:
    """(docname, entry) of every price or spec claim nobody could date."""
    registers, _problems = load(data_dir)
    return [
        (doc, e)
        for doc, entries in sorted(registers.items())
        for e in entries
        if e.get("as_of") == UNDATED and e["kind"] in DATED_KINDS
    ]


def stale_claims(data_dir: Path, today: dt.date) -> list[tuple[str, dict]]:
    """(docname, entry) of every price or spec claim whose data is more than
    MONTHS_OLD months old on ``today``."""
    registers, _problems = load(data_dir)
    return [
        (doc, e)
        for doc, entries in sorted(registers.items())
        for e in entries
        if e.get("as_of") and e["kind"] in DATED_KINDS and is_stale(e["as_of"], today)
    ]


def on_config_inited(app, config) -> None:
    _registers, problems = load(Path(config.kb_data_dir))
    kb_data.report(app, problems)


def setup(app) -> dict[str, Any]:
    app.setup_extension("kb.core.data")
    app.setup_extension("kb.core.store")
    app.setup_extension("kb.core.i18n")
    app.connect("config-inited", on_config_inited)
    app.connect("doctree-resolved", on_doctree_resolved)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
