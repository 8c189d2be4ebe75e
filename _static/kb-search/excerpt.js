// What a result shows of a page: its text as the page reads, the sections
// that hold the query (best first), and excerpts with the query's terms
// marked as whole words. Pure functions over a page's stored text (the
// shape fragment.js reads): no DOM, no Pagefind.

import { escapeRegExp, isCompound } from "./query.js";

export const EXCERPT_WORDS = 40;
const ZWS = "\u200B";

// Pagefind stores a page's text cut into words by zero-width spaces, with
// ". " after each block that does not end in punctuation (a heading, a table
// cell, a list item): "要点. 依据. 显存不够时". Between blocks the results
// show a space instead, as the page's layout separates them. A ". " is the
// page's own after a heading's number (6. 检查点策略): a word of digits
// where a heading starts; and after an initial or an abbreviation (Glenn K.
// Lockwood, Rajbhandari et al., e.g.), which no block ends with.
// Returns the words as shown, where each starts in `text`, and `text`.
const INITIAL = /^[A-Z]$/;
const ABBREVIATION = /^(?:e\.g|i\.e|al|vs|etc|cf|fig|vol|pp|eds|dr|mr|mrs|prof|inc|ltd|corp|jr)$/i;
export function pageText(fragment) {
  const content = fragment.content || "";
  const zws = content.includes(ZWS);
  const raw = zws ? content.split(ZWS) : content.split(/(?<=\s)(?=\S)/);
  const headings = new Set((fragment.anchors || []).map((a) => a.location));
  const words = [];
  const starts = [];
  let text = "";
  raw.forEach((word, i) => {
    let shown = word;
    // (the last block's is "." with nothing after it)
    const blockEnd = word === ". " || (word === "." && i === raw.length - 1);
    const kept = (headings.has(i - 1) && /^\d+$/.test(raw[i - 1] ?? "")) || INITIAL.test(raw[i - 1] ?? "") || ABBREVIATION.test(raw[i - 1] ?? "");
    if (blockEnd && !kept) {
      shown = /\s$/.test(text) || !text ? "" : " ";
    }
    starts.push(text.length);
    words.push(shown);
    text += shown;
  });
  return { words, starts, text };
}

// One pattern for all `terms` (matchTerms: normalized, longest first), each
// in a group of its own: Chinese as written, Latin as whole words in any
// case (ZeRO-3 is not the zero of zero_grad, nor 3 of 3600), an English word
// in its other forms too (price, prices, pricing: Pagefind stems them), and
// any spacing between a name's words.
export function termPattern(terms) {
  if (!terms.length) return null;
  const alts = terms.map((term) => {
    let body = term.split(" ").map(escapeRegExp).join("\\s*");
    if (/^[a-z]{4,}$/.test(term) && !isCompound(term)) {
      const root = term.replace(/(?:ing|ed|es|s|e)$/, "");
      body = `${escapeRegExp(root.length >= 4 ? root : term)}(?:e|es|s|ed|ing)?`;
    }
    const before = /^[a-z0-9]/.test(term) ? "(?<![a-z0-9_])" : "";
    const after = /[a-z0-9]$/.test(term) ? "(?![a-z0-9_])" : "";
    return `(${before}${body}${after})`;
  });
  return new RegExp(alts.join("|"), "gi");
}

// [start, end, term index] of each match of `pattern` in `text`.
export function findMatches(text, pattern) {
  const out = [];
  if (!pattern) return out;
  pattern.lastIndex = 0;
  for (const m of text.matchAll(pattern)) {
    if (!m[0]) continue;
    out.push([m.index, m.index + m[0].length, m.findIndex((g, i) => i > 0 && g !== undefined) - 1]);
  }
  return out;
}

// A function that finds `terms` (matchTerms) in a text: [{start, end, key,
// weight}] in text order; a term's two-character `piece` only where no other
// term is; and each match widened by the query's single characters (`glue`)
// right beside it, so that a word is marked whole.
function termMatcher(terms) {
  const strong = terms.filter((t) => !t.weak && !t.piece && !t.glue);
  const spare = terms.filter((t) => t.piece);
  const patterns = [[strong, termPattern(strong.map((t) => t.text))], [spare, termPattern(spare.map((t) => t.text))]];
  const glue = termPattern(terms.filter((t) => t.glue).map((t) => t.text));
  return (text) => {
    let out = [];
    for (const [list, pattern] of patterns) {
      const taken = (m) => out.some((o) => o.start < m.end && m.start < o.end);
      const found = findMatches(text, pattern).map(([start, end, i]) => (
        { start, end, key: list[i].key, weight: list[i].weight ?? 1 })).filter((m) => !taken(m));
      out = out.length ? [...out, ...found].sort((a, b) => a.start - b.start) : found;
    }
    return out.length && glue ? widened(out, findMatches(text, glue)) : out;
  };
}

// `matches` (in text order, not overlapping) each widened over the `glue`
// matches that touch it, on either side, one after another; never into the
// next match.
function widened(matches, glue) {
  const byStart = new Map(glue.map(([start, end]) => [start, end]));
  const byEnd = new Map(glue.map(([start, end]) => [end, start]));
  return matches.map((m, i) => {
    let { start, end } = m;
    const floor = i ? matches[i - 1].end : 0;
    const ceiling = matches[i + 1]?.start ?? Infinity;
    while (byEnd.has(start) && byEnd.get(start) >= floor) start = byEnd.get(start);
    while (byStart.has(end) && byStart.get(end) <= ceiling) end = byStart.get(end);
    return start === m.start && end === m.end ? m : { ...m, start, end };
  });
}

// The index of the word of `starts` that holds character `at`.
function wordAt(starts, at) {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// Where in words[from…to) the `length` words start that hold the most
// different matched terms, then the most matches, with those centred.
// `matches`: {word, key}, sorted, all in from…to.
function densest(matches, from, to, length) {
  if (to - from <= length || !matches.length) return from;
  const inside = new Map(); // term → its matches in the window
  let best = [0, 0, 0, 0]; // different terms, matches, first, last word
  for (let i = 0, j = 0; j < matches.length; j++) {
    inside.set(matches[j].key, (inside.get(matches[j].key) || 0) + 1);
    for (; matches[j].word - matches[i].word >= length; i++) {
      const dropped = matches[i].key;
      if (inside.get(dropped) > 1) inside.set(dropped, inside.get(dropped) - 1);
      else inside.delete(dropped);
    }
    if (inside.size > best[0] || (inside.size === best[0] && j - i + 1 > best[1])) {
      best = [inside.size, j - i + 1, matches[i].word, matches[j].word];
    }
  }
  const start = Math.round((best[2] + best[3] + 1) / 2 - length / 2);
  return Math.max(from, Math.min(to - length, start));
}

// Whether two excerpts (escaped text with <mark>) say the same: a section's
// excerpt that repeats its page's is not shown again under it. Excerpts are
// cut at different places, so punctuation at either end does not count, and
// one that holds the other says the same.
export function sameExcerpt(a, b) {
  const ends = /^[\s\p{P}]+|[\s\p{P}]+$/gu;
  const text = (excerpt) => (excerpt || "").replace(/<\/?mark>/g, "").replace(/\s+/g, " ").replace(ends, "");
  const [x, y] = [text(a), text(b)];
  return x !== "" && y !== "" && (x.includes(y) || y.includes(x));
}

export function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

// text[from…to) escaped, the matches in <mark> (matches that touch in one).
export function markText(text, matches, from, to) {
  let out = "";
  let at = from;
  for (const { start, end } of matches) {
    if (end <= from || start >= to) continue;
    const s = Math.max(start, at);
    const e = Math.min(end, to);
    if (e <= s) continue;
    if (s === at && out.endsWith("</mark>")) {
      // touching the last mark (利用 + 率低): one word, one mark
      out = `${out.slice(0, -"</mark>".length)}${escapeHtml(text.slice(s, e))}</mark>`;
    } else out += `${escapeHtml(text.slice(at, s))}<mark>${escapeHtml(text.slice(s, e))}</mark>`;
    at = e;
  }
  return out + escapeHtml(text.slice(at, to));
}

// words[from…to) around its matches: at most EXCERPT_WORDS words, escaped,
// the matches in <mark>, spaces at either end trimmed.
function excerptOf(page, matches, from, to) {
  const length = Math.min(EXCERPT_WORDS, to - from);
  const start = densest(matches, from, to, length);
  const end = start + length;
  const { starts, text } = page;
  let a = starts[start] ?? text.length;
  let b = end < starts.length ? starts[end] : text.length;
  // a match the window cuts is shown whole
  for (const m of matches) {
    if (m.start < a && m.end > a) a = m.start;
    if (m.start < b && m.end > b) b = m.end;
  }
  while (a < b && /\s/.test(text[a])) a++;
  while (b > a && /\s/.test(text[b - 1])) b--;
  return markText(text, matches, a, b);
}

// The heading of each section: anchors of headings, or with a title, in
// page order.
function headingAnchors(fragment) {
  return (fragment.anchors || [])
    .filter((a) => /\S/.test(a.title || "") || (/^h\d$/i.test(a.element) && /\S/.test(a.text || "")))
    .sort((a, b) => a.location - b.location);
}

// What the results use of a page: url, meta, text, the page's excerpt and
// its sections with matches (sub_results: title as the page writes it, url,
// excerpt, `score`, `matches`), best first.
// A section's score: each of the query's terms (matchTerms; the names of a
// glossary term are one) that it holds, by the term's length and by how few
// of the page's sections hold it (the word a whole page is about says little
// about which section answers), those in its heading three times, a weak
// term (a single character) only there, at a quarter.
// `locations`: the words Pagefind matched, used only where none of the terms
// is in the text (Pagefind found the page by an English word's stem).
export function pageExcerpts(fragment, locations = [], terms = []) {
  const page = pageText(fragment);
  const { words, starts, text } = page;
  const match = termMatcher(terms);
  const shown = shownWords(fragment, words.length);
  let matches = match(text).map((m) => ({ ...m, word: wordAt(starts, m.start) })).filter((m) => m.word < shown);
  if (!matches.length) {
    // (Latin words only: Pagefind matches a Chinese word by its characters,
    // 零 of 零售 for 零冗余优化器)
    matches = [...new Set(locations)]
      .filter((at) => at < shown && /^[a-z0-9]/i.test(words[at].trim()))
      .sort((a, b) => a - b)
      .map((at) => ({ start: starts[at], end: starts[at] + words[at].trimEnd().length,
        key: words[at].trim().toLowerCase(), weight: 1, word: at }));
  }
  // a section runs from its anchor to the next; the page's title heads what
  // comes before the first
  const sections = [{ title: fragment.meta?.title, url: fragment.url, from: 0 },
    ...headingAnchors(fragment).map((a) => ({ title: a.text || a.title, url: `${fragment.url}#${a.id}`, from: a.location }))];
  const kept = [];
  let next = 0;
  sections.forEach((section, i) => {
    const to = Math.min(sections[i + 1]?.from ?? shown, shown);
    const inside = [];
    while (next < matches.length && matches[next].word < to) {
      if (matches[next].word >= section.from) inside.push(matches[next]);
      next++;
    }
    if (!inside.length) return;
    const held = new Map(inside.map((m) => [m.key, m.weight]));
    const titled = new Map(match(section.title || "").map((m) => [m.key, m.weight]));
    for (const t of terms) if (t.weak && (section.title || "").includes(t.text)) titled.set(t.key, 0.25);
    kept.push({ section, to, inside, held, titled, order: i });
  });
  const spread = new Map(); // term → how many sections hold it
  for (const { held } of kept) for (const key of held.keys()) spread.set(key, (spread.get(key) || 0) + 1);
  const rarity = (key) => Math.log(1 + kept.length / (spread.get(key) || 1));
  const subResults = kept.map(({ section, to, inside, held, titled, order }) => {
    let score = 0;
    for (const [key, weight] of held) score += weight * rarity(key);
    for (const [key, weight] of titled) score += 2 * weight * rarity(key);
    let excerpt = null; // cut when shown: a result shows a few of its sections
    return {
      title: section.title, url: section.url, score, matches: inside.length, order,
      // the section's text (title and body), for rank.js's passageCover
      span: [starts[section.from] ?? text.length, to < starts.length ? starts[to] : text.length],
      get excerpt() {
        excerpt ??= excerptOf(page, inside, section.from, to);
        return excerpt;
      },
    };
  });
  subResults.sort((a, b) => b.score - a.score || b.matches - a.matches || a.order - b.order);
  return {
    url: fragment.url, meta: fragment.meta || {}, sub_results: subResults, text,
    excerpt: excerptOf(page, matches, 0, shown),
  };
}

// The page's 关键词 (front-matter keywords: other names, English names) are
// indexed, so that a page is found by them, but not shown on the page
// (kb.pages.tags writes them last, as <p id="kb-keywords">): a result never
// shows them as the page's text. The words before them.
export const KEYWORDS_ID = "kb-keywords";
function shownWords(fragment, count) {
  const at = (fragment.anchors || []).find((a) => a.id === KEYWORDS_ID)?.location;
  return Number.isInteger(at) && at >= 0 && at < count ? at : count;
}

// A glossary definition (MyST, as data/glossary.yaml writes it) as the
// glossary page shows it: `code` spans are code, without their backticks.
// Returns [text, code?] pieces.
export function definitionPieces(text) {
  const out = [];
  const pattern = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g;
  let at = 0;
  for (const m of (text || "").matchAll(pattern)) {
    if (m.index > at) out.push([text.slice(at, m.index), false]);
    out.push([m[2].trim() || m[2], true]);
    at = m.index + m[0].length;
  }
  if (at < (text || "").length) out.push([text.slice(at), false]);
  return out;
}
