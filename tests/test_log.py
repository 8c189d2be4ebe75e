"""kb.core.log: what a contributor's text can put into the build's log."""

from __future__ import annotations

import importlib
import logging
import pkgutil
import subprocess

import kb
import pytest
from kb.core import log


def _record(msg: str, *args, location=None) -> logging.LogRecord:
    record = logging.LogRecord("sphinx.kb.test", logging.WARNING, __file__, 1, msg, args, None)
    record.location = location
    assert log.PlainRecords().filter(record)
    return record


def test_control_and_bidirectional_characters_in_arguments_are_escaped():
    record = _record("KB064 a template warns: %s", "x\r\x1b[2Jconf.py:1: WARNING: KB000\u202e")
    assert record.getMessage() == "KB064 a template warns: x\\r\\x1b[2Jconf.py:1: WARNING: KB000\\u202e"


def test_the_next_lines_of_a_message_are_indented_so_none_reads_as_a_warning():
    record = _record("Pagefind failed:\n%s", "conf.py:1: WARNING: KB000 forged\nmore\n")
    assert record.getMessage() == "Pagefind failed:\n    conf.py:1: WARNING: KB000 forged\n    more"


@pytest.mark.parametrize(
    "location, shown",
    [("docs/a\nb.md:3", "docs/a\\nb.md:3"), (("docs/a\u202eb", 3), ("docs/a\\u202eb", 3)), (None, None)],
)
def test_a_location_is_escaped_too(location, shown):
    assert _record("KB061 x", location=location).location == shown


def test_a_message_of_megabytes_is_cut():
    message = _record("KB011 %s", "x" * 5_000_000).getMessage()
    assert len(message) < log.MAX_MESSAGE + 100 and message.endswith("(5,000,006 characters)")


def test_clipped_keeps_short_text_and_cuts_long_text():
    assert log.clipped("a\nb") == "a\\nb"
    assert log.clipped("y" * 300, 10) == "y" * 10 + "… (300 characters)"


def test_every_logger_of_the_package_makes_its_records_plain():
    """A module that took Sphinx's getLogger directly would print a
    contributor's newline as it is."""
    modules = [importlib.import_module(m.name) for m in pkgutil.walk_packages(kb.__path__, "kb.")]
    loggers = {m.__name__: m.logger for m in modules if hasattr(m, "logger")}
    assert len(loggers) >= 15, sorted(loggers)
    unfiltered = [name for name, adapter in loggers.items() if log.PLAIN not in adapter.logger.filters]
    assert not unfiltered


@pytest.mark.parametrize(
    "text",
    [
        "x\n::error file=conf.py,line=1::FORGED",
        "x\n   ::add-mask::KB043",
        "x\n::stop-commands::y",
        "a ##[add-mask]KB043",
    ],
)
def test_what_github_actions_would_run_as_a_command_is_broken_up(text):
    message = _record("KB043 %s", text).getMessage()
    assert not any(line.lstrip().startswith("::") for line in message.splitlines()), message
    assert "##[" not in message


def test_a_record_passing_several_handlers_is_made_plain_once():
    record = _record("KB064 a\nb %s", "x" * 5000)
    once = record.getMessage()
    for _ in range(3):
        log.PlainRecords().filter(record)
    assert record.getMessage() == once


def test_a_name_that_is_not_utf8_is_shown_escaped():
    assert log.escaped("a\udcffb.md") == "a\\udcffb.md"


def test_sphinx_s_own_status_lines_keep_their_colours_and_progress_returns():
    """Sphinx colours its status messages inside the message (ESC) and
    rewrites progress lines with \\r: the handlers' filter leaves them."""
    record = logging.LogRecord(
        "sphinx.builders", logging.INFO, __file__, 1, "\x1b[01mreading\x1b[39;49;00m\r", (), None
    )
    assert log.PLAIN_WARNINGS.filter(record) and record.getMessage() == "\x1b[01mreading\x1b[39;49;00m\r"
    warning = logging.LogRecord("sphinx.builders", logging.WARNING, __file__, 1, "a\x1bb", (), None)
    # (and a code, as every warning: tests/test_upstream_warnings.py)
    assert log.PLAIN_WARNINGS.filter(warning) and warning.getMessage().startswith("KB100 a\\x1bb; ")


def test_a_status_line_quoting_a_file_name_cannot_hold_a_workflow_command():
    """Sphinx's status lines name the files it copies (a download's name comes
    from a pull request): the colours stay, a workflow command does not."""
    record = logging.LogRecord(
        "sphinx.builders",
        logging.INFO,
        __file__,
        1,
        "\x1b[01m%s\x1b[39;49;00m",
        ("training/##[error]x.txt",),
        None,
    )
    assert log.PLAIN_WARNINGS.filter(record)
    assert record.getMessage() == "\x1b[01mtraining/# #[error]x.txt\x1b[39;49;00m"


def test_a_download_named_as_a_workflow_command_is_not_one_in_the_log(tmp_path):
    from test_data_errors import build, tiny_project

    root = tiny_project(tmp_path / "kb")
    (root / "docs/training/##[error title=leak]x.txt").write_text("x\n", encoding="utf-8")
    page = root / "docs/training/x.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\n{download}`说明 <##[error title=leak]x.txt>`\n",
        encoding="utf-8",
    )
    code, out = build(root)
    assert code != 0 and "KB018 the name holds characters" in out, out[-3000:]
    assert "##[" not in out, [line for line in out.splitlines() if "##[" in line]


def test_a_location_cannot_hold_a_workflow_command():
    record = _record("KB093 x", location="docs/training/##[error]forged annotation.md:1")
    assert "##[" not in record.location and record.location.startswith("docs/training/")


def test_scripts_print_their_reports_plain(tmp_path, capsys, monkeypatch):
    """make's first step and make lint print, not log: the same rule applies."""
    import lint_copy
    from kb.guard import committed_build

    page = tmp_path / "x.md"
    page.write_text("中文abc ##[error]forged annotation\n", encoding="utf-8")
    assert lint_copy.main([str(page)]) == 1
    out = capsys.readouterr().out
    assert "KB030" in out and "##[" not in out
    built = tmp_path / "_build"
    built.mkdir()
    (built / "##[error]forged").write_text("x", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "-f", "_build"], cwd=tmp_path, check=True)
    monkeypatch.chdir(tmp_path)
    assert committed_build.main([str(built)]) == 2
    err = capsys.readouterr().err
    assert "KB059" in err and "forged" in err and "##[" not in err, err


def test_a_script_that_does_not_parse_is_reported_plain_at_its_line(tmp_path, capsys):
    """make lint's syntax check of _static's scripts: node quotes the failing
    line, which a pull request writes; it must not become a log line of its
    own. A name that reads as node's options stays a name."""
    import check_scripts

    (tmp_path / "kb-extra.js").write_text(
        "// x\nexport const x = 1;\n::error file=docs/index.md,line=1::forged ##[error]x\n", encoding="utf-8"
    )
    (tmp_path / "ok.js --print=31337 .js").write_text("export const y = 2;\n", encoding="utf-8")
    assert check_scripts.main([str(tmp_path)]) == 1
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert f"{tmp_path}/kb-extra.js:3: KB099 the script does not parse (SyntaxError" in out, out
    assert not any(line.startswith("::") for line in out.splitlines()) and "##[" not in out, out
    assert "31337\n" not in out and out.count("KB099") == 1
