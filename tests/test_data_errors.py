"""Bad data files fail the build at their own path and line, never with a traceback.

The data files (data/*.yaml, data/front-matter.schema.json) come with pull
requests like the pages do. Each mistake below must end the build
(``-W``) with ``data/<file>:LINE: WARNING: KB04x …`` — the file's path
relative to the repository, the line of the offending entry — and never with
a Python traceback, nor at a line of the generated glossary page.

Most cases build a tiny project (two pages, a two-entry glossary) with the
repository's conf.py, extensions and data, so each takes about a second; a
few run ``make html`` on a copy of the repository.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from kb.search import pagefind as kb_pagefind
from one_build import register
from sphinx.cmd.build import build_main

ROOT = Path(__file__).resolve().parent.parent

# What a build reads besides docs/ (tools/synth_kb.py copies the same).
BUILD_INPUTS = ["conf.py", "_static", "_templates", "data", "tools", "pagefind.yml", "package.json"]

INDEX = """\
# 首页

```{toctree}
training/index
glossary
```
"""

GUIDE = """\
# 训练

```{toctree}
x
```
"""

GLOSSARY_PAGE = """\
---
title: 术语表
---

# 术语表

```{kb-glossary}
```
"""

ARTICLE = """\
---
title: 梯度累积
guide: training
tags: [memory]
summary: 用小显存模拟大 batch。
---

# 梯度累积

(x-intro)=
## 引言

{term}`梯度累积`让小显存也能用大 batch。
"""

GLOSSARY = """\
# tiny glossary
- id: gradient-accumulation
  zh: 梯度累积
  en: gradient accumulation
  def: 把多个小批次的梯度加在一起。
  see: [x-intro]
- id: mixed-precision
  zh: 混合精度
  def: 低精度训练。
"""

OLD_ANCHORS = "term-3: gradient-accumulation\n"


def tiny_project(root: Path) -> Path:
    """A two-page knowledge base built with the repository's conf.py, tools and data."""
    root.mkdir(parents=True, exist_ok=True)
    for name in BUILD_INPUTS:
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(
            src, root / name, **({"ignore": shutil.ignore_patterns("*.pyc.*")} if src.is_dir() else {})
        )
    (root / "node_modules").symlink_to(ROOT / "node_modules")
    pages = {
        "index.md": INDEX,
        "glossary.md": GLOSSARY_PAGE,
        "training/index.md": GUIDE,
        "training/x.md": ARTICLE,
    }
    for name, text in pages.items():
        (root / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / name).write_text(text, encoding="utf-8")
    (root / "data" / "glossary.yaml").write_text(GLOSSARY, encoding="utf-8")
    (root / "data" / "glossary-old-anchors.yaml").write_text(OLD_ANCHORS, encoding="utf-8")
    return root


def forked_build(args: list[str], root: Path, timeout: float) -> tuple[int, str]:
    """sphinx-build's entry point in a child of this process (os.fork): the
    imports and warm caches are this process's, so it costs what an
    in-process build does, and the timeout can still end it (SIGKILL) if it
    hangs. The child forgets the message catalogs earlier builds of this
    process loaded (sphinx.locale.translators, as sphinx.testing does), so
    it reads the project's own, as a fresh interpreter would, and its
    template watchdog is its own (kb.guard.templates.new_build_process)."""
    import select
    import signal
    import time

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 70
        try:
            os.close(read)
            os.dup2(write, 1)
            os.dup2(write, 2)
            sys.stdout = sys.stderr = open(  # noqa: SIM115 (the child ends with os._exit)
                write, "w", encoding="utf-8", errors="backslashreplace", buffering=1
            )
            os.chdir(root)
            import sphinx.locale
            from kb.guard import templates

            sphinx.locale.translators.clear()
            templates.new_build_process()
            code = build_main(args)
        except SystemExit as stop:  # BuildStopped
            code = stop.code if isinstance(stop.code, int) else 1
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
            os._exit(code)
    os.close(write)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise subprocess.TimeoutExpired(["sphinx-build", *args], timeout)
            chunk = os.read(read, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode("utf-8", "backslashreplace")


def build(root: Path, timeout: float | None = None, options: tuple[str, ...] = ()) -> tuple[int, str]:
    """Build like the Makefile does; (exit code, output).

    In this process, through sphinx-build's own entry point (no interpreter
    and imports to start for each case); with a timeout, in a forked child
    that the timeout ends (forked_build), so that a hang fails the test
    instead of stalling it.
    Returns once a search index left to run in the background has finished
    (a test that then removes _build would race with it)."""
    args = [
        "-b",
        "html",
        "-c",
        str(root),
        "-W",
        "-n",
        "--keep-going",
        *options,
        str(root / "docs"),
        str(root / "_build" / "html"),
    ]
    if timeout is not None:
        code, text = forked_build(args, root, timeout)
    else:
        out = io.StringIO()
        with contextlib.chdir(root), contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                code = build_main(args)
            except SystemExit as stop:  # BuildStopped: the interpreter would exit with its status
                code = stop.code
        text = out.getvalue()
    kb_pagefind.wait(root / "_build" / "html")
    return code, text


def assert_fails_at(root: Path, *messages: str, timeout: float | None = None) -> str:
    code, out = build(root, timeout)
    assert code != 0, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    for message in messages:
        assert message in out, out[-3000:]
    return out


@pytest.fixture
def tiny(tmp_path) -> Path:
    return tiny_project(tmp_path / "kb")


def test_the_tiny_project_builds_clean(tiny):
    code, out = build(tiny)
    assert code == 0 and "WARNING" not in out, out[-3000:]


def add_to_page(root: Path, text: str) -> int:
    """Append ``text`` to the tiny project's article after a blank line; the
    line its first line is on."""
    page = root / "docs/training/x.md"
    before = page.read_text(encoding="utf-8")
    page.write_text(before + "\n" + text, encoding="utf-8")
    return before.count("\n") + 2


def built_page(root: Path) -> str:
    """Build the tiny project, which must pass without a warning; the
    article's HTML."""
    code, out = build(root)
    assert code == 0 and "WARNING" not in out, out[-3000:]
    return (root / "_build/html/training/x.html").read_text(encoding="utf-8")


def write(root: Path, name: str, text: str | bytes) -> None:
    path = root / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))


# -- data/glossary.yaml --------------------------------------------------------------

GLOSSARY_CASES = {
    "invalid-yaml": (
        GLOSSARY.replace("  see: [x-intro]", "  see: [x-intro"),
        "data/glossary.yaml:7: WARNING: KB040 not valid YAML",
    ),
    "not-a-list": (
        "gradient-accumulation: 梯度累积\n",
        "data/glossary.yaml:1: WARNING: KB043 {'gradient-accumulation': '梯度累积'} is not of type 'array'",
    ),
    "no-def": (
        GLOSSARY.replace("  def: 低精度训练。\n", ""),
        "data/glossary.yaml:7: WARNING: KB043 at [1]: 'def' is a required property",
    ),
    "no-zh": (
        GLOSSARY.replace("  zh: 混合精度\n", ""),
        "data/glossary.yaml:7: WARNING: KB043 at [1]: 'zh' is a required property",
    ),
    "no-id": (
        GLOSSARY.replace("- id: mixed-precision\n  zh: 混合精度", "- zh: 混合精度"),
        "data/glossary.yaml:7: WARNING: KB043 at [1]: 'id' is a required property",
    ),
    "wrong-type": (
        GLOSSARY.replace("  def: 低精度训练。", "  def: 低精度训练。\n  aliases: AMP"),
        "data/glossary.yaml:10: WARNING: KB043 at [1].aliases: 'AMP' is not of type 'array'",
    ),
    "duplicate-id": (
        GLOSSARY.replace("id: mixed-precision", "id: gradient-accumulation"),
        "data/glossary.yaml:7: WARNING: KB044 id 'gradient-accumulation' is already "
        "used by the entry on line 2",
    ),
    "duplicate-name": (
        GLOSSARY + "  aliases: [Gradient Accumulation]\n",
        "data/glossary.yaml:7: WARNING: KB044 name 'Gradient Accumulation' is "
        "already a name of 'gradient-accumulation' (line 2)",
    ),
    "duplicate-key": (
        GLOSSARY.replace("  def: 低精度训练。", "  def: 低精度训练。\n  zh: 低精度"),
        "data/glossary.yaml:10: WARNING: KB041 key 'zh' is given twice (first on line 8)",
    ),
    "alias": (
        GLOSSARY.replace("  def: 低精度训练。", "  def: *d").replace("def: 把", "def: &d 把"),
        "data/glossary.yaml:5: WARNING: KB042 YAML anchors (&name) and aliases (*name) are not allowed",
    ),
    "not-utf-8": (
        GLOSSARY.replace("低精度训练", "\udcff").encode("utf-8", "surrogateescape"),
        "data/glossary.yaml:9: WARNING: KB040 not UTF-8 (byte 0xff)",
    ),
}


@pytest.mark.parametrize("case", sorted(GLOSSARY_CASES))
def test_a_bad_glossary_fails_at_its_line(tiny, case):
    text, message = GLOSSARY_CASES[case]
    write(tiny, "data/glossary.yaml", text)
    assert_fails_at(tiny, message)


def test_an_unknown_see_label_is_reported_at_the_glossary_entry(tiny):
    write(tiny, "data/glossary.yaml", GLOSSARY + "  see: [no-such-label]\n")
    out = assert_fails_at(
        tiny, f"{tiny}/data/glossary.yaml:7: WARNING: KB102 undefined label: 'no-such-label'"
    )
    assert "docs/glossary.md" not in out, out[-3000:]


def test_a_definition_with_a_broken_reference_is_reported_at_its_entry(tiny):
    write(tiny, "data/glossary.yaml", GLOSSARY.replace("低精度训练。", "见 {ref}`nowhere`。"))
    assert_fails_at(tiny, f"{tiny}/data/glossary.yaml:7: WARNING: KB102 undefined label: 'nowhere'")


# -- data/tags.yaml, data/guides.yaml ----------------------------------------------

TAGS = (ROOT / "data" / "tags.yaml").read_text(encoding="utf-8")
GUIDES = (ROOT / "data" / "guides.yaml").read_text(encoding="utf-8")


def _line(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


OTHER_CASES = {
    # review 18: a hexadecimal number is read without Python's digit limit, and
    # printing it in the schema's message ended in a traceback
    "tags-huge-hex-number": (
        "tags.yaml",
        TAGS.replace("gpu: GPU", "gpu: 0x" + "f" * 5000),
        f"data/tags.yaml:{_line(TAGS, 'gpu: GPU')}: WARNING: KB042 a number of 5002 characters",
    ),
    "synonyms-word-in-two-groups": (
        "search-synonyms.yaml",
        "- [空闲, 闲着]\n- [利用率, 占用率]\n- [闲置, 闲着]\n",
        "data/search-synonyms.yaml:3: WARNING: KB044 '闲着' is already in the group on line 1",
    ),
    "tags-invalid-yaml": (
        "tags.yaml",
        TAGS.replace("memory: 显存优化", "memory: [显存优化"),
        f"data/tags.yaml:{_line(TAGS, 'memory:') + 1}: WARNING: KB040 not valid YAML",
    ),
    "tags-not-a-mapping": (
        "tags.yaml",
        "- memory\n- gpu\n",
        "data/tags.yaml:1: WARNING: KB043 ['memory', 'gpu'] is not of type 'object'",
    ),
    "tags-duplicate": (
        "tags.yaml",
        TAGS.replace("gpu: GPU", "gpu: GPU\nmemory: 显存"),
        f"data/tags.yaml:{_line(TAGS, 'memory:') + 1}: WARNING: KB041 key 'memory' "
        f"is given twice (first on line {_line(TAGS, 'gpu: GPU') + 1})",
    ),
    "tags-not-a-name": (
        "tags.yaml",
        TAGS.replace("gpu: GPU", "gpu: [GPU]"),
        f"data/tags.yaml:{_line(TAGS, 'gpu: GPU')}: WARNING: KB043 at gpu: ['GPU'] is not of type 'string'",
    ),
    "guides-no-blurb": (
        "guides.yaml",
        GUIDES.replace("  blurb: 把大模型用便宜", "  summary: 把大模型用便宜"),
        f"data/guides.yaml:{_line(GUIDES, '- key: inference')}: WARNING: KB043 at [1]: "
        "'blurb' is a required property",
    ),
    "guides-duplicate-key": (
        "guides.yaml",
        GUIDES.replace("key: industry", "key: hardware"),
        f"data/guides.yaml:{_line(GUIDES, '- key: industry')}: WARNING: KB044 "
        f"guide key 'hardware' is already used on line {_line(GUIDES, '- key: hardware')}",
    ),
    "guides-not-a-list": (
        "guides.yaml",
        "training: 训练\n",
        "data/guides.yaml:1: WARNING: KB043 {'training': '训练'} is not of type 'array'",
    ),
    "schema-json-syntax": (
        "front-matter.schema.json",
        '{\n  "type": "object",\n  "properties": {,\n}\n',
        "data/front-matter.schema.json:3: WARNING: KB040 not valid JSON",
    ),
    "schema-not-a-schema": (
        "front-matter.schema.json",
        (ROOT / "data/front-matter.schema.json")
        .read_text(encoding="utf-8")
        .replace('"additionalProperties": false', '"additionalProperties": "no"'),
        "data/front-matter.schema.json:7: WARNING: KB046 not a valid JSON schema: "
        "at additionalProperties: 'no' is not of type 'object', 'boolean'",
    ),
    "schema-without-properties": (
        "front-matter.schema.json",
        '{"type": "object"}\n',
        "data/front-matter.schema.json:1: WARNING: KB046 the front-matter schema must describe an object",
    ),
    "old-anchor-no-entry": (
        "glossary-old-anchors.yaml",
        "term-3: gradient-accumulation\nterm-7: zero-3\n",
        "data/glossary-old-anchors.yaml:2: WARNING: KB043 term-7 points at 'zero-3', which is no entry id",
    ),
    "old-anchor-an-entry-own": (
        "glossary-old-anchors.yaml",
        "term-mixed-precision: gradient-accumulation\n",
        "data/glossary-old-anchors.yaml:1: WARNING: KB044 term-mixed-precision is the anchor of the entry "
        "'mixed-precision' itself",
    ),
    "old-anchor-not-an-anchor": (
        "glossary-old-anchors.yaml",
        "term-3: gradient-accumulation\n'x\" onclick=\"alert(1)': mixed-precision\n",
        "data/glossary-old-anchors.yaml:2: WARNING: KB043 'x\" onclick=\"alert(1)' is no anchor the glossary had",
    ),
    "old-anchor-a-number": (
        "glossary-old-anchors.yaml",
        "3: gradient-accumulation\n",
        "data/glossary-old-anchors.yaml:1: WARNING: KB043 '3' is no anchor the glossary had",
    ),
    "linkcheck-bad-regex": (
        "linkcheck-ignore.yaml",
        "- pattern: '^https://example\\.com/(a'\n  reason: r\n",
        "data/linkcheck-ignore.yaml:1: WARNING: KB045 pattern '^https://example\\\\.com/(a' "
        "is not a regular expression",
    ),
    # make linkcheck would backtrack for ever on a link that almost matches
    "linkcheck-slow-regex": (
        "linkcheck-ignore.yaml",
        "- pattern: '^https://example\\.com/(a|a)+$'\n  reason: r\n",
        "data/linkcheck-ignore.yaml:1: WARNING: KB045 pattern '^https://example\\\\.com/(a|a)+$' "
        "repeats a group",
    ),
    "linkcheck-invalid-yaml": (
        "linkcheck-ignore.yaml",
        "- pattern: [\n",
        "data/linkcheck-ignore.yaml:2: WARNING: KB040 not valid YAML",
    ),
    "linkcheck-no-reason": (
        "linkcheck-ignore.yaml",
        "- pattern: '^https://x/'\n",
        "data/linkcheck-ignore.yaml:1: WARNING: KB043 at [0]: 'reason' is a required property",
    ),
    # every pattern is tried on every link (and on every redirect's address)
    "linkcheck-too-many": (
        "linkcheck-ignore.yaml",
        "".join(f"- pattern: '^https://x{i}\\.example/'\n  reason: r\n" for i in range(51)),
        "data/linkcheck-ignore.yaml:1: WARNING: KB043",
    ),
}


@pytest.mark.parametrize("case", sorted(OTHER_CASES))
def test_a_bad_data_file_fails_at_its_line(tiny, case):
    name, text, message = OTHER_CASES[case]
    write(tiny, f"data/{name}", text)
    assert_fails_at(tiny, message)


# -- the loader on its own ------------------------------------------------------------


def test_load_yaml_raises_with_every_problem(tmp_path):
    from kb.core import data as kb_data

    path = tmp_path / "x.yaml"
    path.write_text("a: 1\nb: 2\na: 3\n", encoding="utf-8")
    with pytest.raises(kb_data.DataError) as err:
        kb_data.load_yaml(path)
    assert [(p.line, p.code) for p in err.value.problems] == [(3, "KB041")]


def test_a_schema_checked_once_is_still_reported_in_each_file_that_holds_it(tmp_path):
    """A schema's check is kept by its text (each test's copy of the project
    holds the same schemas): the same mistake in two files is reported at
    each file, and an edited file is checked again."""
    from kb.core import data as kb_data

    bad = '{\n  "type": "object",\n  "properties": {"a": {"type": 5}}\n}\n'
    paths = [tmp_path / "one.json", tmp_path / "two.json"]
    for path in paths:
        path.write_text(bad, encoding="utf-8")
    for path in paths:
        problems = kb_data.schema_file(path).problems
        assert [(p.path, p.line, p.code) for p in problems] == [(path.resolve(), 3, "KB046")]
    paths[1].write_text(bad.replace('"type": 5', '"type": "string"'), encoding="utf-8")
    os.utime(paths[1], ns=(1, 1))  # another stamp, whatever the clock's resolution
    loaded = kb_data.schema_file(paths[1])
    assert loaded.problems == [] and loaded.data["properties"]["a"] == {"type": "string"}


@pytest.mark.parametrize(
    "number", ["0x" + "f" * 5000, "0b" + "1" * 40, "-" + "9" * 40, "0" + "7" * 40, "1_000" * 10]
)
def test_a_number_too_long_to_print_is_refused(number):
    from kb.core import data as kb_data

    with pytest.raises(kb_data.YamlProblem) as err:
        kb_data.parse_yaml(f"a: 1\nb: [x, {number}]\n")
    assert (err.value.kind, err.value.line) == ("unsafe", 2)
    assert kb_data.parse_yaml(f"a: '{number}'\n")[1] == {"a": number}  # quoted, it is text


@pytest.mark.parametrize("number", [".inf", "-.Inf", ".nan", "1.0e+999", "-1.0e+400"])
def test_a_number_that_is_not_finite_is_refused(number):
    """review 19: gpus.yaml's value .inf passed both schemas and ended in an
    OverflowError where the calculators format it."""
    from kb.core import data as kb_data

    with pytest.raises(kb_data.YamlProblem) as err:
        kb_data.parse_yaml(f"a: 1.5\nb: {{value: {number}}}\n")
    assert (err.value.kind, err.value.line) == ("unsafe", 2)
    assert kb_data.parse_yaml("a: [1.5, 1.0e+300, -0.0]\n")[1] == {"a": [1.5, 1e300, -0.0]}


def test_an_alias_bomb_is_refused_before_it_expands():
    from kb.core import data as kb_data

    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"{chr(97 + i)}: &{chr(97 + i)} [{','.join([f'*{chr(96 + i)}'] * 9)}]" for i in range(1, 10)]
    with pytest.raises(kb_data.YamlProblem) as err:
        kb_data.parse_yaml("\n".join(lines))
    assert (err.value.kind, err.value.line) == ("unsafe", 1)


# A pull request that loosens a schema (data/schemas/X set to {}) and gives a
# shape the code never expected: KB043 at the data, from the schema the code
# was written for (kb.core.data.FLOOR_DIR), not a traceback (review 18).
LOOSENED = {
    "glossary-aliases-a-number": (
        "glossary.yaml",
        GLOSSARY.replace("  en: gradient accumulation\n", "  en: gradient accumulation\n  aliases: 7\n"),
        "data/glossary.yaml:5: WARNING: KB043 at [0].aliases: 7 is not of type 'array'",
    ),
    "tags-a-list": (
        "tags.yaml",
        TAGS.replace("cost: 成本", "cost: [1, 2]"),
        f"data/tags.yaml:{_line(TAGS, 'cost: 成本')}: WARNING: KB043 at cost: [1, 2] is not of type 'string'",
    ),
    "guides-without-title": (
        "guides.yaml",
        "- key: training\n",
        "data/guides.yaml:1: WARNING: KB043 at [0]: 'title' is a required property",
    ),
    "gpus-a-number": (
        "gpus.yaml",
        "gpus: 5\n",
        "data/gpus.yaml:1: WARNING: KB043",
    ),
}


@pytest.mark.parametrize("case", sorted(LOOSENED))
def test_a_loosened_schema_still_gets_the_shape_the_code_needs(tiny, case):
    name, text, message = LOOSENED[case]
    write(tiny, f"data/schemas/{name.replace('.yaml', '.schema.json')}", "{}")
    write(tiny, f"data/{name}", text)
    out = assert_fails_at(tiny, message)
    assert "the build needs this shape" in out, out[-3000:]


def _synonyms(tmp_path, text: str):
    """data/search-synonyms.yaml as the build reads it, beside the tiny glossary."""
    from kb.core import data as kb_data

    folder = tmp_path / "data"
    shutil.copytree(ROOT / "data" / "schemas", folder / "schemas")
    (folder / "glossary.yaml").write_text(GLOSSARY, encoding="utf-8")
    (folder / "search-synonyms.yaml").write_text(text, encoding="utf-8")
    return kb_data.search_synonyms(folder)


def test_search_synonyms_keep_the_good_groups_and_name_the_bad_ones(tmp_path):
    loaded = _synonyms(
        tmp_path,
        "- [空闲, 闲着]\n"
        "- [显存, Gradient Accumulation]\n"  # a reader's word that is a glossary name
        "- [孤零零]\n"  # a group of one word
        "- [利用率, 占用率]\n"
        "- [闲置, 闲着]\n"  # a word already in a group
        "- [数据中心化, 数据中]\n"  # a reader's word inside the pages' word
        "- [GPU Cluster, gpu]\n",  # the same, in Latin words
    )
    assert loaded.data == [["空闲", "闲着"], ["利用率", "占用率"]]
    problems = sorted((p.line, p.code, p.message) for p in loaded.problems)
    assert [(line, code) for line, code, _ in problems] == [
        (2, "KB044"),
        (3, "KB043"),
        (5, "KB044"),
        (6, "KB044"),
        (7, "KB044"),
    ]
    assert "'数据中' is part of the pages' word '数据中心化'" in problems[3][2]
    assert "'Gradient Accumulation' is a name of the glossary entry 'gradient-accumulation'" in problems[0][2]
    assert "'闲着' is already in the group on line 1" in problems[2][2]


def test_search_synonyms_may_lead_to_a_glossary_name_and_may_be_absent(tmp_path):
    # the pages' word (first) may be a glossary name; the file is optional
    assert _synonyms(tmp_path, "- [梯度累积, 攒梯度]\n").data == [["梯度累积", "攒梯度"]]
    from kb.core import data as kb_data

    (tmp_path / "data" / "search-synonyms.yaml").unlink()
    assert kb_data.search_synonyms(tmp_path / "data").data == []


def test_the_search_page_gets_the_synonym_groups_without_a_definition(tmp_path):
    from kb.search.index import load_synonyms

    _synonyms(tmp_path, "- [空闲, 闲着]\n")
    assert load_synonyms(tmp_path / "data") == [{"names": ["空闲", "闲着"], "synonym": True}]


# -- through make html, as CI runs it --------------------------------------------------


# Both share the build of the group "pages" of tests/one_build.py with the
# bad-input matrix (each changes a data file no other case of it changes).


def _see_label(repo, at) -> int:
    glossary = repo / "data/glossary.yaml"
    text = glossary.read_text(encoding="utf-8")
    glossary.write_text(text.replace("see: [tips10-zero]", "see: [tips10-zeroo]", 1), encoding="utf-8")
    return _line(text, "- id: zero\n")


def _linkcheck_ignore(repo, at) -> None:
    (repo / "data/linkcheck-ignore.yaml").write_text(
        "- pattern: '(unclosed'\n  reason: x\n- [\n", encoding="utf-8"
    )


register("pages", "data-errors", {"see-label": _see_label, "linkcheck-ignore": _linkcheck_ignore})


def test_make_html_reports_a_bad_glossary_see_label_at_the_yaml(one_build):
    r = one_build("pages")["data-errors/see-label"]
    out = r.out
    assert r.run.proc.returncode != 0, out[-3000:]
    assert f"data/glossary.yaml:{r.value}: WARNING: KB102 undefined label: 'tips10-zeroo'" in out, out[-3000:]
    assert "Traceback" not in out, out[-3000:]


def test_make_html_reports_a_broken_linkcheck_ignore_file_without_traceback(one_build):
    r = one_build("pages")["data-errors/linkcheck-ignore"]
    out = r.out
    assert r.run.proc.returncode != 0, out[-3000:]
    assert "data/linkcheck-ignore.yaml:4: WARNING: KB040 not valid YAML" in out, out[-3000:]
    assert "Traceback" not in out and "configuration file" not in out, out[-3000:]


def test_a_copied_data_file_is_checked_once_and_each_copy_gets_its_own_problems(tmp_path):
    """kb.core.data validates a text once per process (the tests build many
    copies of the repository): a copy's problems still name the copy, and a
    changed text is checked again."""
    from kb.core import data as kb_data

    bad = GLOSSARY.replace("  def: 低精度训练。\n", "")
    copies = [tmp_path / name / "glossary.yaml" for name in ("a", "b")]
    for path in copies:
        path.parent.mkdir()
        path.write_text(bad, encoding="utf-8")
    schema = kb_data.schema_path(ROOT / "data", "glossary.schema.json")
    first, second = (kb_data.read_yaml(path, schema) for path in copies)
    for path, loaded in zip(copies, (first, second)):
        assert [(p.location(), p.code) for p in loaded.problems] == [(f"{path.resolve()}:7", "KB043")]
        assert loaded.problems[0].message.startswith("at [1]: 'def' is a required property")
    assert second.data is first.data  # parsed and validated once
    copies[1].write_text(GLOSSARY + "  aliases: AMP\n", encoding="utf-8")
    again = kb_data.read_yaml(copies[1], schema)
    assert [(p.location(), p.code) for p in again.problems] == [(f"{copies[1].resolve()}:10", "KB043")]
    assert again.problems[0].message.startswith("at [1].aliases: 'AMP' is not of type 'array'")
