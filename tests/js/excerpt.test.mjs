// Unit tests of _static/kb-search/excerpt.js: node --test tests/js/
import assert from "node:assert/strict";
import { test } from "node:test";

import { definitionPieces, pageExcerpts, pageText, sameExcerpt, termPattern, findMatches } from "../../_static/kb-search/excerpt.js";
import { aliasHits, matchTerms } from "../../_static/kb-search/query.js";

const ZWS = "\u200b";
const plain = (html) => html.replace(/<\/?mark>/g, "");
const marked = (html) => [...html.matchAll(/<mark>(.*?)<\/mark>/g)].map((m) => m[1]);

// A page as Pagefind stores it: words cut by zero-width spaces, ". " after
// blocks (a heading, table cells), anchors with the word each starts at.
const FRAGMENT = {
  url: "/p.html", meta: { title: "页面标题" },
  content: ["引言 ", "a<b ", "梯度 ", "很", "重要", "。",
    "6", ". ", "检查", "点", "策略", ". ", "要点", ". ", "依据", ". ", "显", "存", "不够", "时", "，", "用", "缓", "存", "。",
    "处理 ", "梯度", "裁剪", ". ", "ZeRO", "-", "3 ", "与 ", "optimizer", ".", "zero_grad", "() ", "3600"].join(ZWS),
  anchors: [{ element: "h2", id: "ckpt", text: "6. 检查点策略", location: 6 },
    { element: "span", id: "x", text: "", location: 9 },
    { element: "h3", id: "fix", text: "处理", location: 25 }],
};

test("the page text reads like the page: blocks apart, a heading's number kept", () => {
  const { text } = pageText(FRAGMENT);
  assert.ok(text.includes("6. 检查点策略 要点 依据 显存不够时，用缓存。"), text);
  assert.ok(!/\. \S/.test(text.replace("6. ", "")), text);
});

test("sections: as the page titles them, the one that holds the query first", () => {
  const terms = matchTerms("显存不够");
  const data = pageExcerpts(FRAGMENT, [], terms);
  assert.deepEqual(data.sub_results.map((s) => [s.title, s.url]), [["6. 检查点策略", "/p.html#ckpt"]]);
  // whole words marked: 显存 is not the 存 of 缓存
  assert.deepEqual(marked(data.sub_results[0].excerpt), ["显存不够"]);
  assert.equal(plain(data.sub_results[0].excerpt), "6. 检查点策略 要点 依据 显存不够时，用缓存。");
});

test("a section titled with the query ranks above one that only mentions it", () => {
  const data = pageExcerpts(FRAGMENT, [], matchTerms("梯度裁剪"));
  assert.equal(data.sub_results[0].title, "处理");
  const check = pageExcerpts(FRAGMENT, [], matchTerms("检查点 梯度"));
  assert.equal(check.sub_results[0].title, "6. 检查点策略");
});

test("ZeRO-3 is one word: not the zero of zero_grad, nor 3600", () => {
  const data = pageExcerpts(FRAGMENT, [], matchTerms("zero-3"));
  assert.deepEqual(marked(data.excerpt), ["ZeRO-3"]);
  const zero = pageExcerpts(FRAGMENT, [], matchTerms("zero"));
  assert.deepEqual(marked(zero.excerpt), ["ZeRO"]);
});

test("page text is escaped; only the marks are markup", () => {
  const data = pageExcerpts(FRAGMENT, [], matchTerms("梯度"));
  assert.ok(data.excerpt.startsWith("引言 a&lt;b <mark>梯度</mark> 很重要。"), data.excerpt);
});

test("a term found through another glossary name marks the page's own word", () => {
  const groups = [{ names: ["梯度裁剪", "gradient clipping"] }];
  const terms = matchTerms("gradient clipping", aliasHits("gradient clipping", groups));
  const data = pageExcerpts(FRAGMENT, [], terms);
  assert.deepEqual(marked(data.sub_results[0].excerpt), ["梯度裁剪"]);
  assert.ok(!data.excerpt.includes("gradient"), data.excerpt);
});

test("without any term in the text, Pagefind's matched Latin words are shown, not characters", () => {
  const data = pageExcerpts(FRAGMENT, [29, 26, 27], matchTerms("zeros"));
  assert.deepEqual(marked(data.excerpt), ["ZeRO"]);
  assert.deepEqual(marked(pageExcerpts(FRAGMENT, [26, 27], matchTerms("零冗余优化器")).excerpt), []);
});

test("the excerpt shows where most query words meet", () => {
  const words = Array.from({ length: 200 }, (_, i) => `w${i} `);
  for (const at of [20, 22, 24, 120]) words[at] = "梯度 ";
  words[121] = "爆炸 ";
  const data = pageExcerpts({ ...FRAGMENT, content: words.join(ZWS), anchors: [] }, [], matchTerms("梯度 爆炸"));
  const shown = plain(data.excerpt).split(/\s+/);
  assert.equal(shown.length, 40);
  assert.ok(shown.includes("爆炸") && !shown.includes("w20"), shown.join(" "));
  assert.equal(marked(data.excerpt).length, 2);
});

test("English words match their other forms, as Pagefind's stemming does", () => {
  const pattern = termPattern(["pricing"]);
  assert.deepEqual(findMatches("price, prices and priced; not prickly", pattern).length, 3);
  assert.deepEqual(findMatches("cosine cost", termPattern(["cost"])).map(([s]) => s), [7]);
});

test("a glossary definition without backticks: code is code", () => {
  assert.deepEqual(definitionPieces("PyTorch 中报 `CUDA out of memory`。"), [
    ["PyTorch 中报 ", false], ["CUDA out of memory", true], ["。", false]]);
  assert.deepEqual(definitionPieces("没有代码"), [["没有代码", false]]);
});

test("Latin terms match whole words only", () => {
  assert.deepEqual(findMatches("hzero zero zeros zero_grad", termPattern(["zero"])).map(([s]) => s), [6, 11]);
  assert.deepEqual(findMatches("HTTP 与 TP", termPattern(["tp"])).map(([s]) => s), [7]);
});

test("a match at the edge of the excerpt is shown whole", () => {
  const words = ["显", "存", ...Array(37).fill("x "), "显", "存", ...Array(100).fill("y ")];
  const data = pageExcerpts({ ...FRAGMENT, content: words.join(ZWS), anchors: [] }, [], matchTerms("显存"));
  assert.deepEqual(marked(data.excerpt), ["显存", "显存"]);
});

test("a section's excerpt that repeats its page's is the same excerpt, marks aside", () => {
  assert.ok(sameExcerpt("用 <mark>ZeRO</mark> 切分  状态", "用 ZeRO 切分 状态"));
  // cut at other places: punctuation at the ends, one inside the other
  assert.ok(sameExcerpt("。 阅读路径 先读租赁指南", "阅读路径 先读租赁指南）"));
  assert.ok(sameExcerpt("用 ZeRO 切分状态", "用 ZeRO 切分"));
  assert.ok(!sameExcerpt("用 ZeRO 切分状态", "混合精度训练"));
  assert.ok(!sameExcerpt("", ""));
});

test("a page's keywords find it but are never its excerpt", () => {
  const page = {
    url: "/k.html", meta: { title: "租赁" },
    content: ["租赁", "指南", "。", "价格", "以", "平台", "为准", "。",
      "关键词", "：", "GPU ", "rental ", "guide ", "· ", "cloud ", "GPU ", "pricing"].join(ZWS),
    anchors: [{ element: "h2", id: "why", text: "租赁", location: 0 },
      { element: "p", id: "kb-keywords", text: "", location: 8 }],
  };
  const only = pageExcerpts(page, [12], matchTerms("rental"));
  assert.deepEqual(only.sub_results, []);
  assert.ok(!only.excerpt.includes("rental") && !only.excerpt.includes("关键词"), only.excerpt);
  const both = pageExcerpts(page, [], matchTerms("平台 gpu"));
  assert.deepEqual(marked(both.excerpt), ["平台"]);
  assert.deepEqual(both.sub_results.map((s) => s.url), ["/k.html#why"]);
  assert.ok(!plain(both.sub_results[0].excerpt).includes("关键词"), both.sub_results[0].excerpt);
});

test("a word is marked whole where the query's single characters touch a match", () => {
  const page = { url: "/q.html", meta: { title: "页" },
    content: ["学习", "率", "先", "升", "后", "降", "，", "利用", "率", "低", "时", "看", "一", "张", "卡", "。"].join(ZWS) };
  for (const [query, expected] of [["学习率预热", ["学习率"]], ["gpu利用率低", ["利用率低"]], ["一张卡", ["一张卡"]]]) {
    const terms = matchTerms(query);
    assert.deepEqual(marked(pageExcerpts(page, [], terms).excerpt).filter((m) => m !== "gpu"), expected, query);
  }
  // a single character of the query is never marked alone
  assert.deepEqual(marked(pageExcerpts(page, [], matchTerms("学习率预热")).excerpt).includes("率"), false);
});

test("English function words are not marked", () => {
  const page = { url: "/o.html", meta: { title: "页" },
    content: ["CUDA ", "out ", "of ", "memory ", "错误 ", "one ", "of ", "many"].join(ZWS) };
  const shown = marked(pageExcerpts(page, [], matchTerms("cuda out of memory")).excerpt);
  assert.deepEqual(shown, ["CUDA", "out", "memory"]);
});

test("an initial's or an abbreviation's dot stays, a block's is a space", () => {
  // as Pagefind 1.6.0 stores them (its Chinese word cutting splits "K." and "al.")
  const page = { url: "/a.html", meta: { title: "页" },
    content: ["见 ", "Glenn ", "K", ". ", "Lockwood ", "与 ", "Rajbhandari ", "et ", "al", ". ", "的", "论文", "。 ",
      "要点", ". ", "依据", ". ", "例如 ", "e.g", ". ", "x"].join(ZWS) };
  assert.equal(pageText(page).text, "见 Glenn K. Lockwood 与 Rajbhandari et al. 的论文。 要点 依据 例如 e.g. x");
});

test("the page's last block ends without a dot shown", () => {
  const page = { url: "/e.html", meta: { title: "页" }, content: ["投资", "建议 ", "· ", "七", "、", "总结", "."].join(ZWS) };
  assert.equal(pageText(page).text.trimEnd(), "投资建议 · 七、总结");
  // a dot inside code stays
  assert.ok(pageText(FRAGMENT).text.includes("optimizer.zero_grad"));
});
