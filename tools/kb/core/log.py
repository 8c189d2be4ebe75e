"""The package's loggers: Sphinx's, with one rule for what gets into a log line.

A warning often quotes what a pull request wrote: a file name, a template's
message, a name a template asked for, an exception's text. Quoted as it is,
a newline in it starts a line of its own in the log, where
``conf.py:1: WARNING: KB000 …`` looks like a warning of the build's, and a
bidirectional control shows the line in another order than it holds.

So every record is rewritten, ours (:func:`getLogger`, used by every module
of the package) before Sphinx's handlers see it, and Sphinx's, docutils' and
MyST's as their handlers take them (this module is an extension too, listed
first in conf.py: :func:`plain_handlers`):

- its message, once formatted, has control and bidirectional characters
  written as escapes (``\\x1b``, ``\\u202e``), except the newlines of a
  message that has several lines, whose next lines are indented (so no
  line of it starts like a warning);
- a location given as text, or as (document, line), is escaped alike;
- a message is cut to MAX_MESSAGE characters (a template can make a name
  of megabytes).
- what GitHub Actions would run as a workflow command (``::error …::``,
  ``::add-mask::``, ``::stop-commands::`` at the start of a line, spaces
  before it included, and ``##[…]`` anywhere) is broken up (``: :``, ``# #[``).

It is a logging filter on each of the package's loggers (the standard
library's documented ``Logger.addFilter``; Sphinx's ``getLogger`` returns a
``LoggerAdapter`` whose ``logger`` is that logger).
"""

from __future__ import annotations

import logging as std_logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager

from sphinx.util import logging

from kb.core import upstream_warnings

# Characters that would start a new line of the log, or show it in another order.
# (and the stand-ins of bytes that are not UTF-8 in a file name, which no
# stream can print)
UNPRINTABLE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\udc80-\udcff\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b\u200c\u2060-\u2065\u206a-\u206f\u3164\ufe00-\ufe0d\ufeff\uffa0\ufff0-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
UNPRINTABLE_BUT_NEWLINE = re.compile(
    r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\udc80-\udcff\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b\u200c\u2060-\u2065\u206a-\u206f\u3164\ufe00-\ufe0d\ufeff\uffa0\ufff0-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
# How long one record's message may be.
MAX_MESSAGE = 4000
INDENT = "    "


def _escape(match: re.Match) -> str:
    return match[0].encode("unicode_escape").decode("ascii")


def escaped(text: str) -> str:
    """``text`` with control and bidirectional characters written as escapes."""
    return UNPRINTABLE.sub(_escape, text)


def plain(text: str) -> str:
    """``text`` escaped, with what GitHub Actions would run as a workflow
    command broken up: a line of a log that is not written through logging
    (a script's report), or a location."""
    return WORKFLOW_COMMAND.sub(_defuse, escaped(text))


def clipped(text: str, most: int = 200) -> str:
    """``text`` escaped, cut to ``most`` characters with a note of its length."""
    shown = escaped(text[:most])
    return shown if len(text) <= most else f"{shown}… ({len(text):,} characters)"


# What GitHub Actions reads as a command in a log line: "::name …::" at the
# start of a line (after any spaces, which the runner strips) and "##[name]"
# anywhere.
WORKFLOW_COMMAND = re.compile(r"^(\s*):(?=:)|##\[", re.MULTILINE)


def _defuse(match: re.Match) -> str:
    return f"{match[1]}: " if match[1] is not None else "# #["


class _ReportedAt(std_logging.Filter):
    def __init__(self, location: str) -> None:
        super().__init__()
        self.location = location

    def filter(self, record: std_logging.LogRecord) -> bool:
        if record.levelno >= std_logging.WARNING:
            record.location = self.location
        return True


@contextmanager
def reported_at(location: str) -> Iterator[None]:
    """Every warning logged inside the block, by us, Sphinx, docutils or MyST,
    is reported at ``location`` ("path:LINE"): for text parsed in a page's
    parser state that comes from elsewhere (a glossary definition from
    data/glossary.yaml), which every directive and role would otherwise
    report at the page. The filter sits on the handlers of Sphinx's logger
    while the block runs (the standard library's Handler.addFilter), so it
    also marks the warnings Sphinx holds back while it reads a page (its
    pending_warnings handler) and prints later."""
    at = _ReportedAt(location)
    handlers = list(std_logging.getLogger("sphinx").handlers)
    for handler in handlers:
        handler.addFilter(at)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(at)


class PlainRecords(std_logging.Filter):
    """One record, lines only where the package's own message has them."""

    def filter(self, record: std_logging.LogRecord) -> bool:
        location = getattr(record, "location", None)
        if isinstance(location, str):
            record.location = plain(location)
        elif isinstance(location, tuple) and location and isinstance(location[0], str):
            record.location = (plain(location[0]), *location[1:])
        if getattr(record, "kb_plain", False):  # a record passes several handlers
            return True
        # the message alone (Sphinx's records put their location before it)
        message = std_logging.LogRecord.getMessage(record)
        if len(message) > MAX_MESSAGE:
            message = f"{message[:MAX_MESSAGE]}… ({len(message):,} characters)"
        message = UNPRINTABLE_BUT_NEWLINE.sub(_escape, message.rstrip("\n"))
        message = WORKFLOW_COMMAND.sub(_defuse, message.replace("\n", "\n" + INDENT))
        record.msg, record.args, record.kb_plain = message, (), True
        return True


PLAIN = PlainRecords()


class PlainWarnings(PlainRecords):
    """PlainRecords for warnings and errors. Sphinx's status lines carry its
    own colour codes and progress returns (ESC, \r), which must pass; they
    quote names of pages and files (a download's), whose control characters
    check_input_tree has refused, but which may still hold what GitHub reads
    as a workflow command (``##[error]``): that alone is broken up there."""

    def filter(self, record: std_logging.LogRecord) -> bool:
        if record.levelno >= std_logging.WARNING:
            super().filter(record)
            # Sphinx's, docutils' and MyST's own warnings get a code and a fix
            # (the package's start with theirs)
            record.msg = upstream_warnings.coded(
                record.msg, getattr(record, "type", None), getattr(record, "subtype", None)
            )
            return True
        message = std_logging.LogRecord.getMessage(record)
        if WORKFLOW_COMMAND.search(message):
            record.msg, record.args = WORKFLOW_COMMAND.sub(_defuse, message), ()
        return True


PLAIN_WARNINGS = PlainWarnings()


def plain_handlers(app=None) -> None:
    """Every handler Sphinx logs through gets the filter for warnings, so that what
    Sphinx, docutils and MyST quote from a page (an option's value, a path)
    is made plain like our own records. Sphinx sets its handlers up on its
    "sphinx" logger for each application, before extensions are set up; the
    standard library's Handler.addFilter adds ours."""
    for handler in std_logging.getLogger("sphinx").handlers:
        if PLAIN_WARNINGS not in handler.filters:
            handler.addFilter(PLAIN_WARNINGS)


class SourceLocation(std_logging.Filter):
    """Sphinx's code-block and literalinclude report a line spec out of range
    at ``get_source_and_line()``, a (source path, line) pair, which Sphinx's
    logging takes for a (docname, line) pair and turns into the path with
    the suffix added again (``x.md.md:15``): the location get_location()
    gives was added for this mismatch (sphinx-doc/sphinx#9481, fixed by PR #9498), and
    sphinx/directives/code.py does not use it yet. On that module's logger
    (the standard library's Logger.addFilter), such a pair becomes the
    "path:line" get_location() would give. tests/test_upstream_warnings.py
    fails when Sphinx reports it another way."""

    def filter(self, record: std_logging.LogRecord) -> bool:
        location = getattr(record, "location", None)
        if isinstance(location, tuple) and len(location) == 2 and isinstance(location[0], str):
            source, line = location
            if os.path.isabs(source):  # a docname never is
                record.location = f"{source}:{line}" if line else source
        return True


SOURCE_LOCATION = SourceLocation()
# the module of Sphinx's that logs such pairs, as sphinx.util.logging names its logger
CODE_DIRECTIVES_LOGGER = "sphinx.sphinx.directives.code"


def setup(app) -> dict:
    plain_handlers(app)
    code = std_logging.getLogger(CODE_DIRECTIVES_LOGGER)
    if SOURCE_LOCATION not in code.filters:
        code.addFilter(SOURCE_LOCATION)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


def getLogger(name: str) -> logging.SphinxLoggerAdapter:  # noqa: N802 (as Sphinx names it)
    """Sphinx's logger for ``name``, its records made plain (PlainRecords)."""
    adapter = logging.getLogger(name)
    if PLAIN not in adapter.logger.filters:
        adapter.logger.addFilter(PLAIN)
    return adapter
