"""Draw every mermaid diagram of the pages to SVG (make diagrams).

The site shows diagrams as SVG images drawn ahead of time (kb.site.mermaid):
pages load no mermaid script, and the build needs no browser (Read the Docs
has none). This draws them, in Debian's chromium driven by Playwright, with
the mermaid build that ``npm ci`` installed (node_modules/mermaid, the
version package.json pins), in a page of its own that loads nothing else.

1. The diagrams and their lines are read as the build reads them: Sphinx
   reads the pages with the repository's conf.py (the ``dummy`` builder, in
   a temporary folder), and kb.site.mermaid keeps each diagram's text.
2. Each diagram whose SVGs are missing is drawn twice, with the light and
   the dark settings (``kb.site.mermaid.render_settings``), cleaned (no
   script, event handler, ``<foreignObject>`` or link to another document;
   width and height from its viewBox, so that an ``<img>`` has a size), and
   checked as the build checks written SVGs (kb.guard.html). A diagram that
   mermaid cannot draw is ``path:LINE: KB060 …``; one that comes out with
   what the guard refuses is ``path:LINE: KB111 …``. Nothing is written for
   either.
3. The SVGs are written to ``docs/_diagrams/<digest>-<light|dark>.svg``;
   SVGs there that no diagram uses any more are removed.

Commit the folder. ``--check`` draws nothing: it lists the diagrams without
their SVGs (as the build does, KB110) and exits 1 if there are any.
``--verify`` draws every diagram again in a temporary folder and lists the
committed SVGs that differ (one edited by hand, say: the build checks an
SVG's name and what the guard refuses, not that it shows its diagram); the
same fonts and chromium give the same bytes (Debian's, as make browser
installs them).

Run:  python tools/render_diagrams.py [--check | --verify] [--force] [--out DIR] [SRCDIR]   (make diagrams)

The tests' small site has a diagram too: ``tests/diagram_fixtures.py`` draws
it into ``tests/diagrams/`` (make diagrams runs both).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from kb.guard.html import scan, scan_xml  # noqa: E402
from kb.site import mermaid as kb_mermaid  # noqa: E402

MERMAID = ROOT / "node_modules" / "mermaid"


@dataclass
class Diagram:
    path: Path  # the page
    line: int
    code: str
    files: dict[str, Path]  # variant -> SVG


def read_diagrams(srcdir: Path) -> tuple[list[Diagram], dict[str, dict], str]:
    """The pages' diagrams, the drawing settings and the mermaid version, as
    the build sees them (Sphinx reads the pages; nothing is written)."""
    from kb.core.store import documents
    from sphinx.application import Sphinx

    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stderr(io.StringIO()):
        app = Sphinx(
            str(srcdir),
            str(ROOT),
            f"{tmp}/out",
            f"{tmp}/doctrees",
            "dummy",
            status=None,
            warning=io.StringIO(),
            freshenv=True,
        )
        app.build()
        found = []
        for docname, diagrams in sorted(documents(app.env, "mermaid").items()):
            for line, code, _zoom in diagrams:
                found.append(
                    Diagram(Path(app.env.doc2path(docname)), line, code, kb_mermaid.svg_paths(app, code))
                )
        return found, kb_mermaid.render_settings(app.config), kb_mermaid.mermaid_version(ROOT)


# Runs in the page: draws one diagram with one variant's settings and cleans
# the SVG in the DOM, then serializes it as XML (well-formed, as the guard
# reads it). A label that needs HTML (<foreignObject>) is not dropped
# silently: it is reported.
DRAW = """
async ([code, settings, background]) => {
  mermaid.initialize(settings);
  let svg;
  try {
    ({ svg } = await mermaid.render("kb-diagram", code));
  } catch (error) {
    return { error: String(error?.message ?? error) };
  } finally {
    document.querySelectorAll("body > [id^='dkb-diagram'], body > #kb-diagram").forEach((e) => e.remove());
  }
  const doc = new DOMParser().parseFromString(svg, "image/svg+xml");
  const root = doc.documentElement;
  if (root.localName !== "svg") return { error: "mermaid did not write an SVG" };
  const problems = [];
  for (const el of [...doc.querySelectorAll("*")]) {
    const name = el.localName.toLowerCase();
    if (name === "script") { el.remove(); continue; }
    if (name === "foreignobject") problems.push("an HTML label (<foreignObject>)");
    for (const attr of [...el.attributes]) {
      const attrName = attr.localName.toLowerCase();
      if (attrName.startsWith("on")) el.removeAttribute(attr.name);
      else if (attrName === "href" && !attr.value.startsWith("#")) problems.push(`a link to ${attr.value.slice(0, 60)}`);
    }
  }
  // rough.js strokes and layout coordinates carry 15 decimals: 2 draw the same (a third of the bytes)
  const short = (text) => text.replace(/-?\\d*\\.\\d{3,}(?:e-?\\d+)?/g, (n) => String(Math.round(Number(n) * 100) / 100));
  for (const el of [...doc.querySelectorAll("[d], [points], [transform]")]) {
    for (const name of ["d", "points", "transform"]) {
      if (el.hasAttribute(name)) el.setAttribute(name, short(el.getAttribute(name)));
    }
  }
  const box = (root.getAttribute("viewBox") || "").trim().split(/[\\s,]+/).map(Number);
  if (box.length !== 4 || !(box[2] > 0) || !(box[3] > 0)) return { error: "the SVG has no viewBox" };
  const round = (n) => String(Math.ceil(n));
  root.setAttribute("width", round(box[2]));
  root.setAttribute("height", round(box[3]));
  // not max-width (the <img> sizes it); the theme's page colour, so that the
  // SVG opened on its own (the full-size view) reads as it does in the page
  root.setAttribute("style", `background-color: ${background}`);
  return { svg: new XMLSerializer().serializeToString(doc), problems };
}
"""


def draw(diagrams: list[Diagram], settings: dict[str, dict]) -> list[str]:
    """Draw the diagrams' missing SVGs; the errors, as ``path:LINE: KBnnn …``."""
    from local_site import launch
    from playwright.sync_api import sync_playwright

    entry = MERMAID / "dist" / "mermaid.min.js"
    if not entry.exists():
        return [f"{entry}: mermaid is not installed: run `npm ci` (make diagrams does)"]
    errors = []
    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page()
        # offline: nothing but what this script hands the page
        page.route("**/*", lambda route: route.abort())
        page.set_content(
            '<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"></head><body></body></html>'
        )
        page.add_script_tag(path=str(entry))
        for diagram in diagrams:
            where = f"{display(diagram.path)}:{diagram.line}"
            drawn = {}
            for variant, path in diagram.files.items():
                background = kb_mermaid.BACKGROUNDS[variant]
                result = page.evaluate(DRAW, [diagram.code, settings[variant], background])
                if "error" in result:
                    errors.append(
                        f"{where}: KB060 mermaid cannot draw this diagram: {kb_mermaid.summary(result['error'])}"
                    )
                    break
                svg = '<?xml version="1.0" encoding="UTF-8"?>\n' + result["svg"] + "\n"
                # what the cleaning found first (it names the cause), else what the guard refuses
                problems = result["problems"] or [what for _, what in scan(svg)[0] + scan_xml(svg)]
                if problems:
                    errors.append(
                        f"{where}: KB111 the {variant} SVG of this diagram has {'; '.join(dict.fromkeys(problems))}, "
                        "which the site refuses; draw it without (a label with HTML, a link or an image)"
                    )
                    break
                drawn[path] = svg
            else:
                for path, svg in drawn.items():
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(svg, encoding="utf-8")
                    print(f"wrote {display(path)}")
        browser.close()
    return errors


def display(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)


def installed_version() -> str | None:
    package = MERMAID / "package.json"
    return json.loads(package.read_text(encoding="utf-8")).get("version") if package.exists() else None


def verify(diagrams: list[Diagram], settings: dict[str, dict]) -> int:
    """Draw every diagram again, in a temporary folder, and compare: a
    committed SVG that differs was not drawn by this script from this text
    (edited by hand, or drawn with other fonts or another chromium)."""
    unique = list({d.code: d for d in diagrams}.values())
    with tempfile.TemporaryDirectory() as tmp:
        fresh = [
            Diagram(d.path, d.line, d.code, {v: Path(tmp) / p.name for v, p in d.files.items()})
            for d in unique
        ]
        with contextlib.redirect_stdout(io.StringIO()):
            errors = draw(fresh, settings)
        differ = [
            f"{display(d.path)}:{d.line}: {display(committed)} differs from a new drawing"
            for d, new in zip(unique, fresh)
            for committed, drawn in zip(d.files.values(), new.files.values())
            if drawn.exists() and (not committed.exists() or committed.read_bytes() != drawn.read_bytes())
        ]
    for line in errors + differ:
        print(line, file=sys.stderr)
    print(f"{len(unique)} diagram(s) drawn again, {len(differ)} SVG(s) differ")
    return 1 if errors or differ else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("srcdir", nargs="?", type=Path, default=ROOT / "docs", help="the pages (docs)")
    parser.add_argument("--check", action="store_true", help="draw nothing; exit 1 if an SVG is missing")
    parser.add_argument("--force", action="store_true", help="draw every diagram again")
    parser.add_argument(
        "--verify",
        action="store_true",
        help="draw every diagram in a temporary folder; exit 1 if a committed SVG differs",
    )
    parser.add_argument(
        "--out", type=Path, help="the SVGs' folder (default: SRCDIR/_diagrams, kb_diagrams_dir)"
    )
    args = parser.parse_args(argv)
    diagrams, settings, version = read_diagrams(args.srcdir)
    if args.out:
        for d in diagrams:
            d.files = {variant: args.out / path.name for variant, path in d.files.items()}
    missing = [d for d in diagrams if args.force or not all(p.exists() for p in d.files.values())]
    if args.verify:
        return verify(diagrams, settings)
    if args.check:
        for d in missing:
            print(
                f"{display(d.path)}:{d.line}: KB110 the diagram has no SVG drawn from its current text: run `make diagrams`"
            )
        return 1 if missing else 0
    if missing and installed_version() != version:
        print(
            f"{MERMAID}: mermaid {installed_version()} is installed, package.json pins {version}: run `npm ci`",
            file=sys.stderr,
        )
        return 1
    # one drawing per text: the same diagram on two pages is one pair of files
    unique = list({d.code: d for d in missing}.values())
    errors = draw(unique, settings) if unique else []
    for error in errors:
        print(error, file=sys.stderr)
    # the SVGs no diagram uses any more
    used = {path for d in diagrams for path in d.files.values()}
    folders = {path.parent for path in used} or {args.out or args.srcdir / "_diagrams"}
    for folder in folders:
        for old in sorted(folder.glob("*.svg")):
            if old not in used and old.name.endswith(tuple(f"-{v}.svg" for v in kb_mermaid.VARIANTS)):
                old.unlink()
                print(f"removed {display(old)} (no diagram uses it)")
    print(f"{len(diagrams)} diagram(s), {len(unique) - len(errors)} drawn, {len(errors)} failed")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
