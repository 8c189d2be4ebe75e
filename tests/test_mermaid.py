"""Mermaid diagrams: drawn to SVG ahead of time by make diagrams
(tools/render_diagrams.py, in chromium), committed in docs/_diagrams/, and
shown as images: pages load no mermaid script. A diagram without its SVGs
fails the build (KB110 at its line); a broken one is KB060 with mermaid's
message (from Node at build time, from the browser in make diagrams).

The small builds use the project's configuration (``-c`` the repository) on
a folder of one or two pages, as ``make html`` would build them.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from one_build import register
from sphinx.cmd.build import build_main
from test_contributor_kit import _append

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools"
# the small site's diagram, drawn in tests/diagrams/ (tests/diagram_fixtures.py)
DRAWN = "graph LR\n  A[小批次] --> B[累积梯度]"
FIXTURES = ROOT / "tests" / "diagrams"

DIAGRAMS = {
    "flowchart": 'flowchart LR\n    A["数据"] --> B{"够吗？"}\n    B -- 是 --> C(("训练"))',
    "graph": "graph TD\n    A --> B",
    "sequence": "sequenceDiagram\n    participant C as 客户端\n    C->>S: 请求\n    S-->>C: 响应",
    "class": "classDiagram\n    Animal <|-- Duck\n    Animal : +int age",
    "state": "stateDiagram-v2\n    [*] --> 空闲\n    空闲 --> 训练中\n    训练中 --> [*]",
    "gantt": "gantt\n    title 计划\n    dateFormat YYYY-MM-DD\n    section 准备\n    采购 :a1, 2024-01-01, 10d",
    "pie": 'pie title 成本\n    "硬件" : 60\n    "电费" : 25',
    "er": "erDiagram\n    CLUSTER ||--o{ NODE : contains",
    "timeline": "timeline\n    title 发展\n    2017 : Transformer\n    2020 : GPT-3",
    "mindmap": "mindmap\n  root((算力))\n    训练\n    推理",
}
BROKEN = "flowchart TD\n    A -->"
FURO_THEME_LINE = 'document.body.dataset.theme = localStorage.getItem("theme") || "auto";'


def fence(code: str, options: str = "") -> str:
    return f"```{{mermaid}}\n{options}{code}\n```\n"


def write_docs(docs: Path, pages: dict[str, str]) -> None:
    """``index`` plus the given pages (listed in its toctree)."""
    docs.mkdir(exist_ok=True)
    others = [name for name in pages if name != "index"]
    toctree = "```{toctree}\n" + "\n".join(others) + "\n```\n" if others else ""
    index = pages.get("index", "# 图示\n\n正文。\n")
    (docs / "index.md").write_text(index + "\n" + toctree, encoding="utf-8")
    for name in others:
        (docs / f"{name}.md").parent.mkdir(parents=True, exist_ok=True)
        (docs / f"{name}.md").write_text(pages[name], encoding="utf-8")


def build(docs: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    """sphinx-build with the repository's conf.py, in this process (its own entry
    point, build_main); a parallel build (-j) in a subprocess of its own."""
    args = ["-b", "html", "-c", str(ROOT), "-W", "-n", "--keep-going", *extra, str(docs), str(out)]
    if "-j" in extra:
        proc = subprocess.run(
            [sys.executable, "-m", "sphinx", *args], capture_output=True, text=True, cwd=ROOT
        )
    else:
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.chdir(ROOT), contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = build_main(args)
        proc = subprocess.CompletedProcess(args, code, stdout.getvalue(), stderr.getvalue())
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def with_fixture_svgs(docs: Path) -> None:
    """The SVGs of DRAWN beside the pages (as make diagrams would leave them)."""
    shutil.copytree(FIXTURES, docs / "_diagrams", dirs_exist_ok=True)


def warnings_of(proc: subprocess.CompletedProcess) -> list[str]:
    return [w for w in proc.stderr.splitlines() if "WARNING" in w]


def parsed(proc: subprocess.CompletedProcess) -> bool:
    """Whether this build started the Node checker."""
    return "kb_mermaid: parsing" in proc.stdout


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


# -- KB060: a broken diagram, at its line, with mermaid's message -------------------


@pytest.mark.slow
def test_broken_diagram_fails_at_its_line_with_mermaids_message(tmp_path):
    page = "# 图示\n\n正文。\n\n" + fence(DRAWN) + "\n" + fence(BROKEN, ":caption: 坏图\n")
    docs = tmp_path / "docs"
    write_docs(docs, {"index": page})
    with_fixture_svgs(docs)
    proc = build(docs, tmp_path / "out")
    line = page.index(":caption:")
    line = page[:line].count("\n")  # the fence line, just above the option
    assert proc.returncode != 0
    warnings = warnings_of(proc)
    assert len(warnings) == 1, proc.stderr  # the drawn diagram is not parsed again
    assert (
        f"index.md:{line}: WARNING: KB060 mermaid diagram does not parse: Parse error on line" in warnings[0]
    ), proc.stderr
    assert "got 'EOF'" in warnings[0] and "fix the diagram's syntax" in warnings[0]


@pytest.mark.slow
def test_each_broken_diagram_is_reported_under_parallel_reads(tmp_path):
    pages = {f"page{i}": f"# 页{i}\n\n正文。\n\n" + fence(BROKEN) for i in range(3)}
    write_docs(tmp_path / "docs", pages)
    proc = build(tmp_path / "docs", tmp_path / "out", "-j", "2", "-D", "kb_parallel_threshold=1")
    for i in range(3):
        assert f"page{i}.md:5: WARNING: KB060" in proc.stderr, proc.stderr


# -- KB110: a diagram without its SVGs ------------------------------------------------


@pytest.mark.slow
def test_a_valid_diagram_without_its_svgs_fails_at_its_line_run_make_diagrams(tmp_path):
    """Every common type parses (no KB060); none has SVGs here, and each is
    KB110 at its own line, naming the files and the command."""
    page = "# 图示\n\n正文。\n\n" + "\n".join(fence(code) for code in DIAGRAMS.values())
    write_docs(tmp_path / "docs", {"index": page})
    proc = build(tmp_path / "docs", tmp_path / "out")
    assert proc.returncode != 0
    assert f"parsing {len(DIAGRAMS)} mermaid diagram(s)" in proc.stdout
    warnings = warnings_of(proc)
    lines = [line_of(page, code) - 1 for code in DIAGRAMS.values()]
    assert len(warnings) == len(DIAGRAMS), proc.stderr
    for line, warning in zip(lines, warnings):
        assert (
            f"index.md:{line}: WARNING: KB110 the diagram has no SVG drawn from its current text" in warning
        )
        assert re.search(r"docs/_diagrams/[0-9a-f]{20}-light\.svg, [0-9a-f]{20}-dark\.svg", warning), warning
        assert "run `make diagrams`" in warning


@pytest.mark.slow
def test_an_edited_diagram_no_longer_has_its_svgs(tmp_path):
    """The SVGs are named by the text they were drawn from: with them, the
    build passes; one label edited and it fails, at the diagram."""
    docs = tmp_path / "docs"
    write_docs(docs, {"index": "# 图示\n\n" + fence(DRAWN)})
    with_fixture_svgs(docs)
    drawn = build(docs, tmp_path / "out")
    assert drawn.returncode == 0 and warnings_of(drawn) == [], drawn.stderr
    assert not parsed(drawn)  # a drawn diagram is not parsed at build time
    write_docs(docs, {"index": "# 图示\n\n" + fence(DRAWN.replace("累积梯度", "累积的梯度"))})
    edited = build(docs, tmp_path / "out")
    assert edited.returncode != 0
    assert [w.split(": WARNING: ")[1][:5] for w in warnings_of(edited)] == ["KB110"], edited.stderr
    assert "index.md:3: WARNING: KB110" in edited.stderr


@pytest.mark.slow
def test_a_broken_diagram_keeps_failing_until_fixed_and_node_runs_only_for_new_text(tmp_path):
    docs, out = tmp_path / "docs", tmp_path / "out"
    write_docs(docs, {"diagram": "# 有图\n\n" + fence(DIAGRAMS["sequence"]), "plain": "# 无图\n\n正文。\n"})
    first = build(docs, out)
    assert parsed(first) and "diagram.md:3: WARNING: KB110" in first.stderr, first.stderr + first.stdout
    # Nothing changed, or only a page without a diagram: Node is not started
    # (a missing Node would be a warning).
    no_node = ("-D", "kb_mermaid_node=/nonexistent/node")
    again = build(docs, out, *no_node)
    assert not parsed(again) and "Node.js" not in again.stderr, again.stderr
    (docs / "plain.md").write_text("# 无图\n\n改过的正文。\n", encoding="utf-8")
    edited = build(docs, out, *no_node)
    assert not parsed(edited) and "Node.js" not in edited.stderr, edited.stderr
    # A broken diagram fails this build and the next one, which reads nothing.
    (docs / "diagram.md").write_text("# 有图\n\n" + fence(BROKEN), encoding="utf-8")
    broken = build(docs, out)
    assert broken.returncode != 0 and "diagram.md:3: WARNING: KB060" in broken.stderr
    still = build(docs, out, *no_node)
    assert still.returncode != 0 and "diagram.md:3: WARNING: KB060" in still.stderr
    assert not parsed(still)


@pytest.mark.slow
def test_missing_node_is_one_warning_beside_the_missing_svgs(tmp_path):
    write_docs(tmp_path / "docs", {"index": "# 图示\n\n" + fence(DIAGRAMS["graph"])})
    proc = build(tmp_path / "docs", tmp_path / "out", "-D", "kb_mermaid_node=/nonexistent/node")
    assert proc.returncode != 0
    warnings = warnings_of(proc)
    assert len(warnings) == 2, proc.stderr
    assert "Node.js ('/nonexistent/node') is not installed" in warnings[0]
    assert "index.md:3: WARNING: KB110" in warnings[1]


@pytest.mark.slow
def test_a_parse_that_takes_too_long_is_a_warning_at_the_diagram(tmp_path):
    write_docs(tmp_path / "docs", {"index": "# 图示\n\n" + fence(DIAGRAMS["graph"])})
    proc = build(tmp_path / "docs", tmp_path / "out", "-D", "kb_mermaid_timeout=0")
    assert proc.returncode != 0
    assert "index.md:3: WARNING: KB060 mermaid took longer than 0 s" in proc.stderr, proc.stderr


@pytest.mark.slow
def test_zoom_is_refused_at_the_diagram(tmp_path):
    docs = tmp_path / "docs"
    write_docs(docs, {"index": "# 图示\n\n" + fence(DRAWN, ":zoom:\n")})
    with_fixture_svgs(docs)
    proc = build(docs, tmp_path / "out")
    assert "index.md:3: WARNING: KB060 the :zoom: option of mermaid is not supported" in proc.stderr


def test_summary_keeps_the_first_line_and_what_was_expected():
    from kb.site.mermaid import summary

    message = "Parse error on line 3:\n...A -->\n------^\nExpecting 'AMP', got 'EOF'"
    assert summary(message) == "Parse error on line 3: Expecting 'AMP', got 'EOF'"
    assert (
        summary("No diagram type detected matching given configuration")
        == "No diagram type detected matching given configuration"
    )


def _broken_diagram(repo, at) -> int:
    return _append(repo, fence(BROKEN), at.article())


# an article of its own in the build of the group "pages" (tests/one_build.py)
register("pages", "mermaid", {"broken": _broken_diagram})


def test_make_html_fails_on_a_broken_diagram(one_build):
    r = one_build("pages")["mermaid/broken"]
    proc = r.run.proc
    assert proc.returncode != 0
    assert f"{r.at.article()}:{r.value}: WARNING: KB060 mermaid diagram does not parse" in proc.stderr, (
        proc.stderr[-3000:]
    )
    assert "Traceback" not in proc.stderr


# -- the page: images and the text version, no script ---------------------------------


def scripts(html: str) -> list[str]:
    """Every <script> element, inline or not, except JSON data blocks and
    furo's one-line theme switch (furo's own template; replaced elsewhere)."""
    found = []
    for attrs, body in re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.S):
        if 'type="application/json"' in attrs or body.strip() == FURO_THEME_LINE:
            continue
        found.append(f"<script{attrs}>{body[:80]}")
    return found


@pytest.mark.slow
def test_a_diagram_is_its_svgs_as_images_and_its_source_as_text(tmp_path):
    docs = tmp_path / "docs"
    write_docs(
        docs,
        {
            "diagram": "# 有图\n\n" + fence(DRAWN, ":caption: 梯度累积\n"),
            "sub/deep": "# 深处\n\n" + fence(DRAWN),
            "plain": "# 无图\n\n正文。\n",
        },
    )
    with_fixture_svgs(docs)
    proc = build(docs, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    html = (out / "diagram.html").read_text(encoding="utf-8")
    # no mermaid script of any kind: nothing loads it, nothing ships it
    assert not [s for s in scripts(html) if "mermaid" in s], scripts(html)
    assert not (out / "_static/vendor").exists() and not (out / "_static/kb-mermaid.js").exists()
    assert "_static/kb-mermaid.css" in html
    images = re.findall(
        r'<a class="kb-diagram-image only-(light|dark)" href="([^"]+)"><img src="([^"]+)" alt="([^"]+)"', html
    )
    assert [(variant, href == src) for variant, href, src, _ in images] == [("light", True), ("dark", True)]
    for variant, href, _, alt in images:
        assert re.fullmatch(rf"_images/[0-9a-f]{{20}}-{variant}\.svg", href), href
        assert (out / href).read_bytes() == (FIXTURES / Path(href).name).read_bytes()
        assert alt == "图示：梯度累积（文字版见下方的“图示源码”）"
    assert re.search(r'<img [^>]*width="\d+" height="\d+"', html)  # no layout shift
    source = re.search(
        r'<details class="kb-diagram-source"><summary>图示源码（文字版）</summary><pre>(.*?)</pre>',
        html,
        re.S,
    )
    assert source and source.group(1) == "graph LR\n  A[小批次] --&gt; B[累积梯度]"
    deep = (out / "sub/deep.html").read_text(encoding="utf-8")
    assert f'src="../{images[0][1]}"' in deep
    for other in ("plain.html", "index.html", "search.html"):
        assert "kb-mermaid" not in (out / other).read_text(encoding="utf-8"), other


def test_site_pages_with_diagrams_load_no_mermaid_and_every_svg_is_used(site):
    with_diagram = 0
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert not [s for s in scripts(html) if "mermaid" in s], page
        if 'class="kb-diagram' in html:
            with_diagram += 1
            for src in re.findall(r'<img src="([^"]*_images/[0-9a-f]{20}-(?:light|dark)\.svg)"', html):
                assert (page.parent / src).resolve().is_file(), (page, src)
        else:
            assert "kb-mermaid" not in html, page
    assert with_diagram >= 5
    assert not (site / "_static/vendor/mermaid").exists()
    # the committed SVGs: each is used by a diagram of the site (make diagrams
    # removes the others), and each passed the guard when the site was written
    used = {
        p.name
        for p in (site / "_images").glob("*.svg")
        if re.fullmatch(r"[0-9a-f]{20}-(light|dark)\.svg", p.name)
    }
    committed = {p.name for p in (ROOT / "docs/_diagrams").glob("*.svg")}
    assert committed == used


# -- make diagrams -------------------------------------------------------------------


def render(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(TOOLS / "render_diagrams.py"), *args], capture_output=True, text=True, cwd=ROOT
    )


@pytest.mark.slow
def test_check_lists_the_diagrams_without_svgs_and_draws_nothing(tmp_path):
    docs = tmp_path / "docs"
    write_docs(docs, {"index": "# 图示\n\n" + fence(DRAWN) + "\n" + fence(DIAGRAMS["graph"])})
    with_fixture_svgs(docs)
    proc = render("--check", str(docs))
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines() == [
        f"{docs / 'index.md'}:8: KB110 the diagram has no SVG drawn from its current text: run `make diagrams`"
    ]
    assert len(list((docs / "_diagrams").glob("*.svg"))) == 2


@pytest.mark.slow
def test_make_diagrams_removes_the_svgs_no_diagram_uses(tmp_path):
    docs = tmp_path / "docs"
    write_docs(docs, {"index": "# 图示\n\n" + fence(DRAWN)})
    with_fixture_svgs(docs)
    old = docs / "_diagrams" / "0123456789abcdef0123-dark.svg"
    old.write_text("<svg/>", encoding="utf-8")
    other = docs / "_diagrams" / "logo.svg"  # not one of ours
    other.write_text("<svg/>", encoding="utf-8")
    proc = render(str(docs))  # nothing to draw: no browser
    assert proc.returncode == 0, proc.stderr
    assert not old.exists() and other.exists()
    assert len(list((docs / "_diagrams").glob("*-*.svg"))) == 2


@pytest.mark.slow
@pytest.mark.browser
def test_make_diagrams_draws_every_common_type_and_the_build_then_passes(tmp_path):
    """In chromium: light and dark SVGs for each diagram, with text labels,
    nothing the guard refuses, the same bytes when drawn again; the build
    then passes with no warning (the written SVGs pass kb.guard.html)."""
    from kb.guard.html import check_file

    docs = tmp_path / "docs"
    page = "# 图示\n\n正文。\n\n" + "\n".join(fence(code) for code in DIAGRAMS.values())
    write_docs(docs, {"index": page})
    proc = render(str(docs))
    assert proc.returncode == 0, proc.stderr
    svgs = sorted((docs / "_diagrams").glob("*.svg"))
    assert len(svgs) == 2 * len(DIAGRAMS)
    first = {p.name: p.read_bytes() for p in svgs}
    for path in svgs:
        text = path.read_text(encoding="utf-8")
        assert check_file(path, page=False) == [], path
        assert "<foreignObject" not in text and "<script" not in text and "<text" in text
        assert re.search(r'<svg [^>]*width="\d+"[^>]*height="\d+"', text)
    forced = render("--force", str(docs))
    assert forced.returncode == 0, forced.stderr
    assert {p.name: p.read_bytes() for p in sorted((docs / "_diagrams").glob("*.svg"))} == first
    built = build(docs, tmp_path / "out")
    assert built.returncode == 0 and warnings_of(built) == [], built.stderr
    assert not parsed(built)


@pytest.mark.slow
@pytest.mark.browser
def test_make_diagrams_reports_a_broken_diagram_and_html_labels_at_their_lines(tmp_path):
    docs = tmp_path / "docs"
    html_labels = '%%{init: {"flowchart": {"htmlLabels": true}}}%%\nflowchart LR\n  A --> B'
    page = "# 图示\n\n" + fence(BROKEN) + "\n" + fence(html_labels) + "\n" + fence(DIAGRAMS["pie"])
    write_docs(docs, {"index": page})
    proc = render(str(docs))
    assert proc.returncode == 1
    errors = proc.stderr.splitlines()
    where = docs / "index.md"
    assert errors[0].startswith(f"{where}:3: KB060 mermaid cannot draw this diagram: Parse error on line"), (
        errors
    )
    assert errors[1].startswith(f"{where}:8: KB111 the light SVG of this diagram has an HTML label"), errors
    # only the good one is written
    assert len(list((docs / "_diagrams").glob("*.svg"))) == 2


@pytest.mark.slow
@pytest.mark.browser
def test_verify_names_a_committed_svg_that_is_not_the_drawing_of_its_text(tmp_path):
    """The build checks an SVG's name, not its picture: --verify draws again
    and compares (the small site's SVGs, drawn by make diagrams, are the same
    bytes; one edited by hand is named)."""
    docs = tmp_path / "docs"
    write_docs(docs, {"index": "# 图示\n\n" + fence(DRAWN)})
    with_fixture_svgs(docs)
    same = render("--verify", str(docs))
    assert same.returncode == 0 and "0 SVG(s) differ" in same.stdout, same.stderr
    (light,) = (docs / "_diagrams").glob("*-light.svg")
    light.write_text(light.read_text(encoding="utf-8").replace("累积梯度", "别的内容"), encoding="utf-8")
    edited = render("--verify", str(docs))
    assert edited.returncode == 1
    assert edited.stderr.splitlines() == [f"{docs / 'index.md'}:3: {light} differs from a new drawing"]


# -- in the browser -------------------------------------------------------------------


@pytest.mark.browser
def test_diagrams_follow_the_theme_under_a_strict_script_policy(page, server):
    """script-src 'self' and no mermaid: each diagram shows the SVG of the
    page's colour scheme (furo's data-theme, and the system's in "auto"),
    and links to it for the full-size view."""
    policy = "script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:"

    def with_policy(route):
        response = route.fetch()
        route.fulfill(response=response, headers={**response.headers, "content-security-policy": policy})

    page.route("**/*.html", with_policy)
    loaded = []
    page.on("requestfinished", lambda r: loaded.append(r.url))
    page.goto(f"{server}/training/llm-training-10-tips.html")
    page.wait_for_load_state("networkidle")
    shown = (
        "() => [...document.querySelectorAll('.kb-diagram img')]"
        ".filter(i => i.getClientRects().length).map(i => [i.src.split('-').pop(), i.complete && i.naturalWidth > 0])"
    )

    def loaded_in(theme: str) -> list:
        page.evaluate(f"document.body.dataset.theme = '{theme}'")
        for image in page.locator(".kb-diagram img:visible").all():
            image.scroll_into_view_if_needed()  # loading="lazy": the other variant is not fetched
        page.wait_for_function(f"({shown})().every(([_, ok]) => ok)")
        return page.evaluate(shown)

    assert loaded_in("light") == [["light.svg", True]] * 2
    assert loaded_in("dark") == [["dark.svg", True]] * 2
    page.emulate_media(color_scheme="light")
    page.evaluate("document.body.dataset.theme = 'auto'")
    assert [v for v, _ in page.evaluate(shown)] == ["light.svg"] * 2
    page.emulate_media(color_scheme="dark")
    assert [v for v, _ in page.evaluate(shown)] == ["dark.svg"] * 2
    links = page.evaluate(
        "[...document.querySelectorAll('.kb-diagram a')].map(a => a.href === a.querySelector('img').src)"
    )
    assert links == [True] * 4
    assert not [u for u in loaded if "mermaid" in u and ".css" not in u], loaded
    assert page.foreign_requests == []
    assert page.console_errors == [], page.console_errors


DIAGRAM_PAGES = [
    "training/llm-training-10-tips.html",
    "training/llm-training-troubleshooting.html",
    "training/training-platform-from-scratch.html",
    "inference/inference-cost-breakdown.html",
    "industry/ai-pcb-supply-chain.html",
]


# What a colour scheme changes on an element: its colours, and whether it shows
SCHEME_PROPERTIES = [
    "color",
    "background-color",
    "background-image",
    "border-top-color",
    "border-right-color",
    "border-bottom-color",
    "border-left-color",
    "outline-color",
    "text-decoration-color",
    "fill",
    "stroke",
    "opacity",
    "filter",
    "display",
    "visibility",
]
STYLES = (
    "props => [...document.querySelectorAll('body, body *')].map(e => { const s = getComputedStyle(e);"
    " if (e.closest('.theme-toggle-container')) return 'the toggle';"
    " if (!e.getClientRects().length) return e.tagName + ' not shown';"
    " return e.tagName + (e.className && typeof e.className === 'string' ? '.' + e.className : '')"
    " + ' ' + props.map(p => s.getPropertyValue(p)).join('|'); })"
)


@pytest.mark.browser
def test_a_theme_chosen_by_the_reader_looks_as_the_same_system_scheme(page, server):
    """On the pages with a diagram, furo's light and dark themes chosen by the
    reader (the toggle sets body[data-theme]), each against the opposite
    system scheme, give every element the colours and the visibility it has
    when the system scheme chooses (what tests/test_reading.py checks with
    axe on every page, in both schemes); the diagram shown is the theme's,
    and the text version is there. (The toggle differs: it shows the
    theme chosen, in icons with colours of their own.)"""
    for path in DIAGRAM_PAGES:
        page.goto(f"{server}/{path}")
        assert page.locator(".kb-diagram details.kb-diagram-source pre").count() >= 1, path
        # the colours a change ends on, at once (no transition to wait for)
        page.add_style_tag(content="*, *::before, *::after { transition: none !important; }")
        for scheme, system in (("light", "dark"), ("dark", "light")):
            page.emulate_media(color_scheme=scheme)
            page.evaluate("document.body.dataset.theme = 'auto'")
            by_system = page.evaluate(STYLES, SCHEME_PROPERTIES)
            page.emulate_media(color_scheme=system)
            page.evaluate(f"document.body.dataset.theme = '{scheme}'")
            by_reader = page.evaluate(STYLES, SCHEME_PROPERTIES)
            differ = [(a, b) for a, b in zip(by_system, by_reader, strict=True) if a != b]
            assert differ == [], (path, scheme, len(differ), differ[:3])
            assert {
                v
                for v in page.evaluate(
                    "[...document.querySelectorAll('.kb-diagram img')].filter(i => i.getClientRects().length)"
                    ".map(i => i.src.split('-').pop())"
                )
            } == {f"{scheme}.svg"}, path
    assert page.console_errors == [] and page.foreign_requests == []
