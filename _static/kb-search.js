// Search page of the 51 算力 knowledge base: Pagefind underneath, plus what
// Chinese engineers type: mixed Chinese/English without spaces, question
// words, and aliases from the glossary (data/glossary.yaml). The aliases are
// in the index: pages carry each glossary term's other names, hidden, after
// each mention (kb_search.py, AliasMarks), so one search finds every name.
//
// Contract (tests rely on it): every result is an element with
// [data-search-result], in rank order, whose first link's text starts with the
// page title; #search-results gets [data-search-done] once results or a
// no-result message are shown.

// Results shown at once, and added by each 显示更多结果 (five, as in
// Pagefind's own UI): each one's excerpt is a fetch, and the first query
// waits for all of them. Five instead of six: -9 ms per query at 1,000
// articles in a slow hour, about nothing in a fast one (bench_search.py
// --compare), the same ranking on every query set.
const RESULTS_PER_PAGE = 5;
const MAX_SUBRESULTS = 3;
const FEW_RESULTS = 3;
// Question words and particles that carry no topic (显存不够怎么办 → 显存不够,
// 利用率这么低 → 利用率 低).
const QUESTION_WORDS = /怎么办|怎么样|怎么做|怎么|怎样|如何|为什么|为何|为啥|是什么|什么是|什么|有哪些|哪些|哪个|请问|是否|能否|可以吗|这么|那么|吗|呢|吧|啊|呀/g;
// "How do I <verb>" with a verb that says how the question is asked, not
// what it is about: 学习率怎么设置 is about 学习率, and the pages on it need
// not say 设置 (Pagefind keeps only pages with every word).
const HOW_TO = /(?:怎么|怎样|如何)(?:设置|设定|配置|调整|选择|挑选|解决|处理|应对|排查|使用|用|弄|搞)/g;
const PUNCTUATION = /[？?！!。，,、；;：:“”"'‘’（）()《》<>【】\[\]]/g;
const CJK = "\\u3400-\\u9fff\\uf900-\\ufaff";
const HAS_CJK = new RegExp(`[${CJK}]`);
const CJK_THEN_LATIN = new RegExp(`([${CJK}])([a-z0-9])`, "g");
const LATIN_THEN_CJK = new RegExp(`([a-z0-9])([${CJK}])`, "g");
// Characters a reader cannot see that split or hide a word: zero-width
// spaces and joiners, bidi controls, the byte order mark, the soft hyphen,
// variation selectors (训\u200b练 is 训练).
const INVISIBLE = /[\u00ad\u034f\u061c\u115f\u1160\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufe00-\ufe0f\ufeff]/g;
// Longer queries are cut, with a notice: Pagefind's work grows with the
// query, and a query of 100 KB kept the page busy for 40 s.
export const MAX_QUERY = 200;

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

export function stripQuestion(query) {
  const stripped = query.replace(HOW_TO, " ").replace(QUESTION_WORDS, " ").replace(/\s+/g, " ").trim();
  return stripped || query;
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// Where `alias` occurs in `query`: Latin aliases only as whole words.
function aliasPattern(alias) {
  const body = escapeRegExp(alias);
  return HAS_CJK.test(alias) ? new RegExp(body) : new RegExp(`(^|[^a-z0-9])${body}(?=$|[^a-z0-9])`);
}

function replaceAlias(text, alias, other) {
  if (HAS_CJK.test(alias)) return text.replace(alias, ` ${other} `);
  return text.replace(aliasPattern(alias), (match, before) => `${before} ${other} `);
}

// Each glossary entry's names, normalized, with the pattern that finds each
// in a query: built once per page, not on every query.
const PREPARED = new WeakMap();
function prepared(group) {
  if (!PREPARED.has(group)) {
    PREPARED.set(group, group.names.map(normalize).filter(Boolean)
      .map((name) => ({ name, pattern: aliasPattern(name) })));
  }
  return PREPARED.get(group);
}

// The glossary entries a (normalized) query names, each with the longest of
// its names found in it. Every name's pattern is run (the warm-up relies on
// that to compile them all).
function aliasHits(query, groups) {
  const hits = [];
  for (const group of groups) {
    let hit = null;
    for (const { name, pattern } of prepared(group)) {
      if (pattern.test(query) && (!hit || name.length > hit.length)) hit = name;
    }
    if (hit) hits.push({ group, hit });
  }
  return hits;
}

// The query and its rewrites with the other names of the glossary entries
// it names (`hits`), at most 12. Not searched (the index holds the aliases):
// pages titled with any of them rank first.
export function variants(query, hits) {
  const out = new Set([query]);
  for (const { group, hit } of hits) {
    const names = prepared(group).map(({ name }) => name);
    for (const base of [...out]) {
      for (const other of names) {
        if (other !== hit && out.size < 12) out.add(normalize(replaceAlias(base, hit, other)));
      }
    }
  }
  return [...out];
}

// The glossary entry shown above the results: of those the query names, the
// one named by the longest name.
function termOf(hits) {
  let best = null;
  for (const { group, hit } of hits) {
    if (!best || hit.length > best.length) best = { ...group, length: hit.length };
  }
  return best;
}

// Words that say nothing of the topic once a query is cut into words
// (租赁还是自建: 租赁, 自建).
const FUNCTION_WORDS = new Set(["的", "地", "得", "了", "和", "与", "及", "或", "或者", "还是",
  "是", "在", "有", "对", "把", "被", "要", "会", "能", "很", "太", "都", "也", "就", "一个", "一下"]);
const SEGMENTER = globalThis.Intl?.Segmenter ? new Intl.Segmenter("zh", { granularity: "word" }) : null;

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

// Run each [query, weight] and merge: a page's score is the sum over queries
// of its score (relative to the best score of any query) times the query's
// weight, so a page that matches several names of the same concept rises.
async function runAll(pagefind, queries) {
  const shares = new Map(); // per page, [query index, share] of each query it matched
  const found = new Map(); // per page, the result of the query it matched best
  const strongest = new Map();
  const searches = await Promise.all(queries.map(([q]) => pagefind.search(q)));
  // One scale for all queries: a weak match of one query does not count as
  // much as a strong match of another just because it was that query's best.
  const scale = Math.max(1e-9, ...searches.map((s) => (s.results.length ? s.results[0].score : 0)));
  searches.forEach((search, i) => {
    const weight = queries[i][1];
    for (const result of search.results) {
      const share = (weight * result.score) / scale;
      if (!shares.has(result.id)) shares.set(result.id, []);
      shares.get(result.id).push([i, share]);
      // Show (sections, excerpt) the match of the query as typed; failing
      // that, the strongest match among the rewrites.
      const typed = i === 0 ? Infinity : share;
      if (!found.has(result.id) || typed > strongest.get(result.id)) {
        found.set(result.id, result);
        strongest.set(result.id, typed);
      }
    }
  });
  const total = new Map();
  for (const [id, list] of shares) total.set(id, list.reduce((sum, [, share]) => sum + share, 0));
  const ranked = [...found.values()].sort((a, b) => total.get(b.id) - total.get(a.id));
  const best = ranked.length ? total.get(ranked[0].id) : 1;
  for (const result of ranked) {
    result.kbScore = total.get(result.id) / best;
    result.kbShares = shares.get(result.id).map(([i, share]) => [i, share / best]);
  }
  return ranked;
}

// Pagefind ranks by matched words; a page titled with the query, or with a
// section titled with it, is the better answer. The top results' data is
// loaded for display anyway, so they are re-ranked with that bonus.
function squash(text) {
  return normalize(text || "").replace(/[\s¶#]/g, "");
}

// How much of a (normalized) query a title holds, from 0 to 1: its Chinese
// characters that lie in a two-character piece of the query found in the
// title, and its Latin words found at the start of a word of the title
// (each weighing as two characters). "推理服务成本" in "大模型推理成本拆解":
// 推理 and 成本, 4 of 6. Pieces, not words: the browser's word segmenter
// does not know 算力 or 芯片, and cuts them into single characters.
export function titleCoverage(query, title) {
  const text = normalize(title || "");
  const chinese = text.replace(/\s/g, "");
  let held = 0;
  let total = 0;
  for (const part of query.split(" ").filter(Boolean)) {
    if (!HAS_CJK.test(part)) {
      total += 2;
      if (new RegExp(`(^|[^a-z0-9])${escapeRegExp(part)}`).test(text)) held += 2;
      continue;
    }
    total += part.length;
    held += piecesHeld(part, (piece) => chinese.includes(piece));
  }
  return total ? held / total : 0;
}

// The two-character pieces of a Chinese word, in order: 大模型 → 大模, 模型.
function pieces(word) {
  return Array.from({ length: Math.max(0, word.length - 1) }, (_, i) => word.slice(i, i + 2));
}

// How many characters of a Chinese `part` lie in a two-character piece of it
// that `has(piece)`.
function piecesHeld(part, has) {
  const covered = new Set();
  pieces(part).forEach((piece, i) => {
    if (has(piece)) covered.add(i).add(i + 1);
  });
  return covered.size;
}

// `want`: the query's rewrites with glossary names (variants) and, squashed,
// the names that earn a heading bonus.
function headingBonus(data, want) {
  const title = squash(data.meta.title);
  const sections = (data.sub_results || []).map((s) => squash(s.title));
  if (want.names.some((n) => title.includes(n))) return 1.5;
  // most of the query in the title, if not all of it in one piece
  const cover = Math.max(0, ...want.rewrites.map((q) => titleCoverage(q, data.meta.title)));
  const partial = cover >= 0.5 ? 1.5 * cover : 0;
  if (want.names.some((n) => sections.some((s) => s.includes(n)))) return Math.max(1, partial);
  return partial;
}

// Ranked results as [{result, data, score}] (data loaded for the top `limit`),
// `term`: the glossary entry the query names, if any, and `partial`: whether
// none of the top results holds any piece of the query's Chinese (the pages
// Pagefind found by its characters; see heldScore).
// The two phases are left as performance measures for the benchmark:
// "kb-search: index" (Pagefind's search) and "kb-search: excerpts" (its
// fragments of the top results, excerpts, re-ranking).
export async function search(pagefind, raw, groups, limit = RESULTS_PER_PAGE) {
  const query = stripQuestion(normalize(raw));
  if (!query) return { total: 0, top: [] };
  const start = performance.now();
  let queries = [[query, 1]];
  const running = runAll(pagefind, queries);
  // while Pagefind's worker searches: what earns a heading bonus
  const hits = aliasHits(query, groups);
  const rewrites = variants(query, hits);
  const want = { rewrites, names: rewrites.map(squash).filter((n) => n.length >= 2) };
  let ranked = await running;
  if (ranked.length < FEW_RESULTS) {
    // Few pages hold every word: also look for the words apart, ranked lower.
    const loose = relaxed(query);
    if (loose.length) {
      queries = [...queries, ...loose];
      ranked = await runAll(pagefind, queries);
    }
  }
  want.chinese = HAS_CJK.test(query)
    ? queries.map(([q]) => q.split(" ").filter((part) => HAS_CJK.test(part)))
    : null;
  const searched = performance.now();
  const top = await withData(ranked, 0, limit, want);
  // no shown page holds any piece of a Chinese query, only characters (a
  // query with Latin words too may be answered by those: batch size 太小)
  const chineseOnly = Boolean(want.chinese) && !/[a-z0-9]/.test(query);
  const partial = chineseOnly && top.length > 0 && top.every(({ data }) => {
    const has = piecesOf(data);
    return has && heldShare(has, want.chinese[0]) === 0;
  });
  performance.measure("kb-search: index", { start, end: searched });
  performance.measure("kb-search: excerpts", { start: searched, end: performance.now() });
  return { total: ranked.length, top, want, ranked, term: termOf(hits), partial };
}

// Pagefind matches a Chinese word that a page does not hold by its
// characters: 预热 on a page with 预计 and 散热 outranked the pages that say
// 预热. So a shown result's score counts a query only if the page holds more
// than half of the query's Chinese, in two-character pieces, as
// titleCoverage counts (`want.chinese`: each query's Chinese parts).
function heldScore(result, data, want) {
  const has = want.chinese && result.kbShares && piecesOf(data);
  if (!has) return result.kbScore;
  let score = 0;
  for (const [i, share] of result.kbShares) if (heldShare(has, want.chinese[i]) > 0.5) score += share;
  return score;
}

// Whether a page's text holds a piece, or null without its text; one lookup
// per page and piece, shared by heldScore and search's `partial`.
// A fragment's text is cut into words by zero-width spaces (U+200B), and
// Pagefind cut some two-character words in two: 预, U+200B, 热. Both forms
// are looked for in the text as it is, not in a copy without them.
const PIECES = new WeakMap();
function piecesOf(data) {
  if (typeof data.content !== "string") return null;
  if (!PIECES.has(data)) {
    const title = data.meta?.title ?? "";
    const holds = new Map();
    PIECES.set(data, (piece) => {
      if (!holds.has(piece)) {
        holds.set(piece, title.includes(piece) || data.content.includes(piece)
          || (piece.length === 2 && data.content.includes(`${piece[0]}\u200B${piece[1]}`)));
      }
      return holds.get(piece);
    });
  }
  return PIECES.get(data);
}

// The share of the Chinese `parts` that a page holds (`has`), 1 if none.
function heldShare(has, parts) {
  let held = 0;
  let total = 0;
  for (const part of parts) {
    total += part.length;
    held += part.length === 1 ? Number(has(part)) : piecesHeld(part, has);
  }
  return total ? held / total : 1;
}

// Results `from`…`from + count` of `ranked` with their data (title,
// excerpt, sections), those titled with the query first.
export async function withData(ranked, from, count, want) {
  const batch = await Promise.all(ranked.slice(from, from + count).map(async (result, i) => {
    const data = await pageData(result);
    return { result, data, score: heldScore(result, data, want) + headingBonus(data, want), i };
  }));
  return batch.sort((a, b) => b.score - a.score || a.i - b.i);
}

// A result's title, excerpt and sections, cut here from the page's fragment
// (the page text Pagefind stores for excerpts) instead of by Pagefind's
// result.data(). That does the same in Pagefind's worker, one result after
// another, splitting the whole page text again for each matching section;
// with six results at 1,000 articles it took the worker about 50 ms, this
// about 34 (A/B, 20 queries x 2). Should a fragment not load or not be in the
// format read here, Pagefind's data() answers instead.
const FRAGMENT_SIGNATURE = "pagefind_dcd";
const EXCERPT_WORDS = 40;

export async function pageData(result) {
  try {
    return pageExcerpts(await loadFragment(result.id), result.words);
  } catch (error) {
    console.warn(`kb-search: fragment ${result.id}: ${error.message}; using Pagefind's data()`);
    return result.data();
  }
}

async function loadFragment(id) {
  const response = await fetch(new URL(`pagefind/fragment/${id}.pf_fragment`, ROOT_URL));
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  // A fragment is a gzip file, decompressed here. A server that sends it with
  // a Content-Encoding has the browser undo that first: what is left may be
  // the file, or its content already.
  let body = response.body;
  if (response.headers.has("content-encoding")) {
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) return parseFragment(new TextDecoder().decode(bytes));
    body = new Response(bytes).body;
  }
  return parseFragment(await new Response(body.pipeThrough(new DecompressionStream("gzip"))).text());
}

function parseFragment(text) {
  if (!text.startsWith(FRAGMENT_SIGNATURE)) throw new Error("not a Pagefind fragment");
  return JSON.parse(text.slice(FRAGMENT_SIGNATURE.length));
}

const wordKey = (word) => word.trim().toLowerCase();

// Where in words[from…to) the `length` words start that hold the most
// different matched words, then the most matches, with those centred.
// `locations`: sorted indexes of the matched words, all in from…to.
function densest(words, locations, from, to, length) {
  if (to - from <= length || !locations.length) return from;
  const inside = new Map(); // matched word → its matches in the window
  let best = [0, 0, 0, 0]; // different words, matches, first, last location
  for (let i = 0, j = 0; j < locations.length; j++) {
    const added = wordKey(words[locations[j]]);
    inside.set(added, (inside.get(added) || 0) + 1);
    for (; locations[j] - locations[i] >= length; i++) {
      const dropped = wordKey(words[locations[i]]);
      if (inside.get(dropped) > 1) inside.set(dropped, inside.get(dropped) - 1);
      else inside.delete(dropped);
    }
    if (inside.size > best[0] || (inside.size === best[0] && j - i + 1 > best[1])) {
      best = [inside.size, j - i + 1, locations[i], locations[j]];
    }
  }
  const start = Math.round((best[2] + best[3] + 1) / 2 - length / 2);
  return Math.max(from, Math.min(to - length, start));
}

// words[from…to) around its matches, escaped, the matches in <mark>, joined
// by `joiner`.
function excerptOf(words, joiner, locations, from, to) {
  const length = Math.min(EXCERPT_WORDS, to - from);
  const start = densest(words, locations, from, to, length);
  const marked = new Set(locations);
  const out = [];
  for (let i = start; i < start + length; i++) {
    const word = escapeHtml(words[i]);
    out.push(marked.has(i) ? `<mark>${word}</mark>` : word);
  }
  return out.join(joiner).trim();
}

// What the page uses of Pagefind's result.data(): url, meta, excerpt and
// sub_results, the sections with matches (title, url, excerpt, locations,
// and `terms`: how many different matched words). `locations`: the indexes
// of the page's matched words (Pagefind's result.words).
export function pageExcerpts(fragment, locations) {
  const content = fragment.content || "";
  // Chinese pages are stored cut into words with zero-width spaces
  const zws = content.includes("\u200B");
  const words = zws ? content.split("\u200B") : content.split(/[^\S\uFEFF]+/);
  const joiner = zws ? "" : " ";
  const sorted = locations.filter((at) => at < words.length).sort((a, b) => a - b);
  const anchors = (fragment.anchors || [])
    .filter((a) => /\S/.test(a.title || "") || (/^h\d$/i.test(a.element) && /\S/.test(a.text || "")))
    .sort((a, b) => a.location - b.location);
  // a section runs from its anchor to the next; the page's title heads what
  // comes before the first
  const sections = [{ title: fragment.meta?.title, url: fragment.url, from: 0 },
    ...anchors.map((a) => ({ title: a.title || a.text, url: `${fragment.url}#${a.id}`, from: a.location }))];
  const subResults = [];
  let next = 0;
  sections.forEach((section, i) => {
    const to = sections[i + 1]?.from ?? words.length;
    const inside = [];
    while (next < sorted.length && sorted[next] < to) inside.push(sorted[next++]);
    if (!inside.length) return;
    // cut when shown: a result shows a few of its sections
    let excerpt = null;
    subResults.push({
      title: section.title, url: section.url, locations: inside,
      terms: new Set(inside.map((at) => wordKey(words[at]))).size,
      get excerpt() {
        excerpt ??= excerptOf(words, joiner, inside, section.from, to);
        return excerpt;
      },
    });
  });
  return {
    url: fragment.url, meta: fragment.meta || {}, sub_results: subResults,
    excerpt: excerptOf(words, joiner, sorted, 0, words.length),
    content,
  };
}

function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

// Pagefind excerpts are escaped text with <mark> inserted; keep only the marks.
function safeExcerpt(excerpt) {
  return showAliases(excerpt.replace(/<(?!\/?mark>)[^>]*>/g, ""));
}

// A term's other names as the index holds them ("混合精度 ⟦ mixed precision ｜
// AMP ⟧ 来训练", hidden on the page; the excerpt may cut one off at either
// end). An excerpt shows them only when they matched and the mention itself
// did not: "混合精度（<mark>mixed precision</mark>）来训练".
const ALIAS_MARKS = /\s*⟦([^⟦⟧]*)(?:⟧\s*|$)|^([^⟦⟧]*)⟧\s*/g;
const LATIN_END = /[a-z0-9]$/i;
const LATIN_START = /^[a-z0-9]/i;

export function showAliases(excerpt) {
  return excerpt.replace(ALIAS_MARKS, (whole, inner, head, offset, all) => {
    const before = all.slice(0, offset);
    const after = all.slice(offset + whole.length);
    const names = (inner ?? head).split("｜")
      .map((n) => n.trim().replace(/\s+<\/mark>$/, "</mark>"))
      .filter((n) => n.includes("<mark>"));
    // the names the query matched as a whole (ZeRO-3, not every name with
    // "zero" in it), else those it matched in part
    const complete = names.filter((n) => !/[\p{L}\p{N}]/u.test(n.replace(/<mark>.*?<\/mark>/g, "")));
    const matched = complete.length ? complete : names;
    if (matched.length && !/<\/mark>\s*$/.test(before)) return `（${matched.join("、")}）`;
    // "use AMP ⟦ … ⟧ to train": keep one space between Latin words
    const plain = (text) => text.replace(/<\/?mark>/g, "");
    return LATIN_END.test(plain(before).trimEnd()) && LATIN_START.test(plain(after)) ? " " : "";
  });
}

// A heading as the reader sees it: without its terms' other names or the
// permalink mark.
function cleanTitle(title) {
  return (title || "").replace(/\s*⟦[^⟦⟧]*(⟧|$)/g, "").replace(/[¶#]\s*$/, "").trim();
}

function renderResult(data, rootUrl, names = []) {
  const li = document.createElement("li");
  li.setAttribute("data-search-result", "");
  li.className = "kb-search-result";
  const title = cleanTitle(data.meta.title) || data.url;
  const link = document.createElement("a");
  link.href = new URL(data.url.replace(/^\//, ""), rootUrl).href;
  link.className = "kb-search-title";
  link.textContent = title;
  li.append(link);
  const excerpt = document.createElement("p");
  excerpt.className = "kb-search-excerpt";
  excerpt.innerHTML = safeExcerpt(data.excerpt);
  li.append(excerpt);
  // Sections titled with the query first, then those with the most
  // different matched words, then the most (weighted) matches; page order
  // breaks ties.
  const weightOf = (sub) => (sub.weighted_locations || sub.locations || [])
    .reduce((sum, loc) => sum + (loc.weight ?? 1), 0);
  const titled = (sub) => (names.some((n) => squash(sub.title).includes(n)) ? 1 : 0);
  const subs = (data.sub_results || [])
    .filter((s) => s.url.includes("#") && cleanTitle(s.title) !== title)
    .map((s, i) => [s, titled(s), s.terms ?? 0, weightOf(s), i])
    .sort((a, b) => b[1] - a[1] || b[2] - a[2] || b[3] - a[3] || a[4] - b[4])
    .slice(0, MAX_SUBRESULTS)
    .map(([s]) => s);
  if (subs.length) {
    const ul = document.createElement("ul");
    ul.className = "kb-search-sections";
    for (const sub of subs) {
      const item = document.createElement("li");
      const a = document.createElement("a");
      a.href = new URL(sub.url.replace(/^\//, ""), rootUrl).href;
      a.textContent = cleanTitle(sub.title);
      const ex = document.createElement("span");
      ex.className = "kb-search-excerpt";
      ex.innerHTML = " — " + safeExcerpt(sub.excerpt);
      item.append(a, ex);
      ul.append(item);
    }
    li.append(ul);
  }
  return li;
}

function message(container, text) {
  const p = document.createElement("p");
  p.className = "kb-search-empty";
  p.textContent = text;
  container.replaceChildren(p);
}

// The site root is one level above _static/, wherever the site is served.
const ROOT_URL = new URL("../", import.meta.url);
let pagefindReady = null;

// A word nearly every page of a GPU knowledge base has (if none has it, the
// search code is compiled all the same). Chinese, so that the worker's
// Chinese word segmenter (Intl.Segmenter, ~20 ms to load its dictionary)
// is loaded before the reader's first query, not during it.
const WARM_UP_WORD = "训练";

// Loads the engine, its index entry and metadata. With `warmUp` (the page
// opened without a query) one small search, through every step of a
// reader's, also compiles the search, scoring and excerpt code, so that the
// reader's first query does not wait for it. It compiles the pattern of every
// glossary name too (a regular expression compiles when first run: 4-7 ms,
// which the first query would spend while Pagefind's worker searches).
function loadPagefind({ warmUp = false } = {}) {
  pagefindReady ??= import(new URL("pagefind/pagefind.js", ROOT_URL).href).then(async (pf) => {
    await pf.options({ excerptLength: 40 });
    await pf.init();
    if (warmUp) await search(pf, WARM_UP_WORD, aliasGroups(), 1);
    else await pf.search("");
    document.getElementById("search-results")?.setAttribute("data-search-ready", "");
    return pf;
  });
  return pagefindReady;
}

// While the reader types, load the index chunks of the query, so that they
// are there when the query is run.
async function preload(raw) {
  const query = stripQuestion(normalize(cleanQuery(raw).text));
  if (!query) return;
  const pagefind = await loadPagefind();
  await pagefind.preload(query);
}

let newestRun = 0;

// Run one query and show it; [data-search-done] marks the end of each run and
// [data-search-query] names the query shown. A run that a newer one overtook
// shows nothing. `since` is when the reader asked (keystroke or submit), for
// [data-search-ms].
async function runQuery(asked, since = performance.now()) {
  const run = ++newestRun;
  const { text: raw, cut } = cleanQuery(asked);
  const container = document.getElementById("search-results");
  const status = document.getElementById("kb-search-status");
  container.removeAttribute("data-search-done");
  for (const box of document.querySelectorAll("input[name=q]")) if (box.value !== raw) box.value = raw;
  if (!raw.trim()) {
    status.textContent = "请输入关键词。";
    message(container, "在上面的搜索框输入中文或英文关键词，例如：混合精度、NCCL 超时、mixed precision。");
    container.dataset.searchQuery = "";
    done(container, raw);
    return;
  }
  status.textContent = "正在搜索……";
  let results;
  try {
    const pagefind = await loadPagefind();
    results = await search(pagefind, raw, aliasGroups(), RESULTS_PER_PAGE);
  } catch (error) {
    if (run !== newestRun) return;
    status.textContent = "搜索索引加载失败，请刷新页面重试。";
    message(container, status.textContent);
    done(container, raw);
    throw error;
  }
  if (run !== newestRun) return;
  container.dataset.searchMs = String(Math.round(performance.now() - since));
  container.dataset.searchQuery = raw;
  const { term } = results;
  const cutNotice = cut ? [cutQueryNotice()] : [];
  if (results.total) {
    const list = document.createElement("ol");
    list.className = "kb-search-list";
    for (const { data } of results.top) list.append(renderResult(data, ROOT_URL, results.want.names));
    const notice = results.partial ? [partialNotice(raw.trim())] : [];
    container.replaceChildren(...cutNotice, ...(term ? [renderTerm(term)] : []), ...notice, list);
    showCount(status, results.total, results.top.length);
    if (results.total > results.top.length) container.append(moreButton(run, results, list, status));
  } else {
    status.textContent = "没有找到相关页面。";
    message(container, `没有找到与“${raw}”相关的页面。换个说法，或试试英文名、缩写，也可以浏览全部文章。`);
    container.prepend(...cutNotice);
  }
  done(container, raw);
}

function cutQueryNotice() {
  const p = document.createElement("p");
  p.className = "kb-search-cut";
  p.textContent = `查询太长，只搜索了前 ${MAX_QUERY} 个字。`;
  return p;
}

// The URL follows the box, but is written once results are shown: writing
// history and the page title has the browser do work (history entry, tab
// title, favicon) that on a 2-core machine delayed the search by 11 ms
// (A/B, 1,000 articles). `pendingUrl`: [start a new history entry?, url].
let pendingUrl = null;

function followBox(newEntry, url) {
  pendingUrl = [Boolean(pendingUrl?.[0]) || newEntry, url];
}

function writeUrl() {
  if (!pendingUrl) return;
  const [newEntry, url] = pendingUrl;
  pendingUrl = null;
  if (newEntry) window.history.pushState(null, "", url);
  else window.history.replaceState(null, "", url);
}

// The end of a run: its results (or message) are shown.
function done(container, raw) {
  container.setAttribute("data-search-done", "");
  document.title = raw.trim() ? `${raw} - 搜索` : "搜索";
  writeUrl();
}

// Said above results none of which holds any piece of the query (文心一言
// on pages that hold 文, 心 or 言), so that they are not read as answers.
function partialNotice(query) {
  const p = document.createElement("p");
  p.className = "kb-search-partial";
  p.textContent = `没有页面含有“${query}”：下面的页面只含其中的部分字词。`;
  return p;
}

function showCount(status, total, shown) {
  status.textContent = `找到 ${total} 篇相关页面${total > shown ? `，显示前 ${shown} 篇` : ""}。`;
}

// 显示更多结果: the next results, in rank order, below those shown; focus
// moves to the first new one. Gone once every result is shown.
function moreButton(run, results, list, status) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "kb-search-more";
  button.textContent = "显示更多结果";
  let shown = results.top.length;
  button.addEventListener("click", async () => {
    button.disabled = true;
    const batch = await withData(results.ranked, shown, RESULTS_PER_PAGE, results.want);
    if (run !== newestRun) return; // a newer query replaced these results
    const items = batch.map(({ data }) => renderResult(data, ROOT_URL, results.want.names));
    list.append(...items);
    shown += batch.length;
    showCount(status, results.total, shown);
    items[0]?.querySelector("a")?.focus();
    if (shown < results.total) button.disabled = false;
    else button.remove();
  });
  return button;
}

function renderTerm(entry) {
  const aside = document.createElement("aside");
  aside.className = "kb-search-term";
  const title = document.createElement("p");
  title.className = "kb-search-term-title";
  const link = document.createElement("a");
  link.href = new URL(entry.url, new URL("search.html", ROOT_URL)).href;
  link.textContent = entry.names.slice(0, 3).join(" · ");
  title.append("术语：", link);
  const def = document.createElement("p");
  def.textContent = entry.def;
  aside.append(title, def);
  return aside;
}

function queryFromUrl() {
  return new URLSearchParams(window.location.search).get("q") || "";
}

let aliasCache = null;
function aliasGroups() {
  aliasCache ??= JSON.parse(document.getElementById("kb-search-aliases").textContent || "[]");
  return aliasCache;
}

function urlFor(raw) {
  const url = new URL(window.location.href);
  url.searchParams.set("q", raw);
  return url;
}

// One search at a time: what the reader asks while a search runs (keystrokes,
// a submit) is merged into the next search, which takes the box's latest
// text; asking for the text being searched already starts nothing new.
// (A search per keystroke would queue up behind each other in Pagefind's
// worker.)
function scheduler() {
  let running = null; // text being searched
  let pending = null; // [text, time asked]
  const next = async () => {
    if (running !== null || !pending) return;
    const [raw, since] = pending;
    pending = null;
    running = raw;
    try {
      await runQuery(raw, since);
    } finally {
      running = null;
      next();
    }
  };
  const shown = () => {
    const container = document.getElementById("search-results");
    return container.hasAttribute("data-search-done") ? container.dataset.searchQuery : null;
  };
  return (raw, since = performance.now()) => {
    if (raw === running || (running === null && raw === shown())) pending = null;
    else pending = [raw, pending?.[0] === raw ? pending[1] : since];
    next();
  };
}

function main() {
  const form = document.querySelector(".kb-search-form");
  const box = document.getElementById("kb-search-input");
  const ask = scheduler();
  // Results follow the box as the reader types, and the URL follows the box.
  // A query the reader submitted (or opened) keeps its history entry: the
  // next keystroke starts a new one.
  let committed = true;
  box.addEventListener("input", (event) => {
    if (event.isComposing) return; // pinyin still being composed
    followBox(committed, urlFor(box.value));
    committed = false;
    preload(box.value).catch(() => {});
    ask(box.value);
  });
  box.addEventListener("compositionend", () => box.dispatchEvent(new Event("input")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    followBox(false, urlFor(box.value));
    writeUrl();
    committed = true;
    ask(box.value);
  });
  window.addEventListener("popstate", () => {
    pendingUrl = null; // the browser has set the URL
    committed = true;
    ask(queryFromUrl());
  });
  loadPagefind({ warmUp: !queryFromUrl() }); // also when the page opens without a query
  aliasGroups().forEach(prepared);
  ask(queryFromUrl());
}

if (typeof document !== "undefined" && document.getElementById("search-results")) {
  main();
}
