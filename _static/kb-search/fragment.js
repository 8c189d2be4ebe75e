// The one place that reads Pagefind's own files: a result's fragment (the
// page text, title and anchors Pagefind stores for excerpts), read here
// instead of through Pagefind's result.data(), which cuts excerpts in
// Pagefind's worker one result after another and marks every word it matched
// (the 存 of 缓存 for 显存). The fragment file is not a documented format:
// tests/js/fragment.test.mjs reads one written by the pinned Pagefind
// (node_modules/pagefind, package-lock.json), so that an upgrade that changes
// it fails there; and should a fragment not load or not be in this format
// here, the page falls back to result.data().

import { pageExcerpts } from "./excerpt.js";

// The version of Pagefind whose fragments this reads.
export const PAGEFIND_VERSION = "1.6.0";
const SIGNATURE = "pagefind_dcd";
const GZIP = [0x1f, 0x8b];

// A fragment's JSON from its text (the signature, then JSON).
export function parseFragment(text) {
  if (!text.startsWith(SIGNATURE)) throw new Error("not a Pagefind fragment");
  const fragment = JSON.parse(text.slice(SIGNATURE.length));
  if (typeof fragment.content !== "string" || typeof fragment.url !== "string") {
    throw new Error("a Pagefind fragment without content or url");
  }
  return fragment;
}

// A fragment from the bytes of its file: gzip, or (a host that sent it with
// Content-Encoding had the browser undo that) already its content.
export async function decodeFragment(bytes) {
  if (bytes[0] !== GZIP[0] || bytes[1] !== GZIP[1]) return parseFragment(new TextDecoder().decode(bytes));
  return gunzip(new Response(bytes).body);
}

async function gunzip(body) {
  return parseFragment(await new Response(body.pipeThrough(new DecompressionStream("gzip"))).text());
}

async function loadFragment(id, root) {
  const response = await fetch(new URL(`pagefind/fragment/${id}.pf_fragment`, root));
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  // as stored (gzip): decompressed as it arrives
  if (!response.headers.has("content-encoding")) return gunzip(response.body);
  return decodeFragment(new Uint8Array(await response.arrayBuffer()));
}

// Pagefind's result.data() in the shape pageExcerpts gives: its excerpts
// keep only their <mark>s, its sections their order.
function fromPagefind(data) {
  const keepMarks = (html) => (html || "").replace(/<(?!\/?mark>)[^>]*>/g, "");
  return {
    url: data.url, meta: data.meta || {}, text: data.content, excerpt: keepMarks(data.excerpt),
    sub_results: (data.sub_results || []).map((sub, order) => ({
      title: sub.title, url: sub.url, excerpt: keepMarks(sub.excerpt),
      score: (sub.locations || []).length, matches: (sub.locations || []).length, order,
    })),
  };
}

// A result's title, excerpt and sections (`terms`: matchTerms of the query),
// from its fragment under `root` (the site's root URL), or from Pagefind.
export async function pageData(result, terms, root) {
  try {
    return pageExcerpts(await loadFragment(result.id, root), result.words, terms);
  } catch (error) {
    console.warn(`kb-search: fragment ${result.id}: ${error.message}; using Pagefind's data()`);
    return fromPagefind(await result.data());
  }
}
