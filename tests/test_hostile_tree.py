"""What the build reads is a tree of folders and regular files, checked when
the configuration is read, before the data files are read and before
Sphinx looks for pages (kb.guard.untrusted.check_input_tree):

- a symlink (KB011): nothing is read through it first, not even a schema;
- a FIFO (KB018): reading it waited for ever, in data/ at the first step;
- a name with a control or bidirectional character (KB018): Sphinx left a
  page so named out without a word.

And the data reader itself reads at most a data file's size and never
waits on a FIFO (kb.core.data), and says which schema is missing.

Each case builds the tiny project of tests/test_data_errors.py; a case
that could hang builds in a subprocess with a timeout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_data_errors import ROOT, assert_fails_at, build, tiny_project

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300, method="thread")]


@pytest.fixture
def root(tmp_path) -> Path:
    return tiny_project(tmp_path / "kb")


@pytest.mark.parametrize(
    "where",
    ["data/tags.yaml", "data/schemas/tags.schema.json", "docs/training/pipe.md", "_static/pipe.css"],
)
def test_a_fifo_among_the_inputs_is_refused_not_waited_on(root, where):
    (root / where).unlink(missing_ok=True)
    os.mkfifo(root / where)
    out = assert_fails_at(root, f"{where}:1: WARNING: KB018 is not a regular file", timeout=60)
    assert "KB04" not in out, out[-3000:]


@pytest.mark.parametrize("name", ["a\nconf.py:1: WARNING: KB000 forged.md", "evil\u202egnp.md"])
def test_a_page_whose_name_holds_a_control_character_is_refused_not_left_out(root, name):
    (root / "docs/training" / name).write_text("# 页面\n\n正文。\n", encoding="utf-8")
    out = assert_fails_at(root, "WARNING: KB018 the name holds a control or bidirectional character")
    assert not any(line.startswith("conf.py:1: WARNING: KB000") for line in out.splitlines()), out[-3000:]
    assert "\u202e" not in out and ("docs/training/a\\nconf.py" in out or "evil\\u202egnp.md" in out)


def test_a_symlinked_schema_folder_is_refused_before_anything_is_read_through_it(root, tmp_path):
    """The schemas were read when the configuration was read, and the links
    refused only after: a schema elsewhere on the machine was read (and its
    problems printed) first."""
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(root / "data/schemas", elsewhere)
    (elsewhere / "tags.schema.json").write_text("{ not json", encoding="utf-8")
    shutil.rmtree(root / "data/schemas")
    (root / "data/schemas").symlink_to(elsewhere)
    out = assert_fails_at(root, "data/schemas:1: WARNING: KB011")
    assert "KB040" not in out and "elsewhere" not in out.split("KB011", 1)[0], out[-3000:]


def test_a_schema_file_larger_than_a_data_file_may_be_is_refused(root):
    path = root / "data/schemas/tags.schema.json"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.rstrip()[:-1] + " " * (3 << 20) + "}\n", encoding="utf-8")
    assert_fails_at(root, "data/schemas/tags.schema.json:1: WARNING: KB042 larger than 2 MiB")


def test_a_missing_schema_file_is_named_as_missing(root):
    (root / "data/schemas/tags.schema.json").unlink()
    assert_fails_at(
        root, "data/tags.yaml:1: WARNING: KB046 not read: its schema data/schemas/tags.schema.json is missing"
    )


def test_the_repository_itself_passes_the_tree_check():
    """The check refuses nothing of the repository's own inputs (the tiny
    project is a copy of them)."""
    from types import SimpleNamespace

    from kb.guard import untrusted

    app = SimpleNamespace(
        srcdir=ROOT / "docs",
        confdir=ROOT,
        config=SimpleNamespace(
            html_static_path=["_static"],
            templates_path=["_templates"],
            kb_data_dir="data",
            locale_dirs=[str(ROOT / "locale")],
        ),
    )
    untrusted.check_input_tree(app, app.config)  # raises BuildStopped on a refusal


def test_a_name_that_is_not_utf8_is_refused_not_a_traceback(root):
    """Git stores names as bytes: quoting one for a URL raised UnicodeEncodeError."""
    with open(os.fsencode(root / "docs/training") + b"/a\xff.md", "wb") as page:
        page.write("# 页面\n\n正文。\n".encode())
    assert_fails_at(root, "docs/training/a\\udcff.md:1: WARNING: KB018 the name holds a control")


def test_many_symlinks_are_listed_twenty_then_counted(root):
    for i in range(40):
        (root / f"docs/training/l{i:02d}.md").symlink_to("x.md")
    out = assert_fails_at(root, "docs/training/l20.md:1: WARNING: KB011 and 20 more files or folders")
    assert out.count("KB011") == 21, out[-3000:]


@pytest.mark.parametrize(
    "width",
    ['"10\\n::error file=conf.py,line=1::FORGED\\nconf.py:2: WARNING: KB000 forged"', '"10\\u001b[2J"'],
    ids=["newline", "escape"],
)
def test_what_sphinx_and_myst_quote_from_a_page_cannot_forge_a_line_of_the_log(root, width):
    with (root / "docs/training/x.md").open("a", encoding="utf-8") as page:
        page.write(f"\n```{{figure}} ../../_static/favicon.svg\n---\nwidth: {width}\n---\n图注\n```\n")
    out = assert_fails_at(root, "WARNING")
    lines = out.splitlines()  # GitHub's runner reads a command after leading spaces too
    assert not any(line.startswith("conf.py:2: WARNING: KB000") for line in lines), out[-3000:]
    assert not any(line.lstrip().startswith("::") for line in lines), out[-3000:]
    assert "\x1b[2J" not in out


@pytest.mark.parametrize("name", ["##[error]forged\nx.md", "tab\tx.md", "x\\", "a;pwned"])
def test_make_takes_a_file_whose_name_it_cannot_take_as_a_prerequisite_to_sphinx(tmp_path, name):
    """make html lists the site's files as prerequisites: a newline or a
    tab in a name ended it with "No rule to make target", before Sphinx
    could name the file (KB018)."""
    shutil.copy2(ROOT / "Makefile", tmp_path)
    for needed in ["requirements.txt", "package.json", "package-lock.json", "conf.py"]:
        (tmp_path / needed).write_text("", encoding="utf-8")
    (tmp_path / "docs/training").mkdir(parents=True)
    (tmp_path / "docs/training" / name).write_text("# x\n", encoding="utf-8")
    proc = subprocess.run(["make", "-n", "html"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert "No rule" not in proc.stderr and "sphinx-build -b html" in proc.stdout, proc.stderr
    # ';' in a prerequisite list started a recipe of its own: "pwned docs/… | committed-build"
    assert not any(line.startswith("pwned") for line in proc.stdout.splitlines()), proc.stdout


def test_the_picture_published_is_the_file_the_page_names(root):
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><title>{}</title></svg>\n'
    (root / "docs/training/pic.svg").write_text(svg.format("named"), encoding="utf-8")
    (root / "docs/training/pic.zh_CN.svg").write_text(svg.format("swapped"), encoding="utf-8")
    with (root / "docs/training/x.md").open("a", encoding="utf-8") as page:
        page.write("\n![示意图](pic.svg)\n")
    code, out = build(root)
    assert code == 0, out[-3000:]
    published = "".join(p.read_text(encoding="utf-8") for p in (root / "_build/html/_images").glob("*.svg"))
    assert "named" in published and "swapped" not in published


def _recipe(tmp_path: Path, target: str, starts: str) -> str:
    """The line of ``make -n target`` (the Makefile's, in ``tmp_path``) that starts with ``starts``."""
    shutil.copy2(ROOT / "Makefile", tmp_path)
    for needed in [
        "requirements.txt",
        "requirements-dev.txt",
        "package.json",
        "package-lock.json",
        "conf.py",
    ]:
        (tmp_path / needed).write_text("", encoding="utf-8")
    proc = subprocess.run(["make", "-n", target], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    lines = [line for line in proc.stdout.splitlines() if line.startswith(starts)]
    assert len(lines) == 1, proc.stdout + proc.stderr
    return lines[0]


def test_make_lint_hands_each_script_to_node_as_one_name(tmp_path):
    """The scripts' syntax check split find's output into words: a file
    named '…js --import=data:text/javascript,… .js' ran the contributor's
    code with CI's environment."""
    static = tmp_path / "_static"
    hostile = static / "kb.js --import=data:text"
    hostile.mkdir(parents=True)
    (static / "kb.js").write_text("export const ok = 1;\n", encoding="utf-8")
    (hostile / "javascript,console.log('PWNED',process.env.KB_TEST_SECRET) .js").write_text(
        "x\n", encoding="utf-8"
    )
    line = _recipe(tmp_path, "lint", ".venv/bin/python tools/check_scripts.py")
    assert line.endswith("tools/check_scripts.py _static"), line  # the folder, not the names
    (tmp_path / "tools").symlink_to(ROOT / "tools")
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    proc = subprocess.run(
        ["sh", "-c", line],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "KB_TEST_SECRET": "hunter2"},
    )
    assert "hunter2" not in proc.stdout + proc.stderr and "PWNED" not in proc.stdout, proc.stdout


def test_make_claims_gives_the_script_the_folder_not_the_page_names(tmp_path):
    (tmp_path / "docs/x").mkdir(parents=True)
    (tmp_path / "docs/x/a;touch PWNED;.md").write_text("# x\n", encoding="utf-8")
    line = _recipe(tmp_path, "claims", ".venv/bin/python tools/claims.py")
    assert line.endswith("tools/claims.py docs"), line


@pytest.mark.parametrize(("older", "newer"), [("x.dvi", "x.tex"), ("x", "x.c"), ("y", "y.sh")])
def test_make_runs_none_of_its_built_in_rules_on_a_contributor_s_files(tmp_path, older, newer):
    """Every site file is a prerequisite of the build: with make's built-in
    rules, a docs/x.tex newer than docs/x.dvi had make run tex on it (and
    TeX writes any file, conf.py too) before Sphinx started."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / older).write_text("", encoding="utf-8")
    os.utime(tmp_path / "docs" / older, (0, 0))
    (tmp_path / "docs" / newer).write_text("\\bye\n", encoding="utf-8")
    line = _recipe(tmp_path, "html", ".venv/bin/sphinx-build")
    proc = subprocess.run(["make", "-n", "html"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    before = proc.stdout.split(line, 1)[0]
    assert not any(w in before for w in ("tex docs", "cc ", "cat docs", "$(CC)")), before


@pytest.mark.parametrize("pattern", ["pic.*", "pi?.png"])
def test_an_image_named_by_a_pattern_is_refused_as_a_pattern(root, pattern):
    """Sphinx globs an image.* and picks a candidate by its first bytes; the
    book builder copies it under its own name into the LaTeX folder (x.toc,
    .latexmkrc), where TeX and latexmk read it. It was refused only because
    the check of the pattern's folder called a folder 'not a regular file'."""
    (root / "docs/training/pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    with (root / "docs/training/x.md").open("a", encoding="utf-8") as page:
        page.write(f"\n![示意图]({pattern})\n")
    assert_fails_at(root, f"WARNING: KB018 image {pattern!r} names a pattern")


@pytest.mark.parametrize(
    "where",
    ["docs/training/.draft.md", "docs/training/.fig.png", "_static/.x.css", "docs/.hidden/x.md"],
)
def test_a_hidden_name_is_refused_not_left_out_of_the_published_site(root, where):
    """The Pages upload leaves hidden files out and Sphinx skips a hidden
    static file: the page or file would be a 404 that nothing reported."""
    (root / where).parent.mkdir(parents=True, exist_ok=True)
    (root / where).write_text("# 草稿\n\n正文。\n", encoding="utf-8")
    assert_fails_at(root, f"{where}:1: WARNING: KB018 a name starting with '.' is hidden")


@pytest.mark.parametrize("where", ["docs/training/示意图.png", "_static/a b.css", "data/x;y.txt"])
def test_a_file_name_make_cannot_follow_is_refused(root, where):
    """make watches such a file only through its folder: an edit in place
    was not built (an incremental build must equal a full one)."""
    (root / where).write_bytes(b"x")
    assert_fails_at(root, f"{where}:1: WARNING: KB018 the name holds characters other than ASCII")


def test_pagefind_yml_that_is_a_symlink_or_a_device_is_refused(root):
    (root / "pagefind.yml").unlink(missing_ok=True)
    (root / "pagefind.yml").symlink_to("/dev/zero")
    out = assert_fails_at(root, "pagefind.yml:1: WARNING: KB011", timeout=120)
    assert "MemoryError" not in out


def test_a_docutils_conf_fifo_is_refused_not_waited_on(root):
    os.mkfifo(root / "docutils.conf")
    assert_fails_at(root, "docutils.conf:1: WARNING: KB018 is not a regular file", timeout=60)


def test_package_json_is_read_as_npm_reads_it_and_else_named(tmp_path):
    """The diagrams' digests name the mermaid version package.json pins: a
    byte order mark or a null section (which npm accepts) was a traceback;
    a section that is no mapping is KB112 at the file."""
    import json

    from small_site import build as build_with
    from small_site import make_small_site

    root = make_small_site(tmp_path / "kb")
    package = root / "package.json"
    pins = json.loads(package.read_text(encoding="utf-8"))
    package.write_text("\ufeff" + json.dumps({**pins, "devDependencies": None}), encoding="utf-8")
    code, log, _ = build_with(root, "html")
    assert code == 0 and "WARNING" not in log and "Traceback" not in log, log[-3000:]
    for section in ['["mermaid"]', "[" * 100_000 + "]" * 100_000]:  # not a mapping; nested past the parser
        package.write_text(
            json.dumps(pins)[:-1] + f', "optionalDependencies": 1, "devDependencies": {section}}}'
        )
        code, log, _ = build_with(root, "html")
        assert code != 0 and "Traceback" not in log, log[-3000:]
        assert "package.json:1: WARNING: KB112 package.json cannot be read" in log, log[-3000:]
