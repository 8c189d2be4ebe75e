"""Contributed templates cannot read files of the machine that builds the
site (kb.guard.templates): Sphinx's loader joins any name onto the templates
folder, '..' and absolute paths included, so an include in _templates/ put
CI's token (.git/config) or environment (/proc/self/environ) into every page.

- a literal name that leaves the folders: KB011 at its line, before building;
- a name the template computes: KB011 when the page is written, and the
  include renders as nothing;
- a file the book builders would render as a template (latex.tex_t): KB018.
"""

from __future__ import annotations

import os
import re
import time

import pytest
from test_data_errors import assert_fails_at, build, tiny_project

pytestmark = pytest.mark.slow

SECRET = "KB-TEMPLATE-SECRET-5d1"
# a case built in this process: a hang ends the test process, a failure, not a stall
IN_PROCESS = pytest.mark.timeout(300, method="thread")


@pytest.fixture
def root(tmp_path):
    (tmp_path / "secret.txt").write_text(SECRET + "\n", encoding="utf-8")
    return tiny_project(tmp_path / "kb")


def include(root, statement: str) -> int:
    """Put ``statement`` before the page body of _templates/page.html; its line."""
    page = root / "_templates/page.html"
    text = page.read_text(encoding="utf-8")
    at = text.index("{{ ns.html }}")
    page.write_text(text[:at] + statement + text[at:], encoding="utf-8")
    return text.count("\n", 0, at) + 1


def published(root) -> str:
    return "\n".join(
        p.read_text(encoding="utf-8", errors="replace") for p in (root / "_build/html").rglob("*.html")
    )


@pytest.mark.parametrize("name", ["{secret}", "../../secret.txt", "/proc/self/environ"])
@IN_PROCESS
def test_a_template_naming_a_file_outside_its_folder_is_refused(root, name):
    line = include(root, f'<pre>{{% include "{name.format(secret=root.parent / "secret.txt")}" %}}</pre>')
    out = assert_fails_at(root, f"_templates/page.html:{line}: WARNING: KB011 a template includes")
    assert SECRET not in out
    assert not (root / "_build/html/index.html").exists() or SECRET not in published(root)


@IN_PROCESS
def test_a_computed_name_is_refused_when_the_page_is_written(root):
    include(root, '{%- set leak = "/".join(["..", "..", "secret.txt"]) -%}<pre>{% include leak %}</pre>')
    code, out = build(root)
    assert code != 0 and "Traceback" not in out, out[-3000:]
    assert "KB011 a template includes '../../secret.txt'" in out, out[-3000:]
    assert SECRET not in published(root) and SECRET not in out


@IN_PROCESS
def test_a_template_for_the_book_builders_is_refused(root):
    (root / "_templates/latex.tex_t").write_text("<%= include('/etc/passwd') %>\n", encoding="utf-8")
    assert_fails_at(root, "_templates/latex.tex_t:1: WARNING: KB018 the templates folder holds only")


@IN_PROCESS
def test_a_template_that_does_not_parse_is_named_at_its_line(root):
    line = include(root, "{% if %}")
    assert_fails_at(root, f"_templates/page.html:{line}: WARNING: KB064 the template does not parse")


@pytest.mark.parametrize(
    "statement",
    [
        '{% include "page.html" %}',
        '{%include"page.html"%}',
        '{%+ include ["missing.html", "page.html"] %}',
        '{% include ("page.html") %}',
        '{% include "pa" "ge.html" %}',
        '{% include "page" ~ ".html" %}',
        '{% from "page.html" import x %}',
    ],
)
def test_a_template_including_itself_is_refused_at_its_line_before_building(root, statement):
    """Rendering it would recurse to Python's limit on every page (half a
    minute for this four-page project, and the warning named a theme file).
    Every way of writing the name that Jinja reads as a literal."""
    line = include(root, statement)
    out = assert_fails_at(
        root,
        f"_templates/page.html:{line}: WARNING: KB064 the template names itself: templates may not name each other in a circle",
    )
    assert "writing output" not in out


@pytest.mark.parametrize(
    "statement",
    [
        '{# never {% include "page.html" %} here #}',
        '{% raw %}{% include "page.html" %}{% endraw %}',
        """{{ '{% include "page.html" %}' }}""",
    ],
)
def test_a_self_include_in_a_comment_raw_block_or_string_is_only_text(root, statement):
    include(root, statement)
    code, out = build(root)
    assert code == 0 and "KB064" not in out, out[-3000:]


@pytest.mark.parametrize(
    "statement",
    [
        "{{ " + " + ".join(["1"] * 3000) + " }}",
        "{{ x" + "|e" * 3000 + " }}",
        "{% if x %}" * 300 + "{% endif %}" * 300,
    ],
    ids=["sum", "filters", "ifs"],
)
def test_a_template_nested_too_deep_to_read_is_a_warning_not_a_traceback(root, statement):
    """Jinja's parser, and a walk of what it builds, recurse once per level."""
    include(root, statement)
    out = assert_fails_at(root, "_templates/page.html:1: WARNING: KB064 the template cannot be read")
    assert "writing output" not in out


def test_a_template_too_large_to_read_in_good_time_is_refused_before_building(root):
    """Jinja parses a template at about 2 s a MiB, then compiles it: 10 MiB
    took 23 s to check alone. A template over 256 KiB is KB064 at once."""
    (root / "_templates/big.html").write_text("<p>x</p>\n" * 40_000, encoding="utf-8")
    out = assert_fails_at(
        root,
        "_templates/big.html:1: WARNING: KB064 the template is 360,000 bytes, more than a template may be",
    )
    assert "writing output" not in out


def test_many_templates_under_the_size_limit_are_refused_together(root):
    """Each under 256 KiB, and quick to read alone; 100 of them took two
    minutes to check (and git packs identical copies into a few KiB). The
    limits are checked on the files' sizes, before any template is read:
    reading the six under the limit took 10 s of the build's time."""
    parts = root / "_templates/parts"
    parts.mkdir()
    for i in range(8):
        (parts / f"t{i}.html").write_text("{% set d = [" + "1," * 80_000 + "1] %}\n", encoding="utf-8")
    out = assert_fails_at(
        root, "_templates/parts/t6.html:1: WARNING: KB064 the templates folders hold more than"
    )
    assert "writing output" not in out


def test_a_template_using_sphinx_filters_is_not_refused_by_the_check(root):
    """The check only reads templates: Sphinx's own filters (todim, toint),
    which the check's Jinja does not know, are fine."""
    include(root, '{% set narrow = theme_sidebarwidth|todim %}<!-- {{ "3"|toint }} -->')
    code, out = build(root)
    assert code == 0 and "KB064" not in out, out[-3000:]


@IN_PROCESS
def test_a_template_edited_between_two_builds_of_one_process_is_compiled_again(root):
    """Compiled templates are kept for the process (kb.guard.templates.COMPILED,
    Jinja's bytecode cache): an edit to a template still reaches the next
    build of the same process, as it would a new sphinx-build."""
    include(root, "<p>模板第一版</p>")
    code, out = build(root)
    assert code == 0 and "模板第一版" in published(root), out[-3000:]
    page = root / "_templates/page.html"
    page.write_text(page.read_text(encoding="utf-8").replace("模板第一版", "模板第二版"), encoding="utf-8")
    code, out = build(root, options=("-E",))
    text = published(root)
    assert code == 0 and "模板第二版" in text and "模板第一版" not in text, out[-3000:]


def test_a_number_too_long_for_python_is_a_warning_not_a_traceback(root):
    include(root, "{{ " + "1" * 5000 + " }}")
    assert_fails_at(root, "_templates/page.html:1: WARNING: KB064 the template cannot be read (ValueError")


def test_a_fifo_in_the_templates_folder_is_refused_not_waited_on(root):
    os.mkfifo(root / "_templates/pipe.html")
    assert_fails_at(
        root,
        "_templates/pipe.html:1: WARNING: KB018 is not a regular file",
        timeout=60,
    )


@pytest.mark.parametrize(
    ("where", "levels"),
    [("_templates", 16), ("docs/training", 15), ("_static", 16), ("data", 16), ("locale", 16)],
)
@IN_PROCESS
def test_folders_nested_past_python_s_recursion_are_refused_before_sphinx_walks_them(root, where, levels):
    """1,100 nested folders: Python 3.11's os.walk (Sphinx's, when it looks
    for pages) and rglob recurse once a level and ended in a RecursionError."""
    top = str(root / where)
    os.makedirs(top, exist_ok=True)
    made = [top]
    for _ in range(1100):
        made.append(made[-1] + "/d")
        os.mkdir(made[-1])
    try:
        out = assert_fails_at(
            root,
            f"{where}/{'/'.join(['d'] * levels)}:1: WARNING: KB018 the folder nests folders more than 16 deep",
        )
        assert "RecursionError" not in out
    finally:  # deepest first: shutil.rmtree (pytest's clean-up) recurses once a level too
        for folder in reversed(made[1:]):
            os.rmdir(folder)


def test_a_name_given_fifteen_thousand_times_is_reported_once(root):
    line = include(root, "{% include [" + ", ".join(['"page.html"'] * 15_000) + "] %}")
    out = assert_fails_at(root, f"_templates/page.html:{line}: WARNING: KB064 the template names itself")
    assert out.count("KB064") == 1


def test_a_name_the_file_system_refuses_is_not_a_traceback(root):
    line = include(root, '{% include "' + "a" * 300 + '.html" %}')
    code, out = build(root)
    assert code != 0 and "Traceback" not in out and "Errno" not in out, out[-3000:]
    assert f"_templates/page.html:{line}: WARNING: KB064 the template page.html failed" in out, out[-3000:]


def test_many_templates_naming_each_other_are_checked_in_one_pass(root):
    """150 templates, each naming every other (22,350 names) and so all one
    circle: each name is looked up once and the graph walked once (the first
    version searched it again from every name: minutes). The timeout is the
    hang guard, not a measure."""
    parts = root / "_templates/parts"
    parts.mkdir()
    count = 150
    for i in range(count):
        text = "".join(f'{{% include "parts/t{j}.html" %}}\n' for j in range(count) if j != i)
        (parts / f"t{i}.html").write_text(text, encoding="utf-8")
    code, out = build(root, timeout=120)
    assert code != 0 and "Traceback" not in out, out[-3000:]
    assert out.count("which leads back to it") == count * (count - 1), out[-3000:]


def test_templates_naming_each_other_in_a_circle_are_refused_at_their_lines(root):
    (root / "_templates/parts").mkdir()
    (root / "_templates/parts/a.html").write_text('<p>\n{% include "parts/b.html" %}</p>\n', encoding="utf-8")
    (root / "_templates/parts/b.html").write_text('{% include "parts/a.html" %}\n', encoding="utf-8")
    line = include(root, '{% include "parts/a.html" %}')
    out = assert_fails_at(
        root,
        "_templates/parts/a.html:2: WARNING: KB064 the template names 'parts/b.html', which leads back to it: templates may",
        "_templates/parts/b.html:1: WARNING: KB064 the template names 'parts/a.html', which leads back to it: templates may",
    )
    # page.html names a template of the circle, but no template leads back to it
    assert f"_templates/page.html:{line}:" not in out


def test_a_template_recursing_as_it_renders_is_a_warning_at_its_own_line(root):
    """A recursion no literal name shows (a macro calling itself): KB064 on
    each page at the project's template line, not a theme's, nor a traceback."""
    line = include(root, "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}")
    assert_fails_at(
        root,
        f"_templates/page.html:{line}: WARNING: KB064 the template page.html failed on docs/index.md (RecursionError",
    )


def test_a_template_cannot_reach_files_through_the_objects_it_is_given(root):
    # Jinja's sandbox lets a template read any public attribute and call any
    # public method: an object holding Sphinx's app reaches every file through
    # pathlib (app.srcdir is a Path)
    include(root, '<pre>{{ toctree.app.srcdir.parent.parent.joinpath("secret.txt").read_text() }}</pre>')
    assert_fails_at(root, "WARNING: KB064 the template page.html failed", timeout=300)
    assert SECRET not in published(root)


def test_a_template_that_loops_on_and_on_is_stopped_at_the_page(root):
    """Jinja's sandbox bounds one range, not a loop inside a loop: without a
    time limit this page takes hours to write."""
    with open(root / "conf.py", "a", encoding="utf-8") as conf:
        conf.write("\nkb_template_seconds = 0.3\n")
    include(
        root,
        '{% if pagename == "index" %}{% for i in range(100000) %}{% for j in range(100000) %}'
        "{% endfor %}{% endfor %}{% endif %}",
    )
    out = assert_fails_at(root, "WARNING: KB064 the template page.html failed", timeout=300)
    assert "ran longer than kb_template_seconds" in out, out[-2000:]


@pytest.mark.parametrize("expression", ['"x" * 10**10', "[1] * 10**9", "10 ** 99999999"])
def test_a_template_cannot_make_a_string_or_number_too_large_for_memory(root, expression):
    include(root, f"{{{{ {expression} }}}}")
    out = assert_fails_at(root, "WARNING: KB064 the template page.html failed", timeout=300)
    assert "too l" in out, out[-2000:]


@pytest.mark.parametrize("expression", ["1 / 0", "2.0 ** 100000", "(1, 2)|join(1 // 0)"])
def test_a_template_expression_that_raises_is_a_warning_not_a_traceback(root, expression):
    include(root, f"{{{{ {expression} }}}}")
    out = assert_fails_at(root, "WARNING: KB064 the template page.html failed", timeout=300)
    assert "Traceback" not in out, out[-2000:]


def test_a_loop_whose_timeout_a_template_test_would_swallow_is_still_stopped(root):
    """Jinja's ``is sequence`` catches Exception around len(), which runs the
    loop: the timeout is not an Exception, and it is raised again."""
    with open(root / "conf.py", "a", encoding="utf-8") as conf:
        conf.write("\nkb_template_seconds = 0.3\n")
    include(
        root,
        '{% if pagename == "index" %}{% for x in range(100000)|map("string")|map("center", 1000)|map("wordwrap", 1) %}'
        "{% if loop.first and loop is sequence %}{% endif %}{% endfor %}"
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}{% endif %}",
    )
    out = assert_fails_at(root, "WARNING: KB064 the template page.html failed", timeout=120)
    assert "TemplateTimeout" in out, out[-2000:]


def test_a_template_that_takes_too_much_memory_is_stopped_at_its_line(root):
    line = include(root, '{{ ("x"|center(1500000000))|length }}')
    out = assert_fails_at(
        root, f"_templates/page.html:{line}: WARNING: KB064 the template page.html failed", timeout=120
    )
    assert "MemoryError" in out, out[-2000:]


def test_one_long_call_the_alarm_cannot_interrupt_ends_the_build_with_kb064(root):
    """A comparison of a million 3 MB strings runs in C for a minute: the
    watchdog stops the build after twice the time limit plus five seconds."""
    with open(root / "conf.py", "a", encoding="utf-8") as conf:
        conf.write("\nkb_template_seconds = 0.3\n")
    include(
        root,
        '{% if pagename == "index" %}{% set s1 = (["x" * 1000000] * 3)|join %}{% set s2 = s1[1:] ~ "y" %}'
        "<!--{{ s2 in [s1] * 1000000 }}-->{% endif %}",
    )
    started = time.monotonic()
    code, out = build(root, timeout=120)
    assert code != 0 and "Traceback" not in out, out[-2000:]
    assert "WARNING: KB064 the template page.html ran longer than kb_template_seconds" in out, out[-2000:]
    assert "docs/index.md" in out and time.monotonic() - started < 60


def test_a_template_nesting_elements_too_deep_is_refused_before_the_search_index(root):
    """Pagefind's time grows with the square of the depth: 100,000 nested
    <div>s (600 KB a page) took it half a minute, the million a template can
    write within the page limit most of an hour. Elements deeper than a
    browser builds (512) are KB015 at the page's line, and the index is not
    run on them (checked here with 5,000 levels, which the same check stops)."""
    include(root, "<div>" * 5_000 + "</div>" * 5_000)
    out = assert_fails_at(
        root,
        "_build/html/index.html:",
        "KB015 elements nest more than 512 levels deep here (513 open), so the search index was not built",
        "KB015 elements nest more than 512 levels deep here (513 open): a browser would not show them so",
        timeout=300,
    )
    assert "Content-Security-Policy" not in out.split("elements nest more than", 1)[1].split("\n", 1)[0]
    assert not (root / "_build/html/pagefind/pagefind-entry.json").exists()  # Pagefind did not run


def test_a_template_leaving_formatting_elements_for_the_browser_to_reopen_is_refused(root):
    """<p><b>x</p> repeated: a browser opens every unclosed <b> again in the
    next <p>, so 700 of them (14 KB) make Chromium build 246,000 elements and
    nest them 513 deep, which freezes a reader's tab; Pagefind is not slowed.
    KB015 at the line, from the HTML guard."""
    line = include(root, "".join(f"<p><b class=c{i}>x</p>" for i in range(700)))
    out = assert_fails_at(
        root,
        "KB015 a formatting element <b> is closed by the end of the element around it, not by its own end tag",
        timeout=300,
    )
    assert "Content-Security-Policy" not in out.split("a formatting element <b>", 1)[1].split("\n", 1)[0]
    assert line > 1


def test_a_failure_inside_a_theme_template_is_named_at_the_project_template_that_led_there(tmp_path):
    """Jinja runs a template as code compiled under the template's file name.
    The innermost line of the project's templates is the one to fix; a theme's
    file (in site-packages) is named only when none of ours is on the way."""
    from kb.guard.templates import _template_line

    ours, theirs = tmp_path / "_templates/page.html", tmp_path / "theme/part.html"
    for path in (ours, theirs):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n", encoding="utf-8")
    code = {"theirs": compile("\n\n1 / 0", str(theirs), "exec")}
    code["ours"] = compile("\nexec(theirs, {})", str(ours), "exec")
    try:
        exec(code["ours"], {"theirs": code["theirs"]})
    except ZeroDivisionError as exc:
        failed = exc
    assert _template_line(failed, [tmp_path / "_templates"]).endswith("_templates/page.html:2")
    assert _template_line(failed, [tmp_path / "elsewhere"]).endswith("theme/part.html:3")


@IN_PROCESS
def test_a_file_name_holding_a_newline_cannot_forge_a_line_of_the_log(root):
    """The name is refused, shown with its newline escaped: the forged warning
    stays inside the real one's line, and the real one names the file."""
    forged = "conf.py:1: WARNING: KB000 forged"
    (root / "_templates" / f"x\n{forged}.html").write_text("{% if %}\n", encoding="utf-8")
    out = assert_fails_at(root, "WARNING: KB018 the name holds a control or bidirectional character")
    assert not any(line.startswith(forged) for line in out.splitlines()), out[-3000:]
    assert f"_templates/x\\n{forged}.html:1: WARNING: KB018" in out, out[-3000:]


# -- the fifth review: floods, slow reads, bytes, the warning global --------------------


@IN_PROCESS
def test_a_flood_of_refused_names_fails_a_few_pages_once_each_then_stops(root):
    """400 computed names on every page once printed 400 warnings a page (10,000
    here; 2.5 million and 6 GB with a larger loop). Now a refused name fails
    its page once, at the template's line, and after five such pages the
    rest are not rendered, which one line says."""
    line = include(
        root,
        '{% set p = "/proc/" %}{% for i in range(20) %}{% for j in range(20) %}'
        "{% include p ~ j %}{% endfor %}{% endfor %}",
    )
    out = assert_fails_at(
        root,
        f"_templates/page.html:{line}: WARNING: KB011 a template includes '/proc/0'",
        "KB064 the templates failed on 5 pages; the pages after them",
    )
    assert out.count("KB011") == 5, out[-3000:]
    assert "_templates.md" not in out  # once a location Sphinx read as a page


@IN_PROCESS
def test_a_long_run_of_spaces_is_refused_before_jinja_reads_it(root):
    """{% trans trimmed %} reads a run of spaces in time that grows with its
    square (262,000: a minute before building, then 20 s a page)."""
    (root / "_templates/slow.html").write_text(
        "<p>\n{% trans trimmed %}a" + " " * 20_000 + "b{% endtrans %}\n", encoding="utf-8"
    )
    assert_fails_at(root, "_templates/slow.html:2: WARNING: KB064 the template has more than 4,096 spaces")


@IN_PROCESS
def test_a_template_that_takes_too_long_to_read_is_refused_before_building(root):
    (root / "_templates/long.html").write_text("{{ x }}\n" * 20_000, encoding="utf-8")
    with (root / "conf.py").open("a", encoding="utf-8") as conf:
        conf.write("\nkb_template_seconds = 0.001\n")
    assert_fails_at(root, "_templates/long.html:1: WARNING: KB064 the template takes more than")
    assert not (root / "_build/html/index.html").exists()


@IN_PROCESS
def test_a_template_that_is_not_utf8_is_named_at_its_line(root):
    (root / "_templates/part.html").write_bytes(b"<p>ok</p>\n<p>caf\xe9</p>\n")
    assert_fails_at(root, "_templates/part.html:2: WARNING: KB064 the template is not UTF-8 text (byte 0xe9)")


@IN_PROCESS
def test_the_warning_global_prints_text_at_the_page_and_no_traceback(root):
    include(root, '{{ warning("%d", "x") }}{{ warning("KB011 forged", location="docs/training/x.md:7") }}')
    out = assert_fails_at(root, "WARNING: KB064 a template warns on docs/training/x.md: %d")
    assert "Logging error" not in out and "x.md:7" not in out, out[-3000:]


@pytest.mark.parametrize("statement", ['{% include ["/etc/passwd"] %}', '{% include ("/etc/" ~ "passwd") %}'])
@IN_PROCESS
def test_a_name_in_a_list_or_parentheses_is_refused_before_building(root, statement):
    line = include(root, statement)
    assert_fails_at(root, f"_templates/page.html:{line}: WARNING: KB011 a template includes '/etc/passwd'")
    assert not (root / "_build/html/index.html").exists()


@IN_PROCESS
def test_a_name_in_a_comment_is_only_text(root):
    include(root, '{# {% include "/etc/passwd" %} #}')
    code, out = build(root)
    assert code == 0 and "KB011" not in out, out[-3000:]


@IN_PROCESS
def test_lines_are_counted_as_jinja_counts_them(root):
    (root / "_templates/cr.html").write_bytes(b"a\rb\rc\r{% include '/etc/passwd' %}\r")
    assert_fails_at(root, "_templates/cr.html:4: WARNING: KB011 a template includes '/etc/passwd'")


@IN_PROCESS
def test_many_odd_files_are_listed_twenty_then_counted(root):
    for i in range(30):
        (root / f"_templates/x{i:02d}.txt").write_text("x\n", encoding="utf-8")
    out = assert_fails_at(root, "_templates/x20.txt:1: WARNING: KB018 and 10 more files or folders")
    assert out.count("KB018") == 21, out[-3000:]


# -- the sixth review: long names, warning floods, forged lines, forks, lines ----------


@IN_PROCESS
def test_a_refused_name_of_megabytes_is_shown_cut_to_its_start(root):
    """A name a template makes with ~ or * was printed whole: 100,000
    characters here, 20 MB a line with a loop of joins."""
    include(root, '{% include "/" ~ "x" * 100000 %}')
    out = assert_fails_at(root, "WARNING: KB011 a template includes '/xxx", "(100,003 characters)")
    assert len(out) < 20_000, len(out)


@IN_PROCESS
def test_a_template_calling_warning_in_a_loop_is_shown_twenty_times(root):
    include(root, '{% for i in range(1000) %}{{ warning("again " ~ i) }}{% endfor %}')
    out = assert_fails_at(root, "KB064 the templates warned more than 20 times; the rest are not shown")
    assert out.count("KB064 a template warns on") == 20, out[-3000:]


@pytest.mark.parametrize(
    "statement",
    [
        '{{ warning("x\\nconf.py:1: WARNING: KB000 forged") }}',
        '{% include ["x", "y\\nconf.py:1: WARNING: KB000 forged"] %}',
        '{% include "/\\nconf.py:1: WARNING: KB000 forged" %}',
        '{% set n = "/" %}{% include n ~ "\\rconf.py:1: WARNING: KB000 forged\\u202e" %}',
    ],
    ids=["warning", "not-found", "literal-name", "computed-name"],
)
@IN_PROCESS
def test_text_a_template_writes_into_a_warning_cannot_forge_a_line_of_the_log(root, statement):
    include(root, statement)
    code, out = build(root)
    assert code != 0 and "Traceback" not in out, out[-3000:]
    lines = [line.strip() for line in re.split(r"[\r\n\u2028\u2029]", out)]
    assert not any(line.startswith("conf.py:1: WARNING: KB000") for line in lines), out[-3000:]
    assert "\u202e" not in out


@IN_PROCESS
def test_the_failed_page_limit_holds_for_the_whole_build_not_each_process(root):
    """Sphinx writes pages in forked processes (-j 2): five failed pages in all
    stop the rendering, not five in each process."""
    for i in range(20):
        (root / f"docs/training/p{i:02d}.md").write_text(f"# 页面 {i}\n\n正文。\n", encoding="utf-8")
    with (root / "docs/training/index.md").open("a", encoding="utf-8") as guide:
        guide.write("\n```{toctree}\n:hidden:\n:glob:\n\np*\n```\n")
    include(root, '{% set p = "/proc/" %}{% include p ~ "1" %}')
    code, out = build(root, options=("-j", "2"))
    assert code != 0 and "Traceback" not in out, out[-3000:]
    assert out.count("KB011 a template includes") == 5, out[-3000:]
    assert out.count("KB064 the templates failed on 5 pages") == 1, out[-3000:]


def test_a_loop_stopped_by_the_time_limit_is_named_at_its_template_line(root):
    """The timeout is no Exception, so Jinja does not map its traceback to the
    template's lines: the line is looked up through the template (Jinja's
    __jinja_template__ global; this test fails if Jinja drops it)."""
    with open(root / "conf.py", "a", encoding="utf-8") as conf:
        conf.write("\nkb_template_seconds = 0.3\n")
    line = include(
        root,
        '{% if pagename == "index" %}\n{% for i in range(100000) %}{% for j in range(100000) %}'
        "{% endfor %}{% endfor %}{% endif %}",
    )
    assert_fails_at(
        root,
        f"_templates/page.html:{line + 1}: WARNING: KB064 the template page.html failed",
        "TemplateTimeout",
        timeout=300,
    )


def test_the_timer_and_limits_are_restored_when_the_time_runs_out_as_the_budget_ends(monkeypatch):
    """The alarm may go off while render_budget restores what it changed:
    once the budget ends, it raises nothing (it would leave the handler and
    the lowered memory limit in place), and all is put back."""
    import resource
    import signal

    from kb.guard import templates

    before = (signal.getsignal(signal.SIGVTALRM), resource.getrlimit(resource.RLIMIT_AS))
    real_setitimer, calls = signal.setitimer, []

    def setitimer_going_off(which, seconds, interval=0.0):
        calls.append(seconds)
        previous = real_setitimer(which, seconds, interval)
        if len(calls) == 2:  # the restoring call: the alarm goes off just then
            templates._expired(signal.SIGVTALRM, None)
        return previous

    monkeypatch.setattr(signal, "setitimer", setitimer_going_off)
    with templates.render_budget(30, "docs/x.md", "page.html"):
        pass
    assert len(calls) == 2
    assert signal.getitimer(signal.ITIMER_VIRTUAL) == (0.0, 0.0)
    assert (signal.getsignal(signal.SIGVTALRM), resource.getrlimit(resource.RLIMIT_AS)) == before
    templates._expired(signal.SIGVTALRM, None)  # a late alarm: no budget is running


@IN_PROCESS
def test_a_template_slow_on_every_page_is_stopped_by_the_build_wide_limit(root):
    """Under the page's limit on every page, the build took 152 s for this
    four-page project (about 180 pages reached CI's hour): the pages together
    get kb_template_build_seconds."""
    with open(root / "conf.py", "a", encoding="utf-8") as conf:
        conf.write("\nkb_template_build_seconds = 1\n")
    include(
        root,
        "{% set ns = namespace(n=0) %}{% for i in range(1000) %}{% for j in range(300) %}"
        "{% set ns.n = ns.n + j %}{% endfor %}{% endfor %}",
    )
    out = assert_fails_at(
        root, "KB064 the templates used more than kb_template_build_seconds (1 s) of CPU in all"
    )
    assert out.count("were not rendered") == 1, out[-3000:]


@IN_PROCESS
def test_a_page_of_megabytes_of_markup_is_refused(root):
    """14.7 MB of '<a></a>' a page took the HTML checks 13 s a page (376 s for
    this project), and was published."""
    include(root, '{% set s = "<a></a>" * 140000 %}{% for i in range(10) %}{{ s|safe }}{% endfor %}')
    out = assert_fails_at(root, "MiB, more than a page may be")
    assert "KB064 the template page.html failed on" in out, out[-3000:]


@IN_PROCESS
def test_the_pages_together_may_make_only_so_much_html(root, monkeypatch):
    from kb.guard import templates

    monkeypatch.setattr(templates, "MAX_SITE_CHARS", 1 << 20)
    include(root, '{% set s = "<a></a>" * 30000 %}{{ s|safe }}')
    out = assert_fails_at(root, "KB064 the templates made more than 1 MiB of HTML in all")
    assert out.count("were not rendered") == 1, out[-3000:]
