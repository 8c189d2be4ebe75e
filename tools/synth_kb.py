"""Make a synthetic knowledge base of N articles for benchmarks and scale tests.

Copies ``docs/`` (and what the build needs beside it) into a new folder, then
adds copies of the real articles, spread over the guides as the originals
are, until there are N articles. Each copy gets a unique slug, title and
labels (``(label)=`` and ``:label: x`` get a ``-cK`` suffix), and is appended to its guide's
toctree, so the result builds with ``-W`` like the real site.

Run:  python tools/synth_kb.py --articles 1000 --out /tmp/kb1000
Then: sphinx-build -c /tmp/kb1000 /tmp/kb1000/docs /tmp/kb1000/_build/html
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

from kb.pages.frontmatter import is_article

ROOT = Path(__file__).resolve().parent.parent

# What a build reads besides docs/.
BUILD_INPUTS = [
    "conf.py",
    "_static",
    "_templates",
    "locale",
    "data",
    "tools",
    "pagefind.yml",
    "node_modules",
    "package.json",
]

_LABEL = re.compile(r"^\((?P<label>[A-Za-z0-9_.:-]+)\)=\s*$", re.M)
_OPTION_LABEL = re.compile(r"^:label:\s*(?P<label>\S+)\s*$", re.M)


def real_articles(docs: Path) -> list[str]:
    out = []
    for path in sorted(docs.rglob("*.md")):
        docname = path.relative_to(docs).with_suffix("").as_posix()
        if is_article(docname):
            out.append(docname)
    return out


def copy_article(text: str, k: int) -> str:
    """The article's text with a unique title and labels for copy number k."""
    _, head, body = text.split("---\n", 2)
    head = re.sub(r"^(title|listing_title): (.+)$", rf"\1: \2（副本 {k}）", head, flags=re.M)
    body = _LABEL.sub(lambda m: f"({m['label']}-c{k})=", body)
    body = _OPTION_LABEL.sub(lambda m: f":label: {m['label']}-c{k}", body)
    body = re.sub(r"^# (.+)$", rf"# \1（副本 {k}）", body, count=1, flags=re.M)
    return f"---\n{head}---\n{body}"


def add_to_toctree(index: Path, entries: list[str]) -> None:
    text = index.read_text(encoding="utf-8")
    start = text.index("```{toctree}")
    end = text.index("```", start + 3)
    index.write_text(text[:end] + "".join(f"{e}\n" for e in entries) + text[end:], encoding="utf-8")


def make_kb(n: int, out: Path, source: Path = ROOT) -> Path:
    """Build inputs for a KB of ``n`` articles in ``out``; returns ``out``."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name in BUILD_INPUTS:
        src = source / name
        if not src.exists():
            continue
        if name == "node_modules":
            (out / name).symlink_to(src.resolve())
        elif src.is_dir():
            shutil.copytree(src, out / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, out / name)
    shutil.copytree(source / "docs", out / "docs")
    docs = out / "docs"
    originals = real_articles(docs)
    added: dict[str, list[str]] = {}
    for k in range(max(0, n - len(originals))):
        orig = originals[k % len(originals)]
        copy = f"{orig}-c{k}"
        text = (docs / f"{orig}.md").read_text(encoding="utf-8")
        (docs / f"{copy}.md").write_text(copy_article(text, k), encoding="utf-8")
        guide = orig.split("/")[0]
        added.setdefault(guide, []).append(copy.split("/", 1)[1])
    for guide, entries in added.items():
        add_to_toctree(docs / guide / "index.md", entries)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    make_kb(args.articles, args.out)
    print(f"{len(real_articles(args.out / 'docs'))} articles in {args.out / 'docs'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
