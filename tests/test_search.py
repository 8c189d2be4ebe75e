"""Search as readers use it: search.html?q=… in headless Chromium.

The query set (tests/search_queries.yaml) names, for each query, the pages of
which one must rank in the top 3. Reports the mean reciprocal rank (MRR) and
the zero-result rate; fails under MRR 0.95, on any zero-result query, or on
any query whose expected page is not in the top 3.
"""

from __future__ import annotations

import gzip
import re
import urllib.parse
from pathlib import Path

import pytest
import yaml

from local_site import QuietHandler, serve

ROOT = Path(__file__).resolve().parent.parent
QUERIES = yaml.safe_load((ROOT / "tests" / "search_queries.yaml").read_text(encoding="utf-8"))

pytestmark = pytest.mark.browser


def results_for(page, server: str, query: str) -> list[dict]:
    """Rank-ordered results of the search page: url (docname) and title."""
    page.goto(f"{server}/search.html?q={urllib.parse.quote(query)}")
    page.wait_for_selector("#search-results[data-search-done]", state="attached", timeout=20_000)
    rows = page.eval_on_selector_all(
        "[data-search-result]",
        "els => els.map(e => { const a = e.querySelector('a');"
        " return {href: a.getAttribute('href'), title: a.textContent}; })")
    for row in rows:
        path = urllib.parse.urlparse(row["href"]).path.lstrip("/")
        row["docname"] = path.removesuffix(".html")
    return rows


def search_script(page, server: str, function: str, *args):
    """What `function`, exported by the search page's script, returns for `args`."""
    page.goto(f"{server}/search.html")
    return page.evaluate("async ([name, args]) => (await import('./_static/kb-search.js'))[name](...args)",
                         [function, list(args)])


def test_query_set_is_large_and_varied():
    assert len(QUERIES) >= 80
    kinds = {q["kind"] for q in QUERIES}
    assert {"everyday", "en-zh", "synonym", "question", "substring", "mixed"} <= kinds
    docs = {p.relative_to(ROOT / "docs").with_suffix("").as_posix()
            for p in (ROOT / "docs").rglob("*.md")}
    for q in QUERIES:
        assert set(q["expect"]) <= docs, q


def test_search_quality(page, server, capsys):
    ranks, zero, failures = [], [], []
    for item in QUERIES:
        rows = results_for(page, server, item["q"])
        if not rows:
            zero.append(item["q"])
        rank = next((i + 1 for i, r in enumerate(rows) if r["docname"] in item["expect"]), None)
        ranks.append(1 / rank if rank else 0.0)
        if rank is None or rank > 3:
            failures.append(f"{item['q']!r} ({item['kind']}): expected {item['expect']} in top 3, "
                            f"got {[r['docname'] for r in rows[:5]]}")
    mrr = sum(ranks) / len(ranks)
    with capsys.disabled():
        print(f"\nsearch quality: {len(QUERIES)} queries, MRR {mrr:.3f}, "
              f"zero-result {len(zero)}/{len(QUERIES)}, outside top 3: {len(failures)}")
        for line in failures:
            print("  " + line)
    assert not zero, f"queries with no result: {zero}"
    assert mrr >= 0.95, f"MRR {mrr:.3f} < 0.95"
    assert not failures, "\n".join(failures)
    assert page.console_errors == [] and page.foreign_requests == []


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
    # the glossary names the page carries for the index are not shown to readers
    assert page.locator(f"[id='{anchor}'] .kb-aka").count() == 1
    assert "⟦" not in page.locator("article").inner_text()


def test_a_page_found_through_another_name_says_which(page, server):
    """The troubleshooting page says 梯度爆炸; "exploding gradients" finds it
    through the glossary names in the index, and the results show the page's
    own words with the matching name beside them, never the index's marks."""
    rows = results_for(page, server, "exploding gradients")
    assert rows[0]["title"].startswith("LLM 训练故障排查手册")
    first = page.locator("[data-search-result]").first
    assert first.locator(".kb-search-sections a").first.inner_text() == "案例 3：梯度爆炸"
    excerpt = first.locator(".kb-search-excerpt").first.inner_html()
    # where the excerpt starts is Pagefind's choice (a word window around the
    # matches); the page's own word is there, with the name that matched beside it
    assert "爆炸（<mark>exploding </mark><mark>gradients</mark>）" in excerpt, excerpt
    shown = page.locator("#search-results").inner_text()
    assert "⟦" not in shown and "⟧" not in shown and "｜" not in shown
    # a query that names the term itself: its other names stay out of the excerpt
    results_for(page, server, "梯度爆炸")
    assert "exploding" not in page.locator("[data-search-result]").first.inner_text()
    # of the other names, those the query matched as a whole
    results_for(page, server, "ZeRO-3")
    excerpts = " ".join(page.locator("[data-search-result] .kb-search-excerpt").all_inner_texts())
    assert "ZeRO-3）" in excerpts and "Zero Redundancy Optimizer" not in excerpts, excerpts
    assert page.console_errors == [] and page.foreign_requests == []


@pytest.mark.parametrize(("excerpt", "shown"), [
    # the mention matched: its other names are dropped, spacing kept
    ("用<mark>混合</mark><mark>精度 </mark>⟦ mixed precision ｜ AMP ⟧ 训练", "用<mark>混合</mark><mark>精度 </mark>训练"),
    ("use AMP ⟦ 混合精度 ｜ mixed precision ⟧ to train", "use AMP to train"),
    # only another name matched: it is shown in brackets
    ("用混合精度 ⟦ <mark>mixed </mark><mark>precision </mark>｜ AMP ⟧ 训练",
     "用混合精度（<mark>mixed </mark><mark>precision</mark>）训练"),
    # cut off by the excerpt at its end, or at its start
    ("用混合精度 ⟦ <mark>mixed </mark>precision ｜ A", "用混合精度（<mark>mixed </mark>precision）"),
    ("precision ｜ <mark>AMP </mark>⟧ 训练", "（<mark>AMP</mark>）训练"),
])
def test_excerpts_show_names_as_readers_expect(page, server, excerpt, shown):
    assert search_script(page, server, "showAliases", excerpt) == shown


@pytest.mark.parametrize(("query", "title", "share"), [
    # 推理 and 成本 of 推理服务成本 are in the title, 服务 is not
    ("推理服务成本", "大模型推理成本拆解：如何把每次调用成本降低 80%", 4 / 6),
    # 算力 and 趋势 apart, with other words between them
    ("算力趋势", "2026 年 AI 算力发展趋势分析", 1.0),
    # Latin words as words, whatever the case
    ("lpu gpu", "一文拆解英伟达 LPU", 0.5),
    ("pu", "一文拆解英伟达 LPU", 0.0),
    ("芯片对比", "一文拆解英伟达 LPU", 0.0),
])
def test_title_coverage(page, server, query, title, share):
    """The heading bonus for a title that holds most of a query's words:
    Pagefind's own title boost misses long Chinese titles."""
    assert search_script(page, server, "titleCoverage", query, title) == pytest.approx(share)


@pytest.mark.parametrize(("query", "topic"), [
    ("显存不够怎么办", "显存不够"),
    ("为什么 gpu 利用率这么低", "gpu 利用率 低"),
    # a generic verb after the question word goes with it, a topical one stays
    ("学习率怎么设置", "学习率"),
    ("如何选择 gpu", "gpu"),
    ("怎么搭建训练平台", "搭建训练平台"),
    # nothing but question words: the query is kept as typed
    ("如何设置", "如何设置"),
])
def test_question_words_leave_the_topic(page, server, query, topic):
    assert search_script(page, server, "stripQuestion", query) == topic


@pytest.mark.parametrize(("query", "words"), [
    # a function word goes: 还是 says nothing of the topic
    ("租赁还是自建", ["租赁", "自建"]),
    # what the browser's segmenter cuts into single characters comes back
    # together: 显 存 → 显存, 检查 点 → 检查点
    ("显存不够", ["显存", "不够"]),
    ("梯度检查点", ["梯度", "检查点"]),
    ("显存的占用", ["显存", "占用"]),
    # each space-separated part on its own, a lone character included
    ("gpu 利用率 低", ["gpu", "利用率", "低"]),
    ("的", ["的"]),
    ("batch size 太小", ["batch", "size", "太小"]),
])
def test_query_words_for_the_relaxed_search(page, server, query, words):
    assert search_script(page, server, "queryWords", query) == words


def test_relaxed_search_weighs_most_words_above_one(page, server):
    """When few pages hold every word, the looser queries: the words without
    function words, then every word but one, then each word, each weighing
    less, so that a page with most of the words ranks above a page with one."""
    assert search_script(page, server, "relaxed", "租赁还是自建") == [
        ["租赁 自建", 0.8], ["租赁", 0.3], ["自建", 0.3]]
    loose = dict(search_script(page, server, "relaxed", "batch size 太小"))
    assert loose == {"size 太小": 0.5, "batch 太小": 0.5, "batch size": 0.5,
                     "batch": 0.3, "size": 0.3, "太小": 0.3}
    # one long word: its two-character pieces
    assert search_script(page, server, "relaxed", "大模型") == [["大模", 0.3], ["模型", 0.3]]


# An engine in Pagefind's shape whose pages have no fragment, so that their
# text comes from data(), as when a fragment does not load.
FAKE_ENGINE = """([query, pages]) => ({search: async (q) => ({results: q !== query ? [] :
    pages.map(([id, score, title, content]) => ({id: `zh-cn_fake-${id}`, score, words: [0],
      data: async () => ({url: `/${id}.html`, meta: {title}, content, sub_results: []})}))})})"""


@pytest.mark.parametrize(("query", "order"), [
    # Pagefind matches 预热 on the first page by 预计 and 散热: it holds the
    # characters, not the word
    ("预热", ["/warmup.html", "/pcb.html", "/loader.html"]),
    # more than half of the query's Chinese is enough: the first page says
    # 数据加载, not 数据集加载
    ("数据集加载", ["/pcb.html", "/loader.html", "/warmup.html"]),
    # and half is not: 调度 alone, 2 of 7
    ("学习率预热调度", ["/warmup.html", "/pcb.html", "/loader.html"]),
    # Latin words are left to Pagefind (pricing matches price)
    ("pricing", ["/pcb.html", "/warmup.html", "/loader.html"]),
])
def test_a_chinese_query_counts_only_where_the_page_holds_it(page, server, query, order):
    found = fake_search(page, server, query, FAKE_PAGES)
    assert found["urls"] == order
    assert found["partial"] is False


FAKE_PAGES = [["pcb", 8.0, "PCB 产业链", "出货量预计达 200 万台，数据加载、散热材料和调度是重点"],
              # as Pagefind stores some words: cut in two
              ["warmup", 4.0, "训练技巧", "学习率预\u200b热可避免梯度爆炸"],
              ["loader", 2.0, "数据管道", "数据集加载"]]


def fake_search(page, server: str, query: str, pages: list) -> dict:
    """search() of the page's script over FAKE_ENGINE: the shown urls, in
    order, and `partial`."""
    page.goto(f"{server}/search.html")
    return page.evaluate(f"""async ([query, pages]) => {{
        const engine = ({FAKE_ENGINE})([query, pages]);
        const found = await (await import('./_static/kb-search.js')).search(engine, query, []);
        return {{urls: found.top.map(({{data}}) => data.url), partial: found.partial}};
    }}""", [query, pages])


def test_results_none_of_which_holds_the_query_say_so(page, server):
    """Pagefind finds 文心一言 on pages with 文, 心 or 言: the results are
    shown, under a line that says no page holds the query. Only when no
    shown page holds any two-character piece of a Chinese query."""
    assert fake_search(page, server, "心得", FAKE_PAGES[:1] + [["notes", 1.0, "笔记", "心里有数"]])["partial"]
    assert not fake_search(page, server, "心得", [["notes", 1.0, "笔记", "学习心得"]])["partial"]
    # a page that holds a piece of it may answer it
    assert not fake_search(page, server, "心得体会", [["notes", 1.0, "笔记", "学习心得"]])["partial"]
    # and a query with Latin words may be answered by those
    assert not fake_search(page, server, "batch 心得", [["notes", 1.0, "笔记", "batch 心里有数"]])["partial"]
    rows = results_for(page, server, "文心一言")
    assert rows, "the pages that hold some of its characters are still shown"
    assert page.locator(".kb-search-partial").inner_text() == "没有页面含有“文心一言”：下面的页面只含其中的部分字词。"
    results_for(page, server, "混合精度")
    assert page.locator(".kb-search-partial").count() == 0


ZWS = "\u200b"
# A fragment as Pagefind stores it: page text cut into words by zero-width
# spaces, and the anchors (ids) with the word each starts at.
FRAGMENT = {
    "url": "/p.html", "meta": {"title": "页面标题"},
    "content": ZWS.join(["引言 ", "a<b ", "梯度 ", "很", "重要", "。",
                         "二、", "梯度", "爆炸 ", "现象 ", "loss ", "NaN",
                         "处理 ", "梯度", "裁剪"]),
    "anchors": [{"element": "h2", "id": "grad", "text": "二、梯度爆炸", "location": 6},
                {"element": "span", "id": "x", "text": "", "location": 9},
                {"element": "h3", "id": "fix", "text": "处理", "location": 12}],
}


def test_excerpts_and_sections_from_a_fragment(page, server):
    """What the results show of a page, cut from its Pagefind fragment: the
    sections with matches (text before the first heading goes under the page
    title; anchors without text are not sections), each with its excerpt."""
    data = search_script(page, server, "pageExcerpts", FRAGMENT, [13, 2, 8, 7])
    subs = [(s["title"], s["url"], s["locations"], s["terms"]) for s in data["sub_results"]]
    assert subs == [("页面标题", "/p.html", [2], 1), ("二、梯度爆炸", "/p.html#grad", [7, 8], 2),
                    ("处理", "/p.html#fix", [13], 1)]
    assert data["sub_results"][1]["excerpt"] == "二、<mark>梯度</mark><mark>爆炸 </mark>现象 loss NaN"
    # page text is escaped; only the marks are markup
    assert data["excerpt"].startswith("引言 a&lt;b <mark>梯度 </mark>很重要。")
    assert data["url"] == "/p.html" and data["meta"]["title"] == "页面标题"


def test_excerpt_shows_where_most_query_words_meet(page, server):
    """On a long page the excerpt is 40 words around the matches: where the
    most different query words meet, before where one word recurs."""
    words = [f"w{i} " for i in range(200)]
    for at in (20, 22, 24, 120):
        words[at] = "梯度"
    words[121] = "爆炸"
    data = search_script(page, server, "pageExcerpts", {**FRAGMENT, "content": " ".join(words), "anchors": []},
                         [20, 22, 24, 120, 121])
    shown = re.sub(r"</?mark>", "", data["excerpt"]).split()
    assert len(shown) == 40 and "爆炸" in shown and "w20" not in shown, shown
    assert data["excerpt"].count("<mark>") == 2


@pytest.mark.parametrize("twice", [False, True], ids=["decoded", "compressed-again"])
def test_fragments_sent_with_a_content_encoding(page, twice):
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

    with serve(ROOT / "_build" / "html", handler_class=Recoding) as base:
        rows = results_for(page, base, "梯度爆炸")
    assert rows[0]["title"].startswith("LLM 训练故障排查手册")
    assert "<mark>" in page.locator("[data-search-result] .kb-search-excerpt").first.inner_html()
    assert page.console_errors == []


def test_a_fragment_that_does_not_load_falls_back_to_pagefind(page, server):
    page.goto(f"{server}/search.html")
    got = page.evaluate("""async () => (await import('./_static/kb-search.js')).pageData(
        {id: 'zh-cn_missing', words: [0], data: async () => ({url: 'from Pagefind'})})""")
    assert got == {"url": "from Pagefind"}
    assert any("kb-search: fragment zh-cn_missing" in e for e in page.console_errors)


def test_more_results_on_request(page, server):
    """Five results at first; 显示更多结果 adds the next ones below, in rank
    order, without repeating any, and moves focus to the first new one."""
    first = [r["href"] for r in results_for(page, server, "GPU")]
    total = int(re.search(r"找到 (\d+) 篇", page.locator("#kb-search-status").inner_text()).group(1))
    assert len(first) == 5 < total
    page.locator(".kb-search-more").click()
    shown = min(total, 10)
    page.wait_for_function(f"document.querySelectorAll('[data-search-result]').length === {shown}",
                           timeout=20_000)
    hrefs = page.eval_on_selector_all("[data-search-result] a.kb-search-title",
                                      "els => els.map(a => a.getAttribute('href'))")
    assert hrefs[:5] == first and len(set(hrefs)) == shown
    assert page.evaluate("document.activeElement.getAttribute('href')") == hrefs[5]
    assert f"显示前 {shown} 篇" in page.locator("#kb-search-status").inner_text() or shown == total
    assert page.locator(".kb-search-more").count() == (1 if total > shown else 0)
    assert page.console_errors == [] and page.foreign_requests == []


@pytest.mark.parametrize(("query", "term"), [
    ("混合精度怎么用", "混合精度"),
    ("mixed precision", "混合精度"),
    # of the terms a query names, the one named by the longest name
    ("梯度爆炸 nccl 超时", "NCCL"),
])
def test_the_glossary_term_a_query_names_heads_the_results(page, server, query, term):
    results_for(page, server, query)
    aside = page.locator(".kb-search-term-title")
    assert aside.inner_text().startswith(f"术语：{term}")
    href = aside.locator("a").get_attribute("href")
    assert urllib.parse.urlparse(href).path.endswith("/glossary.html")


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
    return (page.get_attribute("#search-results", "data-search-query"),
            page.locator("[data-search-result] a.kb-search-title").all_inner_texts())


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
        timeout=20_000)
    query, titles = shown(page)
    assert query == "gradient clipping" and titles, titles
    assert any(t.startswith("LLM 训练故障排查手册") or t.startswith("大模型训练优化实战")
               for t in titles[:3]), titles
    page.wait_for_timeout(500)  # no late run replaces it
    assert shown(page)[0] == "gradient clipping"
    assert urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)["q"] == ["gradient clipping"]
    box.press("Enter")  # the results shown are this query's: nothing reruns
    assert shown(page)[0] == "gradient clipping"
    page.go_back()  # the query the page opened with has its own history entry
    page.wait_for_function(
        "document.querySelector('#search-results').dataset.searchQuery === '昇腾'", timeout=20_000)
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
