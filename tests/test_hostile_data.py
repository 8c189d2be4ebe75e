"""Hostile data and schema files: nothing from outside the repository reaches
the log or the site, no page is written outside the output folder, the build
never hangs and never ends with a traceback.

The schema files (data/front-matter.schema.json, data/schemas/*.json) and
the data files come with pull requests like the pages do. Each case builds
the tiny project of tests/test_data_errors.py in this process (kb reads the
schemas of the project it builds, its kb_data_dir); a hang ends the test
process after TIMEOUT seconds (pytest-timeout), a failure, not a stall.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from ext_helpers import myst_env
from kb.core import data as kb_data
from test_data_errors import (
    ARTICLE,
    GLOSSARY,
    ROOT,
    add_to_page,
    assert_fails_at,
    build,
    built_page,
    tiny_project,
    write,
)

TIMEOUT = 120
pytestmark = pytest.mark.timeout(TIMEOUT, method="thread")
SECRET = "TOPSECRET-7f3a"


@pytest.fixture
def tiny(tmp_path) -> Path:
    return tiny_project(tmp_path / "kb")


def _line(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def _schema(root: Path, name: str) -> dict:
    return json.loads((root / name).read_text(encoding="utf-8"))


def _write_json(root: Path, name: str, schema: dict) -> str:
    text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
    write(root, name, text)
    return text


@pytest.fixture
def no_floor(monkeypatch):
    """No schema at all says what the data looks like: neither data/schemas/
    (loosened by the test) nor the copy the code was written for
    (kb.core.data.floor_schema), so that the code's own check is what refuses."""
    from kb.core import data as kb_data

    monkeypatch.setattr(kb_data, "floor_schema", lambda name: None)
    monkeypatch.setattr(kb_data, "_CHECKED", {})


def _fails(root: Path, *messages: str) -> str:
    out = assert_fails_at(root, *messages)
    assert SECRET not in out, out[-3000:]
    return out


# -- 1. $ref: no file, no URL ----------------------------------------------------------


@pytest.fixture
def leak(tmp_path) -> Path:
    """A file outside the project, with a secret in it."""
    path = tmp_path / "outside" / "leak.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"const": SECRET}), encoding="utf-8")
    return path


def test_a_front_matter_schema_ref_to_a_local_file_is_refused(tiny, leak):
    schema = _schema(tiny, "data/front-matter.schema.json")
    schema["properties"]["title"] = {"$ref": leak.as_uri()}
    text = _write_json(tiny, "data/front-matter.schema.json", schema)
    _fails(
        tiny,
        f"data/front-matter.schema.json:{_line(text, '$ref')}: WARNING: KB046 $ref "
        f"'{leak.as_uri()}' points outside this schema file",
    )


def test_a_data_schema_ref_to_etc_passwd_is_refused(tiny):
    schema = _schema(tiny, "data/schemas/glossary.schema.json")
    schema["items"]["properties"]["zh"] = {"$ref": "file:///etc/passwd"}
    text = _write_json(tiny, "data/schemas/glossary.schema.json", schema)
    out = _fails(
        tiny,
        f"data/schemas/glossary.schema.json:{_line(text, 'file:///etc/passwd')}: WARNING: KB046 "
        "$ref 'file:///etc/passwd' points outside this schema file",
    )
    assert "root:" not in out and "Unresolvable" not in out, out[-3000:]
    # said once, at the schema; the file it checks is left unread, and says why
    assert out.count("glossary.schema.json:") == 1, out[-3000:]
    assert (
        "data/glossary.yaml:1: WARNING: KB046 not read: its schema data/schemas/glossary.schema.json" in out
    )


def test_a_schema_ref_to_a_url_is_never_fetched(tiny):
    requests = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            requests.append(self.path)
            body = json.dumps({"const": SECRET}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/leak.json"
        schema = _schema(tiny, "data/schemas/tags.schema.json")
        schema["additionalProperties"] = {"$ref": url}
        text = _write_json(tiny, "data/schemas/tags.schema.json", schema)
        _fails(tiny, f"data/schemas/tags.schema.json:{_line(text, url)}: WARNING: KB046 $ref '{url}'")
    finally:
        server.shutdown()
    assert requests == []


def test_an_inner_id_that_would_move_a_local_ref_is_refused(tiny, leak):
    # "#" resolves against the nearest $id: a file:// $id makes it a file read
    schema = _schema(tiny, "data/front-matter.schema.json")
    schema["properties"]["title"] = {"$id": leak.as_uri(), "$ref": "#"}
    text = _write_json(tiny, "data/front-matter.schema.json", schema)
    _fails(tiny, f"data/front-matter.schema.json:{_line(text, leak.as_uri())}: WARNING: KB046 $id")


def test_a_local_ref_to_nothing_is_reported_at_its_line(tiny):
    schema = _schema(tiny, "data/schemas/glossary.schema.json")
    schema["items"]["properties"]["zh"] = {"$ref": "#/$defs/nowhere"}
    text = _write_json(tiny, "data/schemas/glossary.schema.json", schema)
    _fails(
        tiny,
        f"data/schemas/glossary.schema.json:{_line(text, '#/$defs/nowhere')}: WARNING: KB046 "
        "$ref '#/$defs/nowhere' points at nothing",
    )


def test_every_schema_of_the_repository_is_accepted():
    for path in [ROOT / "data/front-matter.schema.json", *sorted((ROOT / "data/schemas").glob("*.json"))]:
        assert kb_data.schema_file(path).problems == [], path


# -- 2. slugs: tag keys, guide keys, glossary ids --------------------------------------


def test_a_tag_that_climbs_out_of_the_output_folder_is_refused(tiny, tmp_path, no_floor):
    schema = _schema(tiny, "data/schemas/tags.schema.json")
    del schema["propertyNames"]  # the schema no longer says what a tag looks like
    _write_json(tiny, "data/schemas/tags.schema.json", schema)
    tags = (tiny / "data/tags.yaml").read_text(encoding="utf-8")
    tags += '"../../../../pwned": 越界\n"../index": 首页\n'
    write(tiny, "data/tags.yaml", tags)
    article = (tiny / "docs/training/x.md").read_text(encoding="utf-8")
    write(
        tiny,
        "docs/training/x.md",
        article.replace("tags: [memory]", 'tags: [memory, "../../../../pwned", "../index"]'),
    )
    out = _fails(
        tiny,
        f"data/tags.yaml:{_line(tags, '../../../../pwned')}: WARNING: KB043 tag '../../../../pwned' "
        "is not a usable tag name",
        f"data/tags.yaml:{_line(tags, '../index')}: WARNING: KB043 tag '../index'",
        "training/x.md:4: WARNING: KB004 tags '../../../../pwned' is not a usable name",
    )
    assert not list(tmp_path.rglob("pwned*")), out[-3000:]
    home = (tiny / "_build/html/index.html").read_text(encoding="utf-8")
    assert "首页" in home and "越界" not in home


def test_the_red_team_tag_pattern_is_refused(tiny):
    schema = _schema(tiny, "data/schemas/tags.schema.json")
    schema["propertyNames"] = {"pattern": ".*"}
    text = _write_json(tiny, "data/schemas/tags.schema.json", schema)
    _fails(tiny, f"data/schemas/tags.schema.json:{_line(text, '.*')}: WARNING: KB047 pattern '.*'")


def test_a_guide_key_that_is_a_path_is_refused(tiny, no_floor):
    schema = _schema(tiny, "data/schemas/guides.schema.json")
    schema["items"]["properties"]["key"] = {"type": "string"}
    _write_json(tiny, "data/schemas/guides.schema.json", schema)
    guides = (tiny / "data/guides.yaml").read_text(
        encoding="utf-8"
    ) + "- key: ../evil\n  title: 越界\n  blurb: x\n"
    write(tiny, "data/guides.yaml", guides)
    _fails(
        tiny, f"data/guides.yaml:{_line(guides, '../evil')}: WARNING: KB043 guide key '../evil' is not usable"
    )


def test_a_glossary_id_that_is_a_path_is_refused(tiny, no_floor):
    schema = _schema(tiny, "data/schemas/glossary.schema.json")
    schema["items"]["properties"]["id"] = {"type": "string"}
    _write_json(tiny, "data/schemas/glossary.schema.json", schema)
    glossary = GLOSSARY.replace("id: mixed-precision", 'id: "../x"')
    write(tiny, "data/glossary.yaml", glossary)
    _fails(tiny, f"data/glossary.yaml:{_line(glossary, '../x')}: WARNING: KB043 id '../x' is not usable")


# -- 3. a hostile pattern never hangs the build ----------------------------------------


def test_a_backtracking_pattern_is_refused_before_it_runs(tiny):
    schema = _schema(tiny, "data/front-matter.schema.json")
    schema["properties"]["summary"]["pattern"] = "^(a|a)+$"
    text = _write_json(tiny, "data/front-matter.schema.json", schema)
    article = (tiny / "docs/training/x.md").read_text(encoding="utf-8")
    write(
        tiny,
        "docs/training/x.md",
        article.replace("summary: 用小显存模拟大 batch。", "summary: " + "a" * 40 + "!"),
    )
    _fails(
        tiny,
        f"data/front-matter.schema.json:{_line(text, '^(a|a)+$')}: WARNING: KB047 pattern '^(a|a)+$'",
    )


def test_a_pattern_property_is_checked_too(tiny):
    schema = _schema(tiny, "data/schemas/tags.schema.json")
    schema["patternProperties"] = {"^(a+)+$": {"type": "string"}}
    text = _write_json(tiny, "data/schemas/tags.schema.json", schema)
    _fails(tiny, f"data/schemas/tags.schema.json:{_line(text, '^(a+)+$')}: WARNING: KB047 pattern '^(a+)+$'")


# -- 4. glossary definitions ------------------------------------------------------------


def test_a_nul_in_a_definition_link_is_a_warning(tiny):
    glossary = GLOSSARY.replace("低精度训练。", '"低精度 [x](a%00b) 训练。"')
    write(tiny, "data/glossary.yaml", glossary)
    _fails(tiny, f"data/glossary.yaml:{_line(glossary, '%00')}: WARNING: KB012 NUL character (or %00) in def")


def test_a_definition_nested_too_deep_is_a_warning(tiny):
    deep = "> " * 30 + "DEEPTEXT"
    glossary = GLOSSARY.replace("低精度训练。", json.dumps(f"低精度训练。\n\n{deep}\n\nAFTERDEEP"))
    write(tiny, "data/glossary.yaml", glossary)
    _fails(
        tiny,
        f"{tiny}/data/glossary.yaml:{_line(glossary, '- id: mixed-precision')}: WARNING: KB053 lists or quotes nested too deep",
    )


def test_a_definition_with_a_long_run_of_whitespace_lines_is_a_warning(tiny):
    """Highlighting such a run takes time with the square of its length (KB094)."""
    code = "```python\n" + "    \n" * 1_000 + "```"
    glossary = GLOSSARY.replace("低精度训练。", json.dumps(f"低精度训练。\n\n{code}\n"))
    write(tiny, "data/glossary.yaml", glossary)
    _fails(
        tiny,
        f"{tiny}/data/glossary.yaml:{_line(glossary, '- id: mixed-precision')}: WARNING: KB094 more than 500 lines",
    )


@pytest.mark.parametrize(
    "directive, body",
    [
        ("include", "part.md"),
        ("literalinclude", "part.md"),
        # a csv-table's :file:, and rST's file readers
        ("csv-table", "\n:file: part.md"),
        ("eval-rst", "\n.. literalinclude:: part.md"),
        ("eval-rst", "\n.. include:: part.md\n   :literal:"),
    ],
)
def test_a_definition_cannot_include_a_file(tiny, directive, body):
    write(tiny, "docs/part.md", "INCLUDED\n")
    glossary = GLOSSARY.replace(
        "低精度训练。", json.dumps(f"低精度训练。\n\n```{{{directive}}} {body}\n```\n")
    )
    write(tiny, "data/glossary.yaml", glossary)
    out = _fails(
        tiny,
        f"{tiny}/data/glossary.yaml:{_line(glossary, '- id: mixed-precision')}: WARNING: KB048 {{{directive}}}",
    )
    assert "INCLUDED" not in (tiny / "_build/html/glossary.html").read_text(encoding="utf-8"), out[-3000:]


def test_the_tiny_project_still_builds_clean(tiny):
    code, out = build(tiny)
    assert code == 0 and "WARNING" not in out, out[-3000:]


def test_a_schema_nested_too_deep_is_refused_without_a_traceback(tiny):
    # a key over 1,024 characters is no YAML for PyYAML: the line finder gives
    # up, and the depth must still be capped before jsonschema recurses into it
    schema = _schema(tiny, "data/front-matter.schema.json")
    schema["x" * 1100] = 1
    text = json.dumps(schema, ensure_ascii=False)
    n = 900
    text = text[:-1] + ', "$defs": {"deep": ' + '{"items": ' * n + "{}" + "}" * n + "}}"
    write(tiny, "data/front-matter.schema.json", text)
    _fails(tiny, "data/front-matter.schema.json:1: WARNING: KB042 JSON nested more than 32 levels deep")


def test_fixing_a_tag_schema_rereads_the_pages(tiny):
    # incremental build = full build: a tag that the broken schema left
    # unchecked is reported once the schema is fixed, without a clean build
    good = (tiny / "data/schemas/tags.schema.json").read_text(encoding="utf-8")
    schema = json.loads(good)
    schema["additionalProperties"] = {"$ref": "file:///etc/hostname"}
    _write_json(tiny, "data/schemas/tags.schema.json", schema)
    article = (tiny / "docs/training/x.md").read_text(encoding="utf-8")
    write(tiny, "docs/training/x.md", article.replace("tags: [memory]", "tags: [memory, no-such-tag]"))
    first = _fails(tiny, "data/schemas/tags.schema.json")
    assert "no-such-tag" not in first, first[-3000:]
    write(tiny, "data/schemas/tags.schema.json", good)
    _fails(tiny, "training/x.md:4: WARNING: KB004 unknown tag 'no-such-tag'")


def test_a_data_file_that_is_a_folder_is_a_warning_not_a_traceback(tmp_path):
    root = tiny_project(tmp_path / "kb")
    (root / "data/tags.yaml").unlink()
    (root / "data/tags.yaml").mkdir()
    assert_fails_at(root, "data/tags.yaml:1: WARNING: KB040 cannot read the file")


# pagefind.yml: Pagefind runs after the build with its rights, and obeys any
# of its settings (serve: a server that never ends the build; logfile: a file
# written anywhere; write_playground: a page of its own on the site)
@pytest.mark.parametrize(
    "name, text, message",
    [
        ("pagefind.yml", "keep_index_url: true\nserve: true\n", "pagefind.yml:2: WARNING: KB092"),
        ("pagefind.yml", "logfile: /tmp/pagefind.log\n", "pagefind.yml:1: WARNING: KB092"),
        (
            "pagefind.yml",
            "exclude_selectors:\n  - .headerlink\n  - main\n",
            "pagefind.yml:3: WARNING: KB092 pagefind.yml: exclude_selectors entry 'main'",
        ),
        ("pagefind.toml", "write_playground = true\n", "pagefind.toml:1: WARNING: KB092"),
        ("pagefind.yml", 'exclude_selectors:\n  - {".headerlink": 1}\n', "pagefind.yml:2: WARNING: KB092"),
    ],
)
def test_pagefind_is_given_only_the_sites_settings(tiny, name, text, message):
    (tiny / name).write_text(text, encoding="utf-8")
    assert_fails_at(tiny, message)
    assert not (tiny / "_build/html/pagefind/playground").exists()


# docutils.conf beside conf.py: docutils obeys it for every page. In German
# the csv-table is csv-tabelle, which the confined directives do not cover.
def test_a_docutils_conf_is_refused_before_a_page_is_read(tiny):
    (tiny / "docutils.conf").write_text("[general]\nlanguage_code: de\nreport_level: 5\n", encoding="utf-8")
    page = tiny / "docs/training/x.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\n```{csv-tabelle} Leak\n:file: /etc/passwd\n:delim: :\n```\n",
        encoding="utf-8",
    )
    out = assert_fails_at(tiny, "docutils.conf:1: WARNING: KB096")
    assert "Traceback" not in out
    assert not any("root:" in p.read_text(encoding="utf-8") for p in (tiny / "_build").rglob("*.html"))


# another user of the machine made the lock files' folder first (a shared /tmp)
def test_a_lock_folder_others_can_enter_is_a_warning_not_a_traceback(tiny, tmp_path):
    folder = tmp_path / "tmp" / f"kb-pagefind-{os.getuid()}"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    args = [
        "-b",
        "html",
        "-c",
        str(tiny),
        "-W",
        "-n",
        "--keep-going",
        str(tiny / "docs"),
        str(tiny / "_build/html"),
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", *args],
        cwd=tiny,
        env={**os.environ, "TMPDIR": str(tmp_path / "tmp")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "Traceback" not in out, out[-3000:]
    assert f"the search index was not built: {folder} is not a private folder of this user" in out


# files that hold themselves: each level is parsed dozens of calls deeper
@pytest.mark.parametrize(
    ("name", "text", "directive", "message"),
    [
        (
            "self.txt",
            "x\n\n```{include} self.txt\n```\n",
            "```{include} self.txt\n```",
            "KB063 includes nested too deep",
        ),
        (
            "self.csv",
            'x,"```{csv-table}\n:file: self.csv\n```"\n',
            "```{csv-table} 表\n:file: self.csv\n```",
            # a cell may hold no csv-table (nor any directive that reads a file)
            "KB011 a cell of this csv-table holds {csv-table}",
        ),
    ],
    ids=["include", "csv-table"],
)
def test_a_file_that_holds_itself_is_refused_not_a_traceback(tiny, name, text, directive, message):
    write(tiny, f"docs/training/{name}", text)
    page = tiny / "docs/training/x.md"
    page.write_text(page.read_text(encoding="utf-8") + f"\n{directive}\n", encoding="utf-8")
    out = assert_fails_at(tiny, f"WARNING: {message}")
    assert "Traceback" not in out


# Trojan Source from files that are not pages: shown in one order, copied in another
def test_a_bidi_character_in_a_literalinclude_fails_at_the_directive(tiny):
    write(tiny, "docs/training/trojan.sh", 'echo "safe \u202e; rm -rf ~ #\u2066"\n')
    page = tiny / "docs/training/x.md"
    text = page.read_text(encoding="utf-8")
    line = text.count("\n") + 2
    page.write_text(text + "\n```{literalinclude} trojan.sh\n```\n", encoding="utf-8")
    out = assert_fails_at(
        tiny, f"training/x.md:{line}: WARNING: KB095 bidirectional control character U+202E"
    )
    assert "Traceback" not in out


def test_a_bidi_character_in_the_front_matter_is_reported_and_not_published(tiny):
    page = tiny / "docs/training/x.md"
    text = page.read_text(encoding="utf-8")
    assert "\nsummary: " in text
    page.write_text(text.replace("\nsummary: ", "\nsummary: 看似\u202e无害", 1), encoding="utf-8")
    assert_fails_at(tiny, "WARNING: KB095 bidirectional control character U+202E")
    assert not any("\u202e" in p.read_text(encoding="utf-8") for p in (tiny / "_build/html").rglob("*.html"))


def test_a_bidi_character_in_an_attribute_from_another_file_is_reported(tiny):
    write(tiny, "docs/training/t.csv", "![al\u202et](../_static/x.png),b\n")
    page = tiny / "docs/training/x.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\n```{csv-table} 表\n:file: t.csv\n```\n", encoding="utf-8"
    )
    assert_fails_at(tiny, "WARNING: KB095 bidirectional control character U+202E in alt=")
    assert not any("\u202e" in p.read_text(encoding="utf-8") for p in (tiny / "_build/html").rglob("*.html"))


@pytest.mark.parametrize(
    ("file", "old", "new"),
    [
        ("data/tags.yaml", "memory: 显存优化", 'memory: "显\\u202E存优化"'),
        ("docs/training/x.md", "summary: 用小显存", 'summary: "用\\u202E小显存'),
    ],
    ids=["data-file", "front-matter"],
)
def test_a_bidi_character_written_as_a_yaml_escape_fails_at_its_line(tiny, file, old, new):
    path = tiny / file
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    line = text[: text.index(old)].count("\n") + 1
    changed = text.replace(old, new, 1)
    if file.endswith(".md"):
        changed = changed.replace("用\\u202E小显存模拟大 batch。", '用\\u202E小显存模拟大 batch。"', 1)
    path.write_text(changed, encoding="utf-8")
    out = assert_fails_at(
        tiny, f"{file.removeprefix('docs/')}:{line}: WARNING: KB095 bidirectional control character U+202E"
    )
    assert "\u202e" not in "".join(
        p.read_text(encoding="utf-8") for p in (tiny / "_build/html").rglob("*.html")
    )
    assert "Traceback" not in out


def test_a_bidi_character_in_a_data_file_fails_at_its_line(tiny):
    glossary = tiny / "data/glossary.yaml"
    text = glossary.read_text(encoding="utf-8")
    line = text.count("\n") + 1
    glossary.write_text(text + "- id: trojan\n  zh: 木马\n  def: 看似 \u202e 无害\n", encoding="utf-8")
    assert_fails_at(
        tiny, f"data/glossary.yaml:{line + 2}: WARNING: KB095 bidirectional control character U+202E"
    )


def test_an_invisible_character_fails_at_its_line_wherever_it_comes_from(tiny):
    """Characters that show nothing (Unicode's tag characters, the zero-width
    space, the word joiner) hide text from readers that the search index and
    llms-full.txt keep: KB095 at their line, in a page, a file it includes
    and a data file, and none is published."""
    write(tiny, "docs/training/part.txt", "pip install torch\u2060 --index-url x\n")
    page = tiny / "docs/training/x.md"
    text = page.read_text(encoding="utf-8")
    line = text.count("\n") + 2
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "ignore")
    # and emoji with their joiners and selectors, which stay; a run of them does not
    page.write_text(
        text + f"\n证{hidden} 可见。\n\n```{{literalinclude}} part.txt\n```\n\n"
        "👨\u200d💻 ❤\ufe0f 1\ufe0f\u20e3 🏳\ufe0f\u200d🌈 👩🏽\u200d🔬 ☺\ufe0e\n\n看\u200d\u200d似\ufe0e\ufe0f正常\n",
        encoding="utf-8",
    )
    glossary = tiny / "data/glossary.yaml"
    entries = glossary.read_text(encoding="utf-8")
    glossary.write_text(entries + "- id: hidden\n  zh: 隐藏\n  def: 看似\u200b无害\n", encoding="utf-8")
    out = assert_fails_at(
        tiny,
        f"training/x.md:{line}: WARNING: KB095 invisible character U+E0069",
        f"training/x.md:{line + 2}: WARNING: KB095 invisible character U+2060 in text that is not the page's own",
        f"data/glossary.yaml:{entries.count(chr(10)) + 3}: WARNING: KB095 invisible character U+200B",
        f"training/x.md:{line + 7}: WARNING: KB095 zero-width joiner or presentation selector U+200D where "
        "no emoji needs it",
        f"training/x.md:{line + 7}: WARNING: KB095 zero-width joiner or presentation selector U+FE0F",
    )
    # one a character: six tags, U+2060, U+200B, and the run's three; none for the emoji
    assert out.count("KB095") == len("ignore") + 1 + 1 + 3, out[-3000:]
    site = tiny / "_build/html"
    published = "".join(
        p.read_text(encoding="utf-8") for p in site.rglob("*") if p.suffix in (".html", ".txt")
    )
    assert not re.search("[\u200b\u2060\U000e0000-\U000e007f]", published)


# each cell of a csv-table is parsed as Markdown on its own, out of sight of
# the page's nesting checks
@pytest.mark.parametrize(
    "cell",
    [
        "".join(":" * (153 - i) + "{note}\n" for i in range(150))
        + "x\n"
        + "".join(":" * (3 + i) + "\n" for i in range(150)),
        "".join("  " * i + "- level\n" for i in range(14)) + "\n后面的段落\n",
    ],
    ids=["directives", "lists"],
)
def test_a_csv_table_cell_nested_too_deep_fails_at_the_table(tiny, cell):
    page = tiny / "docs/training/x.md"
    text = page.read_text(encoding="utf-8")
    line = text.count("\n") + 2
    quoted = '"' + cell.replace('"', '""') + '"'
    page.write_text(text + "\n```{csv-table} 表\n" + quoted + ",b\n```\n", encoding="utf-8")
    out = assert_fails_at(tiny, f"training/x.md:{line}: WARNING: KB053 a cell of this csv-table")
    assert "Traceback" not in out


def test_directives_nested_past_the_recursion_limit_in_a_definition_fail_at_the_entry(tiny):
    glossary = tiny / "data/glossary.yaml"
    text = glossary.read_text(encoding="utf-8")
    nested = "".join(":" * (153 - i) + "{note}\n" for i in range(150)) + "x\n"
    nested += "".join(":" * (3 + i) + "\n" for i in range(150))
    glossary.write_text(
        text + "- id: deep-term\n  zh: 深\n  def: " + json.dumps(nested) + "\n", encoding="utf-8"
    )
    line = text.count("\n") + 1
    assert_fails_at(tiny, f"data/glossary.yaml:{line}: WARNING: KB053 directives nested")


# -- KB065: a directive option given twice (MyST keeps the last value, silently)

# conf.py's (field lists change what a directive's body holds)
EXTENSIONS = ["colon_fence", "deflist", "fieldlist"]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return myst_env(tmp_path_factory.mktemp("env"), EXTENSIONS)


TWICE = "```{admonition} 标题\n:class: tip\n:collapsible:\n:class: warning\n\n正文\n```\n"


@pytest.mark.parametrize(
    "body, repeated",
    [
        (TWICE, [(4, "class", 2)]),
        (
            "```{admonition} 标题\n---\nclass: tip\nname: a\nclass: warning\n---\n正文\n```\n",
            [(5, "class", 3)],
        ),
        (
            "::::{note}\n:::{admonition} 标题\n:class: tip\n:'class': warning\n\n正文\n:::\n::::\n",
            [(4, "class", 3)],
        ),
        ("```{code-block} python\n:linenos:\n:linenos:\n\nx = 1\n```\n", [(3, "linenos", 2)]),
        ("```{calculator} rent-vs-buy\n:rent: 3\n:rent: 4\n```\n", [(3, "rent", 2)]),
        # not repeated: each option once; after the block, body text; a block value's lines
        ("```{admonition} 标题\n:class: tip\n:name: n\n\n:class: warning\n```\n", []),
        ("```{admonition} 标题\n---\nclass: |\n  class: x\nname: n\n---\nclass: body\n```\n", []),
        ("```{code-block} yaml\n---\nclass: a\n---\n```\n\n```{note}\n:class: a\n```\n", []),
        # keys as MyST reads them: escapes, a byte order mark, Unicode line breaks
        (':::{note}\n:"cl\\x61ss": a\n:class: b\n:::\n', [(3, "class", 2)]),
        (":::{note}\n:\ufeffclass: a\n:class: b\n:::\n", [(3, "class", 2)]),
        (":::{note}\n:class: a\u2028:class: b\n:::\n", [(2, "class", 2)]),
        ("```{note}\n---\nclass: a\x85class: b\n---\n```\n", [(3, "class", 3)]),
        # a directive without options reads such lines as its body, as MyST does
        ("```{epigraph}\n:a: 1\n:a: 2\n```\n", []),
        ("```{eval-rst}\n:Author: A\n:Author: B\n```\n", []),
        # a value over two lines, and bodies that are not blocks of Markdown
        (':::{note}\n:name: "a\n:class: b"\n:class: c\n:::\n', []),
        ("````{parsed-literal}\n```{note}\n:class: a\n:class: b\n```\n````\n", []),
        # the body as MyST reads it, after the option block: a list after a field-like option
        (
            "````{admonition} 步骤\n:class: tip\n  2. ```{note}\n     :class: a\n     :class: b\n     x\n     ```\n````\n",
            [(5, "class", 4)],
        ),
        (
            "```{admonition} 示例\n:class: tip\n\n    :::{note}\n    :class: a\n    :class: b\n    :::\n```\n",
            [],
        ),
        # once per key and block
        (":::{note}\n:class: a\n:class: b\n:class: c\n:::\n", [(3, "class", 2)]),
    ],
    ids=[
        "colon",
        "yaml",
        "nested-quoted",
        "flag",
        "any-option",
        "once",
        "yaml-value",
        "two-directives",
        "escaped-key",
        "bom",
        "line-separator",
        "next-line",
        "no-options",
        "eval-rst",
        "quoted-value",
        "parsed-literal",
        "body-list",
        "body-code",
        "three-times",
    ],
)
def test_an_option_given_twice_is_found_where_myst_reads_options(env, body, repeated):
    from kb.guard.silent_loss import repeated_options

    assert repeated_options(env, body) == repeated


def test_an_option_given_twice_fails_at_its_line_in_a_page_an_include_a_definition_and_a_cell(tiny):
    page = tiny / "docs/training/x.md"
    text = page.read_text(encoding="utf-8")
    at = text.count("\n") + 2  # the blank line, then the directive
    # README.md: not a page (conf.py's exclude_patterns), read here as an include
    (tiny / "docs/training/README.md").write_text("前言\n\n" + TWICE, encoding="utf-8")
    cell = '"' + TWICE.replace("```", ":::") + '"'  # a ``` fence would close the table's
    page.write_text(
        text
        + "\n"
        + TWICE
        + "\n```{include} README.md\n```\n\n```{csv-table} 表\n"
        + cell
        + ",b\n```\n"
        # registered by the site, without options: such lines are its body (no KB065)
        + "\n```{details} 展开\n:a: 1\n:a: 2\n```\n"
        # and one with AnyOption (kb.calc): its options are read
        + "\n```{calculator} rent-vs-buy\n:rent: 3\n:rent: 4\n```\n",
        encoding="utf-8",
    )
    glossary = tiny / "data/glossary.yaml"
    entries = glossary.read_text(encoding="utf-8")
    glossary.write_text(
        entries + "- id: twice-term\n  zh: 两次\n  def: " + json.dumps(TWICE) + "\n", encoding="utf-8"
    )
    table = at + TWICE.count("\n") + 4
    out = assert_fails_at(
        tiny,
        f"training/x.md:{at + 3}: WARNING: KB065 the option :class: is given again (first on line {at + 1})",
        "training/README.md:6: WARNING: KB065 the option :class: is given again (first on line 4)",
        f"data/glossary.yaml:{entries.count(chr(10)) + 1}: WARNING: KB065 the option :class: is given again in "
        "this definition: the directive",
        f"training/x.md:{table}: WARNING: KB065 a cell of this csv-table gives the option :class: of a directive again",
        ": WARNING: KB065 the option :rent: is given again",
    )
    assert out.count("KB065") == 5, out[-3000:]


# -- Text MyST parses on its own: a colon fence that is no directive (a div),
# and a directive's first line where the directive takes no argument. The
# page's checks read them as MyST does (kb.core.markdown.walk).

DEEP_LIST = "".join("  " * i + "- 层\n" for i in range(30))
DEEP_RST = "".join("  " * i + "- 层\n\n" for i in range(150))


def quoted(text: str, depth: int) -> str:
    return "".join(("> " * depth + line).rstrip() + "\n" for line in text.split("\n")[:-1])


def divs_in_quotes(divs: int, depth: int) -> str:
    """``divs`` divs inside each other, each inside ``depth`` levels of quotes."""
    text = "正文\n"
    for level in range(divs):
        colons = ":" * (3 + level)
        text = quoted(f"{colons}aside\n{text}{colons}\n", depth)
    return text


INCLUDE = "```{include} ../../../secret.txt\n```\n"
# (text, line of the warning from the text's first line, message)
INSIDE = [
    (":::aside\n" + INCLUDE + ":::\n", 1, "KB011 include of '../../../secret.txt'"),
    ("::::{note} " + INCLUDE + "::::\n", 0, "KB011 include of '../../../secret.txt'"),
    (":::aside\n" + DEEP_LIST + ":::\n", 10, "KB053 lists or quotes nested too deep"),
    (
        ":::{note}x\n```{tip}\n:class: a\n:class: b\n\n正文\n```\n:::\n",
        3,
        "KB065 the option :class: is given again",
    ),
    (":::aside\n```{eval-rst}\n" + DEEP_RST + "```\n:::\n", 66, "KB053 reStructuredText nested more than"),
    # Unicode line breaks: MyST cuts a body into lines at them (str.splitlines)
    ("````{note}\na\u2028b\n" + INCLUDE + "````\n", 2, "KB011 include of '../../../secret.txt'"),
    (
        ":::{note}\n:class: a\u2028:name: b\n\n" + INCLUDE + ":::\n",
        3,
        "KB011 include of '../../../secret.txt'",
    ),
    (
        "````{note}\n" + "\u2028" * 400 + "\n\n```{eval-rst}\n" + DEEP_RST + "```\n````\n",
        68,
        "KB053 reStructuredText",
    ),
    # the first line's text, then an option block, or a nested fence
    ("::::{note} ```{include} ../../../secret.txt\n:class: x\n```\n::::\n", 0, "KB011 include of"),
    ("::::{note} ```{include} ../../../secret.txt\n:::{tip}\n```\n:::\n::::\n", 0, "KB011 include of"),
    # a name the page would make another directive
    (
        "```{default-domain} c\n```\n\n````{class} foo\n---\n" + INCLUDE + "---x\n````\n",
        0,
        "KB017 default-domain",
    ),
    # what MyST drops: a front matter at the start of a text of its own
    (":::aside\n---\n丢掉\n---\n保留\n:::\n", 1, "KB066 this text starts with a block between --- lines"),
    # a cut of an included file: the checks read all of it (a cut from line 1
    # of part.txt makes its include live); shown as code, it may be cut
    ("```{include} part.txt\n:start-line: 1\n```\n", 0, "KB067 {include} part.txt is cut with :start-line:"),
    ("```{include} part.txt\n:literal:\n:start-line: 1\n```\n", None, None),
    # an included file, in the lines MyST parses (str.splitlines), Markdown whatever its name
    ("```{include} breaks.txt\n```\n", None, None),
    ("```{include} twice.txt\n```\n", None, None),
    # a caption, parsed as Markdown blocks of which the first node is kept:
    # a block in it is read out of the checks' sight, and no node is a traceback
    (
        "````{code-block} text\n---\ncaption: |\n  ```{include} ../../../secret.txt\n  ```\n---\nx\n````\n",
        0,
        "KB068 the :caption: of this {code-block} is not one paragraph",
    ),
    (
        '```{code-block} text\n:caption: "[x]: https://example.com"\n\nx\n```\n',
        0,
        "KB068 the :caption: of this {code-block}",
    ),
    (
        ':::{note}\n```{literalinclude} part.txt\n---\ncaption: "标题\\u2028- 列表"\n---\n```\n:::\n',
        1,
        "KB068 the :caption: of this {literalinclude}",
    ),
    ("```{code-block} text\n:caption: 一个 *标题*\n\nx\n```\n", None, None),
    # a figure reads its caption from the first node of its text: none was an UnboundLocalError
    # (and what renders nothing only when it runs, or in rST: checked as it runs)
    (
        "````{figure} a.png\n\n```{default-role}\n```\n````\n",
        0,
        "KB068 the caption of this figure renders nothing",
    ),
    (
        "```{eval-rst}\n.. code-block:: text\n   :caption: .. default-role::\n\n   x\n```\n",
        1,
        "KB068 the caption of this code-block renders nothing",
    ),
    # an hlist's :columns: outside 1..12: 0 was a ZeroDivisionError traceback, -2 dropped
    # the items at rc 0, 10**11 made the build run for ever
    (
        ":::{hlist}\n:columns: 0\n\n- 甲\n- 乙\n:::\n",
        0,
        "KB079 the hlist's :columns: is 0; give a number from 1 to 12",
    ),
    (":::{hlist}\n:columns: -2\n\n- 甲\n:::\n", 0, "KB079 the hlist's :columns: is -2;"),
    (
        "```{eval-rst}\n.. hlist::\n   :columns: 99999999999\n\n   - 甲\n```\n",
        1,
        "KB079 the hlist's :columns: is 99999999999;",
    ),
    (":::{hlist}\n:columns: 3\n\n- 甲\n- 乙\n:::\n", None, None),
    # an only block's condition that does not parse, or nests past the recursion limit
    # (a TemplateSyntaxError, TypeError or RecursionError traceback)
    ("```{only} html and (\n甲\n```\n", 0, "KB062 the only block's condition 'html and (' cannot be read"),
    (
        "```{only} " + "(" * 1200 + "html" + ")" * 1200 + "\n甲\n```\n",
        0,
        "KB062 the only block's condition '((((",
    ),
    ("```{only} true\n甲\n```\n", 0, "KB062 the only block's condition 'true' cannot be read"),
    # rST's auto-numbered and symbol footnotes in {eval-rst}: MyST never has docutils number
    # them (a KeyError 'refid' traceback, even when valid; a named one showed "[]")
    ("```{eval-rst}\n甲 [#]_\n\n.. [#] 乙\n```\n", 1, "KB084 an auto-numbered or symbol footnote of rST"),
    ("```{eval-rst}\n甲 [*]_\n```\n", 1, "KB084 an auto-numbered or symbol footnote of rST"),
    ("```{eval-rst}\n甲 [#fn]_\n\n.. [#fn] 乙\n```\n", 1, "KB084 an auto-numbered or symbol footnote of rST"),
    ("甲[^md]\n\n[^md]: 乙\n", None, None),
    # a signature or grammar Sphinx cannot read: reported, not a traceback
    (":::{option} -x[\n:::\n", 0, "KB078 Sphinx cannot read this option signature '-x['"),
    (
        "```{productionlist} 语法\n```\n",
        0,
        "KB078 Sphinx cannot read this productionlist grammar: it holds no",
    ),
    (
        "```{eval-rst}\n.. productionlist:: g\n   a: b\n   说明\n   c: d\n```\n",
        1,
        "KB078 Sphinx cannot read this productionlist grammar past the line '说明'",
    ),
    ("```{eval-rst}\n.. productionlist:: g\n   a: b\n   c: d\n```\n", None, None),
    ("```{productionlist} g: a b\n```\n", None, None),
    # rST blocks need no blank line between them: a caption of two rubrics
    (
        "```{eval-rst}\n.. code-block:: python\n   :caption: .. rubric:: 甲\n      .. rubric:: 乙\n\n   x = 1\n```\n",
        1,
        "KB068 the caption of this code-block renders nothing, or more than one paragraph",
    ),
    ("见 {token}`~a:b:c` 一处\n", 0, "KB078 Sphinx cannot read this token reference '~a:b:c'"),
    # an empty caption of a literalinclude is its file name
    ("```{literalinclude} part.txt\n:caption:\n```\n", None, None),
    (
        "```{figure} a.png\n\n[x]: https://example.com\n```\n",
        0,
        "KB068 the text of this {figure} renders nothing",
    ),
    (
        ":::aside\n```{figure} a.png\n:alt: 图\n\n \n```\n:::\n",
        1,
        "KB068 the text of this {figure} renders nothing",
    ),
    (
        '````{csv-table} 表\n"```{code-block} text\n:caption: ""[x]: https://example.com""\n\nx\n```",b\n````\n',
        0,
        "KB068 a cell of this csv-table has a directive whose :caption:",
    ),
    # the text after a quote's attribution, which MyST drops
    (
        "```{epigraph}\n引文\n\n-- 作者\n\n丢掉的段落\n```\n",
        5,
        "KB069 this text follows the '-- author' line of the {epigraph}",
    ),
    (
        ":::aside\n```{pull-quote}\n引文\n\n\u2014 作者\n  续行\n丢掉\n```\n:::\n",
        6,
        "KB069 this text follows",
    ),
    ("```{highlights}\n要点\n\n-- 作者\n```\n", None, None),
    (":::{epigraph} 引文\n\n-- 作者\n\n丢掉\n:::\n", 4, "KB069 this text follows the '-- author' line"),
    (
        '````{csv-table} 表\n---\nheader: |\n  "```{epigraph}\n  引文\n\n  -- 作者\n\n  丢掉\n  ```",b\n---\n1,2\n````\n',
        0,
        "KB069 a cell of this csv-table has text after",
    ),
    (
        '````{csv-table} 表\n"```{epigraph}\n引文\n\n-- 作者\n\n丢掉\n```",b\n````\n',
        0,
        "KB069 a cell of this csv-table has text after",
    ),
    # blocks nested deeper than MyST can render: divs in quotes in divs
    (divs_in_quotes(7, 15), 0, "KB053 directives nested more than 30 levels deep"),
    # index entries, which no output of the site shows (it has no general index)
    ("```{index} 显存\n```\n", 0, "KB017 index entries are not shown on this site"),
    (":::aside\n见 {index}`显存 <single: 显存; 占用>` 一处\n:::\n", 1, "KB017 the index role's entries"),
    ("```{eval-rst}\n.. index:: pair: 显存; 占用\n\n正文\n```\n", 1, "KB017 index entries"),
    # classes the site gives its own page parts, which its style sheets and scripts hide,
    # place or act on: text readers do not see that the index keeps, text over text, controls
    ("```{container} only-dark\n甲\n```\n", 0, "KB086 the class 'only-dark' belongs to the site's own"),
    (":::aside\n:::{note}\n:class: kb-keywords\n乙\n:::\n:::\n", 1, "KB086 the class 'kb-keywords'"),
    ("```{eval-rst}\n.. rst-class:: only-light\n\n丙\n```\n", 3, "KB086 the class 'only-light'"),
    ("```{eval-rst}\n.. rst-class:: headerlink\n\n   丁\n```\n", 3, "KB086 the class 'headerlink'"),
    ("```{role} hid\n:class: visually-hidden\n```\n\n见 {hid}`戊`\n", 4, "KB086 the class 'visually-hidden'"),
    ("```{figure} a.png\n:figclass: no-toc\n\n己\n```\n", 0, "KB086 the class 'no-toc'"),
    (":::{note}\n:class: overlay\n被盖住\n:::\n", 0, "KB086 the class 'overlay'"),
    ("```{container} kb-term-tip\n盖在后文上\n```\n", 0, "KB086 the class 'kb-term-tip'"),
    ("```{container} theme-toggle\n开关\n```\n", 0, "KB086 the class 'theme-toggle'"),
    ("```{container} seealso\n不进索引\n```\n", 0, "KB086 the class 'seealso' belongs to the site's own"),
    # what the copy button leaves out: a block that copies other than it shows
    (
        "```{role} p\n:class: gp\n```\n\n运行 `rm -rf ~`{p}`/.cache` 即可\n",
        4,
        "KB086 the class 'gp'",
    ),
    # what reads as the editors' correction without being one
    (":::{note}\n:class: editor-note\n假的更正\n:::\n", 0, "KB086 the class 'editor-note'"),
    (
        ":::{admonition} 编者注：\n更正，没有来源\n:::\n",
        0,
        "KB025 this admonition is titled 编者注 but is no",
    ),
    # what pages may give: a class of their content, an image in one colour scheme
    (":::{note}\n:class: editor-original tip success\n庚\n:::\n", None, None),
    ("```{image} a.png\n:alt: 图\n:class: only-dark\n```\n", None, None),
    (
        ":::{note}\n:class: tip kb-page-meta\n辛\n:::\n",
        0,
        "KB086 the class 'kb-page-meta' belongs to the site's own page parts: the search index or "
        "llms-full.txt leave what has it out",
    ),
]


def append_cases(page: Path, cases) -> list[str]:
    """Append each (text, line, message) case to ``page`` after a blank line,
    each on lines of its own; the warnings expected, each at its case's
    first line plus ``line`` ("training/x.md:LINE: WARNING: message")."""
    text = page.read_text(encoding="utf-8") + "\n"
    expected = []
    for case, line, message in cases:
        if message:
            expected.append(f"training/x.md:{text.count(chr(10)) + 1 + line}: WARNING: {message}")
        text += case + "\n"
    page.write_text(text, encoding="utf-8")
    return expected


def test_a_div_and_a_first_line_are_checked_as_the_page_is(tiny):
    """A ``:::name`` fence is a div whose text MyST parses as Markdown, and the
    text after ``{note}`` on its first line is the note's body: each holds
    what the page's checks refuse, reported at its line (the page's, whatever
    line breaks MyST cuts a body at), and MyST reads no file from outside
    (the only KB011 warnings are the checks', each with its line), and no
    traceback. A glossary definition is checked as MyST reads it, in
    docutils' lines."""
    (tiny.parent / "secret.txt").write_text("KB-DIV-SECRET\n", encoding="utf-8")
    page = tiny / "docs/training/x.md"
    expected = []
    (tiny / "docs/training/part.txt").write_text("````text\n" + INCLUDE + "````\n", encoding="utf-8")
    (tiny / "docs/training/breaks.txt").write_text(
        "x\u2028" + INCLUDE.replace("\n", "\u2028"), encoding="utf-8"
    )
    (tiny / "docs/training/twice.txt").write_text("前言\n\n" + TWICE, encoding="utf-8")
    expected += [
        "training/breaks.txt:2: WARNING: KB011 include of '../../../secret.txt'",
        "training/twice.txt:6: WARNING: KB065 the option :class: is given again (first on line 4)",
    ]
    expected += append_cases(page, INSIDE)
    glossary = tiny / "data/glossary.yaml"
    entries = glossary.read_text(encoding="utf-8")
    definition = "<div>\n\u3000\n```{include} ../../secret.txt\n```\n"
    glossary.write_text(
        entries + "- id: div-term\n  zh: 块\n  def: " + json.dumps(definition) + "\n", encoding="utf-8"
    )
    expected.append(
        f"data/glossary.yaml:{entries.count(chr(10)) + 1}: WARNING: KB048 {{include}} ../../secret.txt"
    )
    out = assert_fails_at(tiny, *expected)
    assert ".md: WARNING" not in out and ".txt: WARNING" not in out and ".yaml: WARNING" not in out, out[
        -3000:
    ]
    assert out.count("KB011") == 1 + sum("KB011" in (message or "") for _, _, message in INSIDE), out[-3000:]
    assert out.count("KB067") == 1, out[-3000:]
    assert out.count("KB086") == sum("KB086" in (message or "") for _, _, message in INSIDE), out[-3000:]
    site = tiny / "_build/html"
    assert not any("KB-DIV-SECRET" in p.read_text(errors="replace") for p in site.rglob("*.html")), out[
        -2000:
    ]


def test_emphasis_nested_past_the_tree_limit_fails_at_its_line_not_with_a_traceback(tiny):
    """Nesting no single text's check adds up (here emphasis in emphasis, one
    line of 771 bytes) is measured in the page's tree: Sphinx saving a tree
    about 195 levels deep passed the recursion limit (kb.guard.silent_loss.cut_deep_tree)."""
    page = tiny / "docs/training/x.md"
    text = page.read_text(encoding="utf-8") + "\n"
    line = text.count("\n") + 1
    page.write_text(
        text + "*" * 385 + "x" + "*" * 385 + "\n\n" + "*" * 30 + "浅" + "*" * 30 + "\n", encoding="utf-8"
    )
    assert_fails_at(tiny, f"training/x.md:{line}: WARNING: KB053 blocks and emphasis nested more than 150")


def test_a_numref_title_sphinx_cannot_fill_in_fails_at_its_line_not_with_a_traceback(tiny):
    """Sphinx fills a {numref} title in with str.format or %, and catches only
    KeyError and TypeError: once a toctree numbers the sections, {0} was an
    IndexError traceback, a lone % or {number!x} a ValueError one, and
    {number:>300000000} a MemoryError. Each is KB078 at its line; a title of
    %s, {number} and {name} is shown."""
    guide = tiny / "docs/training/index.md"
    guide.write_text(
        guide.read_text(encoding="utf-8").replace("```{toctree}\n", "```{toctree}\n:numbered:\n")
    )
    page = tiny / "docs/training/x.md"
    text = page.read_text(encoding="utf-8") + "\n"
    # and "number %s" or "%%", which Sphinx formats with str.format: shown as written
    bad = [
        "{number} {0}",
        "第 % 节",
        "{number!x}",
        "{number:>300000000}",
        "节 number %s",
        "{number} 节（100%%）",
    ]
    lines = []
    for title in bad:
        lines.append(text.count("\n") + 1)
        text += f"见 {{numref}}`{title} <x-intro>`。\n\n"
    text += "见 {numref}`第 %s 节 <x-intro>` 与 {numref}`{name}（{number}） <x-intro>`。\n"
    page.write_text(text, encoding="utf-8")
    assert_fails_at(
        tiny,
        *(
            f"training/x.md:{line}: WARNING: KB078 Sphinx cannot read this numref title {title!r}"
            for line, title in zip(lines, bad, strict=True)
        ),
    )
    html = (tiny / "_build/html/training/x.html").read_text(encoding="utf-8")
    assert "第 1.1 节" in html and "引言（1.1）" in html


def test_what_a_glossary_definition_gets_wrong_is_reported_at_its_entry(tiny):
    """A definition is parsed in the glossary page's parser state: a directive's
    or role's warning there (ours, Sphinx's or MyST's, some held back until
    the page is read) named docs/glossary.md, not the entry to fix
    (kb.core.log.reported_at)."""
    glossary = tiny / "data/glossary.yaml"
    entries = glossary.read_text(encoding="utf-8")
    line = entries.count("\n") + 1
    definitions = [":::{hlist}\n:columns: 0\n\n- 甲\n:::\n", ":::{list-table}\n:widths: 1 x\n\n* - 甲\n:::\n"]
    for i, definition in enumerate(definitions):
        entries += f"- id: probe-{i}\n  zh: 探针{i}\n  def: {json.dumps(definition)}\n"
    glossary.write_text(entries, encoding="utf-8")
    out = assert_fails_at(
        tiny,
        f"data/glossary.yaml:{line}: WARNING: KB079 the hlist's :columns: is 0",
        f"data/glossary.yaml:{line + 3}: WARNING: KB107 'list-table': Invalid option value for 'widths'",
    )
    assert "glossary.md:" not in out, out[-3000:]


def test_footnotes_and_citations_of_rst_that_take_the_pages_ids_fail_at_their_line(tiny):
    """MyST parses an {eval-rst} block as a document of its own, which counts
    its ids from id1 again: a footnote used twice and a citation got the ids
    of the page's headings, at rc 0, and their links led there (KB085). A
    named link's target takes such an id too, but Sphinx writes no element
    for it: valid, in one block or two."""
    page = tiny / "docs/training/x.md"
    text = page.read_text(encoding="utf-8") + "\n"
    link = "```{eval-rst}\n见 `文档 <https://example.com/>`_ 和 `docs <https://example.org/>`_。\n```\n\n"
    text += link + link.replace("见", "又见")
    page.write_text(text, encoding="utf-8")
    code, out = build(tiny)
    assert code == 0 and "WARNING" not in out, out[-3000:]
    footnote = text.count("\n") + 2
    text += "```{eval-rst}\n手动 [3]_ 和 [3]_。\n\n.. [3] 脚注三\n```\n\n"
    citation = text.count("\n") + 2
    text += "```{eval-rst}\n引用 [CIT]_。\n\n.. [CIT] 文献\n```\n"
    page.write_text(text, encoding="utf-8")
    assert_fails_at(
        tiny,
        f"training/x.md:{footnote}: WARNING: KB085 the id 'id1' is given to two elements of this page",
        f"training/x.md:{citation}: WARNING: KB085 the id",
    )


def test_what_an_rst_include_in_eval_rst_gets_wrong_is_reported_in_that_file(tiny):
    """docutils names an included file relative to the working folder: a
    directive's or a node's problem in it was reported at the page, with the
    included file's line."""
    (tiny / "docs/training/part.txt").write_text(
        "第一行\n\n第三行\n\n.. hlist::\n   :columns: 0\n\n   - 甲\n\n正文 [#]_。\n\n.. [#] 脚注甲\n",
        encoding="utf-8",
    )
    page = tiny / "docs/training/x.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\n```{eval-rst}\n.. include:: part.txt\n```\n", encoding="utf-8"
    )
    out = assert_fails_at(
        tiny,
        "training/part.txt:5: WARNING: KB079 the hlist's :columns: is 0",
        "training/part.txt:10: WARNING: KB084 an auto-numbered or symbol footnote",
        "training/part.txt:12: WARNING: KB084 an auto-numbered or symbol footnote",
    )
    assert "x.md:" not in out, out[-3000:]


def test_an_id_the_site_gives_its_own_elements_is_refused_at_the_heading(tiny):
    """The keywords paragraph and the sources section are added once a page is
    read, with ids of their own: a heading "KB Keywords" or a label
    (kb-sources)= gave a second element that id at rc 0, and the search page,
    which finds the end of a page's text by it, took the heading (KB085). So
    did the ids of the page template (the skip link's target, the sidebar's
    switches, the icons: a heading "Furo Main Content" took the skip link)."""
    page = tiny / "docs/training/x.md"
    text = page.read_text(encoding="utf-8") + "\n"
    heading = text.count("\n") + 1
    text += "## KB Keywords\n\n甲。\n\n(kb-sources)=\n## 来源\n\n乙。\n\n"
    furo = text.count("\n") + 1
    text += "## Furo Main Content\n\n丙。\n\n(toctree-checkbox-1)=\n## 丁\n\n(svg-toc)=\n## 戊\n\n"
    text += "(toctree-checkbox-x)=\n## 己\n"
    page.write_text(text, encoding="utf-8")
    out = assert_fails_at(
        tiny,
        *(
            f"WARNING: KB085 the id {node_id!r} is one the site gives an element of every page"
            for node_id in ("kb-keywords", "kb-sources", "furo-main-content", "toctree-checkbox-1", "svg-toc")
        ),
        f"training/x.md:{heading}: WARNING: KB085 the id 'kb-keywords'",
        f"training/x.md:{furo}: WARNING: KB085 the id 'furo-main-content'",
    )
    assert out.count("KB085") == 5, out[-3000:]  # toctree-checkbox-x is no id the sidebar gives


def test_an_author_directive_shows_the_name_it_gives(tiny):
    """{sectionauthor}, {codeauthor} and {moduleauthor} show their name
    (conf.py: show_authors): Sphinx's default dropped it at rc 0. The text
    of an {index} role is shown as written while its entries are refused."""
    add_to_page(
        tiny,
        "```{sectionauthor} 张三\n```\n\n```{codeauthor} 李四 *编*\n```\n\n"
        "```{py:module} kb_demo\n```\n\n```{moduleauthor} 王五\n```\n",
    )
    html = built_page(tiny)
    for shown in ("节作者： 张三", "代码作者： 李四 <em>编</em>", "模块作者： 王五"):
        assert shown in html, shown
    line = add_to_page(tiny, "见 {index}`显存的 <显存>`和{index}`!占用`。\n")
    out = assert_fails_at(tiny)
    assert out.count(f"training/x.md:{line}: WARNING: KB017 the index role's entries") == 2, out[-3000:]
    html = (tiny / "_build/html/training/x.html").read_text(encoding="utf-8")
    assert "见 显存的和占用。" in html, html[-2000:]


def test_an_rst_class_in_eval_rst_gives_its_class_as_docutils_does(tiny):
    """rST's class directive (Sphinx: rst-class) with nothing indented under
    it leaves docutils a transform to run, noted in the {eval-rst} block's own
    document, which MyST never transforms (executablebooks/MyST-Parser#953):
    left in the page, it ended the build in a NotImplementedError traceback.
    It is run as docutils would: the class lands on the next element, or
    docutils reports at its line that there is none."""
    add_to_page(tiny, "```{eval-rst}\n.. rst-class:: editor-original\n\n甲乙\n```\n")
    assert '<p class="editor-original">甲乙</p>' in built_page(tiny)
    fence = add_to_page(tiny, "```{eval-rst}\n.. rst-class:: editor-original\n```\n")
    line = fence + 1  # the directive's line
    assert_fails_at(
        tiny, f'training/x.md:{line}: ERROR: KB107 No suitable element following "rst-class" directive'
    )


def test_the_classes_a_page_may_not_give_are_all_those_the_outputs_leave_out():
    """KB086's LEFT_OUT_CLASSES are the classes Pagefind may be told to leave
    out (pagefind.yml, reviewed in kb.search.index.PAGEFIND_SELECTORS) and
    llms-full.txt skips. Sphinx's writer gives seealso to the {seealso} box,
    which holds no such class in the page's tree."""
    import re

    import yaml
    from kb.guard.untrusted import LEFT_OUT_CLASSES
    from kb.search.index import PAGEFIND_SELECTORS
    from kb.site.llms import SKIPPED_CLASSES

    config = yaml.safe_load((ROOT / "pagefind.yml").read_text(encoding="utf-8"))
    selectors = {*config["exclude_selectors"], *PAGEFIND_SELECTORS}
    assert all(re.fullmatch(r"\.[a-z][a-z0-9-]*", selector) for selector in selectors), selectors
    assert {selector[1:] for selector in selectors} | SKIPPED_CLASSES == LEFT_OUT_CLASSES


def test_a_class_a_page_gives_a_node_the_site_made_is_refused_too(tiny):
    """The site's own nodes carry its classes (an {original} block, its code
    blocks' status), exempt from KB086 by name only: a class the page gives
    the same node, by an {rst-class} before it or a code block's :class:
    (which docutils copies to the status box that takes the block's place),
    is refused; the site's own classes on them are not."""
    page = tiny / "docs/training/x.md"
    text = page.read_text(encoding="utf-8") + "\n"
    first = text.count("\n") + 1
    text += "```{rst-class} visually-hidden\n```\n\n:::{original} 看这里\n隐藏段落。\n:::\n\n"
    second = text.count("\n") + 1
    text += "::::{original}\n```{code-block} python\n:class: kb-term-tip\n\nprint(1)\n```\n::::\n\n"
    text += ":::{original}\n```python\nprint(2)\n```\n:::\n"
    page.write_text(text, encoding="utf-8")
    out = assert_fails_at(
        tiny,
        f"training/x.md:{first + 3}: WARNING: KB086 the class 'visually-hidden'",
        f"training/x.md:{second + 1}: WARNING: KB086 the class 'kb-term-tip'",
    )
    assert out.count("KB086") == 3, out[-3000:]  # the code block, and the status box it gave its class
    assert "kb-original" not in "".join(line for line in out.splitlines() if "KB086" in line), out[-3000:]


def test_every_code_block_in_an_original_is_labelled_and_keeps_its_name(tiny):
    """{original} labels each code block 原文·勿照抄, a doctest block (its
    copy button strips the >>> prompts) too; a block's :name: stays its own
    id, not also its label box's (that was KB085 on valid text)."""
    add_to_page(
        tiny,
        "````{original}\n```{eval-rst}\n>>> import os\n>>> os.getcwd()\n```\n\n"
        "```{code-block} bash\n:name: my-code\n\nls\n```\n````\n",
    )
    html = built_page(tiny)
    assert html.count('class="kb-code-original') == 2, html
    assert html.count('id="my-code"') == 1, html


# -- the fourth review: what a page's directives and tables could still do ----------

BIG_NUMBER = "1" + "0" * 400
# (text appended to the page, line of the page's text it is reported at
# (0: its first), the message), each on lines of its own in one build
FOURTH_REVIEW = [
    # docutils opens the file with any codec Python has: a LookupError traceback
    ("```{eval-rst}\n.. include:: part.inc\n   :encoding: rot13\n```\n", 1, "KB107 :encoding: 'rot13'"),
    ("```{csv-table} 表\n:file: t.csv\n:encoding: base64\n```\n", 0, "KB107 :encoding: 'base64'"),
    # docutils' HTML writer makes floats of them: an OverflowError traceback
    (f"```{{image}} i.png\n:scale: {BIG_NUMBER}\n```\n", 0, "KB094 :scale: 1000000"),
    (f"```{{image}} i.png\n:width: {BIG_NUMBER}px\n:scale: 50\n```\n", 0, "KB094 :width: 1000000"),
    # docutils opens the picture from the build's folder: a file outside the
    # repository, whose width the page would show
    (
        "```{figure} /tmp/kb-outside.png\n:figwidth: image\n\n图注。\n```\n",
        0,
        "KB017 figure's :figwidth: image",
    ),
    # dropped without a word
    ("| 甲 | 乙 |\n|---|---|\n| 1 | 2 | 多出的一格 |\n", 2, "KB087 this table row has 3 cells"),
    ("+++ 分隔线后的文字\n", 0, "KB088 the text after +++"),
    ("```{py:module} torch.cuda\n:synopsis: 只在模块索引里\n```\n", 0, "KB017 py:module's :synopsis:"),
    # a toctree's web addresses are links too (and go into every page's sidebar)
    (
        "```{toctree}\n内网 <http://169.254.169.254/latest>\n```\n",
        1,
        "KB012 link to 'http://169.254.169.254/latest' in a toctree",
    ),
    (
        "```{toctree}\n点我 <javascript://%0aalert(1)>\n```\n",
        1,
        "KB012 link to 'javascript://%0aalert(1)' in a toctree",
    ),
    # the fifth review: in a csv-table's cells (each parsed on its own), and
    # the codecs docutils raises other errors for
    (
        '```{csv-table}\n:header: 甲,乙\n\n"+++ 秘密三",b\n```\n',
        0,
        "KB088 a cell of this csv-table has text after +++",
    ),
    (
        '```{csv-table}\n:header: 甲,乙\n\n"| h |\n|---|\n| c | 秘密四 |",d\n```\n',
        0,
        "KB087 a cell of this csv-table holds a table with a row of more cells",
    ),
    ("```{csv-table}\n:file: fn.csv\n```\n", 0, 'KB094 a cell of this csv-table has too many "[^"'),
    (
        "```{csv-table} 表\n:file: t.csv\n:encoding: utf-16\n```\n",
        0,
        "KB054 csv-table file 't.csv' cannot be read as utf-16",
    ),
    ("```{include} part.inc\n:encoding: rot13\n```\n", 0, "KB107 :encoding: 'rot13'"),
    # what pages may write beside them
    (
        "| 甲 | 乙 |\n|---|---|\n| `a\\|b` | 2 |\n| 3 |\n\n+++\n\n```{image} i.png\n:scale: 50\n:width: 400px\n:alt: 图\n```\n",
        None,
        None,
    ),
    (
        ">  > | h1 | h2 |\n>  > |----|----|\n>  > | a  | b  |\n\n> - 项\n>\n>   > | h1 | h2 |\n>   > |----|----|\n>   > | a  | b  |\n",
        None,
        None,
    ),
]


def test_the_fourth_reviews_directives_and_tables_fail_at_their_lines(tiny, tmp_path):
    """Each case of FOURTH_REVIEW at its line with its code, and no
    traceback; the picture outside the repository (777 px wide, a file of the
    same name in docs/ 10 px) gives the page no width; the valid case nothing."""
    from PIL import Image

    outside = Path("/tmp/kb-outside.png")
    Image.new("RGB", (777, 3)).save(outside)
    (tiny / "docs/tmp").mkdir()
    Image.new("RGB", (10, 3)).save(tiny / "docs/tmp/kb-outside.png")
    Image.new("RGB", (10, 3)).save(tiny / "docs/training/i.png")
    (tiny / "docs/training/part.inc").write_text("包含的文字\n", encoding="utf-8")
    (tiny / "docs/training/t.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    (tiny / "docs/training/fn.csv").write_text('"' + "[^" * 9000 + '",b\n', encoding="utf-8")
    expected = append_cases(tiny / "docs/training/x.md", FOURTH_REVIEW)
    try:
        out = assert_fails_at(tiny, *expected)
    finally:
        outside.unlink()
    html = (tiny / "_build/html/training/x.html").read_text(encoding="utf-8")
    assert "777px" not in html
    assert "169.254.169.254" not in html and "javascript:" not in html
    found = re.findall(r"WARNING: (KB\d{3})", out)
    assert len(found) == len(expected), out[-3000:]


def test_what_a_hidden_toctree_would_drop_fails_at_its_line(tiny):
    """A hidden toctree shows only through the sidebar, which names pages by
    their own titles: its caption and an entry's own title would be dropped
    (KB017); a toctree that is not hidden shows both in the page."""
    y = ARTICLE.replace("title: 梯度累积", "title: 另一页").replace("# 梯度累积", "# 另一页")
    y = y.replace("(x-intro)=", "(y-intro)=")
    (tiny / "docs/training/y.md").write_text(y, encoding="utf-8")
    line = add_to_page(tiny, "```{toctree}\n:hidden:\n:caption: 隐藏的目录名\n\n自己的题 <y>\n```\n")
    assert_fails_at(
        tiny,
        f"training/x.md:{line + 2}: WARNING: KB017 '隐藏的目录名' in a hidden toctree",
        f"training/x.md:{line + 4}: WARNING: KB017 '自己的题' in a hidden toctree",
    )
    page = tiny / "docs/training/x.md"
    page.write_text(page.read_text(encoding="utf-8").replace(":hidden:\n", ""), encoding="utf-8")
    html = built_page(tiny)
    assert "隐藏的目录名" in html and "自己的题" in html


@pytest.mark.parametrize("space", ["\t", "\u3000", "\u00a0", "\u2009"])
def test_a_label_markdown_it_reads_on_through_a_tab_or_another_space_counts(space):
    """markdown-it's footnote rule ends a label only at "]", a space or a line
    break: "[^" followed by any other whitespace is read to the line's end."""
    from kb.guard import silent_loss

    assert silent_loss.footnote_scan("正文" + ("[^" + space) * 8000) is not None
    assert silent_loss.footnote_scan("正文" + "[^ " * 8000) is None
    assert silent_loss.footnote_scan("".join(f"字[^n{i}]" for i in range(2000))) is None


def test_a_run_of_footnote_starts_fails_fast_not_after_minutes(tiny):
    """ "[^" after "[^" with no "]": MyST's footnote rule reads each to the run's
    end (time with the square of the run; 20 KB took a minute and a half,
    three parses over). KB094 at the line, and the build ends in seconds (the
    timeout fails the test without the check)."""
    line = add_to_page(tiny, "正文" + "[^" * 10000 + "\n\n正文[^a]。\n\n[^a]: 脚注。\n")
    code, out = build(tiny, timeout=60)
    assert code != 0 and "Traceback" not in out, out[-3000:]
    assert f'training/x.md:{line}: WARNING: KB094 too many "[^"' in out, out[-3000:]
