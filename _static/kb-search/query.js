// What a reader typed, as searched: cleaned, normalized, without question
// words, cut into words, and expanded with the glossary's other names of the
// terms it names (data/glossary.yaml, given to the search page as alias
// groups). Pure functions: no DOM, no Pagefind.

// Question words and particles that carry no topic (显存不够怎么办 → 显存不够,
// 利用率这么低 → 利用率 低, 算力多少 → 算力, 要花多少钱 → nothing, 哪家好 → nothing,
// 能不能 → nothing):
// Pagefind keeps only pages with every word, and a page that answers "how
// much" gives the figure without the words 多少 or 多少钱.
const QUESTION_WORDS = /(?:要|得|需要)?花(?:多少钱|多少)|到底|究竟|老是|总是|一直|是不是|会不会|怎么办|怎么样|怎么做|怎么|怎样|如何|为什么|为何|为啥|是什么|什么是|什么|有哪些|哪些|(?:哪个|哪种|哪家|哪款)好|哪个|哪种|哪家|哪款|请问|是否|能否|能不能|可不可以|有没有|好不好|行不行|要不要|值不值得?|多少钱|多少|多大|多久|多长时间|可以吗|这么|那么|吗|呢|吧|啊|呀/g;
// "How do I <verb>" with a verb that says how the question is asked, not
// what it is about: 学习率怎么设置 is about 学习率, and the pages on it need
// not say 设置 (Pagefind keeps only pages with every word).
const HOW_TO = /(?:怎么|怎样|如何)(?:设置|设定|配置|调整|选择|挑选|解决|处理|应对|排查|使用|用|弄|搞)/g;
const PUNCTUATION = /[？?！!。，,、；;：:“”"'‘’（）()《》<>【】\[\]]/g;
const CJK = "\\u3400-\\u9fff\\uf900-\\ufaff";
export const HAS_CJK = new RegExp(`[${CJK}]`);
const CJK_THEN_LATIN = new RegExp(`([${CJK}])([a-z0-9])`, "g");
const LATIN_THEN_CJK = new RegExp(`([a-z0-9])([${CJK}])`, "g");
// Characters a reader cannot see that split or hide a word: zero-width
// spaces and joiners, bidi controls, the byte order mark, the soft hyphen,
// variation selectors (训\u200b练 is 训练).
const INVISIBLE = /[\u00ad\u034f\u061c\u115f\u1160\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufe00-\ufe0f\ufeff]/g;
// Longer queries are cut, with a notice: Pagefind's work grows with the
// query, and a query of 100 KB kept the page busy for 40 s.
export const MAX_QUERY = 200;
// Rewrites of a query with other names of the terms it names, searched
// besides the query itself (each is one more Pagefind search, and the first
// query a reader types waits for all of them).
export const MAX_REWRITES = 5;

// The query as searched: without invisible characters, at most MAX_QUERY
// characters (code points: a character outside the BMP is not split).
export function cleanQuery(raw) {
  const chars = Array.from(raw.replace(INVISIBLE, ""));
  return { text: chars.slice(0, MAX_QUERY).join(""), cut: chars.length > MAX_QUERY };
}

export function normalize(query) {
  return query
    .replace(INVISIBLE, "")
    .normalize("NFKC")
    .toLowerCase()
    .replace(PUNCTUATION, " ")
    // NCCL超时 → nccl 超时: split where Chinese meets Latin letters or digits
    .replace(CJK_THEN_LATIN, "$1 $2")
    .replace(LATIN_THEN_CJK, "$1 $2")
    .replace(/\s+/g, " ")
    .trim();
}

// A question that asks what a term means: the glossary's entry answers it.
const DEFINITION = /是什么意思|什么意思|是什么|什么是|是啥|指什么|的定义|的含义|含义|定义|的意思|意思/g;

// Whether `query` (normalized) asks only what the glossary terms it names
// (`hits`) mean: "pue 是什么意思", "什么是 kv cache", not "kv cache 占多少显存".
export function isDefinitionQuestion(query, hits) {
  hits = hits.filter(({ group }) => !group.synonym);
  if (!hits.length || !query.match(DEFINITION)) return false;
  let rest = query.replace(DEFINITION, " ");
  for (const { hit } of [...hits].sort((a, b) => b.hit.length - a.hit.length)) rest = rest.split(hit).join(" ");
  return !/\S/.test(rest.replace(QUESTION_WORDS, " "));
}

// "A vs B" asks about A and B; a page that compares them need not say vs.
const VERSUS = /(^|\s)(?:vs\.?|versus)(?=\s|$)/g;

export function stripQuestion(query) {
  const stripped = query.replace(HOW_TO, " ").replace(QUESTION_WORDS, " ").replace(VERSUS, " ")
    .replace(/\s+/g, " ").trim();
  return stripped || query;
}

export function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// A Latin word that Pagefind cuts into pieces but readers mean as one:
// ZeRO-3, FP16, H100, torch_npu, 2.1 (not zero, 3; fp, 16).
export function isCompound(word) {
  return /^[a-z0-9]+(?:[-_.+][a-z0-9]+)+$/.test(word) || /[a-z]\d|\d[a-z]/.test(word);
}

// Where `alias` occurs in `query`: Latin aliases only as whole words, an
// English noun at their end in the singular or the plural ("vanishing
// gradient" names the entry "vanishing gradients"; "loss" also "losses").
function aliasPattern(alias) {
  if (HAS_CJK.test(alias)) return new RegExp(escapeRegExp(alias));
  const noun = /(?:^|\s)[a-z]{4,}$/.test(alias);
  const stem = noun && /[^s]s$/.test(alias) ? alias.slice(0, -1) : alias;
  const body = escapeRegExp(stem) + (noun ? "(?:e?s)?" : "");
  return new RegExp(`(^|[^a-z0-9])${body}(?=$|[^a-z0-9])`);
}

export function replaceAlias(text, alias, other) {
  if (HAS_CJK.test(alias)) return text.replace(alias, ` ${other} `);
  return text.replace(aliasPattern(alias), (match, before) => `${before} ${other} `);
}

// Each glossary entry's names, normalized, with the pattern that finds each
// in a query: built once per page, not on every query.
const PREPARED = new WeakMap();
export function prepared(group) {
  if (!PREPARED.has(group)) {
    PREPARED.set(group, group.names.map(normalize).filter(Boolean)
      .map((name) => ({ name, pattern: aliasPattern(name) })));
  }
  return PREPARED.get(group);
}

// The glossary entries a (normalized) query names, each with the longest of
// its names found in it. Every name's pattern is run (the warm-up relies on
// that to compile them all).
// A group of data/search-synonyms.yaml (`synonym`) counts only where the
// query says a reader's word of it, not the pages' own word (its first).
export function aliasHits(query, groups) {
  const hits = [];
  for (const group of groups) {
    let hit = null;
    for (const { name, pattern } of prepared(group)) {
      if (pattern.test(query) && (!hit || name.length > hit.length)) hit = name;
    }
    if (hit && !(group.synonym && hit === prepared(group)[0].name)) hits.push({ group, hit });
  }
  return hits;
}

// The query and its rewrites with the other names of the glossary entries
// it names (`hits`), at most `max`, the query first. The rewrites are
// searched too (query-time expansion): "mixed precision" finds the pages
// that say 混合精度.
// A name that holds another name of the term (显存占用 holds 显存, ZeRO 优化
// holds ZeRO) finds no page that the shorter one does not: it is not
// searched apart. At most MAX_REWRITES rewrites.
export function variants(query, hits, max = MAX_REWRITES + 1) {
  const out = new Set([query]);
  for (const { group, hit } of hits) {
    const names = prepared(group).map(({ name }) => name);
    const holds = (name, other) => other !== name && (HAS_CJK.test(other)
      ? name.includes(other) : aliasPattern(other).test(name));
    // the names a Chinese page most likely holds first: Chinese names, then
    // abbreviations (AMP, OOM), then other English names; each in the
    // glossary's order (its Chinese name first)
    const likely = (name) => (HAS_CJK.test(name) ? 0 : name.length <= 6 ? 1 : 2);
    // a reader's word (data/search-synonyms.yaml) is searched as the pages'
    // word only: the pages do not say the other words readers type
    const others = group.synonym ? names.slice(0, 1) : names;
    const kept = others.filter((name) => name !== hit && !names.some((other) => holds(name, other)))
      .map((name, i) => [name, i])
      .sort(([a, i], [b, j]) => likely(a) - likely(b) || i - j)
      .map(([name]) => name);
    for (const base of [...out]) {
      for (const other of kept) {
        if (out.size < max) out.add(normalize(replaceAlias(base, hit, other)));
      }
    }
  }
  return [...out];
}

// The query with each term it names by another name said by the term's
// Chinese name, the name the pages use (data/glossary.yaml's zh): 余弦衰减 →
// 余弦退火, mixed precision → 混合精度. A query that names several terms so
// first has them all said so at once ("tensor parallelism vs pipeline
// parallelism": 张量并行 流水线并行, the words of the page that compares
// them), then each apart. At most `max`, not the query itself.
export function canonical(query, hits, max = 2) {
  const out = [];
  const renamed = hits.map(({ group, hit }) => [hit, prepared(group)[0]?.name]).filter(([hit, zh]) => zh && zh !== hit);
  if (renamed.length > 1) {
    const all = renamed.sort((a, b) => b[0].length - a[0].length)
      .reduce((text, [hit, zh]) => replaceAlias(text, hit, zh), query);
    out.push(normalize(all));
  }
  for (const { group, hit } of hits) {
    const zh = prepared(group)[0]?.name;
    if (zh && zh !== hit && out.length < max) out.push(normalize(replaceAlias(query, hit, zh)));
  }
  return [...new Set(out)].filter((q) => q !== query);
}

// The query in the pages' words: every reader's word of data/search-synonyms.yaml
// in it said by its group's first word, all at once (机房 费电 降温 → 数据中心
// 能效 散热); null when it says none. Searched besides the query, and loosened
// as the query is when few pages hold every word.
export function pagesWords(query, hits) {
  let out = query;
  for (const { group } of hits) {
    if (!group.synonym) continue;
    const [head, ...words] = prepared(group).map(({ name }) => name);
    // each word once, every place at once: a word the head holds is not
    // replaced again (the build refuses such a group too, KB044)
    for (const word of words.sort((a, b) => b.length - a.length)) {
      out = HAS_CJK.test(word) ? out.split(word).join(` ${head} `)
        : out.replace(new RegExp(aliasPattern(word).source, "g"), (match, before) => `${before} ${head} `);
    }
  }
  out = normalize(out);
  return out === query ? null : out;
}

// The glossary entry shown above the results: of those the query names, the
// one named by the longest name.
export function termOf(hits) {
  let best = null;
  for (const { group, hit } of hits) {
    if (group.synonym) continue; // no glossary entry to show
    if (!best || hit.length > best.length) best = { ...group, length: hit.length };
  }
  return best;
}

// Words that say nothing of the topic once a query is cut into words
// (租赁还是自建: 租赁, 自建).
const FUNCTION_WORDS = new Set(["的", "地", "得", "了", "和", "与", "及", "或", "或者", "还是",
  "是", "在", "有", "对", "把", "被", "要", "会", "能", "很", "太", "都", "也", "就", "一个", "一下"]);
// Words that say what kind of answer is wanted, not what it is about
// (存储选型: the section on 存储 answers, not the one on 选型 in general).
const KIND_WORDS = new Set(["选型", "选择", "推荐", "对比", "比较", "区别", "方案", "原理", "介绍",
  "指南", "教程", "入门", "实战", "技巧", "示例", "例子", "问题", "办法", "方法"]);
// English words that say nothing about the topic (CUDA out of memory): not
// marked in the results, unless the query is nothing else.
const LATIN_FUNCTION_WORDS = new Set(["a", "an", "the", "of", "to", "in", "on", "at", "for", "by",
  "and", "or", "is", "are", "be", "with", "from", "as", "it", "do", "does", "how", "what", "why"]);
// A word that says nothing of what a query is about (的, 和; the, of).
export function isFunctionWord(word) {
  return FUNCTION_WORDS.has(word) || LATIN_FUNCTION_WORDS.has(word);
}
const SEGMENTER = globalThis.Intl?.Segmenter ? new Intl.Segmenter("zh", { granularity: "word" }) : null;

// A Chinese part of a query as the runs between its function words (的区别 →
// 区别); whole where the browser has no word segmenter.
export function contentRuns(part) {
  if (!SEGMENTER) return [part];
  const runs = [""];
  for (const { segment } of SEGMENTER.segment(part)) {
    if (FUNCTION_WORDS.has(segment)) runs.push("");
    else runs[runs.length - 1] += segment;
  }
  return runs.filter(Boolean);
}

// A query's words: Latin words as typed; Chinese cut by the browser's word
// segmenter, which knows few technical words (显存 → 显 存, 检查点 → 检查
// 点): a run of single characters is one word, and a lone character joins
// the word after it (大 模型 → 大模型), or else the one before.
export function queryWords(query) {
  const words = [];
  for (const part of query.split(" ").filter(Boolean)) {
    if (!SEGMENTER || !HAS_CJK.test(part) || part.length <= 2) {
      words.push(part);
      continue;
    }
    const pieces = []; // [text, a run of single characters?]
    let run = "";
    const flush = () => {
      if (run) pieces.push([run, run.length === 1]);
      run = "";
    };
    for (const { segment, isWordLike } of SEGMENTER.segment(part)) {
      if (!isWordLike || FUNCTION_WORDS.has(segment)) flush();
      else if (segment.length === 1) run += segment;
      else {
        flush();
        pieces.push([segment, false]);
      }
    }
    flush();
    const joined = [];
    pieces.forEach(([text, lone], k) => {
      if (!lone || pieces.length === 1) joined.push(text);
      else if (k + 1 < pieces.length) pieces[k + 1] = [text + pieces[k + 1][0], false];
      else joined.push((joined.pop() ?? "") + text);
    });
    words.push(...joined);
  }
  return [...new Set(words)];
}

// The two-character pieces of a Chinese word, in order: 大模型 → 大模, 模型.
export function pieces(word) {
  return Array.from({ length: Math.max(0, word.length - 1) }, (_, i) => word.slice(i, i + 2));
}

// Looser [query, weight]s for when few pages hold every word: the words
// without function words, every word but one, and each word alone, so that
// a page with most of the words ranks above a page with one. A single long
// Chinese word: its two-character pieces.
export function relaxed(query) {
  const words = queryWords(query);
  const out = new Map();
  const add = (q, weight) => {
    if (q !== query && !out.has(q)) out.set(q, weight);
  };
  if (words.length === 1) {
    const [word] = words;
    if (HAS_CJK.test(word)) for (const piece of pieces(word)) add(piece, 0.3);
    return [...out];
  }
  if (words.join("") !== query.replace(/ /g, "")) add(words.join(" "), 0.8);
  if (words.length >= 3 && words.length <= 6) {
    words.forEach((_, k) => add(words.filter((__, m) => m !== k).join(" "), 0.5));
  }
  for (const word of words) add(word, 0.3);
  return [...out];
}

// How much a term found in a section says that the section answers: its
// length (a Latin word as three characters, a name like ZeRO-3 as four), a
// word of KIND_WORDS as one.
function termWeight(term) {
  if (KIND_WORDS.has(term)) return 1;
  if (HAS_CJK.test(term)) return term.length;
  return isCompound(term) ? 4 : 3;
}

// What the results look for in a page's text, as [{text, key, weak, weight}]:
// each Chinese part of the query as typed, the words the segmenter finds in
// it (two characters or more; a run of single characters gives its
// two-character pieces: 中 显 存 → 中显, 显存), its Latin words, and each
// glossary name of the terms it names (a name is one term: "fp16 训练" does
// not mark every 训练). The names of one term share a `key`: a section that
// says 昇腾 and 华为 holds one of the query's terms, not two. A single Chinese
// character is `weak` (never marked: 选 of 选择), unless it is the whole query;
// a two-character `piece` of a run is marked only where no other term is
// (显存, not 中显, in 训练中显存). Each single character of the query's
// Chinese is also `glue`: never marked alone, but a mark right beside it takes
// it in (学习 + 率 marks 学习率, not 学习 of it). English function words are
// weak. Longest first.
export function matchTerms(query, hits = []) {
  const terms = new Map(); // text → key
  const pieces2 = new Set(); // two-character pieces of runs: looked for last
  const weak = new Set();
  const glue = new Set();
  for (const part of query.split(" ").filter(Boolean)) {
    if (LATIN_FUNCTION_WORDS.has(part)) {
      weak.add(part);
      continue;
    }
    terms.set(part, part);
    if (!SEGMENTER || !HAS_CJK.test(part)) continue;
    let run = "";
    const flush = () => {
      for (const char of run) glue.add(char);
      if (run.length > 1) for (const piece of pieces(run)) if (!terms.has(piece)) pieces2.add(piece);
      else if (run) weak.add(run);
      run = "";
    };
    for (const { segment, isWordLike } of SEGMENTER.segment(part)) {
      if (isWordLike && segment.length === 1 && !FUNCTION_WORDS.has(segment)) run += segment;
      else {
        flush();
        if (isWordLike && !FUNCTION_WORDS.has(segment)) terms.set(segment, segment);
      }
    }
    flush();
  }
  // a term's other names weigh as the name the query used: a section that
  // says 昇腾 910B holds no more of the query 昇腾 than one that says 昇腾
  const named = new Map(); // name → the name the query used
  hits.forEach(({ group, hit }) => {
    const key = `term:${prepared(group)[0].name}`;
    for (const { name } of prepared(group)) {
      terms.set(name, key);
      named.set(name, hit);
    }
  });
  const out = [...terms].map(([text, key]) => ({ text, key, weak: text.length === 1 && HAS_CJK.test(text) }));
  for (const text of pieces2) if (!terms.has(text)) out.push({ text, key: text, piece: true });
  for (const text of weak) if (!terms.has(text)) out.push({ text, key: text, weak: true });
  for (const term of out) term.weight = termWeight(named.get(term.text) ?? term.text);
  if (out.every((t) => t.weak)) for (const t of out) t.weak = false;
  for (const text of glue) if (!out.some((t) => t.text === text)) out.push({ text, key: text, glue: true, weight: 0 });
  return out.sort((a, b) => b.text.length - a.text.length || (a.text < b.text ? -1 : 1));
}
