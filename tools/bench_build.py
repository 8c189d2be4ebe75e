"""Build benchmark: our site against stock Sphinx + furo on the same synthetic KB.

For each N (default 12, 100, 1000) it makes a synthetic KB with
``tools/synth_kb.py`` and measures, for our configuration and for a stock one
(``myst_parser`` + furo, ``zh_CN``, nothing else), in the same run:

- full build with ``-j auto``;
- rebuild after editing one article (``sphinx-build`` returns once the HTML
  is written; ours then updates the search index in the background, timed
  separately as "index after edit", and waited for before the next step);
- rebuild after editing that article's title (front matter and heading):
  every page showing the title is written again (listings, 相关文章, the
  sidebar windows, previous / next);
- rebuild with no change (``sphinx-build`` itself: ``make html`` does not
  even start Sphinx when no input changed);
- peak memory (largest process, from the OS's rusage);
- HTML bytes of one fixed article page.

It prints a Markdown table with the stock/ours ratios. It asserts nothing:
timings belong in notes, not in tests.

Run:  python tools/bench_build.py [--sizes 12 100 1000] [--work DIR] [--ours-only]
      (make bench; --ours-only skips the stock builds)
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kb.search import pagefind as kb_pagefind
from synth_kb import make_kb

ROOT = Path(__file__).resolve().parent.parent

PAGE = "training/llm-training-10-tips"
STOCK_CONF = """# Stock Sphinx + furo: the baseline of tools/bench_build.py.
project = "51 算力知识库"
language = "zh_CN"
extensions = ["myst_parser"]
html_theme = "furo"
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
"""
# Runs one build and reports its wall time and the peak RSS of its processes.
_RUNNER = """
import json, resource, subprocess, sys, time
t = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wall = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"rc": proc.returncode, "wall": wall, "rss_kb": rss, "err": proc.stderr[-2000:]}))
"""


def build(confdir: Path, src: Path, out: Path, strict: bool) -> dict:
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-c", str(confdir), "-j", "auto", "-q"]
    if strict:
        cmd += ["-W", "-n", "--keep-going"]
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER, *cmd, str(src), str(out)], capture_output=True, text=True, cwd=confdir
    )
    result = json.loads(proc.stdout)
    if strict and result["rc"] != 0:
        raise SystemExit(f"build failed in {confdir}:\n{result['err']}")
    return result


def measure(kb: Path, confdir: Path, strict: bool, label: str) -> dict:
    out = kb / f"_build-{label}"
    shutil.rmtree(out, ignore_errors=True)
    full = build(confdir, kb / "docs", out, strict)
    page = kb / "docs" / f"{PAGE}.md"
    original = page.read_text(encoding="utf-8")
    page.write_text(original + "\n基准测试的编辑。\n", encoding="utf-8")
    edit = build(confdir, kb / "docs", out, strict)
    started = time.perf_counter()
    kb_pagefind.wait(out)  # the background index run, if any
    index_after = time.perf_counter() - started
    title = build_after(confdir, kb, out, strict, page, retitled(page.read_text(encoding="utf-8")))
    nochange = build(confdir, kb / "docs", out, strict)
    page.write_text(original, encoding="utf-8")
    return {
        "full": full["wall"],
        "edit": edit["wall"],
        "index_after": index_after,
        "title": title["wall"],
        "nochange": nochange["wall"],
        "rss_mb": max(full["rss_kb"], edit["rss_kb"]) / 1024,
        "page_kb": (out / f"{PAGE}.html").stat().st_size / 1024,
    }


def retitled(text: str) -> str:
    """The article with another title, in its front matter and its heading."""
    text = re.sub(r"^title: (.+)$", r"title: \1（改）", text, count=1, flags=re.M)
    return re.sub(r"^# (.+)$", r"# \1（改）", text, count=1, flags=re.M)


def build_after(confdir: Path, kb: Path, out: Path, strict: bool, page: Path, text: str) -> dict:
    """Write ``text`` to ``page``, build, and wait for the background index."""
    page.write_text(text, encoding="utf-8")
    result = build(confdir, kb / "docs", out, strict)
    kb_pagefind.wait(out)
    return result


def run(sizes: list[int], work: Path, stock_too: bool = True) -> list[dict]:
    rows = []
    for n in sizes:
        kb = make_kb(n, work / f"kb{n}")
        stock = kb / "stock"
        stock.mkdir()
        (stock / "conf.py").write_text(STOCK_CONF, encoding="utf-8")
        ours = measure(kb, kb, strict=True, label="ours")
        base = measure(kb, stock, strict=False, label="stock") if stock_too else None
        rows.append({"n": n, "ours": ours, "stock": base})
        print(f"  N={n}: ours {ours}, stock {base}", file=sys.stderr)
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        "| N | full build | 1-page edit | index after edit (background) | title edit "
        "| no change | peak RSS | page HTML |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        o, s = r["ours"], r["stock"]

        def cell(key, unit, fmt="{:.1f}"):
            if s is None:
                return f"{fmt.format(o[key])} {unit}"
            return f"{fmt.format(o[key])} {unit} (stock {fmt.format(s[key])}, ×{s[key] / o[key]:.1f})"

        lines.append(
            f"| {r['n']} | {cell('full', 's')} | {cell('edit', 's')} "
            f"| {o['index_after']:.1f} s | {cell('title', 's')} | "
            f"{cell('nochange', 's')} | {cell('rss_mb', 'MB', '{:.0f}')} | "
            f"{cell('page_kb', 'KB')} |"
        )
    lines.append("")
    if any(r["stock"] is not None for r in rows):
        lines.append("×: stock ÷ ours (above 1 means ours is faster or smaller).")
    lines.append("-j auto on this machine's cores; page = " + PAGE + ".html")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[12, 100, 1000])
    parser.add_argument(
        "--work", type=Path, default=None, help="folder for the synthetic KBs (default: a temporary one)"
    )
    parser.add_argument(
        "--ours-only",
        action="store_true",
        help="skip the stock builds (at 1000 articles they take 25 minutes of the benchmark's 30)",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.work:
        rows = run(args.sizes, args.work, not args.ours_only)
    else:
        with tempfile.TemporaryDirectory(prefix="kb-bench-") as tmp:
            rows = run(args.sizes, Path(tmp), not args.ours_only)
    print(table(rows))
    print(f"\n(benchmark took {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
