"""Pages are untrusted input: they may only pull in files of the repository,
link with safe schemes, and never load or redirect to another host.

Every pull request is built by CI with its credentials, and main is
published. So a page must not be able to publish a file from outside the
repository (``{literalinclude} /etc/passwd``, ``{include}`` of
``/proc/self/environ``, a symlinked image), run a script in the reader's
browser (``javascript:`` links, from MyST or ``{eval-rst}``), redirect
readers (``.. meta:: :http-equiv=refresh:``) or make their browser call a
third-party host (a remote image). Each of these is a warning at the page
and line, so ``-W`` fails the build, and the offending node is removed, so
that nothing reaches the pages even when ``--keep-going`` writes them:

- ``KB011`` a file outside ``docs/`` and ``_static/`` (symlinks resolved), or
  not a regular file, pulled in by include, literalinclude, csv-table,
  image, figure or download (literalinclude's ``:diff:`` too), docutils'
  ``<…>`` standard include files (they resolve anywhere), and any symlink
  among the pages, static files,
  templates and data (the build stops before it reads them);
- ``KB012`` a link whose scheme is not http, https, mailto or ftp;
- ``KB013`` a ``meta`` element with ``http-equiv`` (refresh, or a policy);
- ``KB014`` a resource that the reader's browser, or the build, would fetch
  from another host (image, figure, csv-table ``:url:``);
- ``KB018`` an image or download of a type a browser may run as a document
  or script (``.html``, ``.xht``, ``.js`` …; IMAGE_TYPES, DOWNLOAD_TYPES);
- ``KB016`` page-level MyST settings in front matter (``myst:``,
  ``html_meta:``, ``substitutions:``): a page could turn on MyST's
  substitutions there, whose ``{{ … }}`` is Jinja evaluated without a
  sandbox at build time, that is, code run on CI with its credentials
  (the site sets MyST options in conf.py only, and does not enable
  substitutions). The keys are removed before MyST reads the page;
- ``KB086`` a class the site gives its own page parts (kb-…, furo's and
  Sphinx's THEME_CLASSES, LEFT_OUT_CLASSES): its style sheets and scripts
  may hide such an element (while the search index keeps its text), move it
  over other text, make it a control, or leave it out of the search.

Where the file is read is the directive's business, so the checks sit where
the path is known before anything is read: the ``literalinclude``,
``include`` (rST) and ``csv-table`` directives are replaced by subclasses
that check first, and ``raw`` is refused outright (KB010, as raw HTML in
Markdown is in ``kb.guard.raw_html``). MyST's ``{include}`` reads the file in
its own code, so Markdown pages are scanned for it in ``source-read`` (the
include is blanked out before MyST parses the page), included text is
scanned the same way in ``include-read``, and a transform refuses any node
whose source file lies outside the repository, whatever made it.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import os
import re
import socket
import stat
import weakref
from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import idna
from docutils import nodes
from docutils.parsers.rst import directives
from docutils.parsers.rst import languages as rst_languages
from docutils.parsers.rst.directives.images import Image
from docutils.transforms import misc as misc_transforms
from docutils.utils import SystemMessagePropagation, get_source_line
from pygments.token import STANDARD_TYPES
from sphinx import addnodes
from sphinx.directives import ObjectDescription
from sphinx.directives.code import CodeBlock, LiteralInclude
from sphinx.directives.other import HList, Include
from sphinx.directives.patches import CSVTable, Figure, Rubric
from sphinx.domains.c import CDomain
from sphinx.domains.cpp import CPPDomain
from sphinx.domains.javascript import JavaScriptDomain
from sphinx.domains.python import PyModule, PythonDomain
from sphinx.domains.rst import ReSTDomain
from sphinx.domains.std import Cmdoption, ProductionList, StandardDomain, TokenXRefRole
from sphinx.roles import XRefRole
from sphinx.transforms import SphinxTransform
from sphinx.util.docutils import ReferenceRole, SphinxDirective, SphinxRole
from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

from kb.core import data as kb_data
from kb.core import markdown as kb_markdown
from kb.core.anchors import site_id
from kb.core.log import UNPRINTABLE, clipped, escaped, getLogger
from kb.guard import silent_loss
from kb.guard.silent_loss import BuildStopped

logger = getLogger(__name__)

# MyST's own default for which schemes make a link external (myst_url_schemes)
LINK_SCHEMES = frozenset({"http", "https", "mailto", "ftp"})
# Raster images inline as data: URIs are local; SVG can carry script.
DATA_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*\Z", re.IGNORECASE)
SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")


def url_scheme(url: str) -> str | None:
    """The scheme a browser would see: it drops control characters and
    spaces around a URL and tabs and newlines inside it (``java\\tscript:``)."""
    match = SCHEME.match(re.sub(r"[\x00-\x20\x7f]", "", url))
    return match.group(1).lower() if match else None


def is_remote(url: str) -> bool:
    stripped = re.sub(r"[\x00-\x20\x7f]", "", url)
    return url_scheme(url) is not None or stripped.startswith(("//", "\\\\", "/\\", "\\/"))


# The longest address a page may link (what keeps make linkcheck's ignore
# patterns fast: kb.core.data.MAX_LINK_PATTERN_TRIES).
MAX_LINK_LENGTH = kb_data.MAX_LINK_LENGTH
# Names that only resolve inside a network: a cloud machine's metadata
# service (metadata.google.internal), mDNS, the loopback name.
INTERNAL_SUFFIXES = (".internal", ".local", ".localhost", ".localdomain", ".home.arpa")


def private_host(url: str) -> str | None:
    """The host of a web address that is this machine or its network, if it is
    one: localhost and names only a local network resolves, and any IP that is
    not a global unicast address (loopback, private, link-local, the carriers'
    shared 100.64.0.0/10 where Alibaba Cloud's metadata service answers at
    100.100.100.200, reserved, multicast). The host is read as the link checker
    reads it (hosts_as_read): 127。0。0。1, ｌｏｃａｌｈｏｓｔ and 127.0.0.1 with a
    zero-width joiner are 127.0.0.1 and localhost. A public name whose DNS
    points inside is beyond a check of the text."""
    url = re.sub(r"[\x00-\x20\x7f]", "", url)
    hosts = set()
    with contextlib.suppress(ValueError):
        hosts.add(urlsplit(url).hostname or "")
    with contextlib.suppress(LocationParseError):  # it refuses some non-ASCII hosts requests would map
        hosts.add(parse_url(url).host or "")
    for host in hosts:
        if "%" in host or "\\" in host:  # urllib3 decodes %2e, and ends the host at a backslash
            return host
        for candidate in hosts_as_read(host):
            if _private(candidate):
                return candidate
    return None


def hosts_as_read(host: str) -> set[str]:
    """``host`` as each HTTP client of the build may turn it into an address:
    requests through IDNA's UTS #46 mapping, Sphinx's link checker for a
    non-ASCII address through Python's IDNA 2003 codec
    (sphinx.util._uri.encode_uri), which also deletes zero-width joiners."""
    hosts = {host}
    with contextlib.suppress(idna.IDNAError):
        hosts.add(idna.uts46_remap(host, std3_rules=False, transitional=False))
    with contextlib.suppress(UnicodeError):
        hosts.add(host.encode("idna").decode("ascii"))
    return {h.rstrip(".").lower() for h in hosts}


def _private(host: str) -> bool:
    if host == "localhost" or host.endswith(INTERNAL_SUFFIXES):
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        try:  # the shorthands a URL parser accepts: 127.1, 0x7f000001, 2130706433
            address = ipaddress.ip_address(socket.inet_aton(host))
        except (OSError, ValueError):
            # a name of one label (metadata, ip6-localhost) resolves only inside a network
            return bool(host) and "." not in host
    return not address.is_global or address.is_multicast


def allowed_roots(app) -> tuple[str, ...]:
    """Folders a page may pull files from: docs/ and _static/ (real paths)."""
    return roots_of(app.srcdir, app.confdir)


def roots_of(srcdir, confdir) -> tuple[str, ...]:
    return tuple(os.path.realpath(p) for p in (srcdir, Path(confdir) / "_static"))


def inside(path: str | os.PathLike, roots: tuple[str, ...]) -> bool:
    real = os.path.realpath(path)
    return any(real == root or real.startswith(root + os.sep) for root in roots)


def file_problem(path: str | os.PathLike, roots: tuple[str, ...]) -> str | None:
    """Why a page may not read ``path`` (None: it may)."""
    if not inside(path, roots):
        return "lies outside docs/ and _static/"
    real = os.path.realpath(path)
    if os.path.exists(real) and not os.path.isfile(real):
        return "is not a regular file"
    return None


# docutils' "standard" include files: <name> is joined onto docutils' own
# folder, so <../../../etc/passwd> or </proc/self/environ> reach any file.
STANDARD = (
    "names one of docutils' standard include files (<…>), which resolve outside the "
    "repository; this site does not use them"
)


def is_standard_include(argument: str) -> bool:
    argument = argument.strip()
    return argument.startswith("<") and argument.endswith(">")


# The refusals of a file a page uses: where it is (KB011), what it is (KB018).
_REFUSALS = {
    "KB011": "pages may only use files inside docs/ or _static/ of this repository "
    "(symlinks are resolved); copy the file there",
    "KB018": "publish it in another format (a text file, PNG, PDF …) or show it in the page",
}


def _refuse(code: str, location, what: str, target: str, problem: str) -> None:
    logger.warning(
        f"{code} %s %r %s: {_REFUSALS[code]}",
        what,
        target,
        problem,
        location=location,
        type="kb",
        subtype="untrusted",
    )


def _refuse_file(location, what: str, target: str, problem: str) -> None:
    _refuse("KB011", location, what, target, problem)


# -- directives that read files: check before reading ---------------------------


def directive_location(directive: SphinxDirective):
    """(docname, line) of a directive. Inside ``{eval-rst}`` the line MyST
    gives rST directives is off by a few; the directive's first line of text,
    found in the page's source, is exact."""
    first = directive.block_text.strip().split("\n")[0].strip()
    env = directive.state.document.settings.env  # also for plain docutils directives
    source, at = directive.state_machine.get_source_and_line(directive.lineno)
    if other := _other_file(env, source, env.docname):
        return f"{shown(other)}:{at or directive.lineno}"  # in an included file
    docname, line = _location(env, None, env.docname, first or None, near=directive.lineno)
    return docname, line or directive.lineno


class _Confined(SphinxDirective):
    """Mixin: refuse the directive's file argument when it is not ours."""

    what = "file"

    def refused(self, argument: str, written: str | None = None) -> bool:
        """Refuse the file ``argument`` names when it is not ours; the message
        quotes it as the page wrote it (``written``, when the argument is a
        path the directive worked out from it)."""
        written = (written or argument).strip()
        if is_standard_include(argument):
            _refuse_file(directive_location(self), self.what, written, STANDARD)
            return True
        _, absolute = self.env.relfn2path(argument.strip(), self.env.docname)
        problem = file_problem(absolute, roots_of(self.env.srcdir, self.config.kb_confdir))
        if problem:
            _refuse_file(directive_location(self), self.what, written, problem)
            return True
        return False

    def blank_run(self, path: str | os.PathLike) -> bool:
        """Report (KB094) a file with a long run of whitespace-only lines
        (within the budget: at most 1 MiB is read here)."""
        try:
            with open(path, encoding="utf-8", errors="replace") as file:
                line = silent_loss.blank_run(file.read())
        except OSError:
            return False  # missing: the directive reports it
        if line is None:
            return False
        silent_loss.report_blank_run(directive_location(self))
        return True

    def over_budget(self, path: str | os.PathLike) -> bool:
        """Count the file against the page's budget of reads (KB063: a page
        of literalincludes of one large file would write gigabytes)."""
        try:
            size = os.path.getsize(path)
        except OSError:
            return False  # missing: the directive reports it
        name = os.path.relpath(path, self.env.srcdir)
        return silent_loss.over_read_budget(self.env.docname, size, name, lambda: directive_location(self))

    def refused_as_is(self, path: str) -> bool:
        problem = file_problem(path, roots_of(self.env.srcdir, self.config.kb_confdir))
        if problem:
            _refuse_file(directive_location(self), self.what, path, problem)
        return problem is not None


# Sphinx makes a list of every line a spec names (``:emphasize-lines:
# 1-99999999999`` fills the machine's memory): no directive names more.
MAX_SPEC_LINES = 100_000


def line_spec_too_large(directive: SphinxDirective, *options: str) -> bool:
    """Report (KB094) and say so if one of ``options`` names more lines than
    MAX_SPEC_LINES; a spec that does not parse is left to Sphinx's own warning."""
    for option in options:
        total = 0
        for part in str(directive.options.get(option, "")).split(","):
            bounds = part.strip().split("-")
            try:
                if len(bounds) == 2 and bounds[1].strip():
                    total += max(int(bounds[1]) - int(bounds[0] or 1) + 1, 1)
                else:
                    total += 1  # one line, or a range to the end of the file (its length)
            except ValueError:
                continue
        if total > MAX_SPEC_LINES:
            logger.warning(
                "KB094 :%s: names %d lines, more than the %d a block may have; name the lines the block has",
                option,
                total,
                MAX_SPEC_LINES,
                location=directive_location(directive),
                type="kb",
                subtype="untrusted",
            )
            return True
    return False


# and a tab as wide as :tab-width: says (a billion spaces: memory again)
MAX_TAB_WIDTH = 64


def tab_width_too_large(directive: SphinxDirective) -> bool:
    width = directive.options.get("tab-width")
    if isinstance(width, int) and width > MAX_TAB_WIDTH:
        logger.warning(
            "KB094 :tab-width: %d is more than %d spaces; use a width a reader would (4 or 8)",
            width,
            MAX_TAB_WIDTH,
            location=directive_location(directive),
            type="kb",
            subtype="untrusted",
        )
        return True
    return False


def text_encoding(name: str) -> bool:
    """Whether Python reads text with the codec ``name``: not one it has for
    other things (rot13, base64, zlib), nor none."""
    try:
        "x".encode(name)
    except LookupError:
        return False
    except ValueError:  # a text encoding that cannot write "x" (punycode: UnicodeError)
        return True
    return True


def report_encoding(name: str, location) -> None:
    logger.warning(
        "KB107 :encoding: %r is not a text encoding Python knows; the files of this site are "
        "UTF-8: remove the option, or name the file's text encoding (such as gbk)",
        clipped(str(name), 60),
        location=location,
        type="kb",
        subtype="untrusted",
    )


def encoding_refused(directive: SphinxDirective) -> bool:
    """Report (KB107) and say so if the directive's ``:encoding:`` is no text
    encoding: docutils opens the file with it (a LookupError traceback)."""
    name = directive.options.get("encoding")
    if not name or text_encoding(name):
        return False
    report_encoding(name, directive_location(directive))
    return True


def caption_renders_nothing(directive, run, error: type[Exception] = IndexError) -> list[nodes.Node]:
    """``run()``, or KB068 (no traceback) when the caption it parses renders
    no node: sphinxcontrib-mermaid's figure_wrapper takes the first node of a
    :caption: parsed as blocks (an IndexError when there is none); docutils'
    Figure takes it from the figure's text (an UnboundLocalError). (Code
    blocks: _OneParagraphCaption.) Pages are checked before MyST reads
    them (kb.guard.silent_loss.bad_captions); this is for what that check
    cannot see: rST in {eval-rst}, a caption of a directive that returns no
    node ({default-role}, an include of blank lines)."""
    try:
        return run()
    except error:
        # only where the caption is the cause: a :caption: given (IndexError), a
        # figure's text parsed to no node (UnboundLocalError: its loop never ran)
        if error is IndexError and "caption" not in directive.options:
            raise
        _report_caption_run(directive)
        return []


def _report_caption_run(directive) -> None:
    logger.warning(
        "KB068 the caption of this %s renders nothing, or more than one paragraph (its "
        ":caption:, or a figure's text): only the first node of what it holds is kept; "
        "write it as one paragraph of plain text",
        directive.name,
        location=directive_location(directive),
        type="kb",
        subtype="caption",
    )


class _OneParagraphCaption:
    """For code-block and literalinclude, whose only call of the public
    ``parse_text_to_nodes`` is for the caption (Sphinx's container_wrapper,
    which keeps the first node): a caption that renders no node, or more
    than one paragraph (rST blocks in {eval-rst} need no blank line between
    them), is reported (KB068) and shown as the text it was written as."""

    def parse_text_to_nodes(self, text="", /, *, offset=-1, allow_section_headings=False):
        parsed = super().parse_text_to_nodes(
            text, offset=offset, allow_section_headings=allow_section_headings
        )
        if len(parsed) == 1 and isinstance(parsed[0], nodes.paragraph):
            return parsed
        _report_caption_run(self)
        return [nodes.paragraph(str(text), str(text))]


class CheckedCodeBlock(_OneParagraphCaption, CodeBlock):
    def run(self) -> list[nodes.Node]:
        if line_spec_too_large(self, "emphasize-lines"):
            return []
        return super().run()


# An image's :scale: (percent) and lengths (:width:, :height:, a figure's
# :figwidth:) at most: docutils' HTML writer turns them into floats (a number
# of 400 digits: an OverflowError traceback)
MAX_SCALE = 1000
MAX_LENGTH = 10_000
_LENGTH_NUMBER = re.compile(r"\s*([0-9]*\.?[0-9]*)")


def _is_zero(value) -> bool:
    """Whether an image's size (a scale, a length such as "0px" or "0%") shows
    nothing: zero, or less than one pixel (a pixel, or a number without a
    unit, is the smallest a screen draws)."""
    if value is None:
        return False
    text = str(value)
    match = _LENGTH_NUMBER.match(text)
    if not match[1].strip("."):
        return False
    try:
        size = float(match[1])
    except ValueError:
        return False
    unit = text[match.end() :].strip().lower()
    return size == 0 or (size < 1 and unit in ("", "px"))


def size_refused(directive: SphinxDirective) -> bool:
    """Report (KB094) and say so if an image's scale or a length is beyond
    what a page shows."""
    for option, most in (
        ("scale", MAX_SCALE),
        ("width", MAX_LENGTH),
        ("height", MAX_LENGTH),
        ("figwidth", MAX_LENGTH),
    ):
        value = directive.options.get(option)
        if value is None or value == "image":
            continue
        number = _LENGTH_NUMBER.match(str(value))[1]
        try:
            big = float(number) > most
        except (ValueError, OverflowError):
            continue  # no number: docutils' own option check said so
        if big:
            logger.warning(
                "KB094 :%s: %s is more than %d; give a size a page can show (a scale up to "
                "%d%%, a width or height up to %d px)",
                option,
                clipped(str(value), 40),
                most,
                MAX_SCALE,
                MAX_LENGTH,
                location=directive_location(directive),
                type="kb",
                subtype="untrusted",
            )
            return True
    return False


class CheckedImage(Image):
    def run(self) -> list[nodes.Node]:
        if size_refused(self):
            return []
        return super().run()


class CheckedFigure(Figure):
    """A figure as docutils makes it, but for ``:figwidth: image``: docutils
    then opens the picture with PIL at its path as written, from the folder
    the build runs in, not the page's (a file outside the repository, whose
    width the page then shows; or a decompression-bomb traceback). KB017."""

    def run(self) -> list[nodes.Node]:
        if size_refused(self):
            return []
        if self.options.get("figwidth") == "image":
            logger.warning(
                "KB017 figure's :figwidth: image makes docutils open the picture at its path "
                "as written, from the folder the build runs in, not the page's (a file outside "
                "the repository, or none); give the width, such as 80% or 400px",
                location=directive_location(self),
                type="kb",
                subtype="untrusted",
            )
            del self.options["figwidth"]
        return caption_renders_nothing(self, super().run, UnboundLocalError)


def _unreadable(directive, what: str, fix: str) -> None:
    logger.warning(
        "KB078 Sphinx cannot read this %s %s; %s",
        directive.name.rpartition(":")[2],
        what,
        fix,
        location=directive_location(directive),
        type="kb",
        subtype="signature",
    )


class CheckedCmdoption(Cmdoption):
    """``{option}``: Sphinx 9.0 reads past the end of a signature such as
    ``-x[`` (an IndexError traceback). It is reported (KB078) and shown as
    written, as Sphinx shows a signature it cannot read (a ValueError)."""

    def handle_signature(self, sig, signode):
        try:
            return super().handle_signature(sig, signode)
        except IndexError as exc:
            _unreadable(self, f"signature {sig!r}", "close the brackets of the option's value (-x[=VALUE])")
            raise ValueError(sig) from exc


class CheckedPyModule(PyModule):
    """``{py:module}``: Sphinx shows its :synopsis:, :platform: and
    :deprecated: only in the Python module index, which this site does not
    make (html_domain_indices = False): the text reached no page. KB017, and
    the module is described without them."""

    DROPPED = ("synopsis", "platform", "deprecated")

    def run(self) -> list[nodes.Node]:
        for option in self.DROPPED:
            if option in self.options:
                logger.warning(
                    "KB017 py:module's :%s: shows only in the Python module index, which this "
                    "site does not have: no reader would see it; write it in the text after "
                    "the directive",
                    option,
                    location=directive_location(self),
                    type="kb",
                    subtype="untrusted",
                )
                del self.options[option]
        return super().run()


class CheckedTokenRole(TokenXRefRole):
    """``{token}``: Sphinx 9.0 unpacks ``~a:b:c`` into two parts (a ValueError
    traceback); such a reference is reported (KB078) and kept as written."""

    def process_link(self, env, refnode, has_explicit_title, title, target):
        try:
            return super().process_link(env, refnode, has_explicit_title, title, target)
        except ValueError:
            logger.warning(
                "KB078 Sphinx cannot read this token reference %r; name one token, with at most "
                "one ':' between the grammar and the token (~grammar:token)",
                title,
                location=self.get_location(),
                type="kb",
                subtype="signature",
            )
            return title, target.lstrip("~")


# What a {numref} title may hold besides its text, as Sphinx 9.0 fills it in
# (StandardDomain._resolve_numref_xref): with str.format when "{name}" or
# "number" is in it (the caption as {name}, the number as {number}; {{ and }}
# for braces), else with % (the number as one %s; %% for the sign)
_FORMAT_FIELDS = re.compile(r"\{\{|\}\}|\{name\}|\{number\}")
_PERCENT_FIELDS = re.compile(r"%%|%s")


class CheckedNumrefRole(XRefRole):
    """``{numref}`title <label>```: Sphinx formats the title with str.format or
    %, and catches only KeyError and TypeError. ``{0}``, ``{number!x}``, ``第 %
    节`` were an IndexError or ValueError traceback, and ``{number:>300000000}``
    a MemoryError, once a toctree numbers the sections. A title holding any
    other field is KB078, and the reference shows the default numbering."""

    def process_link(self, env, refnode, has_explicit_title, title, target):
        if has_explicit_title and not self.readable(title):
            logger.warning(
                "KB078 Sphinx cannot read this numref title %s; write the number as %%s (a %% sign "
                "as %%%%), or as {number} with the caption as {name} (a brace as {{ or }}), "
                "not both",
                clipped(repr(title), 100),
                location=self.get_location(),
                type="kb",
                subtype="signature",
            )
            refnode["refexplicit"] = False
        return super().process_link(env, refnode, has_explicit_title, title, target)

    @staticmethod
    def readable(title: str) -> bool:
        if "{name}" in title or "number" in title:  # str.format, as Sphinx chooses
            rest = _FORMAT_FIELDS.sub("", title)
            return not any(sign in rest for sign in ("{", "}", "%s", "%%"))  # % forms: shown as written
        return "%" not in _PERCENT_FIELDS.sub("", title) and _PERCENT_FIELDS.findall(title).count("%s") == 1


class CheckedProductionList(ProductionList):
    """``{productionlist}``: Sphinx 9.0 takes max() of the productions, and
    an argument with no ``name: tokens`` line is a ValueError traceback."""

    def run(self) -> list[nodes.Node]:
        # as Sphinx reads it: a first line without ":" names the group; the
        # productions run to the first line without ":", and the rest is dropped
        lines = self.arguments[0].replace("\\\n", "").splitlines()
        rest = lines[1:] if lines and ":" not in lines[0] else lines
        productions = next((i for i, line in enumerate(rest) if ":" not in line), len(rest))
        if not productions:
            _unreadable(
                self,
                "grammar: it holds no production",
                "write each production as name: tokens, in the directive's argument",
            )
            return []
        if any(line.strip() for line in rest[productions:]):
            _unreadable(
                self,
                f"grammar past the line {rest[productions]!r}, which has no ':' (Sphinx drops it and what follows)",
                "write each production as name: tokens, one per line",
            )
        return super().run()


# An {hlist} spreads its items over this many columns at most (Sphinx's
# examples use 2 or 3; a column is a table cell of the page)
MAX_HLIST_COLUMNS = 12


class CheckedHList(HList):
    """``{hlist}``: Sphinx 9.0 takes ``:columns:`` as any integer: 0 is a
    ZeroDivisionError traceback, a negative number drops every item without
    a word, and a large one makes that many empty columns (10**11: the build
    never ends). Outside 1..MAX_HLIST_COLUMNS it is KB079, and the items are
    kept as the list they were written as."""

    def run(self) -> list[nodes.Node]:
        columns = self.options.get("columns", 2)
        if 1 <= columns <= MAX_HLIST_COLUMNS:
            return super().run()
        logger.warning(
            "KB079 the hlist's :columns: is %s; give a number from 1 to %d",
            clipped(str(columns), 20),
            MAX_HLIST_COLUMNS,
            location=directive_location(self),
            type="kb",
            subtype="hlist",
        )
        return self.parse_content_to_nodes()


# :diff: compares two files line by line (difflib: time grows with the
# square of the lines; 160,000 lines took two minutes)
MAX_DIFF_LINES = 5_000


class ConfinedLiteralInclude(_OneParagraphCaption, _Confined, LiteralInclude):
    what = "literalinclude of"

    def diff_too_long(self) -> bool:
        """Report (KB094) a :diff: of a file longer than MAX_DIFF_LINES."""
        for argument in (self.arguments[0], self.options["diff"]):
            path = self.env.relfn2path(argument.strip(), self.env.docname)[1]
            try:
                with open(path, "rb") as file:
                    lines = sum(chunk.count(b"\n") for chunk in iter(lambda: file.read(1 << 16), b""))
            except OSError:
                continue  # missing: the directive reports it
            if lines > MAX_DIFF_LINES:
                logger.warning(
                    "KB094 :diff: of %s, a file of %d lines, more than the %d a diff may "
                    "have (it takes time with the square of the lines); show a shorter excerpt",
                    argument.strip(),
                    lines,
                    MAX_DIFF_LINES,
                    location=directive_location(self),
                    type="kb",
                    subtype="untrusted",
                )
                return True
        return False

    def run(self) -> list[nodes.Node]:
        if self.refused(self.arguments[0]) or line_spec_too_large(self, "lines", "emphasize-lines"):
            return []
        if tab_width_too_large(self):
            return []
        if "diff" in self.options:
            # :diff: reads a second file, by the name as given (a trailing space
            # is part of it): checked as read
            self.options["diff"] = self.options["diff"].strip()
            if self.refused(self.options["diff"]) or self.diff_too_long():
                return []
        for argument in (self.arguments[0], self.options.get("diff")):
            if argument and self.over_budget(self.env.relfn2path(argument.strip(), self.env.docname)[1]):
                return []
            if argument and self.blank_run(self.env.relfn2path(argument.strip(), self.env.docname)[1]):
                return []
        return super().run()


class ConfinedInclude(_Confined, Include):
    """rST ``.. include::`` (in ``{eval-rst}``). MyST runs its own include
    code for any subclass of docutils' Include: see ``scan_includes``."""

    what = "include of"
    # docutils' :parser: imports the Python module it names while the option
    # is read (``:parser: antigravity``), before run(): kept as text here
    option_spec = {**Include.option_spec, "parser": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        if "parser" in self.options:
            logger.warning(
                "KB017 include's :parser: option imports the Python module it names while "
                "the site builds; remove it: an included .md file is read as Markdown, any "
                "other as reStructuredText",
                location=directive_location(self),
                type="kb",
                subtype="untrusted",
            )
            return []
        if tab_width_too_large(self) or encoding_refused(self):
            return []
        if self.refused(self.arguments[0]):
            return []
        path = self.env.relfn2path(self.arguments[0].strip(), self.env.docname)[1]
        if "literal" in self.options or "code" in self.options:
            # read as text, not parsed: Sphinx's include-read never sees it
            if self.over_budget(path) or self.blank_run(path):
                return []
        else:
            # docutils reads the whole file, then slices it (:end-line: 1 of 20
            # MiB); include-read counts the slice, after the read: the file's
            # size is checked first
            files, size = silent_loss.read_so_far(self.env.docname)
            with contextlib.suppress(OSError):  # missing: the directive reports it
                size += os.path.getsize(path)
            if silent_loss.over_budget_alone(files + 1, size):
                silent_loss.report_over_budget(
                    self.env.docname, os.path.relpath(path, self.env.srcdir), directive_location(self)
                )
                return []
        return super().run()


# csv-tables inside cells of csv-tables, at most (each cell is parsed while its
# table is: the count is of the tables being parsed in this process).
MAX_CSV_NESTING = 3
_csv_nesting = [0]
# and cells in one table: each is parsed as Markdown on its own (120 KB of
# cells took 43 s); the longest table of the articles has under 200
MAX_CSV_CELLS = 5_000
# Directives that read a file (csv-table: its :file:; eval-rst: rST's include
# and literalinclude): text parsed on its own, out of sight of the page's
# checks (a csv-table cell, a glossary definition), may hold none of them.
FILE_READERS = frozenset({"include", "literalinclude", "csv-table", "eval-rst", "eval-rest"})


def file_readers(holder, text: str):
    """Each directive of ``text`` that reads a file (FILE_READERS, by any of
    its names; kb.core.markdown.Block); ``holder`` has the build's ``config``
    and ``env`` (the app, a directive)."""
    for block in kb_markdown.directives(kb_markdown.probe(holder), holder.env, text):
        if canonical_directive(holder, block.name) in FILE_READERS:
            yield block


# What the page's checks find, in a cell of a csv-table (parsed as Markdown on
# its own, out of their sight): (check, warning, subtype); a warning with %s
# names what the check found first (KB065: the option)
CELL_CHECKS = (
    (
        silent_loss.too_deep,
        "KB053 a cell of this csv-table nests lists or quotes too deep: the "
        "Markdown parser would drop the block and what follows it; flatten the cell",
        "nesting",
    ),
    (
        lambda env, text: silent_loss.dropped_front_matter(env, text, whole=True),
        "KB066 a cell of this csv-table starts (or has a directive whose text starts) "
        "with a block between --- lines: MyST reads it as front matter and drops it "
        "without a word; start the text with a line of its own",
        "dropped",
    ),
    (
        silent_loss.dropped_after_attribution,
        "KB069 a cell of this csv-table has text after the '-- author' line of a "
        "quote (epigraph, highlights, pull-quote): MyST drops it without a word; "
        "end the quote with the attribution",
        "dropped",
    ),
    (
        silent_loss.dropped_cells,
        "KB087 a cell of this csv-table holds a table with a row of more cells than its "
        "header has columns: Markdown drops the cells past them without a word; add the "
        "columns to the header",
        "dropped",
    ),
    (
        silent_loss.dropped_block_breaks,
        "KB088 a cell of this csv-table has text after +++: MyST keeps it as a notebook "
        "cell's metadata, which no page shows; write it on a line of its own",
        "dropped",
    ),
    (
        silent_loss.bad_captions,
        "KB068 a cell of this csv-table has a directive whose :caption: is not one "
        "paragraph of text: it is parsed as Markdown; write it as plain text",
        "caption",
    ),
    (
        silent_loss.repeated_options,
        "KB065 a cell of this csv-table gives the option :%s: of a directive again: "
        "the directive would keep only the last value, without a word; give each option once",
        "option",
    ),
)


class ConfinedCSVTable(_Confined, CSVTable):
    what = "csv-table file"

    def cells_too_deep(self, read: str | None = None) -> bool:
        """Report a table of more cells than MAX_CSV_CELLS (KB094), or a cell
        whose lists or quotes the Markdown parser would cut silently (KB053):
        each cell is parsed as Markdown on its own, out of sight of the page's
        check (kb.core.markdown.LITERAL_BODIES). Read with CSVTable's own
        get_csv_data, parse_csv_data_into_rows and process_header_option
        (the cells of :header: too)."""
        given = self.options.get("file")
        if read is not None:
            self.options["file"] = read  # the path Sphinx reads (/x is docs/x), absolute
        try:
            data, source = self.get_csv_data()
            rows, _ = self.parse_csv_data_into_rows(data, self.DocutilsDialect(self.options), source)
            # the :header: option's cells are parsed as Markdown too
            rows = self.process_header_option()[0] + rows
        except SystemMessagePropagation:  # reported already: run() ends with it
            raise
        except Exception:  # noqa: BLE001 - run() reports what the table cannot read
            return False
        finally:
            if read is not None:
                self.options["file"] = given
        for row in rows:
            for *_, lines in row:
                # before anything parses the cell: this would make that take minutes
                if silent_loss.footnote_scan("\n".join(lines)):
                    silent_loss.report_footnote_scan(
                        directive_location(self), "a cell of this csv-table has "
                    )
                    return True
                if self.cell_reads_a_file("\n".join(lines)):
                    return True
        cells = sum(len(row) for row in rows)
        if cells > MAX_CSV_CELLS:
            logger.warning(
                "KB094 the csv-table has %d cells, more than the %d a table may have (each "
                "cell is parsed as a page of its own); split the table or link to the data file",
                cells,
                MAX_CSV_CELLS,
                location=directive_location(self),
                type="kb",
                subtype="untrusted",
            )
            return True
        for row in rows:
            for *_, lines in row:
                for check, message, subtype in CELL_CHECKS:
                    if found := check(self.env, "\n".join(lines)):
                        logger.warning(
                            message,
                            *([found[0][1]] if "%s" in message else []),
                            location=directive_location(self),
                            type="kb",
                            subtype=subtype,
                        )
                        return True
        return False

    def cell_reads_a_file(self, text: str) -> bool:
        """Report (KB011) a cell that holds a directive reading a file: each cell
        is parsed as Markdown on its own, where the page's checks of includes
        (scan_includes) do not see it, and MyST would read the file first."""
        for block in file_readers(self, text):
            name, argument = block.name, block.argument
            logger.warning(
                "KB011 a cell of this csv-table holds {%s} %s: a cell is parsed on its own, "
                "where no file may be read (nor a table of tables); put the text in the cell",
                name,
                argument,
                location=directive_location(self),
                type="kb",
                subtype="untrusted",
            )
            return True
        return False

    def run(self) -> list[nodes.Node]:
        if "url" in self.options:
            logger.warning(
                "KB014 csv-table :url: %r would be fetched by the build from another "
                "host; put the table in the page or in a file under docs/",
                self.options["url"],
                location=directive_location(self),
                type="kb",
                subtype="untrusted",
            )
            return []
        if encoding_refused(self):
            return []
        if "file" in self.options:
            # Sphinx maps /x to docs/x; docutils reads any other path relative to
            # the file being parsed, which is an included file's folder, not the page's
            written = target = self.options["file"].strip()
            if target.startswith("/") and os.path.exists(target) and self.refused_as_is(target):
                # Sphinx reads an absolute path that exists as it is (with a
                # warning of its own), not from docs/
                return []
            if not target.startswith("/") and not is_standard_include(target):
                source = self.state.document.current_source or ""
                target = "/" + os.path.relpath(
                    os.path.join(os.path.dirname(os.path.abspath(source)), target), self.env.srcdir
                )
            if self.refused(target, written):
                return []
            # what Sphinx reads: an absolute path that exists as it is, any other from docs/
            read = target if os.path.exists(target) else self.env.relfn2path(target, self.env.docname)[1]
            if self.over_budget(read):
                return []
        else:
            read = None
        try:
            if self.cells_too_deep(read):
                return []
        except SystemMessagePropagation as failed:
            # docutils has reported why the table cannot be read (a missing
            # file): end as CSVTable.run does, without reading it again (and
            # reporting it twice)
            return [failed.args[0]]
        if _csv_nesting[0] >= MAX_CSV_NESTING:  # tables in cells of tables (a file that reads itself)
            logger.warning(
                "KB053 csv-tables nested more than %d deep in one another's cells (a :file: that "
                "holds a csv-table of itself?); flatten them",
                MAX_CSV_NESTING,
                location=directive_location(self),
                type="kb",
                subtype="nesting",
            )
            return []
        _csv_nesting[0] += 1
        try:
            return super().run()
        except RecursionError:  # directives nested in a cell (each cell is parsed as Markdown)
            logger.warning(
                "KB053 a cell of this csv-table nests directives, lists or quotes past what "
                "the parser can read; flatten the cell",
                location=directive_location(self),
                type="kb",
                subtype="nesting",
            )
            return []
        except UnicodeError as exc:  # UnicodeDecodeError, or a codec's own (utf-16 without a BOM)
            at = f" (byte 0x{exc.object[exc.start]:02x})" if isinstance(exc, UnicodeDecodeError) else ""
            if encoding := self.options.get("encoding"):
                message, args = (
                    "KB054 csv-table file %r cannot be read as %s%s; save it as UTF-8 and remove :encoding:",
                    (clipped(str(encoding), 60),),
                )
            else:
                message, args = "KB054 csv-table file %r is not UTF-8%s; save it as UTF-8", ()
            logger.warning(
                message,
                self.options.get("file"),
                *args,
                at,
                location=directive_location(self),
                type="kb",
                subtype="encoding",
            )
            return []
        finally:
            _csv_nesting[0] -= 1


class RefusedDirective(SphinxDirective):
    """Directives this site cannot show or run (REFUSED_DIRECTIVES says why):
    their content would vanish (header, footer, title), the page writer
    cannot render them (contents, sectnum and target-notes leave ``pending``
    nodes that stop the build), or they run code (autoclasstree)."""

    has_content = True
    optional_arguments = 10
    final_argument_whitespace = True
    option_spec = defaultdict(lambda: directives.unchanged)  # any option: refused anyway

    def run(self) -> list[nodes.Node]:
        language = rst_languages.get_language(self.config.language or "en")
        name = self.name.lower().removeprefix("std:")
        logger.warning(
            "KB017 %s",
            REFUSED_DIRECTIVES[language.directives.get(name, name)],
            location=directive_location(self),
            type="kb",
            subtype="untrusted",
        )
        return []


# What {index} (directive or role) gives: entries no page or book shows
NO_INDEX = (
    "entries are not shown on this site: it has no general index, and the search reads each "
    "page's text; remove them, and put words readers search for that the text does not say "
    "in the front matter's keywords"
)
_UNSUPPORTED = (
    "the {} directive is not supported on this site (its content would be lost, or the "
    "page cannot be written); remove it: the sidebar shows the page's contents"
)
REFUSED_DIRECTIVES = {
    **{
        name: _UNSUPPORTED.format(name)
        for name in ("contents", "sectnum", "section-numbering", "target-notes", "header", "footer", "title")
    },
    # its text goes into the book's LaTeX as it is (\input reads any file)
    "tabularcolumns": "tabularcolumns passes its text to LaTeX unchecked, and the book would "
    "run it; remove it: the book lays out tables itself",
    # Sphinx's own glossary parses each definition as Markdown out of sight of the
    # checks that bound nesting (kb.core.markdown.LITERAL_BODIES)
    "glossary": "the glossary directive is not used in pages: terms and their definitions "
    "live in data/glossary.yaml, from which the glossary page is made; add the term there",
    # the checks read a directive's name as Sphinx does with conf.py's
    # primary_domain (kb.core.markdown.directive_class): a page that changes
    # the domain would make ``{class}`` a directive they read otherwise
    "default-domain": "default-domain changes what the directive names after it mean, and "
    "the site's checks would read them otherwise; remove it and name the domain in the "
    "directive ({py:function})",
    # sphinxcontrib-mermaid's: imports the modules it names, on the machine that builds
    "autoclasstree": "autoclasstree imports Python modules while the site builds; it is not "
    "allowed in pages: draw the diagram in a mermaid block",
    # docutils' own test directive: its content becomes an info message, which
    # the page drops
    "restructuredtext-test-directive": "restructuredtext-test-directive is docutils' test "
    "directive: none of its content reaches the page; remove it",
    # the entries go to Sphinx's general index, which the site does not make
    # (conf.py: html_use_index, epub_use_index; the PDF prints none)
    "index": f"index {NO_INDEX}",
}


# Sphinx's C and C++ domains read a declaration with a backtracking parser:
# its time doubles with each pair of nested parentheses (20 pairs in a
# {cpp:expr} role took three minutes, a few more would take hours), and it
# recurses past Python's limit on 14 pairs (c) or 100 (cpp), a traceback.
# No page of this site documents a C or C++ API: their directives and roles
# are refused, before anything parses their text.
REFUSED_DOMAINS = (CDomain, CPPDomain)
# the domains whose object descriptions are checked (checked_description)
DESCRIBING_DOMAINS = (PythonDomain, JavaScriptDomain, ReSTDomain, StandardDomain)
NO_C_DOMAIN = (
    "Sphinx's C and C++ domains are not used on this site (their parser can take hours on "
    "a short nested expression); show the declaration in a code block (```cpp) or as "
    "inline code"
)
# How deep brackets may nest in the signature of any other object description
# (py:function, js:function, option …): Sphinx's parsers recurse once a level
# and end in a traceback somewhere past 500
MAX_SIGNATURE_NESTING = 50
# and how long it may be with its options: the Python domain's parser takes
# time with the square of a signature's length (9,000 parameters with
# defaults, 60 KB: a minute); a real one is a few hundred characters
MAX_SIGNATURE_LENGTH = 2000


def silent_domain(domain: type) -> type:
    """``domain`` answering no reference: the ``any`` role asks every domain
    to resolve its target, and the C and C++ domains would parse it with the
    parser their directives and roles are refused for (18 nested pairs in
    {any}`a<((…))>::b` took 160 s)."""

    def resolve_xref(self, env, fromdocname, builder, typ, target, node, contnode):
        return None

    def resolve_any_xref(self, env, fromdocname, builder, target, node, contnode):
        return []

    return type(
        f"Silent{domain.__name__}",
        (domain,),
        {"resolve_xref": resolve_xref, "resolve_any_xref": resolve_any_xref, "__doc__": domain.__doc__},
    )


class RefusedDomainDirective(SphinxDirective):
    """A directive of a domain in REFUSED_DOMAINS: KB017, and nothing made."""

    has_content = True
    optional_arguments = 10
    final_argument_whitespace = True
    option_spec = defaultdict(lambda: directives.unchanged)  # any option: refused anyway

    def run(self) -> list[nodes.Node]:
        logger.warning(
            "KB017 %s: %s",
            self.name,
            NO_C_DOMAIN,
            location=directive_location(self),
            type="kb",
            subtype="untrusted",
        )
        return []


class RefusedDomainRole(SphinxRole):
    """A role of a domain in REFUSED_DOMAINS: KB017, its text kept as code."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        logger.warning(
            "KB017 the %s role: %s",
            self.name,
            NO_C_DOMAIN,
            location=self.get_location(),
            type="kb",
            subtype="untrusted",
        )
        return [nodes.literal(self.text, self.text)], []


def _nesting(text: str) -> int:
    """How deep brackets of any kind nest in ``text`` (unbalanced ones too)."""
    depth = deepest = 0
    for char in text:
        if char in "([{<":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}>" and depth:
            depth -= 1
    return deepest


def checked_description(cls: type) -> type:
    """``cls`` (an object description, or a directive with its
    :no-typesetting: option) refusing what would lose the content or end in
    a traceback: :no-typesetting: keeps only the index entry and the anchor,
    the directive's text reaches no page (KB017); a signature (with its
    options: a py:data's :type:) longer than MAX_SIGNATURE_LENGTH, or whose
    brackets nest deeper than MAX_SIGNATURE_NESTING, would take minutes or
    recurse past Python's limit in Sphinx's parser (KB094), checked before
    anything is parsed; a chain of operators that nests without brackets
    (a|a|…) ends in the parser's RecursionError, reported as KB094 too."""

    def refused(self) -> str | None:
        """Why the directive is refused before it is parsed, or None."""
        if "no-typesetting" in self.options:
            return (
                f"KB017 {self.name}'s :no-typesetting: shows none of the directive's text (only an "
                "anchor is made); remove the option"
            )
        signature = " ".join([*self.arguments, *(str(v) for v in self.options.values())])
        if len(signature) > MAX_SIGNATURE_LENGTH:
            return (
                f"KB094 the signature and options of {self.name} hold {len(signature)} characters, "
                f"more than the {MAX_SIGNATURE_LENGTH} the site reads (Sphinx's parser takes time "
                "with the square of a long signature); describe it in text or a code block"
            )
        if (deepest := _nesting(signature)) > MAX_SIGNATURE_NESTING:
            return (
                f"KB094 the signature of {self.name} nests brackets {deepest} deep, more than the "
                f"{MAX_SIGNATURE_NESTING} the site reads (Sphinx's parser would end in an error); "
                "write it as a code block"
            )
        return None

    def run(self) -> list[nodes.Node]:
        problem = refused(self)
        if problem is None:
            try:
                return cls.run(self)
            except RecursionError:  # a chain of operators (a|a|…, 1+1+…) nests without brackets
                problem = (
                    f"KB094 the signature or an option of {self.name} nests deeper than Sphinx's "
                    "parser can read (a long chain of operators, such as a|a|… or 1+1+…); shorten "
                    "it, or write it as a code block"
                )
        logger.warning(problem, location=directive_location(self), type="kb", subtype="untrusted")
        return []

    return type(f"Checked{cls.__name__}", (cls,), {"run": run, "__doc__": cls.__doc__})


class CheckedRubric(Rubric):
    """``{rubric}`` at ``:heading-level: 1`` writes an ``<h1>``: a second
    title of the page, past the one-title rule that headings keep (KB105)."""

    def run(self) -> list[nodes.Node]:
        if str(self.options.get("heading-level")) == "1":
            logger.warning(
                "KB105 a rubric at :heading-level: 1 is a second title of the page (an h1); a page "
                "has one title: give it a level from 2 to 6, or leave the option out",
                location=directive_location(self),
                type="kb",
                subtype="untrusted",
            )
            self.options["heading-level"] = "2"
        return super().run()


class RefusedIndexRole(ReferenceRole):
    """``{index}`text <entries>```: the text as written, its entries refused
    (KB017, NO_INDEX): Sphinx's role would file them in the general index,
    which no output of the site shows."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        logger.warning(
            "KB017 the index role's %s",
            NO_INDEX,
            location=self.get_location(),
            type="kb",
            subtype="untrusted",
        )
        text = self.title if self.has_explicit_title else self.title.removeprefix("!")
        return [nodes.Text(text)], []


class RefusedRaw(SphinxDirective):
    """``.. raw::`` passes HTML through, or reads it from a file or a URL."""

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = {"file": str, "url": str, "encoding": str, "class": str}

    def run(self) -> list[nodes.Node]:
        logger.warning(
            "KB010 raw directive is not allowed in pages; use MyST syntax (a directive "
            "or role) instead, or put text you want to show in a fenced code block",
            location=directive_location(self),
            type="kb",
            subtype="raw-html",
        )
        return []


# -- MyST's {include}: scanned in the text before MyST reads the file -----------


def canonical_directive(app, name: str) -> str:
    """The directive a name means, as docutils looks it up: any case, and the
    page language's own names (``{包含}`` is include in zh_CN)."""
    lowered = name.lower()
    language = rst_languages.get_language(app.config.language or "en")
    return language.directives.get(lowered, lowered)


def scan_includes(
    app, docname: str, text: str, where: str | None = None, spent: tuple[int, int] = (0, 0)
) -> str:
    """``text`` with every MyST include of a file outside docs/ and _static/
    blanked out (line numbers kept), each reported at its line (of the
    included file ``where``, if it is one); and every include past the page's
    budget of reads (KB063), counted from what the page has read so far."""
    md = kb_markdown.probe(app)
    lines = text.split("\n")
    roots = allowed_roots(app)
    changed = False
    at = (lambda line: f"{where}:{line}") if where else (lambda line: (docname, line))
    # read so far, and ``spent`` (the included file being scanned), and what
    # this text's includes would add
    files, size = (a + b for a, b in zip(silent_loss.read_so_far(docname), spent, strict=True))
    for block in kb_markdown.directives(md, app.env, text):
        # reported at its line; what is blanked is the block of the page it is
        # in (the directive or div around it too): a body's lines need not
        # follow the page's (a merged first line, Unicode line breaks)
        name, argument, start, end = block.name, block.argument, *block.outermost
        directive = canonical_directive(app, name)
        if directive not in ("include", "literalinclude") or not argument:
            continue
        absolute = None
        if is_standard_include(argument):
            problem = STANDARD
        else:
            _, absolute = app.env.relfn2path(argument, docname)
            problem = file_problem(absolute, roots)
        parsed = kb_markdown.parsed_directive(app.env, block)
        encoding = parsed.options.get("encoding") if parsed is not None else None
        if problem:
            _refuse_file(at(block.start + 1), f"{name} of", argument, problem)
            lines[start:end] = [""] * (end - start)
            changed = True
        elif encoding and not text_encoding(str(encoding)):
            # MyST's own include reads it before any directive of ours runs
            report_encoding(str(encoding), at(block.start + 1))
            lines[start:end] = [""] * (end - start)
            changed = True
        elif directive == "include" and (cut := _cut_markdown_include(block)):
            logger.warning(
                "KB067 {%s} %s is cut with :%s:: MyST reads the cut as Markdown after the checks "
                "read the whole file, and a cut that starts inside a code block makes what the "
                "checks took for code live; include the whole file, or put the part in a file of its own",
                name,
                argument,
                cut,
                location=at(block.start + 1),
                type="kb",
                subtype="untrusted",
            )
            lines[start:end] = [""] * (end - start)
            changed = True
        elif directive == "include":
            # MyST reads the whole file before include-read can count it: an
            # include past the page's budget is not read at all
            files += 1
            size += os.path.getsize(absolute) if os.path.isfile(absolute) else 0
            if silent_loss.over_budget_alone(files, size):
                silent_loss.report_over_budget(docname, argument, at(block.start + 1))
                lines[start:end] = [""] * (end - start)
                changed = True
    return "\n".join(lines) if changed else text


# MyST's {include} options that cut the file: what MyST parses is a part of
# what include-read saw (the checks read the whole file, in on_include_read)
INCLUDE_CUTS = ("start-line", "end-line", "start-after", "end-before")


def _cut_markdown_include(block) -> str | None:
    """The first option of a MyST {include} (kb.core.markdown.Block) that cuts
    a file MyST parses as Markdown (not with :literal: or :code:), if any."""
    keys = silent_loss.option_keys(block)
    if "literal" in keys or "code" in keys:
        return None
    return next((key for key in keys if key in INCLUDE_CUTS), None)


# Front-matter keys through which a page changes how MyST parses it.
PAGE_SETTINGS = ("myst", "html_meta", "substitutions")


def strip_page_settings(docname: str, text: str, where: str | None = None) -> str:
    """``text`` without a front matter that sets MyST options for the page.

    The front matter is read as YAML (the project's safe loader), not
    matched as text: a quoted key (``"myst":``), ``? myst`` or a flow
    mapping say the same to MyST. A front matter that sets any of
    PAGE_SETTINGS is reported at the key's line and blanked whole (lines
    kept, so numbers stay right), so MyST never reads it; one that is not
    valid YAML is blanked too (MyST would ignore it with a warning of its
    own, after reading what it could)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return text
    location = (lambda line: f"{where}:{line}") if where else (lambda line: (docname, line))
    try:
        block = "\n".join(lines[1:end])
        # a page's: the one parse kb.pages.frontmatter uses too; an included
        # file's front matter is checked with the data-file limits
        root, data = (
            kb_data.parse_front_matter(block) if where is None else kb_data.parse_yaml(block, first_line=2)
        )
    except kb_data.YamlProblem:
        return text  # kb.pages.frontmatter reports it at its line and blanks the block
    settings = [
        key
        for key in (data if isinstance(data, dict) else {})
        if isinstance(key, str) and key.strip().lower() in PAGE_SETTINGS
    ]
    for key in settings:
        logger.warning(
            "KB016 front matter key %r sets MyST options for this page, which pages may "
            "not do (it can make the build run code); remove it: the site's MyST "
            "settings live in conf.py",
            key.strip(),
            location=location(kb_data.line_of(root, [key], 2)),
            type="kb",
            subtype="untrusted",
        )
    if not settings:
        return text
    lines[: end + 1] = [""] * (end + 1)
    return "\n".join(lines)


_NUL = re.compile(r"\x00|%00", re.IGNORECASE)


def strip_nul(docname: str, text: str) -> str:
    """A NUL (or %00, which link targets decode to one) means nothing in a
    page, and in a link target stops the build with a traceback."""
    if not _NUL.search(text):
        return text
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if _NUL.search(line):
            logger.warning(
                "KB012 NUL character (or %%00) in the page: remove it",
                location=(docname, number),
                type="kb",
                subtype="untrusted",
            )
            lines[number - 1] = _NUL.sub("", line)
    return "\n".join(lines)


# Bidirectional embeddings, overrides and isolates: text shown in another
# order than it is stored, and copied ("Trojan Source": a code sample that
# shows one command and copies another). Chinese and English need none.
_BIDI = kb_data.BIDI


def strip_bidi(text: str, location) -> str:
    if not _BIDI.search(text):
        return text
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        for character in dict.fromkeys(_BIDI.findall(line)):
            logger.warning(
                "KB095 %s: %s; remove it",
                *kb_data.hidden_character(character),
                location=location(number),
                type="kb",
                subtype="untrusted",
            )
        lines[number - 1] = _BIDI.sub("", line)
    return "\n".join(lines)


def on_source_read(app, docname: str, source: list[str]) -> None:
    if str(app.env.doc2path(docname)).endswith(".md"):
        source[0] = strip_bidi(source[0], lambda line: (docname, line))
        source[0] = strip_nul(docname, source[0])
        source[0] = strip_page_settings(docname, source[0])
        # before the first parse (scan_includes); silent_loss does it again,
        # whichever handler runs first (it finds nothing the second time)
        source[0] = silent_loss.cut_footnote_scans(source[0], lambda line: (docname, line))
        source[0] = scan_includes(app, docname, source[0])


def on_include_read(app, relative_path: Path, parent_docname: str, content: list[str]) -> None:
    """The included file itself, and the includes inside it."""
    path = Path(app.srcdir) / relative_path
    docname = app.env.docname
    problem = file_problem(path, allowed_roots(app))
    if problem:
        _refuse_file((docname, None), "include of", str(relative_path), problem)
        content[0] = ""
        return
    if silent_loss.over_budget_alone(*silent_loss.read_so_far(docname)):
        content[0] = ""  # past the page's budget: not scanned (silent_loss reports it)
        return
    # MyST parses the lines of the file's str.splitlines() (\u2028, \x0c … end
    # a line), joined with "\n": scanned in those lines
    content[0] = "\n".join(content[0].splitlines())
    content[0] = strip_bidi(content[0], lambda line: f"{shown(path)}:{line}")
    if path.suffix == ".md":
        content[0] = strip_page_settings(docname, content[0], where=str(path))
    # MyST parses an included file as Markdown whatever its name (part.txt)
    content[0] = silent_loss.cut_footnote_scans(content[0], lambda line: f"{shown(path)}:{line}")
    this = (1, len(content[0].encode("utf-8")))  # counted by silent_loss after this handler
    content[0] = scan_includes(app, docname, content[0], where=shown(path), spent=this)


# -- the doctree: links, images, downloads, meta, and where nodes came from -----


def _location(env, node: nodes.Node, docname: str, needle: str | None = None, near: int | None = None):
    """(docname, line) of what a node holds. Nodes made by rST directives in
    ``{eval-rst}`` often carry no line, or the block's, and a role's node
    has its paragraph's: where the offending text is in the page's source,
    its first line is the place (of the text met more than once, the first
    on or after the line ``near`` or else the node's own, failing that the
    last before it; the first of all without a line); otherwise the node's line, or its
    nearest ancestor's. (docname, line) prints the page's path as the build
    was given it, as Sphinx's own warnings do."""
    if node is not None:
        source, line = get_source_line(node)
        other = _other_file(env, source, docname)
        if other and line and _in_repository(env, other):
            # text from another file of the repository (an included file, an
            # entry of data/glossary.yaml): its own path and line, whatever the
            # page says (a node's source may also be a path the page names)
            return f"{shown(other)}:{line}"
        near = line if near is None else near
    if needle:
        try:
            text = env.doc2path(docname).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        best, line, at = None, 1, 0
        for m in re.finditer(re.escape(needle), text):
            line, at = line + text.count("\n", at, m.start()), m.start()
            best = line
            if near is None or line >= near:
                break
        if best is not None:
            return docname, best
    while node is not None and not node.line:
        node = node.parent
    if other := _other_file(env, getattr(node, "source", None), docname):
        # text from another file (a glossary entry of data/glossary.yaml, an
        # included file): its own path and line
        return f"{shown(other)}:{node.line}"
    return docname, (node.line if node is not None else None)


def _in_repository(env, path: Path) -> bool:
    """Whether ``path`` lies in the pages' folder or beside conf.py."""
    real = Path(os.path.realpath(path))
    return any(
        real.is_relative_to(os.path.realpath(root)) for root in (env.srcdir, env.config.kb_confdir) if root
    )


def _other_file(env, source, docname: str) -> Path | None:
    """The file ``source`` names, when it is a file other than the page's. An
    rST include names its file relative to the working folder (docutils'
    utils.relative_path), a Markdown one by its absolute path."""
    if not isinstance(source, str) or not source:
        return None
    path = os.path.abspath(source)
    if not os.path.isfile(path) or os.path.realpath(path) == os.path.realpath(env.doc2path(docname)):
        return None
    return Path(path)


# What a page may publish as an image or a download: types a browser shows or
# saves, never runs (SVG can carry script: kb.guard.html reads every one).
IMAGE_TYPES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".svg"})
DOWNLOAD_TYPES = IMAGE_TYPES | frozenset(
    {
        ".txt",
        ".md",
        ".rst",
        ".py",
        ".sh",
        ".yaml",
        ".yml",
        ".json",
        ".csv",
        ".tsv",
        ".toml",
        ".ini",
        ".cfg",
        ".conf",
        ".log",
        ".ipynb",
        ".pdf",
        ".zip",
        ".gz",
        ".tgz",
        ".xz",
        ".bz2",
    }
)


def _type_problem(target: str, allowed: frozenset) -> str | None:
    suffix = Path(target.strip()).suffix.lower()
    if suffix in allowed:
        return None
    return (
        f"is a {suffix or 'extension-less'} file, which a browser may run as a document or "
        f"script; allowed: {', '.join(sorted(allowed))}"
    )


def _refuse_type(location, what: str, target: str, problem: str) -> None:
    _refuse("KB018", location, what, target, problem)


def _drop_image(node: nodes.image) -> None:
    """Replace a refused image by its alt text; an image that is a link
    (``:target:``) goes with its link, which HTML writers expect to hold an
    image when it stands outside a paragraph (a figure's)."""
    alt = node.get("alt", "")
    gone = node.parent if isinstance(node.parent, nodes.reference) else node
    # the ids and names (:name:) stay, on what replaces it: docutils refuses to lose them
    kept = {"ids": [*gone["ids"], *node["ids"]], "names": [*gone["names"], *node["names"]]}
    if isinstance(gone.parent, nodes.TextElement):
        gone.replace_self(nodes.inline("", alt, **kept))
    else:
        gone.replace_self(nodes.paragraph("", alt, **kept))


# Classes a page may not give (KB086), so that its text looks and behaves as
# the page's text: what the site's style sheets and scripts do to an element
# by its class can hide it from readers (furo's only-dark, visually-hidden,
# kb-keywords), move it over other text (kb-term-tip, overlay), make it a
# control (theme-toggle) or leave it out of the search (LEFT_OUT_CLASSES).
# Refused: every class the site gives its own parts, kb-…, and the
# THEME_CLASSES of furo, Sphinx and sphinx-copybutton; the site's own nodes
# are exempt (own). tests/test_site.py reads every style sheet and script the
# pages load and fails on a class they use that is neither refused nor
# among the CONTENT_CLASSES, which style a page's content as content.
SITE_CLASS_PREFIX = "kb-"
# and the class of a 编者注 (kb.editorial.notes): on other text it would read
# as the editors' correction
SITE_CLASSES = frozenset({"editor-note"})
THEME_CLASSES = frozenset(
    [
        "announcement",
        "announcement-content",
        "back-to-top",
        "bottom-of-page",
        "content",
        "content-icon-container",
        "current-page",
        "domainindex-jumpbox",
        "domainindex-section",
        "edit-this-page",
        "ethical-callout",
        "ethical-sidebar",
        "fa-book",
        "fa-caret-down",
        "furo-related-icon",
        "genindex-jumpbox",
        "genindex-section",
        "has-children",
        "header-center",
        "header-left",
        "header-right",
        "icons",
        "injected",
        "left-details",
        "main",
        "mermaid",
        "mobile-header",
        "muted-link",
        "nav-overlay-icon",
        "next-page",
        "no-js",
        "no-toc",
        "o-tooltip--left",
        "only-dark",
        "only-light",
        "overlay",
        "page",
        "page-info",
        "prev-page",
        "related-pages",
        "right-details",
        "rst-current-version",
        "rst-other-versions",
        "rst-versions",
        "scroll-current",
        "scrolled",
        "sd-card",
        "sd-card-hover",
        "sd-cards-carousel",
        "sd-shadow-lg",
        "sd-shadow-md",
        "sd-shadow-sm",
        "sd-tab-content",
        "show-back-to-top",
        "sidebar-brand",
        "sidebar-brand-text",
        "sidebar-container",
        "sidebar-drawer",
        "sidebar-logo",
        "sidebar-logo-container",
        "sidebar-overlay",
        "sidebar-scroll",
        "sidebar-search",
        "sidebar-search-container",
        "sidebar-sticky",
        "sidebar-title",
        "sidebar-toggle",
        "sidebar-tree",
        "skip-to-content",
        "sphinx-bs",
        "theme-icon-when-auto-dark",
        "theme-icon-when-auto-light",
        "theme-icon-when-dark",
        "theme-icon-when-light",
        "theme-toggle",
        "theme-toggle-container",
        "theme-toggle-content",
        "theme-toggle-header",
        "this-will-duplicate-information-and-it-is-still-useful-here",
        "toc-content-icon",
        "toc-drawer",
        "toc-header-icon",
        "toc-overlay",
        "toc-overlay-icon",
        "toc-scroll",
        "toc-sticky",
        "toc-title",
        "toc-title-container",
        "toc-tree",
        "toc-tree-container",
        "toctree-checkbox",
        "toctree-l1",
        "view-this-page",
        "visually-hidden",
    ]
)
# The classes by which the site leaves what it adds around a page's text out
# of the search index (pagefind.yml's exclude_selectors, among
# kb.search.index.PAGEFIND_SELECTORS) and out of llms-full.txt
# (kb.site.llms.SKIPPED_CLASSES). seealso is the class Sphinx's writer gives
# the {seealso} box, not the page's tree: a page giving it to other text took
# that out of the search. test_hostile_data.py checks the three lists agree.
LEFT_OUT_CLASSES = frozenset(
    {
        "headerlink",
        "kb-article-list",
        "kb-guides",
        "kb-count",
        "kb-tags",
        "kb-article-footer",
        "kb-note-ref",
        "copybtn",
        "kb-diagram-source",
        "kb-page-meta",
        "kb-sources",
        "kb-note-sources",
        "seealso",
    }
)
# What the style sheets style that docutils, Sphinx, MyST and Pygments give a
# page's content (and editor-original, for the author's text beside a 编者注):
# a page may give these.
CONTENT_CLASSES = frozenset(
    [
        "admonition",
        "admonition-title",
        "admonition-todo",
        "align-center",
        "align-default",
        "align-left",
        "align-right",
        "arabic",
        "attention",
        "attribution",
        "brackets",
        "caption",
        "card",
        "caption-text",
        "caution",
        "centered",
        "citation",
        "classifier",
        "code",
        "code-block-caption",
        "compound",
        "container",
        "context",
        "current",
        "contents",
        "danger",
        "deprecated",
        "docutils",
        "editor-original",
        "epigraph",
        "eqno",
        "error",
        "external",
        "field-list",
        "figure",
        "fn-backref",
        "footnote",
        "footnote-reference",
        "glossary",
        "guilabel",
        "highlight",
        "highlight-link",
        "highlighted",
        "highlights",
        "highlighttable",
        "hint",
        "hll",
        "icon",
        "important",
        "line-block",
        "linenodiv",
        "literal",
        "literal-block",
        "literal-block-wrapper",
        "loweralpha",
        "lowerroman",
        "math",
        "math-wrapper",
        "normal",
        "note",
        "option-list",
        "problematic",
        "property",
        "pull-quote",
        "py",
        "reference",
        "rubric",
        "search",
        "shadow",
        "sidebar",
        "sig",
        "sig-inline",
        "sig-name",
        "sig-param",
        "sig-paren",
        "sig-prename",
        "simple",
        "special",
        "table-wrapper",
        "text-align:center",
        "text-align:left",
        "text-align:right",
        "text-center",
        "text-left",
        "text-right",
        "std-term",
        "success",
        "tip",
        "title",
        "toc-backref",
        "toctree-wrapper",
        "topic",
        "topic-title",
        "upperalpha",
        "upperroman",
        "versionadded",
        "versionchanged",
        "versionmodified",
        "versionremoved",
        "viewcode-back",
        "viewcode-link",
        "warning",
    ]
) | (frozenset(STANDARD_TYPES.values()) - {"gp", "go"})
# furo's documented way to show an image in one colour scheme only (a
# diagram drawn for each): an image has no text of its own but its alt,
# which every reader's screen reader gets from the image shown
SCHEME_IMAGE_CLASSES = frozenset({"only-light", "only-dark"})
# The classes the site's own code gives nodes while a page is read
# (kb.editorial.notes, kb.calc, kb.pages.glossary), by node: exempt (own()).
# Only those names: a class a page gives the same node (an {rst-class} before
# it, a code block's :class: that replace_self copies) is still refused.
_OWN: weakref.WeakKeyDictionary[nodes.Element, frozenset[str]] = weakref.WeakKeyDictionary()


def own(node: nodes.Element, *classes: str) -> nodes.Element:
    """Give ``node`` the site's ``classes`` (KB086 exempts these on it), or
    with none named mark the classes a node just made by the site's code has."""
    if classes:
        node["classes"].extend(name for name in classes if name not in node["classes"])
    _OWN[node] = _OWN.get(node, frozenset()) | frozenset(classes or node["classes"])
    return node


def copy_excluded(config) -> frozenset[str]:
    """The classes sphinx-copybutton leaves out of what its button copies
    (its copybutton_exclude: ".linenos, .gp, .go"): on a page's own text
    they would make a block copy other than what it shows."""
    return _selector_classes(getattr(config, "copybutton_exclude", "") or "")


@functools.cache
def _selector_classes(selectors: str) -> frozenset[str]:
    """The class names a selector list names (read once: asked for every
    class of every element of every page)."""
    return frozenset(re.findall(r"\.([A-Za-z_][\w-]*)", selectors))


def refused_class(name: str, config) -> bool:
    """Whether a page may not give the class ``name`` (KB086)."""
    return (
        name.startswith(SITE_CLASS_PREFIX)
        or name in SITE_CLASSES
        or name in THEME_CLASSES
        or name in LEFT_OUT_CLASSES
        or name in copy_excluded(config)
    )


# What rST's footnotes in {eval-rst} are to become (KB084, KB085)
MARKDOWN_FOOTNOTES = "Markdown footnotes outside the block (text[^name], and a line [^name]: its text)"


class RefuseUnsafeNodes(SphinxTransform):
    """Refuse (warn and remove) what a page must not carry, however it was written."""

    default_priority = 800  # after docutils' and MyST's own transforms made the references

    def apply(self, **kwargs: Any) -> None:
        docname, srcdir, confdir = self.env.docname, self.env.srcdir, self.config.kb_confdir
        roots = roots_of(srcdir, confdir)
        # the sources and the data next to conf.py (the glossary is generated from data/)
        repo = (os.path.realpath(confdir), os.path.realpath(srcdir))
        git = (os.path.join(os.path.realpath(confdir), ".git"),)
        outside: dict[str, bool] = {}  # per source: most nodes share the page's
        for node in list(self.document.findall(nodes.Element, include_self=False)):
            if node.parent is None:
                continue  # removed with an ancestor
            source = node.source or node.get("source")
            if isinstance(source, str) and source not in outside:
                outside[source] = os.path.isabs(source) and (not inside(source, repo) or inside(source, git))
            if isinstance(source, str) and outside[source]:
                _refuse_file(
                    _location(self.env, node, docname), "content from", source, "lies outside the repository"
                )
                node.parent.remove(node)
                continue
            if isinstance(node, (nodes.math, nodes.math_block)):
                self.math(node, docname)
            elif isinstance(node, nodes.meta):
                self.meta(node, docname)
            elif isinstance(node, nodes.image):
                self.image(node, docname, roots)
            elif isinstance(node, addnodes.download_reference):
                self.download(node, docname, roots)
            elif node.get("refuri"):
                self.link(node, docname)
            elif isinstance(node, addnodes.toctree):
                self.toctree_links(node, docname)
            elif isinstance(node, (nodes.footnote_reference, nodes.footnote)) and node.get("auto"):
                self.unnumbered_footnote(node, docname)
            elif isinstance(node, nodes.pending) and node.transform is misc_transforms.ClassAttribute:
                # rST's ``.. class::`` (Sphinx: rst-class) with nothing indented
                # under it, in {eval-rst}: its pending transform was noted in the
                # block's own document, which MyST never transforms
                # (executablebooks/MyST-Parser#953); left in the page, Sphinx's
                # writer ended in a NotImplementedError traceback. Applied here, as
                # docutils would have: the class lands on the next element (and is
                # checked below), or docutils reports that there is none.
                node.transform(self.document, startnode=node).apply()
        self.bidi(docname)
        # the elements once more: the walk above removes and replaces nodes
        first: dict[str, nodes.Element] = {}
        for element in self.document.findall(nodes.Element):
            self.reserved_class(element, docname)
            self.duplicate_ids(element, first, docname)

    def reserved_class(self, element: nodes.Element, docname: str) -> None:
        """KB086 for a class a page gives (a :class: or :figclass: option,
        ``{container}``, ``{rst-class}``, a role made with ``{role}``) that
        the site gives its own page parts (refused_class). The site's own
        nodes are exempt (own); so are only-light and only-dark on an image
        (SCHEME_IMAGE_CLASSES). The site adds its keywords and sources after
        this check (kb.pages.tags, kb.editorial.claims), and its writers
        their own elements."""
        exempt = _OWN.get(element, frozenset())
        reserved = [
            name
            for name in element["classes"]
            if refused_class(name, self.config)
            and name not in exempt
            and not (name in SCHEME_IMAGE_CLASSES and isinstance(element, nodes.image))
        ]
        for name in reserved:
            logger.warning(
                "KB086 the class %r belongs to the site's own page parts: %s; remove it from the "
                ":class: or :figclass: option, {container}, {rst-class} or {role} that gives it",
                name,
                "the search index or llms-full.txt leave what has it out"
                if name in LEFT_OUT_CLASSES
                else "the copy button leaves what has it out of what it copies"
                if name in copy_excluded(self.config)
                else "the site's style sheets and scripts may hide what has it from readers (while "
                "the search index keeps its text), place it over other text, make it a control or "
                "change the page's layout",
                location=_location(self.env, element, docname),
                type="kb",
                subtype="untrusted",
            )
        if reserved:
            element["classes"] = [name for name in element["classes"] if name not in reserved]

    def duplicate_ids(self, element: nodes.Element, first: dict[str, nodes.Element], docname: str) -> None:
        """KB085 for an id two elements of the page carry (``first``: the
        element each id was first seen on). docutils gives each id once in a
        document, but MyST parses an ``{eval-rst}`` block as a document of its
        own (executablebooks/MyST-Parser#953): its footnotes, citations and
        references count id1, id2 … again, and a link to one (a footnote's
        back link) lands on the page's element of that id."""
        if isinstance(element, nodes.target) and any(
            key in element for key in ("refuri", "refid", "refname")
        ):
            return  # a link's target: no element of the page has its id (Sphinx writes none)
        for node_id in element["ids"]:
            if site_id(node_id):
                problem = (
                    "is one the site gives an element of every page (the keywords, the sources, "
                    "the skip link's target, the sidebar's switches, the icons), whose links "
                    "would land here; give the heading another title, or the label, footnote or "
                    "object another name"
                )
            else:
                other = first.setdefault(node_id, element)
                if other is element or "editor-note" in element["classes"] + other["classes"]:
                    continue  # (a 编者注's anchor: KB023, kb.editorial.notes)
                problem = (
                    "is given to two elements of this page, so a link to it may land on the "
                    "other one. rST in {eval-rst} counts its ids (id1, id2 …) on its own: write "
                    f"its footnotes and citations as {MARKDOWN_FOOTNOTES}; otherwise give one of "
                    "the two another label or title"
                )
            logger.warning(
                "KB085 the id %r %s",
                node_id,
                problem,
                location=_location(self.env, element, docname),
                type="kb",
                subtype="untrusted",
            )

    def unnumbered_footnote(self, node: nodes.Element, docname: str) -> None:
        """An auto-numbered or symbol footnote of rST in ``{eval-rst}`` ([#]_,
        [#name]_, [*]_). MyST parses the block as a document of its own and
        moves only its nodes into the page, so docutils never numbers them
        (executablebooks/MyST-Parser#953): Sphinx's writer ends in a KeyError
        traceback, or shows a named one's number as an empty "[]". KB084; the
        reference is kept as the text it was written as, the footnote's text
        as a block."""
        if isinstance(node, nodes.footnote_reference):
            if node.astext() or node.rawsource.startswith("[^"):
                return  # numbered, or Markdown's [^name] (numbered with the page, or MyST reports it)
            kept = nodes.inline("", node.rawsource or "[#]_")
        else:
            if any(isinstance(child, nodes.label) for child in node.children):
                return
            kept = nodes.container("", *node.children)
        node["ids"] = []  # a refused footnote is no link target (nor another KB085)
        logger.warning(
            "KB084 an auto-numbered or symbol footnote of rST ([#]_, [#name]_, [*]_) in "
            "{eval-rst}, which the site cannot number; write such footnotes as %s",
            MARKDOWN_FOOTNOTES,
            location=_location(self.env, node, docname),
            type="kb",
            subtype="untrusted",
        )
        node.replace_self(kept)

    def bidi(self, docname: str) -> None:
        """KB095 for text that did not come from a page or an included file (a
        literalinclude, a csv-table's file, generated text): the pages' own
        text was cleaned when it was read (strip_bidi)."""
        for text in list(self.document.findall(nodes.Text)):
            if not _BIDI.search(text) or text.parent is None:
                continue
            parent = text.parent
            for character in dict.fromkeys(_BIDI.findall(text)):
                logger.warning(
                    "KB095 %s in text that is not the page's own (a file it includes, or a "
                    "character reference such as &#x200B; in its text): %s; remove it there",
                    *kb_data.hidden_character(character),
                    location=_location(self.env, parent, docname),
                    type="kb",
                    subtype="untrusted",
                )
            parent.replace(text, nodes.Text(_BIDI.sub("", text)))
            if isinstance(parent, nodes.FixedTextElement) and parent.rawsource:
                parent.rawsource = _BIDI.sub("", parent.rawsource)  # what highlighting reads
        for element in self.document.findall(nodes.Element):  # alt, title, link targets …
            for key, value in list(element.attributes.items()):
                if isinstance(value, str) and _BIDI.search(value):
                    what, why = kb_data.hidden_character(_BIDI.search(value).group())
                    logger.warning(
                        "KB095 %s in %s=: %s; remove it",
                        what,
                        key,
                        why,
                        location=_location(self.env, element, docname),
                        type="kb",
                        subtype="untrusted",
                    )
                    element[key] = _BIDI.sub("", value)

    def link(self, node: nodes.Element, docname: str) -> None:
        problem = self.web_address_problem(node["refuri"])
        if problem is None:
            return
        # a target (.. _t: url) is reported too: the reference that uses it may
        # be resolved after this, as a link within the page
        self.refuse_address("link", node["refuri"], problem, node, docname)
        del node["refuri"]
        if isinstance(node, nodes.reference):
            node.replace_self(nodes.inline("", "", *node.children))

    def toctree_links(self, node: addnodes.toctree, docname: str) -> None:
        """A toctree's entries that are web addresses (``名字 <https://…>``):
        Sphinx keeps them as (title, address) pairs, not as references, and
        puts them in the sidebar of every page. Each is judged as a link is
        (KB012), reported at its line and dropped from the toctree.

        A hidden toctree shows in no page but through the sidebar, which
        names each page by its own title (kb.pages.navigation): its
        :caption:, and an entry's title of its own in a page other than the
        home page (whose titles are the guides' own, kept for the books'
        contents), would be dropped without a word (KB017)."""
        if node.get("hidden"):
            dropped = [node["caption"]] if node.get("caption") else []
            if docname != self.config.root_doc:
                dropped += [title for title, ref in node["entries"] if title and "://" not in ref]
            for text in dropped:
                logger.warning(
                    "KB017 %r in a hidden toctree shows on no page: the sidebar names each page "
                    "by its own title and shows no caption; remove it (a page's title is its # heading)",
                    clipped(text, 80),
                    location=_location(self.env, node, docname, text),
                    type="kb",
                    subtype="untrusted",
                )
        kept = []
        for title, ref in node["entries"]:
            problem = self.web_address_problem(ref) if isinstance(ref, str) and "://" in ref else None
            if problem is None:
                kept.append((title, ref))
                continue
            self.refuse_address("link", ref, problem, node, docname, " in a toctree")
        node["entries"] = kept

    def refuse_address(self, what: str, url: str, problem: str, node, docname: str, where: str = "") -> None:
        """KB012 for a web address a page may not use (web_address_problem), at its line."""
        logger.warning(
            "KB012 %s to %r%s: %s",
            what,
            url[:200],
            where,
            problem,
            location=_location(self.env, node, docname, url),
            type="kb",
            subtype="untrusted",
        )

    def web_address_problem(self, url: str) -> str | None:
        """Why a page may not link ``url`` (a link, or a download Sphinx links
        as it is), if it may not: its scheme, a host inside CI's machine or
        network (make linkcheck would request it), its length."""
        scheme = url_scheme(url)
        if scheme in LINK_SCHEMES:
            try:
                urlsplit(url), parse_url(url)
            except (ValueError, LocationParseError):
                return "not a web address HTTP clients can read (a bracket or port out of place?); correct it"
            if "\\" in url:
                return "a backslash, which browsers and HTTP clients read as a slash; write / instead"
        if scheme is not None and scheme not in LINK_SCHEMES:
            return (
                f"the {scheme}: scheme is not allowed in pages (only {', '.join(sorted(LINK_SCHEMES))}); "
                "link to a page or a web address instead"
            )
        if len(url) > MAX_LINK_LENGTH:
            return (
                f"{len(url)} characters, more than {MAX_LINK_LENGTH}; make linkcheck matches every link "
                "against the ignore patterns, and a long one keeps it busy; shorten the address"
            )
        private = scheme in LINK_SCHEMES and not self.config.kb_private_links and private_host(url)
        if private:
            return (
                f"{private} is a private address, which no reader can open and the link checker "
                "would request from CI's machine; write it as code instead"
            )
        return None

    def math(self, node: nodes.Element, docname: str) -> None:
        """The site renders no formulas: MathJax would load from another
        host, and the book gives the formula to LaTeX as it is, commands and
        all (``\\input{/etc/passwd}`` prints the file into the PDF)."""
        logger.warning(
            "KB090 math %r is not supported on this site (the web pages would load MathJax "
            "from another host, the book would run it as LaTeX); write the formula as text, "
            "or in backticks as code",
            node.astext()[:60],
            location=_location(self.env, node, docname),
            type="kb",
            subtype="untrusted",
        )
        text = node.astext()
        if isinstance(node, nodes.math_block):
            node.replace_self(nodes.literal_block(text, text))
        else:
            node.replace_self(nodes.literal(text, text))

    def meta(self, node: nodes.Element, docname: str) -> None:
        if "http-equiv" in node.attributes:
            logger.warning(
                "KB013 meta http-equiv=%r is not allowed in pages: it can redirect "
                "readers or change the page's security policy; remove it",
                node["http-equiv"],
                location=_location(self.env, node, docname, "http-equiv"),
                type="kb",
                subtype="untrusted",
            )
        else:  # name=/property=: a second og:url, a referrer policy, noindex
            what = next((f"{k}={node[k]!r}" for k in ("name", "property") if k in node.attributes), "meta")
            logger.warning(
                "KB013 meta %s is not allowed in pages: the site writes each page's "
                "meta tags itself (from the front matter); remove it",
                what,
                location=_location(self.env, node, docname, ".. meta::"),
                type="kb",
                subtype="untrusted",
            )
        node.parent.remove(node)

    def image(self, node: nodes.image, docname: str, roots) -> None:
        uri = node["uri"]
        zero = [f":{key}: {node[key]}" for key in ("width", "height", "scale") if _is_zero(node.get(key))]
        if isinstance(node.parent, nodes.figure) and _is_zero(node.parent.get("width")):
            zero.append(f":figwidth: {node.parent['width']}")
        if zero:
            logger.warning(
                "KB094 image %r has %s: no reader would see it (search and screen readers would "
                "still read its alt text); give it a size a page can show, or remove it",
                uri[:200],
                ", ".join(zero),
                location=_location(self.env, node, docname, uri),
                type="kb",
                subtype="untrusted",
            )
            _drop_image(node)
            return
        if DATA_IMAGE.match(uri):
            return
        if is_remote(uri):
            logger.warning(
                "KB014 image %r would make every reader's browser call another host; "
                "save the image under docs/ (e.g. docs/_images/) and link it by path",
                uri,
                location=_location(self.env, node, docname, uri),
                type="kb",
                subtype="untrusted",
            )
            _drop_image(node)
            return
        if any(c in uri for c in "*?["):
            # Sphinx globs image.* and picks a candidate by its first bytes
            # when the suffix is unknown; the book builder copies it under its
            # own name (x.toc, x.tex, .latexmkrc) where TeX and make read it
            _refuse_type(
                _location(self.env, node, docname, uri),
                "image",
                uri,
                "names a pattern (Sphinx would pick a file by its content): name the file itself "
                f"(one of {', '.join(sorted(IMAGE_TYPES))})",
            )
            _drop_image(node)
            return
        _, absolute = self.env.relfn2path(uri, docname)
        problem = file_problem(absolute, roots)
        if not problem and _type_problem(uri, IMAGE_TYPES):
            _refuse_type(
                _location(self.env, node, docname, uri), "image", uri, _type_problem(uri, IMAGE_TYPES)
            )
            _drop_image(node)
            return
        if problem:
            _refuse_file(_location(self.env, node, docname, uri), "image", uri, problem)
            _drop_image(node)

    def download(self, node: nodes.Element, docname: str, roots) -> None:
        target = node["reftarget"]
        if is_remote(target):  # Sphinx links it like any web address (and linkcheck checks it)
            problem = self.web_address_problem(target)
            if problem:
                self.refuse_address("download link", target, problem, node, docname)
                node.replace_self(nodes.inline("", "", *node.children))
            return
        _, absolute = self.env.relfn2path(target, docname)
        problem = file_problem(absolute, roots)
        if problem:
            _refuse_file(_location(self.env, node, docname, target), "download of", target, problem)
            node.replace_self(nodes.inline("", "", *node.children))
        elif _type_problem(target, DOWNLOAD_TYPES):
            _refuse_type(
                _location(self.env, node, docname, target),
                "download of",
                target,
                _type_problem(target, DOWNLOAD_TYPES),
            )
            node.replace_self(nodes.inline("", "", *node.children))


# -- symlinks: a link in the repository to a file outside it ----------------------


def input_folders(app) -> list[Path]:
    """Where the build reads pages, assets, templates and data from."""
    confdir = Path(app.confdir)
    folders = [
        Path(app.srcdir),
        *(confdir / p for p in app.config.html_static_path),
        *(confdir / p for p in app.config.templates_path),
    ]
    data = getattr(app.config, "kb_data_dir", None)
    return folders + ([Path(data) if Path(data).is_absolute() else confdir / data] if data else [])


# How deep folders may nest in what the build reads. Python 3.11's os.walk and
# pathlib's rglob recurse once per level (Sphinx finds pages with os.walk):
# about 990 nested folders end the build in a RecursionError.
MAX_FOLDER_DEPTH = 16


def walk_tree(tops: list[Path], most: int = MAX_FOLDER_DEPTH) -> tuple[list[Path], list[Path]]:
    """The files (anything not a folder; links are not followed) under the
    folders ``tops``, walked without recursion, sorted; and the folders at
    depth ``most`` that hold folders, which are not entered."""
    files, cut = [], []
    stack = [(top, 0) for top in reversed(tops) if top.is_dir() and not top.is_symlink()]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        deeper = [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
        files += [Path(e.path) for e in entries if not e.is_dir(follow_symlinks=False)]
        if deeper and depth >= most:
            cut.append(folder)
            continue
        stack.extend((path, depth + 1) for path in reversed(deeper))
    return sorted(files), cut


# Lines of one kind shown at most: a pull request may add any number of files.
MAX_ODD_FILES = 20


def at_most(found: list[tuple[Any, str]], code: str, most: int = MAX_ODD_FILES) -> list[tuple[Any, str]]:
    """``found`` (place, message) with its ``code`` messages cut to ``most``,
    and one more saying how many were left out."""
    odd = [f for f in found if f[1].startswith(code)]
    if len(odd) <= most:
        return found
    cut = set(map(id, odd[most:]))
    kept = [f for f in found if id(f) not in cut]
    return [*kept, (odd[most][0], f"{code} and {len(odd) - most:,} more files or folders like those above")]


# The names a file of the site may have (its path below docs/, _static/ …):
# what make follows file by file (Makefile: SITE_INPUTS) and a web address
# holds as it is.
SAFE_NAME = re.compile(r"[A-Za-z0-9._/-]+")


def name_problem(relative: str) -> str | None:
    """KB018 for a name the site cannot publish as it is, or make cannot
    follow: a name starting with '.' (the Pages upload leaves hidden files
    out, and Sphinx skips a hidden static file; the page or image would be
    a 404 that nothing reports); a name with other characters than ASCII
    letters, digits, '.', '_' and '-' (make watches such a file only through
    its folder, so an edit in place is not built). Pages have KB093 for the
    second, said as a page's web address."""
    if any(part.startswith(".") for part in relative.split("/")):
        return (
            "KB018 a name starting with '.' is hidden: Sphinx skips a hidden static file and the "
            "site's upload leaves hidden files out, so the page or file would be missing from the "
            "published site without a word; rename it (ASCII kebab-case)"
        )
    if not relative.endswith(".md") and not SAFE_NAME.fullmatch(relative):
        return (
            "KB018 the name holds characters other than ASCII letters, digits, '.', '_' and '-': "
            "make would not see an edit of the file, and its web address is spelled otherwise; "
            "rename it (ASCII kebab-case)"
        )
    return None


# Files beside conf.py that the build reads (docutils reads docutils.conf
# from the configuration's folder; kb.search.index reads pagefind.yml,
# kb.site.mermaid package.json).
ROOT_INPUTS = ("docutils.conf", "pagefind.yml", "package.json")


def check_input_tree(app, config) -> None:
    """What the build reads is a tree of folders and regular files, checked
    before anything reads it (config-inited, before the data files are read
    and Sphinx looks for pages):

    - a symlink, or an input folder that is one, is KB011: the build would
      read and publish whatever it points to;
    - a FIFO, socket or device is KB018: reading it waits for ever or reads
      the machine's hardware;
    - a name with a control or bidirectional character is KB018: Sphinx
      leaves a page so named out without a word, and the log would show it
      in pieces;
    - folders nested more than MAX_FOLDER_DEPTH deep are KB018: Sphinx's
      walk of the pages (os.walk, recursive) would end in a RecursionError;
    - a hidden name, or one that is not ASCII kebab-case, is KB018
      (name_problem).
    """
    found: list[tuple[Path, str]] = []
    named: list[tuple[Path, str]] = []
    locale = [*getattr(config, "kb_locale_dirs", []), *config.locale_dirs]
    for top in [*input_folders(app), *dict.fromkeys(Path(app.srcdir, p) for p in locale)]:
        if top.is_symlink():
            found.append((top, _symlink_problem(top, "folder")))
            continue
        files, cut = walk_tree([top])
        found += [
            (
                folder,
                f"KB018 the folder nests folders more than {MAX_FOLDER_DEPTH} deep: keep pages, "
                "assets and data at most a few folders down",
            )
            for folder in cut
        ]
        for path in files:
            if UNPRINTABLE.search(path.relative_to(top).as_posix()):
                found.append(
                    (
                        path,
                        "KB018 the name holds a control or bidirectional character (shown escaped): the "
                        "build would leave the file out unseen, or show its name in another order; rename "
                        "it (pages and assets: ASCII kebab-case)",
                    )
                )
                continue
            if problem := name_problem(path.relative_to(top).as_posix()):
                named.append((path, problem))  # reported; reading it is safe, the build goes on
            try:
                mode = path.lstat().st_mode
            except OSError:
                continue  # gone since the folder was listed
            if stat.S_ISLNK(mode):
                found.append((path, _symlink_problem(path, "file")))
            elif not stat.S_ISREG(mode):
                found.append(
                    (
                        path,
                        "KB018 is not a regular file (a FIFO, socket or device): reading it would wait "
                        "for ever or read the machine's hardware; delete it",
                    )
                )
    # files beside conf.py that the build reads: docutils' settings, Pagefind's
    for path in (Path(app.confdir, name) for name in ROOT_INPUTS):
        try:
            mode = path.lstat().st_mode
        except OSError:
            continue
        if stat.S_ISLNK(mode):
            found.append((path, _symlink_problem(path, "file")))
        elif not stat.S_ISREG(mode):
            found.append((path, "KB018 is not a regular file (a FIFO, socket, device or folder); delete it"))
    for path, message in [*at_most(at_most(found, "KB011"), "KB018"), *at_most(named, "KB018")]:
        logger.warning(message, location=f"{shown(path)}:1", type="kb", subtype="untrusted")
    if found:
        raise BuildStopped


def _symlink_problem(path: Path, what: str) -> str:
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    return (
        f"KB011 {shown(path)} is a symlink (to {target!r}): the build would read and publish whatever "
        "it points to (inside the repository that includes .git/ and CI's credentials); commit "
        f"the {what} itself instead"
    )


def shown(path: Path) -> str:
    """A path as contributors see it: relative to where the build runs, with
    control and bidirectional characters written as escapes (\\n, \\u202e)."""
    try:
        text = path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        text = str(path)
    return escaped(text)


# What the static folders may hold: files a browser uses as they are. Sphinx
# renders any "*_t" file there as a Jinja template (whose include reads any
# path, /proc/self/environ included), and an .html, .xsd or .rng file there
# is a document on the site's origin that runs its own script.
STATIC_TYPES = frozenset(
    {
        ".css",
        ".js",
        ".mjs",
        ".map",
        ".json",
        ".txt",
        ".png",
        ".jpg",
        ".jpeg",
        ".gif",
        ".webp",
        ".avif",
        ".svg",
        ".ico",
        ".woff",
        ".woff2",
        ".ttf",
        ".otf",
    }
)
STATIC_NAMES = frozenset({"_headers"})


def static_problems(app) -> list[tuple[Path, str]]:
    found = []
    # the project's folders (relative in conf.py); extensions add their own by
    # absolute path (sphinx-copybutton's copybutton.js_t is a template)
    for folder in (Path(app.confdir) / p for p in app.config.html_static_path if not os.path.isabs(p)):
        for path in sorted(folder.rglob("*")) if folder.is_dir() else [folder]:
            if path.is_dir() or path.name in STATIC_NAMES:
                continue
            if path.name.endswith(("_t", ".jinja", ".j2")):
                found.append(
                    (
                        path,
                        "is a template Sphinx would render (and its includes read any "
                        "file); commit the file it should produce instead",
                    )
                )
            elif path.suffix.lower() not in STATIC_TYPES:
                found.append(
                    (
                        path,
                        f"is a {path.suffix or 'extension-less'} file, which a browser "
                        f"may run as a document; static files may be: "
                        f"{', '.join(sorted(STATIC_TYPES))}",
                    )
                )
    return found


# What LaTeX reads as commands: the book writes an image's file name into its
# LaTeX as it is, so ``a}}\input{^^2fetc^^2fpasswd}{{b.png`` prints any file
# of the machine into the PDF.
LATEX_SPECIAL = re.compile(r"[\\{}%#$^&]")


def latex_names(app) -> list[Path]:
    """Files and folders among the pages and static files whose names hold
    a character LATEX_SPECIAL matches."""
    found = []
    tops = [Path(app.srcdir), *(Path(app.confdir) / p for p in app.config.html_static_path)]
    for top in tops:
        for folder, dirs, files in os.walk(top):
            found += [Path(folder) / name for name in sorted(dirs + files) if LATEX_SPECIAL.search(name)]
    return found


def on_builder_inited(app) -> None:
    """A static file of another type stops the build before anything is
    read (links stopped it when the configuration was read: check_input_tree)."""
    bad_static = static_problems(app)
    for path, problem in bad_static:
        logger.warning(
            "KB018 %s %s", shown(path), problem, location=f"{shown(path)}:1", type="kb", subtype="untrusted"
        )
    # the web pages may go on: only the book runs the names (make pdf stops at the warning)
    for path in latex_names(app):
        logger.warning(
            "KB091 %s: the name holds a character LaTeX reads as a command (one of \\ { } %% # $ ^ &), "
            "and the book writes file names into its LaTeX as they are; rename it",
            shown(path),
            location=f"{shown(path)}:1",
            type="kb",
            subtype="untrusted",
        )
    settings = docutils_settings_file(app)
    if settings:
        logger.warning(
            "KB096 %s: docutils reads its settings from this file (Sphinx points it there), and "
            "they would change what every page may do: another language's directive names that "
            "are not confined (a csv-table reading /etc/passwd), report_level hiding errors, "
            "tab_width; delete it, the site's settings are in conf.py",
            settings,
            location=f"{settings}:1",
            type="kb",
            subtype="untrusted",
        )
    if bad_static or settings:
        raise BuildStopped


def docutils_settings_file(app) -> str | None:
    """The docutils.conf beside conf.py, as the log names it, if there is one
    (a link or a folder too). sphinx.util.docutils.patch_docutils sets
    DOCUTILSCONFIG to that one path, so docutils reads no other file."""
    path = Path(app.confdir) / "docutils.conf"
    return shown(path) if os.path.lexists(path) else None


# The directives this module replaces, by their canonical names.
CONFINED = {
    "literalinclude": ConfinedLiteralInclude,
    "code-block": CheckedCodeBlock,
    "sourcecode": CheckedCodeBlock,
    "include": ConfinedInclude,
    "csv-table": ConfinedCSVTable,
    "figure": CheckedFigure,
    "image": CheckedImage,
    "hlist": CheckedHList,
    "raw": RefusedRaw,
    "rubric": CheckedRubric,
    **dict.fromkeys(REFUSED_DIRECTIVES, RefusedDirective),
}


def register_confined(app, config) -> None:
    """The replacements under every name docutils knows them by. A name of
    the page language (``csv表格``, ``原文``, ``目录`` in zh_CN) or an English
    alias is looked up in docutils' own registry, which holds its original
    classes: an unconfined csv-table would read any file or URL."""
    names = {}
    for language in (rst_languages.get_language("en"), rst_languages.get_language(config.language or "en")):
        for alias, canonical in language.directives.items():
            if canonical in CONFINED:
                names[alias] = CONFINED[canonical]
    for name, directive in {**names, **CONFINED}.items():
        app.add_directive(name, directive, override=True)
    # Sphinx looks a name up in the standard domain before docutils' registry
    app.add_directive_to_domain("std", "glossary", RefusedDirective, override=True)
    app.add_directive_to_domain("std", "productionlist", CheckedProductionList, override=True)
    replaced = {("std", "option"): CheckedCmdoption, ("std", "cmdoption"): CheckedCmdoption}
    replaced[("py", "module")] = CheckedPyModule
    for domain in DESCRIBING_DOMAINS:
        for name, directive in domain.directives.items():
            directive = replaced.get((domain.name, name), directive)
            if issubclass(directive, ObjectDescription) or "no-typesetting" in directive.option_spec:
                app.add_directive_to_domain(domain.name, name, checked_description(directive), override=True)
    for name in ("describe", "object"):  # Sphinx's own, outside any domain
        app.add_directive(name, checked_description(ObjectDescription), override=True)
    for domain in REFUSED_DOMAINS:
        app.add_domain(silent_domain(domain), override=True)
        for name in domain.directives:
            app.add_directive_to_domain(domain.name, name, RefusedDomainDirective, override=True)
        for name in domain.roles:
            app.add_role_to_domain(domain.name, name, RefusedDomainRole(), override=True)
    app.add_role("index", RefusedIndexRole(), override=True)
    app.add_role_to_domain("std", "token", CheckedTokenRole(), override=True)
    app.add_role_to_domain(
        "std", "numref", CheckedNumrefRole(lowercase=True, warn_dangling=True), override=True
    )


def note_confdir(app, config) -> None:
    """The folder of conf.py, for the checks that run where only the
    environment and the configuration are at hand (Sphinx 9 deprecates
    their ``app``)."""
    config.kb_confdir = str(app.confdir)


def setup(app) -> dict[str, Any]:
    app.setup_extension("myst_parser")
    app.add_config_value("kb_confdir", "", "", types=[str])
    # links to this machine's or its network's addresses refused (KB012); the
    # link checker's own test (-D kb_private_links=1) serves pages on 127.0.0.1
    app.add_config_value("kb_private_links", False, "env", types=[bool])
    app.connect("config-inited", note_confdir)
    # before any other handler walks these folders (kb.guard.locale, at 100)
    app.connect("config-inited", check_input_tree, priority=50)
    app.connect("config-inited", register_confined)
    app.add_transform(RefuseUnsafeNodes)
    app.connect("builder-inited", on_builder_inited)
    app.connect("source-read", on_source_read)
    app.connect("include-read", on_include_read)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
