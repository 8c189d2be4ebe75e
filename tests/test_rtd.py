"""Read the Docs builds the site `make html` builds, and what is published
holds only what readers need (issue 21, items 1 and 3).

Validating .readthedocs.yaml against its schema says nothing about whether
the build works there. So this test does what Read the Docs does with it
(https://docs.readthedocs.io/en/stable/build-customization.html): a shallow
clone of the repository's last commit, then the file's jobs in Read the
Docs' order, each command in a shell of its own from the clone's root, with
the environment variables Read the Docs sets
(https://docs.readthedocs.io/en/stable/reference/environment-variables.html).
Two departures, both about installing: the virtualenv Read the Docs would
create and fill from ``python.install`` is the project's .venv, and
node_modules is linked to the project's (as tests/one_build.py does); the
clone's install inputs are dated before the project's install stamps, so
make does not install again into what is shared.

Then the published folder ($READTHEDOCS_OUTPUT/html) is checked: the home
page, an article, the search index, the 404 page under the version's path,
and no file of the build's own (doctrees, .buildinfo, stamps, Pagefind's
lock and failure files). The GitHub Pages deploy uploads the same make
target's folder; what its upload action takes from it is checked too.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
PROJECT, LANGUAGE, VERSION = "51suanli-kb", "zh-cn", "latest"
CANONICAL = f"https://{PROJECT}.readthedocs.io/{LANGUAGE}/{VERSION}/"
# Read the Docs' jobs, in the order it runs them (build-customization.html);
# `create_environment` and `install` are its own unless the file overrides them
JOBS = [
    "post_checkout",
    "pre_system_dependencies",
    "post_system_dependencies",
    "pre_create_environment",
    "create_environment",
    "post_create_environment",
    "pre_install",
    "install",
    "post_install",
    "pre_build",
    "build",
    "post_build",
]
# install inputs of the Makefile's stamps (.venv/bin/.installed*, node_modules/.installed)
INSTALL_INPUTS = ["requirements.txt", "requirements-dev.txt", "requirements-snippets.txt"]
INSTALL_INPUTS += ["package.json", "package-lock.json"]

# what a reader never needs: the build's own files
BUILD_FILES = re.compile(
    r"(^|/)(\.[^/]+|doctrees|[^/]*\.pickle|[^/]*\.doctree|kb-llms|[^/]*pagefind-(lock|failed|log|new|old)"
    r"|html\.built|_sources/.+)(/|$)"
)


def rtd_config() -> dict:
    return yaml.safe_load((ROOT / ".readthedocs.yaml").read_text(encoding="utf-8"))


def rtd_commands(config: dict) -> list[tuple[str, str]]:
    """(job, command) of the file's jobs, in Read the Docs' order (build: html only)."""
    jobs = config["build"].get("jobs", {})
    assert set(jobs) <= set(JOBS), sorted(set(jobs) - set(JOBS))
    commands = []
    for job in JOBS:
        steps = jobs.get(job, [])
        if job == "build":
            assert set(steps) == {"html"}, steps  # only the format Read the Docs publishes here
            steps = steps["html"]
        commands += [(job, str(step)) for step in steps]
    return commands


def clone(dest: Path) -> Path:
    """What Read the Docs checks out: the last commit, shallow."""
    proc = subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{ROOT}", str(dest)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    return dest


def build_as_rtd(checkout: Path) -> dict:
    """Run the checkout's .readthedocs.yaml as Read the Docs would; what it made."""
    config = yaml.safe_load((checkout / ".readthedocs.yaml").read_text(encoding="utf-8"))
    assert config["version"] == 2
    assert config["build"]["tools"]["python"] == "3.11" and str(config["build"]["tools"]["nodejs"]) == "20"
    # the environment Read the Docs creates is requirements.txt, as .venv's first layer
    assert config["python"]["install"] == [{"requirements": "requirements.txt"}]
    assert "commands" not in config["build"]  # build.jobs: Read the Docs keeps its own other jobs
    (checkout / "node_modules").symlink_to(ROOT / "node_modules")
    for name in INSTALL_INPUTS:
        os.utime(checkout / name, (0, 0))
    output = checkout / "_readthedocs"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("READTHEDOCS", "MAKE", "KB_"))},
        "READTHEDOCS": "True",
        "READTHEDOCS_PROJECT": PROJECT,
        "READTHEDOCS_LANGUAGE": LANGUAGE,
        "READTHEDOCS_VERSION": VERSION,
        "READTHEDOCS_VERSION_NAME": VERSION,
        "READTHEDOCS_VERSION_TYPE": "branch",
        "READTHEDOCS_VIRTUALENV_PATH": str(VENV),
        "READTHEDOCS_CANONICAL_URL": CANONICAL,
        "READTHEDOCS_OUTPUT": f"{output}/",
        "NO_COLOR": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    log, made = [], []
    for job, command in rtd_commands(config):
        if job == "post_build" and not made:  # the folder as make html left it
            made = published(output / "html", hidden=True)
        proc = subprocess.run(["bash", "-c", command], cwd=checkout, env=env, capture_output=True, text=True)
        log.append(f"$ {command}\n{proc.stdout}{proc.stderr}")
        assert proc.returncode == 0, "\n".join(log)[-4000:]
    made = made or published(output / "html", hidden=True)
    return {"html": output / "html", "output": output, "log": "\n".join(log), "made": made}


@pytest.fixture(scope="module")
def rtd(tmp_path_factory) -> dict:
    """.readthedocs.yaml run once, as Read the Docs would, on a clone of the last commit."""
    return build_as_rtd(clone(tmp_path_factory.mktemp("rtd") / "checkout"))


@pytest.mark.slow
def test_read_the_docs_builds_the_site_with_search_and_no_warning(rtd):
    html = rtd["html"]
    assert "WARNING" not in rtd["log"], rtd["log"][-4000:]
    assert "欢迎来到 51 算力" in (html / "index.html").read_text(encoding="utf-8")
    article = (html / "training/llm-training-10-tips.html").read_text(encoding="utf-8")
    assert "data-pagefind-body" in article and "编者注" in article
    assert (html / "pagefind/pagefind-entry.json").is_file()
    assert list((html / "pagefind").glob("index/*.pf_index"))
    # the diagrams, drawn ahead of time (make diagrams): no browser on Read the Docs
    assert list((html / "_images").glob("*-dark.svg"))
    # the history is there: pages show their last git date (post_checkout unshallowed the clone)
    assert "最后更新：" in article


@pytest.mark.slow
def test_the_404_page_works_under_the_versions_path(rtd):
    """Served as Read the Docs serves it, under /zh-cn/latest/: the 404 page's
    styles, scripts and links all answer from a missing URL deep below."""
    from test_site_files import SERVED_AT, check_404_under_served_path

    assert f"/{LANGUAGE}/{VERSION}/" == SERVED_AT
    check_404_under_served_path(rtd["html"])


def published(folder: Path, hidden: bool) -> list[str]:
    """The files an upload of `folder` takes (see `uploaded`)."""
    return uploaded([p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()], hidden)


def uploaded(files: list[str], hidden: bool) -> list[str]:
    """Without `hidden`, none whose path has a part starting with a dot
    (actions/upload-pages-artifact excludes them since v4:
    actions/upload-pages-artifact#102)."""
    return sorted(f for f in files if hidden or not any(part.startswith(".") for part in f.split("/")))


def assert_only_reader_files(files: list[str]) -> None:
    own = [f for f in files if BUILD_FILES.search(f)]
    assert own == [], own
    for needed in (
        "index.html",
        "404.html",
        "search.html",
        "feed.xml",
        "sitemap.xml",
        "robots.txt",
        "llms.txt",
    ):
        assert needed in files, needed
    assert "pagefind/pagefind-entry.json" in files and "llms-full.txt" in files


@pytest.mark.slow
def test_read_the_docs_publishes_only_what_readers_need(rtd):
    # Read the Docs publishes the whole of $READTHEDOCS_OUTPUT/html
    assert_only_reader_files(published(rtd["html"], hidden=True))
    # the build's own files are next to it, where make html keeps them
    assert (rtd["output"] / "doctrees").is_dir()


def _workflow(name: str) -> dict:
    flow = yaml.safe_load((ROOT / ".github/workflows" / name).read_text(encoding="utf-8"))
    flow["on"] = flow.pop(True, flow.get("on"))
    return flow


@pytest.mark.slow
def test_the_pages_deploy_uploads_only_what_readers_need(rtd):
    """deploy.yml runs `make html` and uploads its folder: the folder the same
    target made here (BUILDDIR is the Makefile's _build there), as its upload
    action takes it."""
    steps = _workflow("deploy.yml")["jobs"]["build"]["steps"]
    runs = [i for i, s in enumerate(steps) if re.search(r"\bmake\s+html\b", str(s.get("run", "")))]
    uploads = [i for i, s in enumerate(steps) if "upload-pages-artifact" in str(s.get("uses", ""))]
    assert len(runs) == 1 and len(uploads) == 1 and runs[0] < uploads[0]
    upload = steps[uploads[0]]
    assert upload["with"]["path"] == "_build/html"
    assert re.search(r"^BUILDDIR\s+:?=\s*_build$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    # nothing between the build and the upload changes the folder
    assert all("run" not in s for s in steps[runs[0] + 1 : uploads[0]])
    version = int(str(upload["uses"]).split("@v")[1].split(".")[0])
    hidden = version < 4 or upload["with"].get("include-hidden-files") is True
    assert_only_reader_files(uploaded(rtd["made"], hidden))


def test_the_check_catches_the_build_files():
    """The list of the build's own files is not empty by construction."""
    for path in (
        ".doctrees/environment.pickle",
        "doctrees/index.doctree",
        ".buildinfo",
        ".kb-built",
        "_build/.html.pagefind-lock",
        ".html.pagefind-failed",
        "_sources/index.md.txt",
    ):
        assert BUILD_FILES.search(path), path
    for path in ("index.html", "pagefind/pagefind-entry.json", "_static/kb.css", "training/x.html"):
        assert not BUILD_FILES.search(path), path


@pytest.mark.slow
def test_make_html_keeps_its_own_files_outside_the_site_and_rebuilds_a_deleted_site(tiny_repo):
    """make html's doctrees and stamp are in _build/doctrees, so deleting the
    published folder alone must still make the next `make html` build it."""
    import shutil

    import one_build

    assert one_build.make(tiny_repo, "html").returncode == 0
    site = tiny_repo / "_build/html"
    assert (tiny_repo / "_build/doctrees/html.built").is_file()
    # Sphinx's .buildinfo is the one build file left in it (the uploads drop it)
    own = [p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()]
    assert [f for f in own if BUILD_FILES.search(f)] == [".buildinfo"]
    shutil.rmtree(site)
    proc = one_build.make(tiny_repo, "html")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert (site / "index.html").is_file()
