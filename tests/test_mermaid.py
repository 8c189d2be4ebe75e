"""Mermaid diagrams: parsed at build time (KB060 at the diagram's line), drawn
by a static script (no inline <script>), rendered to SVG in Chromium.

The small builds use the project's configuration (``-c`` the repository) on
a folder of one or two pages, as ``make html`` would build them.
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from one_build import register
from playwright.sync_api import expect
from sphinx.cmd.build import build_main
from test_contributor_kit import _append

ROOT = Path(__file__).resolve().parent.parent

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


def parsed(proc: subprocess.CompletedProcess) -> bool:
    """Whether this build started the Node checker."""
    return "kb_mermaid: parsing" in proc.stdout


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


# -- KB060 ------------------------------------------------------------------------


@pytest.mark.slow
def test_broken_diagram_fails_at_its_line_with_mermaids_message(tmp_path):
    page = "# 图示\n\n正文。\n\n" + fence(DIAGRAMS["graph"]) + "\n" + fence(BROKEN, ":caption: 坏图\n")
    write_docs(tmp_path / "docs", {"index": page})
    proc = build(tmp_path / "docs", tmp_path / "out")
    line = page.index(":caption:")
    line = page[:line].count("\n")  # the fence line, just above the option
    assert proc.returncode != 0
    warnings = [w for w in proc.stderr.splitlines() if "WARNING" in w]
    assert len(warnings) == 1, proc.stderr
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


@pytest.mark.slow
def test_valid_diagrams_of_every_common_type_pass(tmp_path):
    page = "# 图示\n\n正文。\n\n" + "\n".join(fence(code) for code in DIAGRAMS.values())
    write_docs(tmp_path / "docs", {"index": page})
    proc = build(tmp_path / "docs", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert "WARNING" not in proc.stderr
    assert f"parsing {len(DIAGRAMS)} mermaid diagram(s)" in proc.stdout


@pytest.mark.slow
def test_a_broken_diagram_keeps_failing_until_fixed_and_node_runs_only_for_new_text(tmp_path):
    docs, out = tmp_path / "docs", tmp_path / "out"
    write_docs(docs, {"diagram": "# 有图\n\n" + fence(DIAGRAMS["sequence"]), "plain": "# 无图\n\n正文。\n"})
    first = build(docs, out)
    assert first.returncode == 0 and parsed(first), first.stderr + first.stdout
    # Nothing changed, or only a page without a diagram: Node is not started
    # (a missing Node would be a warning).
    no_node = ("-D", "kb_mermaid_node=/nonexistent/node")
    again = build(docs, out, *no_node)
    assert again.returncode == 0 and not parsed(again), again.stderr
    (docs / "plain.md").write_text("# 无图\n\n改过的正文。\n", encoding="utf-8")
    edited = build(docs, out, *no_node)
    assert edited.returncode == 0 and not parsed(edited), edited.stderr
    # A broken diagram fails this build and the next one, which reads nothing.
    (docs / "diagram.md").write_text("# 有图\n\n" + fence(BROKEN), encoding="utf-8")
    broken = build(docs, out)
    assert broken.returncode != 0 and "diagram.md:3: WARNING: KB060" in broken.stderr
    still = build(docs, out, *no_node)
    assert still.returncode != 0 and "diagram.md:3: WARNING: KB060" in still.stderr
    assert not parsed(still)


@pytest.mark.slow
def test_missing_node_is_one_warning(tmp_path):
    write_docs(tmp_path / "docs", {"index": "# 图示\n\n" + fence(DIAGRAMS["graph"])})
    proc = build(tmp_path / "docs", tmp_path / "out", "-D", "kb_mermaid_node=/nonexistent/node")
    assert proc.returncode != 0
    warnings = [w for w in proc.stderr.splitlines() if "WARNING" in w]
    assert len(warnings) == 1 and "Node.js ('/nonexistent/node') is not installed" in warnings[0], proc.stderr


@pytest.mark.slow
def test_a_parse_that_takes_too_long_is_a_warning_at_the_diagram(tmp_path):
    write_docs(tmp_path / "docs", {"index": "# 图示\n\n" + fence(DIAGRAMS["graph"])})
    proc = build(tmp_path / "docs", tmp_path / "out", "-D", "kb_mermaid_timeout=0")
    assert proc.returncode != 0
    assert "index.md:3: WARNING: KB060 mermaid took longer than 0 s" in proc.stderr, proc.stderr


@pytest.mark.slow
def test_zoom_is_refused_at_the_diagram(tmp_path):
    write_docs(tmp_path / "docs", {"index": "# 图示\n\n" + fence(DIAGRAMS["graph"], ":zoom:\n")})
    proc = build(tmp_path / "docs", tmp_path / "out")
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


# -- no inline script -----------------------------------------------------------------


def inline_scripts(html: str) -> list[str]:
    """<script> elements without src, except JSON data blocks and furo's
    one-line theme switch (furo's own template; replaced elsewhere)."""
    found = []
    for attrs, body in re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.S):
        if "src=" in attrs or 'type="application/json"' in attrs or body.strip() == FURO_THEME_LINE:
            continue
        found.append(f"<script{attrs}>{body[:80]}")
    return found


@pytest.mark.slow
def test_diagram_pages_load_a_static_script_only(tmp_path):
    write_docs(
        tmp_path / "docs",
        {"diagram": "# 有图\n\n" + fence(DIAGRAMS["flowchart"]), "plain": "# 无图\n\n正文。\n"},
    )
    proc = build(tmp_path / "docs", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    diagram = (out / "diagram.html").read_text(encoding="utf-8")
    assert inline_scripts(diagram) == []
    tag = re.search(r'<script [^>]*src="_static/kb-mermaid\.js\?v=\w+"[^>]*>', diagram).group(0)
    assert 'type="module"' in tag and "&quot;securityLevel&quot;: &quot;strict&quot;" in tag
    assert '<pre class="mermaid">' in diagram
    for other in ("plain.html", "index.html", "search.html"):
        html = (out / other).read_text(encoding="utf-8")
        assert "mermaid" not in html, other
    assert (out / "_static/kb-mermaid.js").exists()
    assert (out / "_static/vendor/mermaid/mermaid.esm.min.mjs").exists()


def test_no_page_of_the_site_has_an_inline_script(site):
    with_diagram = 0
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert not any("mermaid" in s for s in inline_scripts(html)), page
        if 'class="mermaid"' in html:
            with_diagram += 1
            assert inline_scripts(html) == [], page
            assert "_static/kb-mermaid.js" in html, page
        else:
            assert "kb-mermaid" not in html, page
    assert with_diagram >= 5


# -- in the browser -------------------------------------------------------------------


@pytest.mark.browser
def test_diagram_renders_under_a_strict_script_policy(page, server):
    """script-src 'self': an inline script would not run; the diagram still
    draws, and its fullscreen button shows it in a dialog."""
    policy = "script-src 'self'; style-src 'self' 'unsafe-inline'"

    def with_policy(route):
        response = route.fetch()
        route.fulfill(response=response, headers={**response.headers, "content-security-policy": policy})

    page.route("**/*.html", with_policy)
    violations = []
    page.on(
        "console",
        lambda m: "Content Security Policy" in m.text and "mermaid" in m.text and violations.append(m.text),
    )
    page.goto(f"{server}/training/llm-training-10-tips.html")
    assert page.locator("pre.mermaid").count() == 2
    expect(page.locator("pre.mermaid svg")).to_have_count(2, timeout=20_000)
    page.locator(".kb-mermaid-fullscreen").first.click()
    page.wait_for_selector("dialog.kb-mermaid-dialog[open] svg")
    page.keyboard.press("Escape")
    page.wait_for_selector("dialog.kb-mermaid-dialog", state="hidden")
    assert page.foreign_requests == [] and violations == []
    assert not [e for e in page.console_errors if "Content Security Policy" not in e], page.console_errors
