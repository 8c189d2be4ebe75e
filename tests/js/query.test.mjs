// Unit tests of _static/kb-search/query.js: node --test tests/js/
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  aliasHits, canonical, cleanQuery, isCompound, isDefinitionQuestion, matchTerms, normalize, pagesWords, queryWords,
  relaxed, stripQuestion, termOf, variants,
} from "../../_static/kb-search/query.js";

const GROUPS = [
  { names: ["混合精度", "mixed precision", "AMP", "FP16 训练"], def: "" },
  { names: ["ZeRO", "Zero Redundancy Optimizer", "ZeRO-3"], def: "" },
  { names: ["显存", "GPU memory", "VRAM"], def: "" },
];

test("a query is cut at 200 characters, invisible characters dropped", () => {
  assert.deepEqual(cleanQuery("训\u200b练"), { text: "训练", cut: false });
  const long = cleanQuery("训".repeat(250));
  assert.equal(long.text.length, 200);
  assert.ok(long.cut);
});

test("normalize splits Chinese from Latin and drops punctuation", () => {
  assert.equal(normalize("NCCL超时？"), "nccl 超时");
  assert.equal(normalize("ＧＰＵ利用率"), "gpu 利用率");
  assert.equal(normalize("ZeRO-3"), "zero-3");
});

for (const [query, topic] of [
  ["显存不够怎么办", "显存不够"],
  ["为什么 gpu 利用率这么低", "gpu 利用率 低"],
  // a generic verb after the question word goes with it, a topical one stays
  ["学习率怎么设置", "学习率"],
  ["如何选择 gpu", "gpu"],
  ["怎么搭建训练平台", "搭建训练平台"],
  ["渲染视频用哪种卡", "渲染视频用 卡"],
  // how much, how long, which is good, can it: the topic is what is left
  ["昇腾 910b 算力多少", "昇腾 910b 算力"],
  ["lpu 多少钱", "lpu"],
  // fillers of spoken questions: the pages need not say them
  ["训练到底是不是一直很慢", "训练 很慢"],
  ["显卡老是闲着", "显卡 闲着"],
  ["gpu 云平台哪家好", "gpu 云平台"],
  ["训练要多久", "训练要"],
  ["能不能用 4090 训练", "用 4090 训练"],
  // a comparison asks about both sides
  ["a100 vs h100", "a100 h100"],
  ["a100 vs. h100 哪个好", "a100 h100"],
  ["vscode 远程训练", "vscode 远程训练"],
  // nothing but question words: the query is kept as typed
  ["如何设置", "如何设置"],
]) {
  test(`question words leave the topic: ${query}`, () => assert.equal(stripQuestion(query), topic));
}

for (const [query, words] of [
  ["租赁还是自建", ["租赁", "自建"]],
  // what the segmenter cuts into single characters comes back together
  ["显存不够", ["显存", "不够"]],
  ["梯度检查点", ["梯度", "检查点"]],
  ["显存的占用", ["显存", "占用"]],
  ["gpu 利用率 低", ["gpu", "利用率", "低"]],
  ["的", ["的"]],
  ["batch size 太小", ["batch", "size", "太小"]],
]) {
  test(`query words: ${query}`, () => assert.deepEqual(queryWords(query), words));
}

test("the relaxed search weighs most words above one", () => {
  assert.deepEqual(relaxed("租赁还是自建"), [["租赁 自建", 0.8], ["租赁", 0.3], ["自建", 0.3]]);
  assert.deepEqual(Object.fromEntries(relaxed("batch size 太小")), {
    "size 太小": 0.5, "batch 太小": 0.5, "batch size": 0.5, batch: 0.3, size: 0.3, 太小: 0.3,
  });
  assert.deepEqual(relaxed("大模型"), [["大模", 0.3], ["模型", 0.3]]);
});

test("a query that names a glossary term is also searched by its other names", () => {
  const hits = aliasHits("mixed precision 显存", GROUPS);
  assert.deepEqual(hits.map((h) => h.hit), ["mixed precision", "显存"]);
  // at most five rewrites; the names a Chinese page most likely holds first
  assert.deepEqual(variants("mixed precision 显存", hits), ["mixed precision 显存", "混合精度 显存",
    "fp16 训练 显存", "amp 显存", "mixed precision vram", "mixed precision gpu memory"]);
  assert.deepEqual(variants("显存", aliasHits("显存", GROUPS)), ["显存", "vram", "gpu memory"]);
  // a name that holds another (ZeRO-3 holds ZeRO) is not searched apart
  assert.deepEqual(variants("zero", aliasHits("zero", GROUPS)), ["zero"]);
  // Latin names only as whole words: amp is not in "example"
  assert.deepEqual(aliasHits("example", GROUPS), []);
});

test("how much it costs is a question, not a topic the pages must name", () => {
  assert.equal(stripQuestion("自建 gpu 集群要花多少钱"), "自建 gpu 集群");
  assert.equal(stripQuestion("训练一次得花多少"), "训练一次");
});

test("an English noun ending a name is found in the singular and the plural", () => {
  const groups = [{ names: ["梯度消失", "vanishing gradients"] }, { names: ["损失", "loss"] }, { names: ["张量并行", "tp"] }];
  assert.deepEqual(aliasHits("vanishing gradient", groups).map((h) => h.hit), ["vanishing gradients"]);
  assert.deepEqual(aliasHits("vanishing gradients 怎么办", groups).map((h) => h.hit), ["vanishing gradients"]);
  assert.deepEqual(aliasHits("losses", groups).map((h) => h.hit), ["loss"]);
  assert.deepEqual(variants("vanishing gradient", aliasHits("vanishing gradient", groups)), ["vanishing gradient", "梯度消失"]);
  // not another word that starts alike, nor a short name's other forms
  assert.deepEqual(aliasHits("vanishing gradientx", groups), []);
  assert.deepEqual(aliasHits("tps", groups), []);
});

test("compound Latin words stay one token", () => {
  for (const word of ["zero-3", "fp16", "h100", "torch_npu", "int4", "2.1"]) assert.ok(isCompound(word), word);
  for (const word of ["zero", "gpu", "nccl", "3"]) assert.ok(!isCompound(word), word);
});

test("match terms: words, glossary names as one term each, single characters weak", () => {
  const terms = matchTerms("fp16 训练 显存不够", aliasHits("fp16 训练 显存不够", GROUPS));
  const texts = terms.map((t) => t.text);
  assert.ok(texts.includes("显存不够") && texts.includes("显存") && texts.includes("不够"), texts);
  // the names of one glossary term share a key
  const key = (text) => terms.find((t) => t.text === text)?.key;
  assert.equal(key("混合精度"), key("amp"));
  assert.equal(key("显存"), key("vram"));
  assert.notEqual(key("显存"), key("混合精度"));
  // longest first
  assert.deepEqual(texts, [...texts].sort((a, b) => b.length - a.length || (a < b ? -1 : 1)));
  // 中 显 存: 显存 is a piece, looked for after the words; 中 alone is weak
  const run = matchTerms("训练中显存");
  assert.ok(run.some((t) => t.text === "显存" && t.piece), JSON.stringify(run));
  assert.ok(!run.some((t) => t.text === "中" && !t.weak && !t.glue), JSON.stringify(run));
  // a single character that is the whole query is a term
  assert.deepEqual(matchTerms("卡").map((t) => [t.text, t.weak]), [["卡", false]]);
});

test("a glossary term's other names weigh as the name the query used", () => {
  // 显存 (2 characters) named: its name "GPU memory" in a section is no
  // heavier evidence than 显存 itself
  const terms = matchTerms("显存 泄漏", aliasHits("显存 泄漏", GROUPS));
  const weight = (text) => terms.find((t) => t.text === text)?.weight;
  assert.equal(weight("gpu memory"), weight("显存"));
  assert.equal(weight("显存"), 2);
});

test("a definition question asks only what the named terms mean", () => {
  const asks = (raw) => {
    const query = normalize(raw);
    return isDefinitionQuestion(query, aliasHits(stripQuestion(query), GROUPS));
  };
  for (const raw of ["混合精度是什么", "什么是 AMP？", "VRAM 是什么意思", "ZeRO 的定义", "显存是啥"]) assert.ok(asks(raw), raw);
  for (const raw of ["混合精度", "混合精度能省多少显存", "什么是好的学习率", "ZeRO-3 是什么时候发布的", "OOM 是什么意思"]) {
    assert.ok(!asks(raw), raw);
  }
});

// data/search-synonyms.yaml's groups: the pages' word first, then readers' words
const SYNONYMS = [
  { names: ["空闲", "闲着", "闲置"], synonym: true },
  { names: ["数据中心", "机房", "IDC"], synonym: true },
  { names: ["散热", "降温"], synonym: true },
];

test("a reader's word is searched as the pages' word, never the other way", () => {
  const groups = [...GROUPS, ...SYNONYMS];
  const hits = aliasHits("显卡老是闲着", groups);
  assert.deepEqual(hits.map(({ group, hit }) => [group.names[0], hit]), [["空闲", "闲着"]]);
  assert.deepEqual(variants("显卡老是闲着", hits), ["显卡老是闲着", "显卡老是 空闲"]);
  assert.deepEqual(canonical("显卡老是闲着", hits), ["显卡老是 空闲"]);
  // several terms named otherwise: all in the pages' words at once, first
  const two = [{ names: ["张量并行", "tensor parallelism"], def: "" }, { names: ["流水线并行", "pipeline parallelism"], def: "" }];
  const asked = "tensor parallelism vs pipeline parallelism";
  assert.deepEqual(canonical(asked, aliasHits(asked, two)),
    ["张量并行 vs 流水线并行", "张量并行 vs pipeline parallelism"]);
  // the pages' own word names no group: nothing to search besides the query
  assert.deepEqual(aliasHits("gpu 空闲", groups), []);
  // Latin readers' words only as whole words
  assert.deepEqual(aliasHits("idcard", groups), []);
  assert.equal(aliasHits("idc 散热", groups).length, 1);
});

test("the query in the pages' words says every reader's word at once", () => {
  const groups = [...GROUPS, ...SYNONYMS];
  const query = "机房 越来越热 怎么降温 闲着 闲置";
  assert.equal(pagesWords(query, aliasHits(query, groups)), "数据中心 越来越热 怎么 散热 空闲 空闲");
  // a reader's word inside the pages' word is replaced once, not forever (review 19)
  const odd = [{ names: ["数据中心化", "数据中"], synonym: true }, { names: ["gpu cluster", "gpu"], synonym: true }];
  assert.equal(pagesWords("数据中 gpu", aliasHits("数据中 gpu", odd)), "数据中心化 gpu cluster");
  // a glossary name is left to the glossary's rewrites
  assert.equal(pagesWords("amp 显存", aliasHits("amp 显存", groups)), null);
});

test("a reader's word shows no glossary entry and asks no definition", () => {
  const groups = [...GROUPS, ...SYNONYMS];
  assert.equal(termOf(aliasHits("机房 混合精度", groups)).names[0], "混合精度");
  assert.equal(termOf(aliasHits("机房降温", groups)), null);
  const query = normalize("机房是什么意思");
  assert.ok(!isDefinitionQuestion(query, aliasHits(stripQuestion(query), groups)));
});
