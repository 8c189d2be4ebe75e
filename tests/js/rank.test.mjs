// Unit tests of _static/kb-search/rank.js over an engine in Pagefind's shape:
// node --test tests/js/
import assert from "node:assert/strict";
import { test } from "node:test";

import { pageExcerpts } from "../../_static/kb-search/excerpt.js";
import { aliasHits } from "../../_static/kb-search/query.js";
import { passageCover, queryUnits, search, termCover, titleCoverage } from "../../_static/kb-search/rank.js";

// pages: [id, score, title, content]; the engine finds them for `found`
// queries only; `asked` records every query searched.
function engine(pages, found) {
  const asked = [];
  return {
    asked,
    search: async (q) => {
      asked.push(q);
      return { results: !found.includes(q) ? [] : pages.map(([id, score]) => ({ id, score, words: [0] })) };
    },
  };
}
const load = (pages) => async (result, terms) => {
  const [id, , title, content] = pages.find(([pid]) => pid === result.id);
  return pageExcerpts({ url: `/${id}.html`, meta: { title }, content, anchors: [] }, result.words, terms);
};
const urls = (found) => found.top.map(({ data }) => data.url);

const PAGES = [["pcb", 8.0, "PCB 产业链", "出货量预计达 200 万台，数据加载、散热材料和调度是重点"],
  // as Pagefind stores some words: cut in two
  ["warmup", 4.0, "训练技巧", "学习率预\u200b热可避免梯度爆炸"],
  ["loader", 2.0, "数据管道", "数据集加载"]];

for (const [query, order] of [
  // Pagefind matches 预热 on the first page by 预计 and 散热
  ["预热", ["/warmup.html", "/pcb.html", "/loader.html"]],
  // more than half of the query's Chinese is enough
  ["数据集加载", ["/pcb.html", "/loader.html", "/warmup.html"]],
  // and half is not: 调度 alone, 2 of 7
  ["学习率预热调度", ["/warmup.html", "/pcb.html", "/loader.html"]],
  // Latin words are left to Pagefind (pricing matches price)
  ["pricing", ["/pcb.html", "/warmup.html", "/loader.html"]],
]) {
  test(`a Chinese query counts only where the page holds it: ${query}`, async () => {
    const found = await search(engine(PAGES, [query]), query, [], 5, load(PAGES));
    assert.deepEqual(urls(found), order);
    assert.equal(found.partial, false);
  });
}

test("ZeRO-3 counts only on pages that hold it whole", async () => {
  const pages = [["grad", 9.0, "训练循环", "optimizer.zero_grad() 每步调用，3600 步"],
    ["zero", 3.0, "显存优化", "ZeRO-3 切分参数"]];
  const found = await search(engine(pages, ["zero-3"]), "ZeRO-3", [], 5, load(pages));
  assert.deepEqual(urls(found), ["/zero.html", "/grad.html"]);
});

test("a query that names a glossary term searches its other names too", async () => {
  const pages = [["amp", 5.0, "训练技巧", "用混合精度训练"]];
  const groups = [{ names: ["混合精度", "mixed precision", "AMP"], def: "" }];
  const pf = engine(pages, ["混合精度"]);
  const found = await search(pf, "mixed precision", groups, 5, load(pages));
  assert.deepEqual(urls(found), ["/amp.html"]);
  assert.ok(pf.asked.includes("mixed precision") && pf.asked.includes("amp"), pf.asked);
  assert.equal(found.term.names[0], "混合精度");
  assert.ok(found.top[0].data.excerpt.includes("<mark>混合精度</mark>"), found.top[0].data.excerpt);
});

test("results none of which holds any piece of the query say so", async () => {
  const partial = async (query, pages) => (await search(engine(pages, [query]), query, [], 5, load(pages))).partial;
  assert.ok(await partial("心得", [PAGES[0], ["notes", 1.0, "笔记", "心里有数"]]));
  assert.ok(!(await partial("心得", [["notes", 1.0, "笔记", "学习心得"]])));
  assert.ok(!(await partial("心得体会", [["notes", 1.0, "笔记", "学习心得"]])));
  assert.ok(!(await partial("batch 心得", [["notes", 1.0, "笔记", "batch 心里有数"]])));
});

for (const [query, title, share] of [
  ["推理服务成本", "大模型推理成本拆解：如何把每次调用成本降低 80%", 4 / 6],
  ["算力趋势", "2026 年 AI 算力发展趋势分析", 1.0],
  ["lpu gpu", "一文拆解英伟达 LPU", 0.5],
  ["pu", "一文拆解英伟达 LPU", 0.0],
  ["芯片对比", "一文拆解英伟达 LPU", 0.0],
]) {
  test(`title coverage: ${query} in ${title}`, () => {
    assert.ok(Math.abs(titleCoverage(query, title) - share) < 1e-9);
  });
}

test("a page that names the query's term often outranks one that matched its words more", async () => {
  const pages = [["chip", 9.0, "芯片结构", "L1 Cache、L2 Cache、L3 Cache 与缓存层级；启用 KV Cache 优化"],
    ["serve", 6.0, "推理成本", "KV 缓存随上下文增长。KV 缓存按块分配。KV 缓存占显存。KV 缓存可量化。KV 缓存可复用。KV 缓存决定并发。"]];
  const groups = [{ names: ["KV 缓存", "KV cache", "键值缓存"], def: "" }];
  const found = await search(engine(pages, ["kv cache", "kv 缓存"]), "KV cache", groups, 5, load(pages));
  assert.deepEqual(urls(found), ["/serve.html", "/chip.html"]);
});

test("a section titled with most of the query counts like the page title", async () => {
  // words are the fragment's: split on spaces; the anchor's location is a word index
  const pages = [["rental", 9.0, "GPU 租赁", "数据 存储。 渲染 视频处理 太慢 怎么办"],
    ["trouble", 3.0, "故障排查", "案例 12：数据预处理慢 DataLoader 的 worker 不够"]];
  const anchors = { trouble: [{ element: "h3", id: "case-12", text: "案例 12：数据预处理慢", location: 0 }], rental: [] };
  const loadWith = async (result, terms) => {
    const [id, , title, content] = pages.find(([pid]) => pid === result.id);
    return pageExcerpts({ url: `/${id}.html`, meta: { title }, content, anchors: anchors[id] }, result.words, terms);
  };
  const found = await search(engine(pages, ["数据预处理太慢"]), "数据预处理太慢", [], 5, loadWith);
  assert.deepEqual(urls(found), ["/trouble.html", "/rental.html"]);
});

test("term cover: the share of the named glossary terms a title holds, by the names' length", () => {
  const named = [{ weight: 4, names: ["梯度累积", "gradientaccumulation"] }, { weight: 2, names: ["显存", "vram"] }];
  assert.equal(termCover(named, "技巧2：梯度累积"), 4 / 6);
  assert.equal(termCover(named, "案例1：vram不足"), 2 / 6);
  assert.equal(termCover(named, "梯度累积与显存"), 1);
  assert.equal(termCover(named, "总结"), 0);
  assert.equal(termCover([], "梯度累积"), 0);
});

test("a question naming a term among other words ranks the page with a section on the term first", async () => {
  const pages = [
    // the words apart, many times: Pagefind's best
    ["long", 9.0, "故障排查手册", "大 batch 时梯度爆炸，可以用梯度裁剪代替；误差累积也能代替重算。"],
    ["tips", 3.0, "训练技巧", "梯度累积把几个小 batch 的梯度加起来再更新，可以代替大 batch。"],
  ];
  const withSection = async (result, terms) => {
    const [id, , title, content] = pages.find(([pid]) => pid === result.id);
    const anchors = id === "tips" ? [{ id: "acc", text: "技巧 2：梯度累积", element: "h2", location: 0 }] : [];
    return pageExcerpts({ url: `/${id}.html`, meta: { title }, content, anchors }, result.words, terms);
  };
  const groups = [{ names: ["梯度累积", "gradient accumulation"], def: "" }];
  const query = "梯度累积能代替大 batch 吗";
  const found = await search(engine(pages, ["梯度累积能代替大 batch", "gradient accumulation 能代替大 batch"]), query, groups, 5, withSection);
  assert.deepEqual(urls(found), ["/tips.html", "/long.html"]);
});

test("query units: each named term as one, other Latin words, other Chinese; no function words", () => {
  const groups = [{ names: ["张量并行", "tensor parallelism"], def: "" }, { names: ["英伟达", "NVIDIA"], def: "" }];
  const query = "tensor parallelism 和 nvidia 的区别";
  const units = queryUnits(query, aliasHits(query, groups));
  assert.deepEqual(units.map((u) => [u.weight, u.names ? u.names[0].name : u.latin || u.chinese]),
    [[4, "张量并行"], [2, "英伟达"], [2, "区别"]]);
});

test("passage cover: the share of the query a passage holds, a term by any of its names", () => {
  const groups = [{ names: ["混合精度", "mixed precision"], def: "" }];
  const query = "mixed precision 出现 inf";
  const units = queryUnits(query, aliasHits(query, groups));
  assert.equal(passageCover(units, "混合精度训练时出现 Inf"), 1);
  // inf only as a whole word (not of info), 出现 by its pieces
  assert.equal(passageCover(units, "混合精度的 info"), 4 / 8);
  assert.equal(passageCover(units, "出现了"), 2 / 8);
  assert.equal(passageCover([], "任何文字"), 0);
});

test("the page whose one section holds the whole question outranks one that holds its words apart", async () => {
  const pages = [
    // Pagefind's best: every word, but each in another section
    ["apart", 9.0, "训练技巧", "梯度 检查。 显存 紧张。 裁剪 阈值。 其他 内容 很多"],
    ["together", 6.0, "故障排查", "前言 文字。 梯度 裁剪 省 显存 的 做法"],
  ];
  const anchors = {
    apart: [{ element: "h2", id: "a1", text: "梯度", location: 0 }, { element: "h2", id: "a2", text: "显存", location: 2 },
      { element: "h2", id: "a3", text: "裁剪", location: 4 }],
    together: [{ element: "h2", id: "t1", text: "前言", location: 0 }, { element: "h2", id: "t2", text: "做法", location: 2 }],
  };
  const loadWith = async (result, terms) => {
    const [id, , title, content] = pages.find(([pid]) => pid === result.id);
    return pageExcerpts({ url: `/${id}.html`, meta: { title }, content, anchors: anchors[id] }, result.words, terms);
  };
  const found = await search(engine(pages, ["梯度 裁剪 显存"]), "梯度 裁剪 显存", [], 5, loadWith);
  assert.deepEqual(urls(found), ["/together.html", "/apart.html"]);
  // one thing asked: every page that holds it holds it whole, Pagefind's order stays
  const one = await search(engine(pages, ["裁剪"]), "裁剪", [], 5, loadWith);
  assert.deepEqual(urls(one), ["/apart.html", "/together.html"]);
});
