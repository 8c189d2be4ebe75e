"""Search benchmark: speed, transfer and index size, real KB and 1,000 articles.

For each site (the real KB, and a synthetic KB from ``tools/synth_kb.py``) it
builds the HTML, serves it on 127.0.0.1 and drives ``search.html`` in Debian's
chromium (Playwright, no downloaded browser):

- the page opened with ``?q=`` on a cold cache: bytes transferred for the
  search (Pagefind's files and our search script) and time from query to
  results, including loading the engine and the index;
- the first query typed into a loaded search page (the issue's "time from
  query to results once the page is loaded"): bytes it transfers, time to
  results in the page and to the frame that paints them, and the split
  between Pagefind's search and the excerpts;
- further queries on the same page: time to results;
- index size on disk (``pagefind/``), and files in it.

Times are the page's own (``data-search-ms``, from the input event to
``[data-search-done]``). A typed query is sent and waited for inside the
page, in one call, with nothing listening to the page meanwhile, so that on
a small machine the benchmark does not slow down what it measures. Bytes are
counted by the local server (headers and bodies it sent), which also sees
the requests of Pagefind's worker, its own script included.

Prints a Markdown table. Asserts nothing: numbers belong in notes.

With ``--compare REV`` it times only the first typed query, the search
script of git revision REV (``_static/kb-search.js`` and its modules in
``_static/kb-search/``) against the working tree's, taking turns on the
same sites: the way to tell whether a change to the search script made
search faster on a machine whose pace swings from hour to hour.

Run:  python tools/bench_search.py [--articles 1000] [--queries 20] [--rounds 2]
      (make bench-search)
      python tools/bench_search.py --compare HEAD~1 [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import urllib.parse
from collections import defaultdict
from pathlib import Path

import bench_build
import yaml
from local_site import gzip_size, launch, serve, served_file
from synth_kb import make_kb

ROOT = Path(__file__).resolve().parent.parent


def build(confdir: Path, out: Path) -> None:
    """The site as make html builds it (bench_build's build, warnings fatal)."""
    bench_build.build(confdir, confdir / "docs", out, strict=True)


def dir_size(path: Path) -> tuple[int, int]:
    files = [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


# Waits in the page, without polling, until the results of `q` are shown
# ([data-search-done], contract of kb-search.js), then for the frame that
# paints them. Resolves to [ms to results (the page's own data-search-ms:
# from the keystroke or submit), Pagefind search ms, excerpts ms, ms from
# results in the DOM to results painted].
# Playwright's wait_for_selector polls the page, and its press("Enter")
# dispatches key and submit events: on a 2-core machine both took time
# from the search they were timing (about 15 ms per query).
WAIT_FOR_RESULTS = """q => new Promise(resolve => {
  const out = document.getElementById("search-results");
  const done = () => out.hasAttribute("data-search-done") && out.dataset.searchQuery === q;
  const finish = () => {
    const shown = performance.now();
    const phases = ["kb-search: index", "kb-search: excerpts"]
      .map(n => performance.getEntriesByName(n).at(-1)?.duration ?? NaN);
    requestAnimationFrame(() => setTimeout(() =>
      resolve([Number(out.dataset.searchMs), ...phases, performance.now() - shown])));
  };
  if (done()) return finish();
  new MutationObserver((_, watch) => { if (done()) { watch.disconnect(); finish(); } })
    .observe(out, { attributes: true });
})"""


# How fast this browser on this machine is right now, for reading the times
# of one run against another: median ms of one small fetch (uncached, one
# after another) and of a fixed piece of JavaScript work.
MACHINE_PACE = """async () => {
  const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
  const fetches = [], work = [];
  for (let i = 0; i < 15; i++) {
    const t = performance.now();
    await (await fetch(`_static/kb.css?pace=${i}-${Math.random()}`, { cache: "no-store" })).text();
    fetches.push(performance.now() - t);
  }
  for (let i = 0; i < 15; i++) {
    const t = performance.now();
    Array.from({ length: 100000 }, (_, k) => (k * 7919) % 100003).sort((a, b) => a - b);
    work.push(performance.now() - t);
  }
  return [median(fetches), median(work)];
}"""


# The query arrives as one input event, as a paste or a Chinese input method's
# commit does (the search runs on input, so no Enter), and the wait starts in
# the same call: nothing crosses between Playwright and the browser until the
# results are shown. Playwright's fill() and a listener on requests each cost
# the search time on 2 cores (12 ms per query together, A/B on 1,000 articles).
TYPE_QUERY = (
    """q => {
  const box = document.getElementById("kb-search-input");
  box.value = q;
  box.dispatchEvent(new Event("input", { bubbles: true }));
  return (%s)(q);
}"""
    % WAIT_FOR_RESULTS
)


def timings(row: list[float]) -> dict:
    ms, index_ms, excerpt_ms, paint_ms = row
    return {"ms": ms, "index_ms": index_ms, "excerpt_ms": excerpt_ms, "painted_ms": ms + paint_ms}


def wait_for_results(page, q: str) -> dict:
    return timings(page.evaluate(WAIT_FOR_RESULTS, q))


def type_query(page, q: str) -> dict:
    return timings(page.evaluate(TYPE_QUERY, q))


def open_search_page(browser, base: str, name: str = "search.html"):
    """A fresh context (cold cache) with the search page loaded and its engine ready."""
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(f"{base}/{name}")
    page.wait_for_selector("#search-results[data-search-ready]", state="attached", timeout=60_000)
    return ctx, page


def search_bytes(site: Path, served: list) -> tuple[int, int]:
    """Bytes the server sent for the search (Pagefind's files, the worker's
    requests included, and our search script): as sent, and as a compressing
    server would send the bodies. Empties `served`."""
    sent = compressed = 0
    for path, size in served:
        if "/pagefind/" in path or path.endswith("/kb-search.js") or "/_static/kb-search/" in path:
            sent += size
            compressed += gzip_size(served_file(site, path))
    served.clear()
    return sent, compressed


def measure_site(site: Path, queries: list[str], rounds: int = 2) -> dict:
    from playwright.sync_api import sync_playwright

    cold_bytes, cold_gzip, cold, warm, typed = [], [], [], [], []
    typed_bytes, open_bytes = [], []
    served = []  # what the server sent: counted there, so nothing listens to the page
    with sync_playwright() as pw, serve(site, served) as base:
        browser = launch(pw)
        for q in queries:  # cold: a fresh browser context each time
            ctx = browser.new_context()
            page = ctx.new_page()
            served.clear()
            page.goto(f"{base}/search.html?q={urllib.parse.quote(q)}")
            cold.append(wait_for_results(page, q))
            ctx.close()
            sent, compressed = search_bytes(site, served)
            cold_bytes.append(sent)
            cold_gzip.append(compressed)
        # first query typed into a loaded search page: every query, `rounds` times
        for q in queries * rounds:
            served.clear()
            ctx, page = open_search_page(browser, base)
            open_bytes.append(search_bytes(site, served)[0])
            typed.append(type_query(page, q))
            ctx.close()
            typed_bytes.append(search_bytes(site, served)[0])
        ctx = browser.new_context()
        page = ctx.new_page()
        page.goto(f"{base}/search.html?q={urllib.parse.quote(queries[0])}")
        wait_for_results(page, queries[0])
        for q in queries[1:]:  # warm: the index is loaded, type a new query
            warm.append(type_query(page, q))
        machine = page.evaluate(MACHINE_PACE)
        ctx.close()
        browser.close()
    size, files = dir_size(site / "pagefind")

    def median(rows, key="ms"):
        return statistics.median(r[key] for r in rows)

    def quartile(rows, key="ms"):
        return statistics.quantiles([r[key] for r in rows], n=4)[2]

    return {
        "first_kb": statistics.median(cold_bytes) / 1024,
        "first_kb_max": max(cold_bytes) / 1024,
        "first_gzip_kb": statistics.median(cold_gzip) / 1024,
        "first_gzip_kb_max": max(cold_gzip) / 1024,
        "first_ms": median(cold),
        "warm_ms": median(warm),
        "warm_ms_p75": quartile(warm),
        "typed_ms": median(typed),
        "typed_ms_p75": quartile(typed),
        "typed_painted_ms": median(typed, "painted_ms"),
        "typed_kb": statistics.median(typed_bytes) / 1024,
        "typed_index_ms": median(typed, "index_ms"),
        "typed_excerpt_ms": median(typed, "excerpt_ms"),
        "typed_n": len(typed),
        "open_kb": statistics.median(open_bytes) / 1024,
        "index_kb": size / 1024,
        "index_files": files,
        "fetch_ms": machine[0],
        "work_ms": machine[1],
    }


SCRIPT_TAG = '<script type="module" src="_static/kb-search.js"></script>'


def base_scripts(rev: str) -> dict[str, str]:
    """The search script of git revision `rev`: _static/kb-search.js and the
    modules it imports from _static/kb-search/ (if the revision has them),
    by path under _static/."""

    def show(path: str) -> str:
        return subprocess.run(
            ["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout

    listed = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", rev, "_static/kb-search/"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return {
        "kb-search.js": show("_static/kb-search.js"),
        **{path.removeprefix("_static/"): show(path) for path in listed},
    }


def add_base_page(site: Path, scripts: dict[str, str]) -> None:
    """search-base.html: the search page running `scripts` (an older
    kb-search.js and its modules, as _static/kb-search-base.js and
    _static/kb-search-base/) instead of the current ones."""
    page = (site / "search.html").read_text(encoding="utf-8")
    if SCRIPT_TAG not in page:
        raise SystemExit(f"{site / 'search.html'}: no {SCRIPT_TAG} to replace")
    for path, text in scripts.items():
        if path == "kb-search.js":
            path, text = "kb-search-base.js", text.replace('"./kb-search/', '"./kb-search-base/')
        else:
            path = path.replace("kb-search/", "kb-search-base/", 1)
        (site / "_static" / path).parent.mkdir(parents=True, exist_ok=True)
        (site / "_static" / path).write_text(text, encoding="utf-8")
    (site / "search-base.html").write_text(
        page.replace(SCRIPT_TAG, SCRIPT_TAG.replace("kb-search.js", "kb-search-base.js")), encoding="utf-8"
    )


def compare_site(site: Path, queries: list[str], rounds: int) -> dict:
    """First typed query, the base script against the current one, taking
    turns query by query (the order swapped each round), so that both meet
    the same machine: a 2-core VM's pace swings more from hour to hour than
    most changes to the script."""
    from playwright.sync_api import sync_playwright

    times = {"search-base.html": defaultdict(list), "search.html": defaultdict(list)}
    with sync_playwright() as pw, serve(site) as base:
        browser = launch(pw)
        for turn in range(rounds):
            for q in queries:
                for name in list(times) if turn % 2 == 0 else list(times)[::-1]:
                    ctx, page = open_search_page(browser, base, name)
                    times[name][q].append(type_query(page, q))
                    ctx.close()
        browser.close()
    old, new = times["search-base.html"], times["search.html"]

    def summary(per_query):
        rows = [r for runs in per_query.values() for r in runs]
        return {
            key: statistics.median(r[key] for r in rows)
            for key in ("ms", "index_ms", "excerpt_ms", "painted_ms")
        }

    return {
        "base": summary(old),
        "now": summary(new),
        "n": sum(len(v) for v in new.values()),
        "per_query": statistics.median(
            statistics.median(r["ms"] for r in new[q]) - statistics.median(r["ms"] for r in old[q])
            for q in queries
        ),
    }


def print_comparison(rev: str, rows: list) -> None:
    print("| site | script | time to results | Pagefind search | excerpts | painted |")
    print("|---|---|---|---|---|---|")
    for name, m in rows:
        for label, key in ((rev, "base"), ("working tree", "now")):
            t = m[key]
            print(
                f"| {name} | {label} | {t['ms']:.1f} ms | {t['index_ms']:.1f} ms "
                f"| {t['excerpt_ms']:.1f} ms | {t['painted_ms']:.1f} ms |"
            )
    print(
        "\nmedians of the first query typed into a freshly opened search page, "
        f"{rows[0][1]['n']} per script, taking turns; per query, working tree minus {rev}: "
        + "; ".join(f"{name}: {m['per_query']:+.1f} ms" for name, m in rows)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument(
        "--rounds", type=int, default=2, help="times each query is typed into a freshly opened search page"
    )
    parser.add_argument(
        "--compare",
        metavar="REV",
        help="time the search script (_static/kb-search.js and _static/kb-search/) of "
        "git revision REV against the working tree's, taking turns on the same "
        "sites, instead of the full benchmark",
    )
    args = parser.parse_args(argv)
    base_script = base_scripts(args.compare) if args.compare else None
    items = yaml.safe_load((ROOT / "tests" / "search_queries.yaml").read_text(encoding="utf-8"))
    # spread over the whole set, which is grouped by kind (everyday words,
    # English, synonyms, questions, mixed, substrings)
    step = max(1, len(items) // args.queries)
    queries = [q["q"] for q in items][::step][: args.queries]
    rows = []
    with tempfile.TemporaryDirectory(prefix="kb-search-bench-") as tmp:
        real = Path(tmp) / "real"
        build(ROOT, real)
        kb = make_kb(args.articles, Path(tmp) / f"kb{args.articles}")
        build(kb, kb / "_build")
        for name, site in (("real KB", real), (f"{args.articles} articles", kb / "_build")):
            if base_script is None:
                rows.append((name, measure_site(site, queries, args.rounds)))
            else:
                add_base_page(site, base_script)
                rows.append((name, compare_site(site, queries, args.rounds)))
    if base_script is not None:
        print_comparison(args.compare, rows)
        return 0
    print(
        "| site | page opened with ?q=: transfer gzip, as GitHub Pages sends it (max) "
        "/ uncompressed (max) | its time "
        "| search page opened empty: engine + warm-up transfer "
        "| first query typed on the loaded page: transfer, time to results (p75; "
        "Pagefind search + excerpts), to results painted "
        "| next queries: time (p75) "
        "| index on disk |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, m in rows:
        print(
            f"| {name} | {m['first_gzip_kb']:.0f} KB (max {m['first_gzip_kb_max']:.0f}) "
            f"/ {m['first_kb']:.0f} KB (max {m['first_kb_max']:.0f}) "
            f"| {m['first_ms']:.0f} ms | {m['open_kb']:.0f} KB "
            f"| {m['typed_kb']:.0f} KB, {m['typed_ms']:.0f} ms (p75 {m['typed_ms_p75']:.0f}; "
            f"{m['typed_index_ms']:.0f} + {m['typed_excerpt_ms']:.0f}), painted {m['typed_painted_ms']:.0f} ms "
            f"| {m['warm_ms']:.0f} ms (p75 {m['warm_ms_p75']:.0f}) "
            f"| {m['index_kb']:.0f} KB in {m['index_files']} files |"
        )
    n = rows[0][1]["typed_n"]
    print(
        f"\nmedians over {len(queries)} queries spread over tests/search_queries.yaml "
        f"(page opened with ?q=: each once, in a fresh browser context; "
        f"first typed query: {n}, each in a fresh context); "
        "time to results = from the input event to the results in the page ([data-search-done]), "
        "measured by the page; painted = until the frame that shows them; "
        "the search engine (wasm, pagefind.js) loads, and one warm-up search runs, when "
        "the page opens"
    )
    print(
        "\nthis machine during the run (times swing by a fifth from hour to hour on a shared "
        "2-core VM): "
        + "; ".join(
            f"{name}: one small fetch {m['fetch_ms']:.1f} ms, fixed JS work {m['work_ms']:.1f} ms"
            for name, m in rows
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
