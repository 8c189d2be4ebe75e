// The adapter for Pagefind's own files (_static/kb-search/fragment.js),
// against the pinned Pagefind: node_modules/pagefind indexes a small page
// here and the adapter reads the fragment it wrote. An upgrade that changes
// the fragment format fails here, not in a reader's browser.
// node --test tests/js/
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { PAGEFIND_VERSION, decodeFragment, parseFragment } from "../../_static/kb-search/fragment.js";
import { pageExcerpts } from "../../_static/kb-search/excerpt.js";
import { matchTerms } from "../../_static/kb-search/query.js";

const ROOT = new URL("../../", import.meta.url).pathname;

let site;
let fragmentBytes;

// KB_FRAGMENT_SITE: a folder where Pagefind already indexed fragment-page.html
// (tests/test_search.py does so, and runs this file with no right to start
// programs or write files); without it, this file indexes the page itself.
const given = process.env.KB_FRAGMENT_SITE;

before(() => {
  site = given || mkdtempSync(join(tmpdir(), "kb-fragment-"));
  if (!given) {
    writeFileSync(join(site, "index.html"), readFileSync(new URL("fragment-page.html", import.meta.url)));
    execFileSync(join(ROOT, "node_modules/.bin/pagefind"), ["--site", site, "--silent"], { cwd: site });
  }
  const dir = join(site, "pagefind", "fragment");
  const [file] = readdirSync(dir);
  fragmentBytes = readFileSync(join(dir, file));
});
after(() => given || rmSync(site, { recursive: true, force: true }));

test("the adapter is written for the pinned Pagefind", () => {
  const pinned = JSON.parse(readFileSync(join(ROOT, "node_modules/pagefind/package.json"), "utf8")).version;
  assert.equal(pinned, PAGEFIND_VERSION, "Pagefind changed: check fragment.js against its fragments, then its version");
});

test("a fragment of the pinned Pagefind reads, as the page writes it", async () => {
  const fragment = await decodeFragment(new Uint8Array(fragmentBytes));
  assert.equal(fragment.url, "/");
  assert.equal(fragment.meta.title, "检查点指南");
  const headings = fragment.anchors.filter((a) => /^h\d$/.test(a.element)).map((a) => [a.id, a.text]);
  assert.deepEqual(headings.filter(([id]) => id), [["ckpt", "6. 检查点策略"], ["why", "为什么选择 GPU 租赁？"]]);
  const data = pageExcerpts(fragment, [], matchTerms("显存不够"));
  assert.deepEqual(data.sub_results.map((s) => s.title), ["6. 检查点策略"]);
  assert.equal(data.sub_results[0].excerpt.replace(/<\/?mark>/g, ""),
    "6. 检查点策略 要点 依据 显存不够时，先用梯度累积 ZeRO-3 切分参数");
  assert.deepEqual([...data.sub_results[0].excerpt.matchAll(/<mark>(.*?)<\/mark>/g)].map((m) => m[1]), ["显存不够"]);
});

test("a fragment a host sent with Content-Encoding (the browser decoded it) reads the same", async () => {
  const expected = await decodeFragment(new Uint8Array(fragmentBytes));
  assert.deepEqual(await decodeFragment(new Uint8Array(gunzipSync(fragmentBytes))), expected);
});

test("what is not a fragment is refused, so the page falls back to Pagefind", () => {
  assert.throws(() => parseFragment("{}"), /not a Pagefind fragment/);
  assert.throws(() => parseFragment('pagefind_dcd{"url": "/"}'), /without content/);
});
