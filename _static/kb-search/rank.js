// Which pages answer a query, best first: Pagefind's searches of the query,
// of its rewrites with the glossary's other names, and (when few pages hold
// every word) of looser forms; then the top results re-ranked by what their
// text and titles hold. `pagefind` is anything with Pagefind's search(); a
// result's text comes from `load` (fragment.js's pageData).

import {
  HAS_CJK, aliasHits, canonical, contentRuns, escapeRegExp, isCompound, isDefinitionQuestion, isFunctionWord, matchTerms, normalize,
  pagesWords, pieces, prepared, relaxed, stripQuestion, termOf, variants,
} from "./query.js";

export const RESULTS_PER_PAGE = 5;
const FEW_RESULTS = 3;
// How much the section that holds the most of the query counts (bestCover),
// for a query that asks about two things or more (queryUnits)
const COVER_WEIGHT = 1;
const COVER_UNITS = 2;

// Run each [query, weight] and merge: a page's score is the sum over queries
// of its score (relative to the best score of any query) times the query's
// weight, so a page that matches several names of the same concept rises.
// `run`: Pagefind's search, each query searched once.
async function runAll(run, queries) {
  const shares = new Map(); // per page, [query index, share] of each query it matched
  const found = new Map(); // per page, the result of the query it matched best
  const strongest = new Map();
  const searches = await Promise.all(queries.map(([q]) => run(q)));
  // One scale for all queries: a weak match of one query does not count as
  // much as a strong match of another just because it was that query's best.
  const scale = Math.max(1e-9, ...searches.map((s) => (s.results.length ? s.results[0].score : 0)));
  searches.forEach((search, i) => {
    const weight = queries[i][1];
    for (const result of search.results) {
      const share = (weight * result.score) / scale;
      if (!shares.has(result.id)) shares.set(result.id, []);
      shares.get(result.id).push([i, share]);
      // the words Pagefind matched: those of the query as typed, failing
      // that of the strongest rewrite
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

function squash(text) {
  return normalize(text || "").replace(/[\s¶#]/g, "");
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

// Pagefind ranks by matched words; a page titled with the query, or with a
// section titled with it, is the better answer. `want`: the query's
// rewrites with glossary names (variants) and, squashed, the names that earn
// the bonus.
function headingBonus(data, want) {
  const title = squash(data.meta.title);
  const sections = (data.sub_results || []).map((s) => squash(s.title));
  if (want.names.some((n) => title.includes(n))) return 1.5;
  // most of the query in the title, if not all of it in one piece
  const cover = Math.max(0, ...want.rewrites.map((q) => titleCoverage(q, data.meta.title)));
  const partial = cover >= 0.5 ? 1.5 * cover : 0;
  if (want.names.some((n) => sections.some((s) => s.includes(n)))) return Math.max(1, partial);
  // the terms the query names (any of their glossary names) in the title or
  // a section's title: a question that names 梯度累积 among other words is
  // answered by the section on 梯度累积, not by a long page that holds all
  // the words apart (a share of the named terms, by the length of the names
  // the query used)
  const named = Math.max(termCover(want.named, title) * 1.5, ...sections.map((s) => termCover(want.named, s)));
  // most of the query in a section's title: 数据预处理太慢 and "案例 12：数据
  // 预处理慢", where a page with 数据, 处理 and 太慢 apart held more words
  const titles = (data.sub_results || []).map((s) => s.title).filter(Boolean);
  const sectionCover = Math.max(0, ...want.rewrites.flatMap((q) => titles.map((t) => titleCoverage(q, t))));
  return Math.max(partial, named >= 0.5 ? named : 0, sectionCover >= 0.5 ? sectionCover : 0);
}

// The share of the glossary terms a query names (`terms`: [{weight, names}])
// whose names a (squashed) title holds, by weight.
export function termCover(terms, title) {
  let held = 0;
  let total = 0;
  for (const { weight, names } of terms) {
    total += weight;
    if (names.some((n) => title.includes(n))) held += weight;
  }
  return total ? held / total : 0;
}

// A page's text, for lookups: whether it holds a piece of Chinese, or a
// Latin word as a whole (ZeRO-3, not zero_grad and 3600); null without its
// text. One lookup per page and piece.
const LOOKUPS = new WeakMap();
// A page's title and text, as the lookups below read them.
function titleAndText(data) {
  return `${data.meta?.title ?? ""}\n${data.text.replaceAll("\u200B", "")}`;
}
function textOf(data) {
  if (typeof data.text !== "string") return null;
  if (!LOOKUPS.has(data)) {
    const text = titleAndText(data);
    const lower = text.toLowerCase();
    const held = new Map();
    LOOKUPS.set(data, (piece) => {
      if (!held.has(piece)) {
        held.set(piece, HAS_CJK.test(piece) ? text.includes(piece)
          : new RegExp(`(?<![a-z0-9_])${escapeRegExp(piece)}(?![a-z0-9_])`).test(lower));
      }
      return held.get(piece);
    });
  }
  return LOOKUPS.get(data);
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

// Pagefind matches a word that a page does not hold by its pieces: 预热 on a
// page with 预计 and 散热 outranked the pages that say 预热, and ZeRO-3 on
// pages with zero_grad and 3600. So a shown result's score counts a query
// only if the page holds more than half of the query's Chinese, in
// two-character pieces as titleCoverage counts, and each of its compound
// Latin words whole (`want.parts`: each query's Chinese parts and compounds).
function heldScore(result, data, want) {
  const has = result.kbShares && textOf(data);
  if (!has) return result.kbScore;
  let score = 0;
  for (const [i, share] of result.kbShares) {
    const { chinese, compounds } = want.parts[i];
    if ((!chinese.length || heldShare(has, chinese) > 0.5) && compounds.every(has)) score += share;
  }
  return score;
}

// How often a page names what the query names (the query, or a glossary
// name of the term it names), from 0 to 1 at MENTIONS and more: a page
// about KV 缓存 says it a dozen times; a page on chip caches that says "KV
// Cache" once, and "Cache" twenty times, matched Pagefind's words better.
const MENTIONS = 6;
const SQUASHED = new WeakMap();
export function mentionShare(data, names) {
  if (typeof data.text !== "string" || !names.length) return 0;
  if (!SQUASHED.has(data)) SQUASHED.set(data, squash(titleAndText(data)));
  const text = SQUASHED.get(data);
  let count = 0;
  for (const name of names) count += text.split(name).length - 1;
  return Math.min(count, MENTIONS) / MENTIONS;
}

// What a (normalized) query asks about, as units a passage may hold: each
// glossary term it names (by any of its names), each of its other Latin
// words, and its other Chinese, by two-character pieces as titleCoverage
// counts. Function words (的, 和; the, of) are none. A unit weighs as
// titleCoverage weighs it: a Chinese character one, a Latin word two.
export function queryUnits(query, hits) {
  let rest = query;
  const units = [];
  const weigh = (text) => text.split(" ").filter(Boolean)
    .reduce((sum, word) => sum + (HAS_CJK.test(word) ? word.length : 2), 0);
  for (const { group, hit } of [...hits].sort((a, b) => b.hit.length - a.hit.length)) {
    const found = prepared(group).find(({ name }) => name === hit);
    if (!found || !found.pattern.test(rest)) continue;
    rest = rest.replace(found.pattern, (match, before) => `${HAS_CJK.test(hit) ? "" : before} `);
    units.push({ weight: weigh(hit), names: prepared(group) });
  }
  for (const word of rest.split(" ").filter(Boolean)) {
    if (!HAS_CJK.test(word)) {
      if (!isFunctionWord(word)) units.push({ weight: 2, latin: word });
      continue;
    }
    for (const run of contentRuns(word)) units.push({ weight: run.length, chinese: run });
  }
  return units;
}

// How much of the query's `units` a passage's text holds, from 0 to 1: the
// section that answers a question holds most of what it asks together,
// where a long page may hold each word in another section.
export function passageCover(units, text) {
  const lower = text.replaceAll("\u200B", "").toLowerCase();
  const has = (piece) => lower.includes(piece);
  let held = 0;
  let total = 0;
  for (const unit of units) {
    total += unit.weight;
    if (unit.names) {
      if (unit.names.some(({ name, pattern }) => (HAS_CJK.test(name) ? has(name) : pattern.test(lower)))) held += unit.weight;
    } else if (unit.latin) {
      if (new RegExp(`(?<![a-z0-9_])${escapeRegExp(unit.latin)}(?![a-z0-9_])`).test(lower)) held += unit.weight;
    } else {
      held += unit.chinese.length === 1 ? Number(has(unit.chinese)) : piecesHeld(unit.chinese, has);
    }
  }
  return total ? held / total : 0;
}

// The most of the query that one section of a page holds (passageCover),
// its title included; 0 for a query that asks about one thing only, which
// every page that holds it would hold whole.
export function bestCover(data, units) {
  if (typeof data.text !== "string" || units.length < COVER_UNITS) return 0;
  return Math.max(0, ...(data.sub_results || []).filter((s) => s.span)
    .map((s) => passageCover(units, `${s.title || ""}\n${data.text.slice(...s.span)}`)));
}

function partsOf(query) {
  const words = query.split(" ").filter(Boolean);
  return { chinese: words.filter((w) => HAS_CJK.test(w)), compounds: words.filter((w) => !HAS_CJK.test(w) && isCompound(w)) };
}

// Results `from`…`from + count` of `ranked` with their data (title,
// excerpt, sections), re-ranked: those whose text holds the query and those
// titled with it first.
export async function withData(ranked, from, count, want, load) {
  const batch = await Promise.all(ranked.slice(from, from + count).map(async (result, i) => {
    const data = await load(result, want.terms);
    const score = heldScore(result, data, want) + headingBonus(data, want) + mentionShare(data, want.names)
      + COVER_WEIGHT * bestCover(data, want.units);
    return { result, data, score, i };
  }));
  return batch.sort((a, b) => b.score - a.score || a.i - b.i);
}

// Ranked results as {total, top: [{result, data, score}] (data loaded for
// the top `limit`), ranked, want, term: the glossary entry the query names,
// partial: whether none of the top results holds any piece of the query's
// Chinese}. Two performance measures for the benchmark: "kb-search: index"
// (Pagefind's searches) and "kb-search: excerpts" (the top results' text).
export async function search(pagefind, raw, groups, limit, load) {
  const query = stripQuestion(normalize(raw));
  if (!query) return { total: 0, top: [] };
  const start = performance.now();
  const hits = aliasHits(query, groups);
  const rewrites = variants(query, hits);
  const searches = new Map();
  const run = (q) => {
    if (!searches.has(q)) searches.set(q, pagefind.search(q));
    return searches.get(q);
  };
  // The query, and at once the query with the Chinese names of the terms it
  // names otherwise (the names the pages use); its other rewrites only when
  // few pages are found (each search is time the reader waits).
  // and the query in the pages' words, where it says a reader's word for one
  const plain = pagesWords(query, hits);
  const first = [...new Set([query, ...canonical(query, hits), ...(plain ? [plain] : [])])];
  let queries = first.map((q) => [q, 1]);
  let ranked = await runAll(run, queries);
  if (ranked.length < FEW_RESULTS) {
    // few pages found: the other rewrites, and the words apart, ranked lower
    const more = rewrites.filter((q) => !first.includes(q)).map((q) => [q, 1]);
    const loosened = new Map([...(plain ? relaxed(plain) : []), ...relaxed(query)]);
    const loose = [...loosened].filter(([q]) => !first.includes(q) && !more.some(([m]) => m === q));
    if (more.length || loose.length) {
      queries = [...queries, ...more, ...loose];
      ranked = await runAll(run, queries);
    }
  }
  const want = {
    rewrites, names: rewrites.map(squash).filter((n) => n.length >= 2),
    named: hits.map(({ group, hit }) => ({
      weight: squash(hit).length,
      names: prepared(group).map(({ name }) => squash(name)).filter((n) => n.length >= 2),
    })),
    terms: matchTerms(query, hits), parts: queries.map(([q]) => partsOf(q)), units: queryUnits(query, hits),
  };
  const searched = performance.now();
  const top = await withData(ranked, 0, limit, want, load);
  // no shown page holds any piece of a Chinese query, only characters (a
  // query with Latin words too may be answered by those: batch size 太小)
  const chineseOnly = HAS_CJK.test(query) && !/[a-z0-9]/.test(query);
  const partial = chineseOnly && top.length > 0 && top.every(({ data }) => {
    const has = textOf(data);
    return has && heldShare(has, want.parts[0].chinese) === 0;
  });
  performance.measure("kb-search: index", { start, end: searched });
  performance.measure("kb-search: excerpts", { start: searched, end: performance.now() });
  // a question of what a term means: its glossary entry is the first answer
  const definition = isDefinitionQuestion(normalize(raw), hits);
  return { total: ranked.length, top, want, ranked, term: termOf(hits), partial, definition };
}
