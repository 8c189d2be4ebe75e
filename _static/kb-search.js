// Search page of the 51 算力 knowledge base: the page controller. Pagefind
// finds the pages; the modules in kb-search/ do the rest, by concern:
// query.js (what the reader typed, and the glossary's other names of the
// terms it names), rank.js (which pages answer it), excerpt.js (what a
// result shows of a page), fragment.js (the one reader of Pagefind's own
// files).
//
// Contract (tests rely on it): every result is an element with
// [data-search-result], in rank order, whose first link's text starts with the
// page title; #search-results gets [data-search-done] once results or a
// no-result message are shown.

import { MAX_QUERY, cleanQuery, normalize, prepared, stripQuestion } from "./kb-search/query.js";
import { RESULTS_PER_PAGE, search, withData } from "./kb-search/rank.js";
import { pageData } from "./kb-search/fragment.js";
import { definitionPieces, sameExcerpt } from "./kb-search/excerpt.js";

// Sections shown under a result: those that hold the most of the query.
const MAX_SUBRESULTS = 3;

// The site root is one level above _static/, wherever the site is served.
const ROOT_URL = new URL("../", import.meta.url);
const load = (result, terms) => pageData(result, terms, ROOT_URL);

// The page's words, from the site's message catalog: kb.search.index puts
// them in the page (#kb-search-text), so that an edition in another language
// translates them with the rest. "{name}" in a text is replaced by a value.
let pageText = null;
function say(key, values = {}) {
  pageText ??= JSON.parse(document.getElementById("kb-search-text")?.textContent || "{}");
  const text = pageText[key];
  if (text === undefined) throw new Error(`kb-search: no text ${key} in #kb-search-text`);
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

// Pagefind's excerpts and ours are escaped text with <mark> inserted; only
// the marks stay markup.
function safeExcerpt(excerpt) {
  return (excerpt || "").replace(/<(?!\/?mark>)[^>]*>/g, "");
}

function renderResult(data, rootUrl) {
  const li = document.createElement("li");
  li.setAttribute("data-search-result", "");
  li.className = "kb-search-result";
  const title = (data.meta.title || "").trim() || data.url;
  const link = document.createElement("a");
  link.href = new URL(data.url.replace(/^\//, ""), rootUrl).href;
  link.className = "kb-search-title";
  link.textContent = title;
  li.append(link);
  const excerpt = document.createElement("p");
  excerpt.className = "kb-search-excerpt";
  excerpt.innerHTML = safeExcerpt(data.excerpt);
  li.append(excerpt);
  // the sections that hold the most of the query, best first (excerpt.js)
  const subs = (data.sub_results || [])
    .filter((s) => s.url.includes("#") && s.title.trim() !== title)
    .slice(0, MAX_SUBRESULTS);
  if (subs.length) {
    const ul = document.createElement("ul");
    ul.className = "kb-search-sections";
    for (const sub of subs) {
      const item = document.createElement("li");
      const a = document.createElement("a");
      a.href = new URL(sub.url.replace(/^\//, ""), rootUrl).href;
      a.textContent = sub.title.trim();
      item.append(a);
      // the page's excerpt is often its best section's: not shown twice
      if (!sameExcerpt(sub.excerpt, data.excerpt)) {
        const ex = document.createElement("span");
        ex.className = "kb-search-excerpt";
        ex.innerHTML = ` — ${safeExcerpt(sub.excerpt)}`;
        item.append(ex);
      }
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

let pagefindReady = null;

// A word nearly every page of a GPU knowledge base has (if none has it, the
// search code is compiled all the same). Chinese, so that the worker's
// Chinese word segmenter loads its dictionary before the reader's first
// query, not during it.
const WARM_UP_WORD = "训练";

// Loads the engine, its index entry and metadata. With `warmUp` (the page
// opened without a query) one small search, through every step of a
// reader's, also compiles the search, scoring and excerpt code, so that the
// reader's first query does not wait for it. It compiles the pattern of every
// glossary name too (a regular expression compiles when first run).
function loadPagefind({ warmUp = false } = {}) {
  pagefindReady ??= import(new URL("pagefind/pagefind.js", ROOT_URL).href).then(async (pf) => {
    await pf.options({ excerptLength: 40 });
    await pf.init();
    if (warmUp) await search(pf, WARM_UP_WORD, aliasGroups(), 1, load);
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
    status.textContent = say("enterQuery");
    message(container, say("hint"));
    container.dataset.searchQuery = "";
    done(container, raw);
    return;
  }
  status.textContent = say("searching");
  let results;
  try {
    const pagefind = await loadPagefind();
    results = await search(pagefind, raw, aliasGroups(), RESULTS_PER_PAGE, load);
  } catch (error) {
    if (run !== newestRun) return;
    status.textContent = say("failed");
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
    for (const { data } of results.top) list.append(renderResult(data, ROOT_URL));
    // "PUE 是什么意思": the glossary's entry is the first result, not a card beside them
    const asked = term && results.definition;
    if (asked) list.prepend(renderTermResult(term));
    const notice = results.partial ? [partialNotice(raw.trim())] : [];
    container.replaceChildren(...cutNotice, ...(term && !asked ? [renderTerm(term)] : []), ...notice, list);
    showCount(status, results.total, results.top.length);
    if (results.total > results.top.length) container.append(moreButton(run, results, list, status));
  } else {
    status.textContent = say("none");
    message(container, say("noneFor", { query: raw }));
    container.prepend(...cutNotice);
  }
  done(container, raw);
}

function cutQueryNotice() {
  const p = document.createElement("p");
  p.className = "kb-search-cut";
  p.textContent = say("cut", { max: MAX_QUERY });
  return p;
}

// The URL follows the box, but is written once results are shown: writing
// history and the page title has the browser do work (history entry, tab
// title, favicon) that would compete with the search.
// `pendingUrl`: [start a new history entry?, url].
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
  document.title = raw.trim() ? say("titleFor", { query: raw }) : say("title");
  writeUrl();
}

// Said above results none of which holds any piece of the query (文心一言
// on pages that hold 文, 心 or 言), so that they are not read as answers.
function partialNotice(query) {
  const p = document.createElement("p");
  p.className = "kb-search-partial";
  p.textContent = say("partial", { query });
  return p;
}

function showCount(status, total, shown) {
  status.textContent = total > shown ? say("foundSome", { total, shown }) : say("found", { total });
}

// 显示更多结果: the next results, in rank order, below those shown; focus
// moves to the first new one. Gone once every result is shown.
function moreButton(run, results, list, status) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "kb-search-more";
  button.textContent = say("more");
  let shown = results.top.length;
  button.addEventListener("click", async () => {
    button.disabled = true;
    const batch = await withData(results.ranked, shown, RESULTS_PER_PAGE, results.want, load);
    if (run !== newestRun) return; // a newer query replaced these results
    const items = batch.map(({ data }) => renderResult(data, ROOT_URL));
    list.append(...items);
    shown += batch.length;
    showCount(status, results.total, shown);
    items[0]?.querySelector("a")?.focus();
    if (shown < results.total) button.disabled = false;
    else button.remove();
  });
  return button;
}

// A glossary entry as a result: its names, its definition, and its place in
// the glossary as the section that answers.
function renderTermResult(entry) {
  const li = document.createElement("li");
  li.setAttribute("data-search-result", "");
  li.className = "kb-search-result kb-search-term-result";
  const href = new URL(entry.url, new URL("search.html", ROOT_URL)).href;
  const link = Object.assign(document.createElement("a"), { href, className: "kb-search-title" });
  link.textContent = `${say("term")}${entry.names.slice(0, 3).join(" · ")}`;
  const def = document.createElement("p");
  def.className = "kb-search-excerpt";
  for (const [text, code] of definitionPieces(entry.def)) {
    if (!code) def.append(text);
    else def.append(Object.assign(document.createElement("code"), { textContent: text }));
  }
  const sections = document.createElement("ul");
  sections.className = "kb-search-sections";
  const item = document.createElement("li");
  item.append(Object.assign(document.createElement("a"), { href, textContent: entry.names[0] }));
  sections.append(item);
  li.append(link, def, sections);
  return li;
}

function renderTerm(entry) {
  const aside = document.createElement("aside");
  aside.className = "kb-search-term";
  const title = document.createElement("p");
  title.className = "kb-search-term-title";
  const link = document.createElement("a");
  link.href = new URL(entry.url, new URL("search.html", ROOT_URL)).href;
  link.textContent = entry.names.slice(0, 3).join(" · ");
  title.append(say("term"), link);
  const def = document.createElement("p");
  for (const [text, code] of definitionPieces(entry.def)) {
    if (!code) def.append(text);
    else def.append(Object.assign(document.createElement("code"), { textContent: text }));
  }
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
