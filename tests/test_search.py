"""Search as readers use it: search.html?q=… in headless Chromium.

The query set (tests/search_queries.yaml) names, for each query, the pages of
which one must rank in the top 3, and for answer-level queries the section
that answers. Reports the mean reciprocal rank (MRR), the zero-result rate
and the section-level hit@1; fails under MRR 0.99, on any zero-result query,
on any query whose expected page is not in the top 3, or under a section
hit@1 of 0.8. A second set (tests/search_holdout.yaml), written by a
reviewer who saw neither the ranking code nor the first set, is held out:
never tuned against, it has floors of its own (test_search_quality_on_the_held_out_set).
"""

from __future__ import annotations

import gzip
import html as html_lib
import json
import os
import re
import subprocess
import urllib.parse
from pathlib import Path

import pytest
import yaml
from local_site import QuietHandler, serve
from node_sandbox import SITE_SCRIPT_READS, run_node

ROOT = Path(__file__).resolve().parent.parent
QUERIES = yaml.safe_load((ROOT / "tests" / "search_queries.yaml").read_text(encoding="utf-8"))
HOLDOUT = yaml.safe_load((ROOT / "tests" / "search_holdout.yaml").read_text(encoding="utf-8"))

pytestmark = pytest.mark.browser


def results_for(page, server: str, query: str, *, typed: bool = False) -> list[dict]:
    """Rank-ordered results of the search page: url (docname), title, and
    the section links (docname#id).

    The page opens search.html?q=…; with `typed`, a search page already open
    gets the query typed into its box instead (as a reader asks a second
    question: the engine stays loaded, so a long query set runs in a fraction
    of the time)."""
    if typed and page.url.startswith(f"{server}/search.html"):
        page.fill("#kb-search-input", query)
        page.wait_for_function(
            "q => { const c = document.getElementById('search-results');"
            " return c.hasAttribute('data-search-done') && c.dataset.searchQuery === q; }",
            arg=query,
            timeout=20_000,
        )
    else:
        page.goto(f"{server}/search.html?q={urllib.parse.quote(query)}")
        page.wait_for_selector("#search-results[data-search-done]", state="attached", timeout=20_000)
    rows = page.eval_on_selector_all(
        "[data-search-result]",
        "els => els.map(e => { const a = e.querySelector('a');"
        " return {href: a.getAttribute('href'), title: a.textContent,"
        " sections: [...e.querySelectorAll('.kb-search-sections a')].map(s => s.getAttribute('href'))}; })",
    )
    for row in rows:
        path = urllib.parse.urlparse(row["href"]).path.lstrip("/")
        row["docname"] = path.removesuffix(".html")
        row["sections"] = [
            "{}#{}".format(
                urllib.parse.urlparse(h).path.lstrip("/").removesuffix(".html"),
                urllib.parse.urlparse(h).fragment,
            )
            for h in row["sections"]
        ]
    return rows


def search_script(page, server: str, module: str, function: str, *args):
    """What `function`, exported by the search page's module
    (_static/kb-search/<module>.js), returns for `args` in the browser.
    The modules' pure functions have unit tests under tests/js (node --test)."""
    page.goto(f"{server}/search.html")
    return page.evaluate(
        "async ([module, name, args]) => (await import(`./_static/kb-search/${module}.js`))[name](...args)",
        [module, function, list(args)],
    )


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "tests" / "js").glob("*.test.mjs")))
def test_search_script_unit_tests(name, tmp_path):
    """The site scripts' unit tests (tests/js), run by Node without a browser,
    with the rights of tests/node_sandbox.py: the pinned Pagefind indexes the
    adapter's test page here first (its test may start no program)."""
    (tmp_path / "index.html").write_bytes((ROOT / "tests/js/fragment-page.html").read_bytes())
    subprocess.run(
        [ROOT / "node_modules/.bin/pagefind", "--site", tmp_path, "--silent"], check=True, cwd=tmp_path
    )
    reads = [*SITE_SCRIPT_READS, ROOT / "node_modules/pagefind/package.json", tmp_path]
    proc = run_node([f"tests/js/{name}"], reads, env={"KB_FRAGMENT_SITE": str(tmp_path)})
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert re.search(r"^# pass [1-9]", proc.stdout, re.M), proc.stdout[-2000:]
    assert re.search(r"^# fail 0$", proc.stdout, re.M), proc.stdout[-2000:]


def test_node_runs_the_site_scripts_without_rights(tmp_path):
    """A module of a pull request, run by the tests, can write no file, start
    no program, read nothing outside what it is given (not .git/), and finds
    no variable of CI's environment."""
    (tmp_path / "evil.mjs").write_text(
        """import fs from "node:fs";
const tries = {
  write: () => fs.writeFileSync(process.argv[2] + "/pwned", "x"),
  exec: async () => (await import("node:child_process")).execSync("true"),
  git: () => fs.readFileSync(process.argv[3]),
};
const out = { env: Object.keys(process.env).sort() };
for (const [name, f] of Object.entries(tries)) {
  try { await f(); out[name] = "done"; } catch (e) { out[name] = e.code; }
}
console.log(JSON.stringify(out));
""",
        encoding="utf-8",
    )
    os.environ["KB_SECRET_FOR_TEST"] = "x"
    try:
        proc = run_node(
            [str(tmp_path / "evil.mjs"), str(tmp_path), str(ROOT / "README.md")], [tmp_path / "evil.mjs"]
        )
    finally:
        del os.environ["KB_SECRET_FOR_TEST"]
    out = json.loads(proc.stdout)
    assert out == {
        "env": ["PATH"],
        "write": "ERR_ACCESS_DENIED",
        "exec": "ERR_ACCESS_DENIED",
        "git": "ERR_ACCESS_DENIED",
    }
    assert not (tmp_path / "pwned").exists()


def test_node_is_not_run_on_a_folder_holding_a_link(tmp_path):
    """Node's permission model follows links: a link in a folder it may read
    (root -> /) would give the script the machine's files (review 19)."""
    folder = tmp_path / "kb-search"
    folder.mkdir()
    (folder / "query.js").write_text("console.log(1)\n", encoding="utf-8")
    (folder / "root").symlink_to("/")
    with pytest.raises(AssertionError, match="root: a symbolic link"):
        run_node([str(folder / "query.js")], [folder])
    (folder / "root").unlink()
    assert run_node([str(folder / "query.js")], [folder]).stdout == "1\n"


@pytest.mark.parametrize(
    ("queries", "kinds"),
    [
        (QUERIES, {"everyday", "en-zh", "synonym", "question", "substring", "mixed", "answer"}),
        (HOLDOUT, {"everyday", "en-zh", "synonym", "question", "mixed", "answer"}),
    ],
    ids=["tuned", "held-out"],
)
def test_query_set_is_large_and_varied(site, queries, kinds):
    """Each set: its kinds of query, pages that exist, and sections that are
    anchors of an expected page (a page edit that drops one fails here, not
    as a search miss)."""
    assert len(queries) >= 80
    assert kinds <= {q["kind"] for q in queries}
    docs = {p.relative_to(ROOT / "docs").with_suffix("").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    for q in queries:
        assert set(q["expect"]) <= docs, q
    answers = [q for q in queries if "section" in q]
    assert len(answers) >= 20
    for q in answers:  # each section is an anchor of an expected page
        for target in q["section"]:
            doc, anchor = target.split("#")
            assert doc in q["expect"], q
            assert f'id="{anchor}"' in (site / f"{doc}.html").read_text(encoding="utf-8"), target


def quality(page, server: str, items: list[dict]) -> dict:
    """Each query typed into one open search page: the mean reciprocal rank
    of the first expected page, the queries without a result, those whose
    expected pages are all outside the top 3, and for answer-level items
    (`section`) whether the first result is the page and its first section
    link the section that answers."""
    ranks, zero, failures, section_hits, section_misses = [], [], [], 0, []
    answers = [item for item in items if "section" in item]
    for item in items:
        rows = results_for(page, server, item["q"], typed=True)
        if not rows:
            zero.append(item["q"])
        rank = next((i + 1 for i, r in enumerate(rows) if r["docname"] in item["expect"]), None)
        ranks.append(1 / rank if rank else 0.0)
        if rank is None or rank > 3:
            failures.append(
                f"{item['q']!r} ({item['kind']}): expected {item['expect']} in top 3, "
                f"got {[r['docname'] for r in rows[:5]]}"
            )
        if "section" in item:
            first = rows[0]["sections"][:1] if rows else []
            if first and first[0] in item["section"]:
                section_hits += 1
            else:
                section_misses.append(
                    f"{item['q']!r}: expected {item['section']}, "
                    f"first result's sections {rows[0]['sections'] if rows else []}"
                )
    return {
        "mrr": sum(ranks) / len(ranks),
        "zero": zero,
        "failures": failures,
        "hit1": section_hits / len(answers),
        "misses": section_misses,
        "report": f"{len(items)} queries, MRR {sum(ranks) / len(ranks):.3f}, "
        f"zero-result {len(zero)}/{len(items)}, outside top 3: {len(failures)}; "
        f"answer level: section hit@1 {section_hits}/{len(answers)} ({section_hits / len(answers):.2f})",
    }


def measured(page, server: str, items: list[dict], title: str, capsys) -> dict:
    """``quality`` of ``items``, its report and misses printed under ``title``."""
    q = quality(page, server, items)
    with capsys.disabled():
        print(f"\n{title}: {q['report']}")
        for line in q["failures"] + q["misses"]:
            print("  " + line)
    return q


def test_search_quality(page, server, capsys):
    """Page level: MRR over the whole set, each expected page in the top 3.
    Answer level (items with `section`): the first result is the page and
    its first section link the section that answers."""
    q = measured(page, server, QUERIES, "search quality", capsys)
    assert not q["zero"], f"queries with no result: {q['zero']}"
    assert q["mrr"] >= 0.99, f"MRR {q['mrr']:.3f} < 0.99"
    assert not q["failures"], "\n".join(q["failures"])
    assert q["hit1"] >= 0.8, "\n".join(q["misses"])
    assert page.console_errors == [] and page.foreign_requests == []


def test_search_quality_on_the_held_out_set(page, server, capsys):
    """tests/search_holdout.yaml: queries a reviewer wrote from the pages
    alone, without the ranking code or the set above, and never tuned
    against (its header says so). Its floor is below the tuned set's: on
    2026-12-05, before any change was measured with it, it scored MRR 0.943,
    3 of 80 outside the top 3, section hit@1 40/45. A change that loses
    ground on questions nobody optimised for fails here even when the
    tuned set still passes."""
    q = measured(page, server, HOLDOUT, "search quality, held-out set", capsys)
    assert not q["zero"], f"queries with no result: {q['zero']}"
    assert q["mrr"] >= 0.9, f"MRR {q['mrr']:.3f} < 0.9\n" + "\n".join(q["failures"])
    assert len(q["failures"]) <= len(HOLDOUT) // 10, "\n".join(q["failures"])
    assert q["hit1"] >= 0.8, "\n".join(q["misses"])


def test_result_contract_title_sections_and_highlight(page, server):
    rows = results_for(page, server, "梯度爆炸")
    first = page.locator("[data-search-result]").first
    assert rows[0]["title"].startswith("LLM 训练故障排查手册")
    assert "<mark>" in first.locator(".kb-search-excerpt").first.inner_html()
    sections = first.locator(".kb-search-sections a").all_inner_texts()
    assert sections and "梯度爆炸" in sections[0], sections
    href = first.locator(".kb-search-sections a").first.get_attribute("href")
    page.goto(href)  # the section link lands on that heading
    anchor = urllib.parse.urlparse(href).fragment
    assert page.locator(f"[id='{anchor}']").inner_text().startswith("案例 3：梯度爆炸")
    # the page holds only what a reader sees
    assert page.locator(".kb-aka").count() == 0
    assert "⟦" not in page.locator("article").inner_text()


def test_a_page_found_through_another_name_shows_its_own_words(page, server):
    """The troubleshooting page says 梯度爆炸; "exploding gradients" finds it
    through the glossary's names (the search page expands the query), and the
    results show the page's own words, the matching term marked, and nothing
    that is not on the page."""
    rows = results_for(page, server, "exploding gradients")
    assert rows[0]["title"].startswith("LLM 训练故障排查手册")
    first = page.locator("[data-search-result]").first
    assert first.locator(".kb-search-sections a").first.inner_text() == "案例 3：梯度爆炸"
    excerpts = " ".join(first.locator(".kb-search-excerpt").evaluate_all("els => els.map(e => e.innerHTML)"))
    assert "<mark>梯度爆炸</mark>" in excerpts, excerpts
    assert "exploding" not in first.inner_text().lower()
    shown = page.locator("#search-results").inner_text()
    assert "⟦" not in shown and "⟧" not in shown and "｜" not in shown
    # ZeRO-3 is one word: marked whole, never the zero of zero_grad or a 3
    results_for(page, server, "ZeRO-3")
    marks = [" ".join(m.lower().split()) for m in page.locator("[data-search-result] mark").all_inner_texts()]
    assert marks and set(marks) <= {
        "zero-3",
        "zero",
        "zero-1",
        "zero-2",
        "zero 优化",
        "零冗余优化器",
        "zero redundancy optimizer",
    }, marks
    assert "zero-3" in marks, marks
    assert page.console_errors == [] and page.foreign_requests == []


def page_words(site, docname: str) -> str:
    """A page's text as a reader sees it, whitespace collapsed."""
    html = (site / f"{docname}.html").read_text(encoding="utf-8")
    body = html[html.index("data-pagefind-body") :]
    # what pagefind.yml keeps out of the index: links to an 编者注, permalinks
    body = re.sub(
        r'<a class="[^"]*(?:kb-note-ref|headerlink)[^"]*".*?</a>|<script.*?</script>', " ", body, flags=re.S
    )
    body = re.sub(r"<[^>]+>", " ", body)
    return re.sub(r"\s+", "", html_lib.unescape(body))


@pytest.mark.parametrize("docname", ["glossary", "errata", "articles"])
def test_pages_found_by_name_index_their_title_only(site, docname):
    """The glossary, the errata and the list of all articles would outrank the
    articles they repeat: Pagefind indexes their <h1> and nothing else."""
    html = (site / f"{docname}.html").read_text(encoding="utf-8")
    assert len(re.findall(r"data-pagefind-body", html)) == 1
    assert re.search(r"<h1 data-pagefind-body[^>]*>", html), html[:2000]


def test_only_links_that_show_a_notes_verdict_are_kept_out_of_the_index(site):
    """A link to an 编者注 that repeats the note's verdict is left out of the
    index (pagefind.yml: .kb-note-ref); one with words of its own (见{ref}`案例
    3 的编者注 <…>`) is the page's sentence, and a result that left it out
    showed "见。"."""
    kept_out, indexed = [], []
    for path in sorted(site.glob("*/*.html")):
        body = path.read_text(encoding="utf-8")
        for classes, text in re.findall(r'<a class="([^"]*)" href="[^"]*#note-[^"]*">(.*?)</a>', body, re.S):
            words = re.sub(r"<[^>]+>", "", text)
            (kept_out if "kb-note-ref" in classes.split() else indexed).append(words)
    assert kept_out and all(words.startswith("编者注：") for words in kept_out), kept_out[:5]
    assert indexed and not any(words.startswith("编者注：") for words in indexed), indexed[:5]
    # a paragraph of such links goes with them, not leaving "· · ·" behind
    for path in sorted(site.glob("*/index.html")):
        body = path.read_text(encoding="utf-8")
        body = re.sub(
            r'<p class="kb-note-ref">.*?</p>|<a class="kb-note-ref[^"]*".*?</a>', "", body, flags=re.S
        )
        text = re.sub(r"<[^>]+>", "", body)
        assert not re.search(r"·\s*·", text), (path.name, re.search(r".{40}·\s*·", text, re.S))


RESULTS_JS = """() => [...document.querySelectorAll('[data-search-result]')].map(e => ({
  href: e.querySelector('a').getAttribute('href'),
  excerpts: [...e.querySelectorAll('.kb-search-excerpt')].map(x => x.innerHTML.replace(/^ — /, '')),
  sections: [...e.querySelectorAll('.kb-search-sections a')].map(a => a.textContent)}))"""


@pytest.mark.parametrize(
    "query",
    [
        "显存",
        "检查点",
        "为什么选择 GPU 租赁",
        "昇腾 910B",
        "ZeRO-1",
        "显存不够",
        "mixed precision",
        "训练很慢",
        "推理成本怎么算",
    ],
)
def test_results_read_as_the_pages_do(page, server, site, query):
    """Section titles as the pages write them, excerpts that are the pages'
    own text (no alias text, no ". " glued between table cells, no diagram
    source: 训练很慢 is found by a diagram's words), and marks on whole words
    of the query, not on a character of another word."""
    results_for(page, server, query)
    rows = page.evaluate(RESULTS_JS)
    assert rows
    for row in rows:
        doc = urllib.parse.urlparse(row["href"]).path.lstrip("/").removesuffix(".html")
        text = page_words(site, doc)
        headings = re.sub(
            r"\s+",
            "",
            html_lib.unescape(
                " ".join(
                    re.findall(
                        r"<h[1-6][^>]*>(.*?)</h[1-6]>",
                        (site / f"{doc}.html").read_text(encoding="utf-8"),
                        re.S,
                    )
                )
            ),
        )
        for title in row["sections"]:
            assert re.sub(r"\s+", "", title) in re.sub(r"<[^>]+>", "", headings), (query, title)
            assert not re.search(r"[\u4e00-\u9fff] [\u4e00-\u9fff？]", title), (query, title)
        for excerpt in row["excerpts"]:
            plain = html_lib.unescape(re.sub(r"</?mark>", "", excerpt))
            assert ". " not in plain.replace("e.g. ", "") or re.search(r"\d\. ", plain), (query, plain)
            assert not re.search(r"-->|flowchart|subgraph|<br/>", plain), (query, plain)
            for piece in re.split(r"\s+", plain):
                assert piece in text, (query, piece, doc)
            for mark in re.findall(r"<mark>(.*?)</mark>", excerpt):
                # a whole word: the mark is not a lone character inside a longer Chinese word
                assert len(mark) > 1 or not re.match(r"[\u4e00-\u9fff]", mark), (query, mark, excerpt)
    assert page.console_errors == [] and page.foreign_requests == []


def test_highlight_marks_the_query_not_a_character_of_another_word(page, server):
    results_for(page, server, "显存")
    marks = page.locator("[data-search-result] mark").all_inner_texts()
    assert marks
    names = {"显存", "GPU memory", "VRAM", "显存容量", "显存占用"}
    assert {m.strip() for m in marks} <= {n for n in names} | {n.lower() for n in names}, marks


@pytest.mark.parametrize("twice", [False, True], ids=["decoded", "compressed-again"])
def test_fragments_sent_with_a_content_encoding(page, site, twice):
    """A host may send Pagefind's fragments (gzip files) with Content-Encoding:
    gzip, the file being the encoded content, or compressed once more. The
    results show their excerpts either way, without falling back."""

    class Recoding(QuietHandler):
        def do_GET(self):
            if not self.path.endswith(".pf_fragment"):
                return super().do_GET()
            stored = (Path(self.directory) / self.path.lstrip("/")).read_bytes()
            body = gzip.compress(stored) if twice else stored
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with serve(site, handler_class=Recoding) as base:
        rows = results_for(page, base, "梯度爆炸")
    assert rows[0]["title"].startswith("LLM 训练故障排查手册")
    assert "<mark>" in page.locator("[data-search-result] .kb-search-excerpt").first.inner_html()
    assert page.console_errors == []


def test_a_fragment_that_does_not_load_falls_back_to_pagefind(page, server):
    page.goto(f"{server}/search.html")
    got = page.evaluate("""async () => (await import('./_static/kb-search/fragment.js')).pageData(
        {id: 'zh-cn_missing', words: [0], data: async () => ({url: '/from-pagefind.html', meta: {title: 't'},
         excerpt: '<b>a</b> <mark>b</mark>', sub_results: [{title: 's', url: '/x.html#s', excerpt: 'c',
         locations: [1]}]})}, [], new URL('./', location.href))""")
    assert got["url"] == "/from-pagefind.html" and got["excerpt"] == "a <mark>b</mark>"
    assert [(s["title"], s["url"]) for s in got["sub_results"]] == [("s", "/x.html#s")]
    assert any("kb-search: fragment zh-cn_missing" in e for e in page.console_errors)


def test_more_results_on_request(page, server):
    """Five results at first; 显示更多结果 adds the next ones below, in rank
    order, without repeating any, and moves focus to the first new one."""
    first = [r["href"] for r in results_for(page, server, "GPU")]
    total = int(re.search(r"找到 (\d+) 篇", page.locator("#kb-search-status").inner_text()).group(1))
    assert len(first) == 5 < total
    page.locator(".kb-search-more").click()
    shown = min(total, 10)
    page.wait_for_function(
        f"document.querySelectorAll('[data-search-result]').length === {shown}", timeout=20_000
    )
    hrefs = page.eval_on_selector_all(
        "[data-search-result] a.kb-search-title", "els => els.map(a => a.getAttribute('href'))"
    )
    assert hrefs[:5] == first and len(set(hrefs)) == shown
    assert page.evaluate("document.activeElement.getAttribute('href')") == hrefs[5]
    status = page.locator("#kb-search-status").inner_text()
    assert f"找到 {total} 篇相关页面" in status, status
    assert (f"显示前 {shown} 篇" in status) == (total > shown), status
    assert page.locator(".kb-search-more").count() == (1 if total > shown else 0)
    assert page.console_errors == [] and page.foreign_requests == []


@pytest.mark.parametrize(
    ("query", "term"),
    [
        ("混合精度怎么用", "混合精度"),
        ("mixed precision", "混合精度"),
        # of the terms a query names, the one named by the longest name
        ("梯度爆炸 nccl 超时", "NCCL"),
    ],
)
def test_the_glossary_term_a_query_names_heads_the_results(page, server, query, term):
    results_for(page, server, query)
    aside = page.locator(".kb-search-term-title")
    assert aside.inner_text().startswith(f"术语：{term}")
    href = aside.locator("a").get_attribute("href")
    assert urllib.parse.urlparse(href).path.endswith("/glossary.html")


def test_a_glossary_card_shows_code_as_code(page, server):
    """data/glossary.yaml writes code in backticks (MyST): the card shows it
    as the glossary page does, as code, without the backticks."""
    results_for(page, server, "OOM")
    card = page.locator(".kb-search-term")
    assert "`" not in card.inner_text()
    assert card.locator("code").all_inner_texts() == ["CUDA out of memory"]


def test_a_question_of_what_a_term_means_has_its_glossary_entry_first(page, server):
    """ "X 是什么" asks for the definition: the glossary's entry is the first
    result (its place in the glossary as the section), the articles after it;
    a question that names the term among other words keeps the card above."""
    rows = results_for(page, server, "混合精度是什么意思")
    assert rows[0]["docname"] == "glossary" and rows[0]["sections"][0].startswith("glossary#term-"), rows[:2]
    assert rows[0]["title"].startswith("术语：混合精度") and len(rows) > 1
    assert page.locator(".kb-search-term").count() == 0  # not shown twice
    rows = results_for(page, server, "混合精度能省多少显存")
    assert rows[0]["docname"] != "glossary" and page.locator(".kb-search-term").count() == 1


def test_no_result_message_and_done_flag(page, server):
    rows = results_for(page, server, "zzzzzz")
    assert rows == []
    assert "没有找到" in page.locator("#search-results").inner_text()


def test_sidebar_search_box_leads_to_results(page, server):
    page.goto(f"{server}/training/index.html")
    box = page.locator("input.sidebar-search")
    box.fill("NCCL")
    box.press("Enter")
    page.wait_for_selector("#search-results[data-search-done]", state="attached", timeout=20_000)
    titles = page.locator("[data-search-result] a.kb-search-title").all_inner_texts()
    assert any(t.startswith("LLM 训练故障排查手册") for t in titles), titles
    assert page.console_errors == [] and page.foreign_requests == []


def shown(page) -> tuple[str, list[str]]:
    """The query whose results are shown, and their titles, once a run is done."""
    page.wait_for_selector("#search-results[data-search-done]", state="attached", timeout=20_000)
    return (
        page.get_attribute("#search-results", "data-search-query"),
        page.locator("[data-search-result] a.kb-search-title").all_inner_texts(),
    )


def test_results_follow_typing_and_history(page, server):
    page.goto(f"{server}/search.html?q=%E6%98%87%E8%85%BE")  # 昇腾
    assert shown(page)[0] == "昇腾"
    box = page.locator("#kb-search-input")
    # Keystrokes faster than a search: only the last text is shown, never an
    # older one arriving late.
    box.fill("")
    box.press_sequentially("gradient clipping", delay=5)
    page.wait_for_function(
        "document.querySelector('#search-results').dataset.searchQuery === 'gradient clipping'"
        " && document.querySelector('#search-results').hasAttribute('data-search-done')",
        timeout=20_000,
    )
    query, titles = shown(page)
    assert query == "gradient clipping" and titles, titles
    assert any(
        t.startswith("LLM 训练故障排查手册") or t.startswith("大模型训练优化实战") for t in titles[:3]
    ), titles
    page.wait_for_timeout(500)  # no late run replaces it
    assert shown(page)[0] == "gradient clipping"
    assert urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)["q"] == ["gradient clipping"]
    box.press("Enter")  # the results shown are this query's: nothing reruns
    assert shown(page)[0] == "gradient clipping"
    page.go_back()  # the query the page opened with has its own history entry
    page.wait_for_function(
        "document.querySelector('#search-results').dataset.searchQuery === '昇腾'", timeout=20_000
    )
    assert box.input_value() == "昇腾"
    assert page.console_errors == [] and page.foreign_requests == []


def test_invisible_characters_do_not_split_a_query(page, server):
    """训\u200b练 (a zero-width space), or bidi controls around a word, find
    what the visible query finds."""
    plain = [r["docname"] for r in results_for(page, server, "训练")]
    assert plain
    for hidden in ("训\u200b练", "\u202e训练\u202c", "\ufeff训\u200d练\u2066"):
        assert [r["docname"] for r in results_for(page, server, hidden)] == plain, repr(hidden)


def test_a_huge_query_is_cut_with_a_notice(page, server):
    """A query opened from a link is searched as its first 200 characters, and
    says so; the box takes no more than 200 (a 100 KB paste kept the page
    busy for 40 s)."""
    link = "混合精度" + "训练" * 3_000  # as long as the test server's request line allows
    page.goto(f"{server}/search.html?q={urllib.parse.quote(link)}")
    page.wait_for_selector("#search-results[data-search-done]", state="attached", timeout=20_000)
    assert "只搜索了前 200 个字" in page.inner_text(".kb-search-cut")
    assert page.locator("[data-search-result]").count() > 0
    assert len(page.input_value("#kb-search-input")) == 200
    page.fill("#kb-search-input", "训练" * 50_000)
    assert len(page.input_value("#kb-search-input")) == 200
