"""Search benchmark: speed, transfer and index size, real KB and 1,000 articles.

For each site (the real KB, and a synthetic KB from ``tools/synth_kb.py``) it
builds the HTML, serves it on 127.0.0.1 and drives ``search.html`` in Debian's
chromium (Playwright, no downloaded browser):

- first query on a cold cache: bytes transferred for the search (Pagefind's
  files and our search script) and time from query to results, including
  loading the index;
- further queries on the loaded page: time from query to results;
- index size on disk (``pagefind/``), and files in it.

Prints a Markdown table. Asserts nothing: numbers belong in notes.

Run:  python tools/bench_search.py [--articles 1000] [--queries 20]
      (make bench-search)
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from local_site import launch, serve  # noqa: E402
from synth_kb import make_kb  # noqa: E402

def build(confdir: Path, out: Path) -> None:
    subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-c", str(confdir), "-j", "auto",
                    "-q", "-W", "-n", "--keep-going", str(confdir / "docs"), str(out)],
                   check=True, cwd=confdir)


def dir_size(path: Path) -> tuple[int, int]:
    files = [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def measure_site(site: Path, queries: list[str]) -> dict:
    from playwright.sync_api import sync_playwright

    cold_bytes, cold_gzip, cold_ms, warm_ms = [], [], [], []
    typed_ms, typed_bytes, open_bytes = [], [], []
    typed_index_ms, typed_excerpt_ms = [], []
    with sync_playwright() as pw, serve(site) as base:
        browser = launch(pw)
        for q in queries[:5]:  # cold: a fresh browser context each time
            ctx = browser.new_context()
            page = ctx.new_page()
            responses = []
            page.on("requestfinished", lambda r: responses.append(r))
            page.goto(f"{base}/search.html?q={urllib.parse.quote(q)}")
            page.wait_for_selector("#search-results[data-search-done]", state="attached",
                                   timeout=60_000)
            cold_ms.append(float(page.get_attribute("#search-results", "data-search-ms")))
            search_bytes = compressed = 0
            for r in responses:
                if "/pagefind/" in r.url or r.url.endswith("kb-search.js"):
                    sizes = r.sizes()
                    search_bytes += sizes["responseBodySize"] + sizes["responseHeadersSize"]
                    body = r.response().body() if r.response() else b""
                    # Pagefind's index, fragments and wasm are gzip files already;
                    # JavaScript and JSON are what a compressing server would shrink.
                    packed = r.url.split("?")[0].endswith((".pf_index", ".pf_fragment", ".pf_meta", ".pagefind"))
                    compressed += len(body) if packed else len(gzip.compress(body, 6))
            cold_bytes.append(search_bytes)
            cold_gzip.append(compressed)
            ctx.close()
        for q in queries[:10]:  # first query typed into a loaded search page
            ctx = browser.new_context()
            page = ctx.new_page()
            before, after = [], []
            page.on("requestfinished", lambda r: (after if before is None else before).append(r))
            page.goto(f"{base}/search.html")
            page.wait_for_selector("#search-results[data-search-ready]", state="attached",
                                   timeout=60_000)
            open_bytes.append(sum(r.sizes()["responseBodySize"] for r in before
                                  if "/pagefind/" in r.url))
            before = None
            page.fill("#kb-search-input", q)
            page.press("#kb-search-input", "Enter")
            page.wait_for_selector("#search-results[data-search-done]", state="attached",
                                   timeout=60_000)
            typed_ms.append(float(page.get_attribute("#search-results", "data-search-ms")))
            index_ms, excerpt_ms = page.evaluate(
                "['kb-search: index', 'kb-search: excerpts'].map("
                "n => performance.getEntriesByName(n).at(-1)?.duration ?? NaN)")
            typed_index_ms.append(index_ms)
            typed_excerpt_ms.append(excerpt_ms)
            typed_bytes.append(sum(r.sizes()["responseBodySize"] for r in after
                                   if "/pagefind/" in r.url))
            ctx.close()
        ctx = browser.new_context()
        page = ctx.new_page()
        page.goto(f"{base}/search.html?q={urllib.parse.quote(queries[0])}")
        page.wait_for_selector("#search-results[data-search-done]", state="attached",
                               timeout=60_000)
        for q in queries[1:]:  # warm: the index is loaded, type a new query
            page.fill("#kb-search-input", q)
            page.press("#kb-search-input", "Enter")
            page.wait_for_selector("#search-results[data-search-done]", state="attached",
                                   timeout=60_000)
            warm_ms.append(float(page.get_attribute("#search-results", "data-search-ms")))
        ctx.close()
        browser.close()
    size, files = dir_size(site / "pagefind")
    return {
        "first_kb": statistics.median(cold_bytes) / 1024, "first_kb_max": max(cold_bytes) / 1024,
        "first_gzip_kb": statistics.median(cold_gzip) / 1024,
        "first_ms": statistics.median(cold_ms),
        "warm_ms": statistics.median(warm_ms), "warm_ms_max": max(warm_ms),
        "typed_ms": statistics.median(typed_ms), "typed_ms_max": max(typed_ms),
        "typed_kb": statistics.median(typed_bytes) / 1024,
        "typed_index_ms": statistics.median(typed_index_ms),
        "typed_excerpt_ms": statistics.median(typed_excerpt_ms),
        "open_kb": statistics.median(open_bytes) / 1024,
        "index_kb": size / 1024, "index_files": files,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=20)
    args = parser.parse_args(argv)
    items = yaml.safe_load((ROOT / "tests" / "search_queries.yaml").read_text(encoding="utf-8"))
    queries = [q["q"] for q in items][: args.queries]
    rows = []
    with tempfile.TemporaryDirectory(prefix="kb-search-bench-") as tmp:
        real = Path(tmp) / "real"
        build(ROOT, real)
        rows.append(("real KB", measure_site(real, queries)))
        kb = make_kb(args.articles, Path(tmp) / f"kb{args.articles}")
        build(kb, kb / "_build")
        rows.append((f"{args.articles} articles", measure_site(kb / "_build", queries)))
    print("| site | page opened with ?q=: transfer (as served / gzip) | its time "
          "| search page opened empty: engine + warm-up transfer "
          "| first query typed on the loaded page: transfer, time (Pagefind search + excerpts) "
          "| next queries: time "
          "| index on disk |")
    print("|---|---|---|---|---|---|---|")
    for name, m in rows:
        print(f"| {name} | {m['first_kb']:.0f} KB (max {m['first_kb_max']:.0f}) / {m['first_gzip_kb']:.0f} KB "
              f"| {m['first_ms']:.0f} ms | {m['open_kb']:.0f} KB "
              f"| {m['typed_kb']:.0f} KB, {m['typed_ms']:.0f} ms (max {m['typed_ms_max']:.0f}; "
              f"{m['typed_index_ms']:.0f} + {m['typed_excerpt_ms']:.0f}) "
              f"| {m['warm_ms']:.0f} ms (max {m['warm_ms_max']:.0f}) "
              f"| {m['index_kb']:.0f} KB in {m['index_files']} files |")
    print(f"\nmedians over {len(queries)} queries (page opened with ?q=: 5 fresh browser contexts; first typed query: 10); "
          "time = from the keystroke or submit to rendered results, measured in the page; "
          "the search engine (wasm, pagefind.js) loads, and one warm-up search runs, when "
          "the page opens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
