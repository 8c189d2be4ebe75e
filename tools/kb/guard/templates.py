"""Templates read templates, not any file of the machine that builds the site.

Sphinx's template loader joins a template's name onto each templates folder
as it is written ("not so strict about '..' entries", its docstring says),
so in a contributed template ``{% include "../.git/config" %}`` or
``{% include "/proc/self/environ" %}`` would put CI's token or environment
into every published page. Jinja's sandbox, which Sphinx uses, stops code
in templates, not file names.

So, before anything is built (``builder-inited``, every builder):

- the templates folders hold HTML templates only: the LaTeX and EPUB
  builders would also render a ``*_t`` file there (``latex.tex_t`` …) with
  the same loader, for the books (``KB018``);
- a template that names another one by a literal that is absolute, climbs
  out with ``..``, or holds a NUL or a backslash is refused at its line
  (``KB011``).

And while pages are written, the builder's template bridge (Sphinx's
documented ``template_bridge`` setting, conf.py) is Sphinx's own with one
change: such a name, however the template computed it, fails the page
(``KB011`` at the template's line, once a page). Every other name is looked
up exactly as before. After ``MAX_FAILED_PAGES`` pages whose templates failed,
a build process renders no more pages, and says so: a template that fails
on every page cannot fill the log, or the memory, page after page.

A template cannot stall the build or exhaust the machine either: Jinja's
sandbox bounds one ``range`` (100,000 items) but not loops inside loops,
nor ``"x" * 10**10`` or ``"x"|center(10**10)``. So a page's templates get
``kb_template_seconds`` of CPU (default 20; a page takes milliseconds) and
1 GiB of memory beyond what the build holds (``render_budget``); past
either, or for a page over 8 MiB, the page is KB064 at the template's line;
past 256 MiB of HTML in all, the pages left are not rendered.
The pages together get ``kb_template_build_seconds`` (default 60; a
thousand pages of the site take half a second): past it, the pages left
are not rendered (KB064), so a template slow on every page cannot keep the
build busy for hours at just under the page's limit. One call the alarm
cannot interrupt (a long comparison inside C) ends the
build after twice that time, with KB064 (``_Watchdog``). And ``*`` or ``**``
that would make a string, list or number over ``MAX_PRODUCT`` items or bits
is refused (Jinja's documented ``intercepted_binops`` / ``call_binop``).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import re
import resource
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from jinja2 import BytecodeCache, TemplateSyntaxError, pass_context
from jinja2 import nodes as jinja_nodes
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment
from sphinx.jinja2glue import BuiltinTemplateLoader

from kb.core.log import clipped, getLogger
from kb.guard.silent_loss import BuildStopped
from kb.guard.untrusted import at_most, shown, walk_tree

logger = getLogger(__name__)


def confined(name: str) -> bool:
    """Whether a template name stays inside the folders it is looked up in."""
    if not name or "\0" in name or "\\" in name or name.startswith("/"):
        return False
    if len(name) > 1 and name[1] == ":":  # a drive letter
        return False
    return ".." not in name.split("/")


class RefusedName(Exception):
    """A template asked for a name that leaves the templates folders: the
    page fails here, once (not an empty include and the next one), and is
    reported at the template's line (Jinja's traceback)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


# After this many pages whose templates failed, the build renders no more
# templates (each would fail alike, at up to kb_template_seconds and a
# warning or more a page); the build fails and says how many it left out.
# And the templates' warning() is shown this many times in a build.
MAX_FAILED_PAGES = 5
MAX_TEMPLATE_WARNINGS = 20


class ProcessBytecodeCache(BytecodeCache):
    """Compiled templates kept for the life of the process, with Jinja's
    documented bytecode cache: a build after the first in one process (the
    tests' hundreds of small builds, a forked -j writer) does not compile
    furo's and Sphinx's templates again. Jinja keys an entry by the
    template's name and file and checks it against a checksum of the source,
    so an edited template is compiled again. Only ConfinedTemplates uses it,
    and every one of its environments compiles alike (the same
    intercepted_binops, set before the first template is loaded)."""

    def __init__(self) -> None:
        self.entries: dict[str, bytes] = {}

    def load_bytecode(self, bucket) -> None:
        code = self.entries.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket) -> None:
        self.entries[bucket.key] = bucket.bytecode_to_string()

    def clear(self) -> None:
        self.entries.clear()


COMPILED = ProcessBytecodeCache()


class ConfinedTemplates(BuiltinTemplateLoader):
    """Sphinx's template bridge; names that leave the template folders are refused."""

    def get_source(self, environment, template: str):
        if confined(template.removeprefix("!")):
            return super().get_source(environment, template)
        raise RefusedName(template)

    def init(self, builder, theme=None, dirs=None) -> None:
        self.builder = builder
        # Counted across the build: Sphinx writes pages in forked processes
        # (-j), each a copy of this one; shared memory made before they fork
        # is the one count all of them see. [failed pages, pages not
        # rendered, warning() calls, CPU milliseconds spent rendering,
        # characters of HTML made]
        self.counts = multiprocessing.get_context("fork").Array("q", 5)
        super().init(builder, theme, dirs)
        # before any template is compiled: the compiler reads it
        self.environment.intercepted_binops = frozenset({"*", "**"})
        self.environment.call_binop = bounded_binop
        self.environment.bytecode_cache = COMPILED
        # Sphinx's template global warning(message, *args, **kwargs) hands its
        # arguments to logging: a template could pick a warning's location
        # (location="docs/x.md:7") or print a logging traceback ("%d", "x").
        # Here it prints the message, as text, as a warning of the page.
        # A template that calls it in a loop is shown MAX_TEMPLATE_WARNINGS
        # times, then once more to say the rest are not.
        page_file, counts = self._page_file, self.counts

        @pass_context
        def warning(context, message="", *args, **kwargs) -> str:
            with counts.get_lock():
                counts[2] += 1
                calls = counts[2]
            if calls <= MAX_TEMPLATE_WARNINGS:
                logger.warning(
                    "KB064 a template warns on %s: %s",
                    page_file(context.get("pagename")) or "a page",
                    clipped(str(message), 500),
                    type="kb",
                    subtype="template",
                )
            elif calls == MAX_TEMPLATE_WARNINGS + 1:
                logger.warning(
                    "KB064 the templates warned more than %d times; the rest are not shown: fix the templates",
                    MAX_TEMPLATE_WARNINGS,
                    type="kb",
                    subtype="template",
                )
            return ""

        self.environment.globals["warning"] = warning

    def render(self, template: str, context: dict) -> str:
        """A template that fails as it renders (a template including itself,
        a filter given the wrong value, a division by zero, a loop that does
        not end in time, more memory than a page may take) is KB064 at the
        template's line, not a traceback or a stalled build. (BuildStopped is
        not an Exception: it still ends the build.)"""
        pagename = context.get("pagename")
        page = self._page_file(pagename)
        config = self.builder.config
        in_all = config.kb_template_build_seconds or float("inf")
        with self.counts.get_lock():
            failed, spent, made = self.counts[0], self.counts[3] / 1000, self.counts[4]
            stop = failed >= MAX_FAILED_PAGES or spent >= in_all or made >= MAX_SITE_CHARS
            if stop:
                self.counts[1] += 1
                first_skipped = self.counts[1] == 1
        if stop:
            if first_skipped:
                if failed >= MAX_FAILED_PAGES:
                    why = f"failed on {failed} pages"
                elif made >= MAX_SITE_CHARS:
                    why = (
                        f"made more than {MAX_SITE_CHARS >> 20} MiB of HTML in all (the site's 1,000-article "
                        "benchmark makes about 90)"
                    )
                else:
                    why = (
                        f"used more than kb_template_build_seconds ({in_all:g} s) of CPU in all "
                        "(the site's take well under a second)"
                    )
                logger.warning(
                    "KB064 the templates %s; the pages after them (%s, and any later) were not "
                    "rendered: fix the templates",
                    why,
                    page or template,
                    type="kb",
                    subtype="template",
                )
            return ""
        seconds = config.kb_template_seconds and min(config.kb_template_seconds, in_all - spent)
        started = time.process_time()
        try:
            with render_budget(seconds, page, template):
                html = super().render(template, context)
        except RefusedName as exc:
            self._failed()
            logger.warning(
                "KB011 a template includes %s: templates may name only other templates, "
                "inside the templates folders (no absolute path, no '..'); remove it",
                clipped(repr(exc.name)),
                location=self._line(exc, page),
                type="kb",
                subtype="template",
            )
            return ""
        except (Exception, TemplateTimeout) as exc:  # noqa: BLE001 (whatever a template's expression raises: 1 / 0 too)
            self._failed()
            self._report(template, f"{type(exc).__name__}: {clipped(str(exc))}", exc, page)
            return ""
        finally:
            with self.counts.get_lock():
                self.counts[3] += round((time.process_time() - started) * 1000)
        with self.counts.get_lock():
            self.counts[4] += len(html)
        if len(html) > MAX_PAGE_CHARS:
            self._failed()
            self._report(template, f"the page is {len(html) >> 20} MiB, more than a page may be", None, page)
            return ""
        return html

    def _failed(self) -> None:
        with self.counts.get_lock():
            self.counts[0] += 1

    def _line(self, exc, page: str | None) -> str | None:
        """path:LINE in the templates where ``exc`` was raised, else the page's first line."""
        folders = [Path(self.builder.confdir, p) for p in self.builder.config.templates_path]
        return _template_line(exc, folders) or (f"{page}:1" if page else None)

    def _page_file(self, pagename) -> str | None:
        env = getattr(self.builder, "env", None)
        if pagename and env is not None and pagename in env.found_docs:
            return shown(Path(env.doc2path(pagename)))
        return pagename or None

    def _report(self, template: str, what: str, exc, page) -> None:
        logger.warning(
            "KB064 the template %s failed on %s (%s); fix the template",
            template,
            page or "a page",
            what,
            location=self._line(exc, page),
            type="kb",
            subtype="template",
        )


def _template_line(exc, folders: list[Path]) -> str | None:
    """path:LINE of the template line the error came from (Jinja's
    tracebacks name the template file and its line): the innermost line of
    the project's own templates, else of any (a theme's)."""
    found = ours = None
    tb = exc.__traceback__ if exc is not None else None
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.endswith(".html") and Path(name).is_file():
            found = (name, _source_line(tb))
            if any(Path(name).is_relative_to(folder) for folder in folders):
                ours = found
        tb = tb.tb_next
    found = ours or found
    return f"{shown(Path(found[0]))}:{found[1]}" if found else None


def _source_line(tb) -> int:
    """The template's line of a traceback entry in a template file. Jinja
    rewrites the traceback of an Exception to template lines; a
    TemplateTimeout (a BaseException, which Jinja lets pass as it is) still
    has the line of the Python code Jinja compiled the template to, which
    the template object maps back. Jinja documents no way from a frame to
    its template (pallets/jinja discussion #1971 and issue #581: frames of compiled
    templates have the compiled code's lines); the module global
    ``__jinja_template__`` that Jinja's own traceback rewriting reads is
    that way, and tests/test_hostile_templates.py fails if it goes."""
    template = tb.tb_frame.f_globals.get("__jinja_template__")
    return template.get_corresponding_lineno(tb.tb_lineno) if template is not None else tb.tb_lineno


class TemplateTimeout(BaseException):
    """Raised where a page's templates are running once they have used their
    time. A BaseException: code that catches Exception on the way (Jinja's
    tests, logging) cannot swallow it; and it is raised again every half
    second of CPU until the render ends."""

    def __str__(self) -> str:
        return "the page's templates ran longer than kb_template_seconds; a loop in a loop?"


# What a page's templates may take beyond what the process held when they
# started, and how long the page they make may be.
RENDER_MEMORY = 1 << 30
# The largest page of the site is 160 KB; in the 1,000-article benchmark the
# errata page is 3.5 million characters (all pages: 88 MiB). The HTML checks
# read a MiB of dense markup in about a second: a page may be 8 MiB, all
# pages 256 MiB.
MAX_PAGE_CHARS = 8 << 20
MAX_SITE_CHARS = 256 << 20


class render_budget:
    """A page's templates get ``seconds`` of CPU (then TemplateTimeout, in the
    main thread of a process: where Sphinx and its worker processes write
    pages) and RENDER_MEMORY more memory (then MemoryError); a call that the
    alarm cannot interrupt (one long comparison in C) ends the build at twice
    the time plus five seconds, with KB064 (the watchdog)."""

    def __init__(self, seconds: float, page: str | None, template: str) -> None:
        main = threading.current_thread() is threading.main_thread()
        self.seconds = seconds if main and seconds > 0 else 0
        self.message = (
            f"{page or template}: WARNING: KB064 the template {template} ran longer than "
            f"kb_template_seconds ({seconds} s) in one call and the build was stopped; fix the template"
        )

    def __enter__(self) -> None:
        if not self.seconds:
            return
        _watchdog.arm(time.monotonic() + 2 * self.seconds + 5, self.message)
        _budget.running = True
        self.handler = signal.signal(signal.SIGVTALRM, _expired)
        # CPU time, not wall time: a loaded machine does not fail a page, and
        # a SIGALRM timer of someone else's (pytest-timeout) is left alone
        self.timer = signal.setitimer(signal.ITIMER_VIRTUAL, self.seconds, 0.5)
        self.limit = _lower_memory_limit()

    def __exit__(self, *exc) -> None:
        if not self.seconds:
            return
        # The timer may go off here too: from now on its handler does nothing,
        # and whatever it raised before, the timer, the handler (the timer
        # first: no signal then finds the handler gone) and the limit are restored.
        try:
            _budget.running = False
        finally:
            try:
                signal.setitimer(signal.ITIMER_VIRTUAL, *self.timer)
            finally:
                signal.signal(signal.SIGVTALRM, self.handler)
                if self.limit is not None:
                    resource.setrlimit(resource.RLIMIT_AS, self.limit)
                _watchdog.disarm()


class _Budget:
    running = False


_budget = _Budget()


def _expired(signum, frame):
    if _budget.running:
        raise TemplateTimeout


def _lower_memory_limit():
    """Lower the address-space limit to what the process uses now plus
    RENDER_MEMORY; returns the limit to restore (None if not lowered)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            used = int(statm.read().split()[0]) * resource.getpagesize()
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    except (OSError, ValueError):
        return None
    new = used + RENDER_MEMORY
    if hard != resource.RLIM_INFINITY:
        new = min(new, hard)
    if soft != resource.RLIM_INFINITY and soft <= new:
        return None
    resource.setrlimit(resource.RLIMIT_AS, (new, hard))
    return soft, hard


# The watchdog: a small process of its own, since one long call in C holds
# the interpreter (a thread of this process would wait for it). Processes
# write "pid deadline message" when a render starts and "pid" when it ends,
# one line each (shorter than PIPE_BUF: never interleaved); past a deadline
# it prints the message and ends the process that wrote it and the build.
WATCHDOG = r"""
import os, select, signal, sys, time
build, pending, buf = int(sys.argv[1]), {}, b""
while True:
    soonest = min((d for d, _ in pending.values()), default=None)
    ready, _, _ = select.select([0], [], [], None if soonest is None else max(0.0, soonest - time.monotonic()))
    if ready:
        chunk = os.read(0, 65536)
        if not chunk:
            break
        *lines, buf = (buf + chunk).split(b"\n")
        for line in lines:
            pid, _, rest = line.partition(b" ")
            deadline, _, message = rest.partition(b" ")
            if rest:
                pending[int(pid)] = (float(deadline), message)
            else:
                pending.pop(int(pid), None)
    for pid, (deadline, message) in list(pending.items()):
        if time.monotonic() >= deadline:
            os.write(2, message + b"\n")
            for target in {pid, build}:
                try:
                    os.kill(target, signal.SIGKILL)
                except OSError:
                    pass
            sys.exit(1)
"""


class _Watchdog:
    def __init__(self) -> None:
        self.pipe: int | None = None

    def arm(self, deadline: float, message: str) -> None:
        if self.pipe is None:  # once per build process; worker processes inherit it
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", WATCHDOG, str(os.getpid())], stdin=subprocess.PIPE
            )
            self.pipe = os.dup(proc.stdin.fileno())
            proc.stdin.close()
        text = " ".join(message.split())[:2000]
        self._send(f"{os.getpid()} {deadline:.3f} {text}\n")

    def disarm(self) -> None:
        if self.pipe is not None:
            self._send(f"{os.getpid()}\n")

    def _send(self, line: str) -> None:
        try:
            os.write(self.pipe, line.encode("utf-8", "replace"))
        except OSError:
            self.pipe = None  # the watchdog is gone: the next render starts another


_watchdog = _Watchdog()


def new_build_process() -> None:
    """This process starts a build of its own after it was forked from one
    that built before (the tests' forked builds): its renders then report to
    a watchdog of their own, which stops this process and not the one it was
    forked from. (Sphinx's -j writers must not call it: they belong to their
    build.)"""
    _watchdog.pipe = None


# What ``*`` and ``**`` may make in a template: strings and lists of up to a
# million items, numbers of up to a million bits.
MAX_PRODUCT = 1_000_000


def bounded_binop(context, operator: str, left, right):
    """Jinja's SandboxedEnvironment.call_binop for ``*`` and ``**``."""
    if operator == "*":
        for seq, times in ((left, right), (right, left)):
            sequence = isinstance(seq, (str, bytes, list, tuple)) and isinstance(times, int)
            if sequence and len(seq) * max(times, 0) > MAX_PRODUCT:
                raise SecurityError(f"{len(seq)} items times {times} is too long for a page")
        return left * right
    numbers = isinstance(left, int) and isinstance(right, int) and right > 0
    if numbers and max(left.bit_length(), 1) * right > MAX_PRODUCT:
        raise SecurityError(f"{left} ** {right} is too large for a page")
    return left**right


# Jinja's syntax, as the builders read templates (with the i18n extension)
SYNTAX = SandboxedEnvironment(extensions=["jinja2.ext.i18n"])

# A run of this many spaces or tabs on one line: Jinja's i18n extension
# ({% trans trimmed %}) matches it with \s*\n\s*, in time that grows with its
# square (262,000 spaces: a minute, in C, where no alarm interrupts it).
MAX_BLANK_CHARS = 4096
LONG_BLANK = re.compile(r"[^\S\r\n]{%d}" % (MAX_BLANK_CHARS + 1))


def _line_at(text: str, at: int | None = None) -> int:
    """The line of offset ``at`` (the end of ``text`` by default), counted as
    Jinja counts lines (\r\n, \r or \n)."""
    return len(re.findall(r"\r\n|\r|\n", text[:at])) + 1


def _template_files(folders: list[Path]) -> tuple[list[Path], list[tuple[str, str]]]:
    """Every file under the templates folders (kb.guard.untrusted.walk_tree:
    without recursion), and KB018 for a folder nested deeper than MAX_FOLDER_DEPTH."""
    files, cut = walk_tree(folders, MAX_FOLDER_DEPTH)
    return files, [
        (
            f"{shown(folder)}:1",
            f"KB018 the templates folder nests folders more than {MAX_FOLDER_DEPTH} deep: "
            "keep templates at most a few folders down",
        )
        for folder in cut
    ]


def _past_the_limits(files: list[Path], sizes: dict[Path, os.stat_result]) -> Path | None:
    """The file at which the templates folders pass MAX_TEMPLATES files or
    MAX_TEMPLATES_TOTAL bytes of templates, or None: found from the sizes
    alone, so that a folder over the limits is refused without reading any
    template (Jinja reads several seconds a MiB)."""
    total = 0
    for count, path in enumerate(files, 1):
        info = sizes.get(path)
        if info is None or not stat.S_ISREG(info.st_mode) or path.suffix.lower() != ".html":
            continue  # gone, or not a template (KB018)
        total += info.st_size
        if count > MAX_TEMPLATES or total > MAX_TEMPLATES_TOTAL:
            return path
    return None


def template_problems(folders: list[Path], seconds: float = 20) -> list[tuple[str, str]]:
    """(path:LINE, KB line) for what the templates folders may not hold; each
    template is read within ``seconds`` of CPU (kb_template_seconds)."""
    files, found = _template_files(folders)
    named: dict[Path, list[tuple[str, int]]] = {}  # template -> (literal name it names, line)
    sizes = {}
    for path in files:
        with contextlib.suppress(OSError):  # else gone since the folder was listed
            sizes[path] = path.lstat()
    over = _past_the_limits(files, sizes)
    for path in files:
        if (info := sizes.get(path)) is None:
            continue
        if not stat.S_ISREG(info.st_mode) or path.suffix.lower() != ".html":
            found.append(
                (
                    f"{shown(path)}:1",
                    "KB018 the templates folder holds only the site's HTML templates (regular .html files); "
                    "a book builder would render this file as a template too: remove it",
                )
            )
            continue
        if path == over:
            found.append(
                (
                    f"{shown(path)}:1",
                    f"KB064 the templates folders hold more than {MAX_TEMPLATES} templates or "
                    f"{MAX_TEMPLATES_TOTAL >> 20} MiB (Jinja reads and compiles several seconds a MiB, "
                    "before any page is built): remove templates the site does not use",
                )
            )
            break
        if info.st_size > MAX_TEMPLATE_BYTES:
            found.append(
                (
                    f"{shown(path)}:1",
                    f"KB064 the template is {info.st_size:,} bytes, more than a template may be "
                    f"({MAX_TEMPLATE_BYTES >> 10} KiB; Jinja reads and compiles several seconds a MiB): "
                    "split it; put a large image or SVG in _static/ and link it",
                )
            )
            continue
        if over is not None:
            continue  # refused together, before the time it takes to read them
        try:
            with open(path, "rb") as file:
                data = file.read(MAX_TEMPLATE_BYTES + 1)
        except OSError:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            found.append(
                (
                    f"{shown(path)}:{_line_at(data[: exc.start].decode('utf-8'))}",
                    f"KB064 the template is not UTF-8 text (byte 0x{data[exc.start]:02x}), which is how "
                    "Sphinx reads it: save it as UTF-8",
                )
            )
            continue
        if run := LONG_BLANK.search(text):
            found.append(
                (
                    f"{shown(path)}:{_line_at(text, run.start())}",
                    f"KB064 the template has more than {MAX_BLANK_CHARS:,} spaces or tabs in a row "
                    "(Jinja reads such a run in time that grows with its square): remove them",
                )
            )
            continue
        try:
            with render_budget(seconds, shown(path), path.name):
                tree = SYNTAX.parse(text)
                named[path] = literal_names(tree)
        except TemplateTimeout:
            found.append(
                (
                    f"{shown(path)}:1",
                    f"KB064 the template takes more than kb_template_seconds ({seconds} s) to read: "
                    "make it smaller and simpler",
                )
            )
            continue
        except TemplateSyntaxError as exc:
            found.append(
                (
                    f"{shown(path)}:{exc.lineno or 1}",
                    f"KB064 the template does not parse ({exc.message}); fix it (Jinja syntax)",
                )
            )
            continue
        except (RecursionError, ValueError, OverflowError) as exc:  # Jinja's parser and lexer, our walk
            found.append(
                (
                    f"{shown(path)}:1",
                    f"KB064 the template cannot be read ({type(exc).__name__}: {str(exc)[:100]}); blocks and "
                    f"expressions may nest at most {MAX_TEMPLATE_DEPTH} levels: split it into smaller templates "
                    "or macros",
                )
            )
            continue
        for name, line in named[path]:
            if not confined(name.removeprefix("!")):
                found.append(
                    (
                        f"{shown(path)}:{line}",
                        f"KB011 a template includes {clipped(repr(name))}: templates may name only "
                        "other templates, inside the templates folders (no absolute path, no '..'); "
                        "remove it",
                    )
                )
    return at_most(found, "KB018") + _cycles(folders, named)


# How large a template may be, and all of them together: the site's and
# furo's are under 20 KiB each, 86 templates with Sphinx's basic theme.
MAX_TEMPLATE_BYTES = 256 << 10
MAX_TEMPLATES_TOTAL = 1 << 20
MAX_TEMPLATES = 200
MAX_FOLDER_DEPTH = 16
# How deep a template's parse tree may nest. Jinja's compiler and Python's
# recursion limit stop at a few hundred levels (`{{ 1 + 1 + … }}` with 300
# terms); the site's templates and furo's nest fewer than 30.
MAX_TEMPLATE_DEPTH = 150


def literal_names(tree: jinja_nodes.Template) -> list[tuple[str, int]]:
    """(name, line) of each template a parsed template names by a literal
    (``include``, ``import``, ``from``, ``extends``; a list of names; strings
    joined with ``~``), read from Jinja's parse tree: not in comments, raw
    blocks or strings. Nothing is evaluated (folding ``"x" * n`` or a filter
    would run the template's code)."""

    def names(expr) -> list[str]:
        if isinstance(expr, jinja_nodes.Const) and isinstance(expr.value, str):
            return [expr.value]
        if isinstance(expr, (jinja_nodes.List, jinja_nodes.Tuple)):
            return [name for item in expr.items for name in names(item)]
        if isinstance(expr, jinja_nodes.Concat):
            parts = [names(node) for node in expr.nodes]
            return ["".join(p[0] for p in parts)] if all(len(p) == 1 for p in parts) else []
        return []

    kinds = (jinja_nodes.Include, jinja_nodes.Import, jinja_nodes.FromImport, jinja_nodes.Extends)
    found, todo = [], [(tree, 0)]
    while todo:  # not find_all: it recurses once per level, and `1 + 1 + …` nests as deep as it is long
        node, depth = todo.pop()
        if depth > MAX_TEMPLATE_DEPTH:  # Jinja's compiler recurses once per level too
            raise RecursionError(f"nested deeper than {MAX_TEMPLATE_DEPTH}")
        if isinstance(node, kinds):
            found += [(name, node.lineno) for name in names(node.template)]
        todo.extend((child, depth + 1) for child in reversed(list(node.iter_child_nodes())))
    return sorted(set(found), key=lambda f: (f[1], f[0]))


def _cycles(folders: list[Path], named: dict[Path, list[tuple[str, int]]]) -> list[tuple[str, str]]:
    """KB064 at the line where a template names, by a literal, a template of
    the folders that leads back to it (itself included): rendering it recurses
    on every page until Python's limit. A name with ``!`` is the theme's own
    template, which the loader looks up past the folders; a cycle through the
    theme's templates, or one a computed name makes, is still KB064 when a
    page is written. One pass over the graph (strongly connected components):
    an edge closes a circle when both ends lie in one component."""
    found_at: dict[str, Path | None] = {}

    def target(name: str) -> Path | None:
        if name not in found_at:
            found_at[name] = None
            if not name.startswith("!") and confined(name):
                for folder in folders:
                    path = folder / name
                    try:
                        if path in named or path.is_file():
                            found_at[name] = path
                            break
                    except OSError:  # a name the file system refuses (too long …): no template
                        pass
        return found_at[name]

    edges = {path: {t for name, _ in uses if (t := target(name)) is not None} for path, uses in named.items()}
    component = _components(edges)
    found = []
    for start in sorted(named):
        for name, line in named[start]:
            to = target(name)
            if to is None or component.get(to) != component[start]:
                continue
            if to == start:
                how, fix = (
                    "itself",
                    f"to extend the theme's template, name it '!{name}'; else remove the name",
                )
            else:
                how, fix = (
                    f"{name!r}, which leads back to it",
                    "remove the name from one template of the circle",
                )
            found.append(
                (
                    f"{shown(start)}:{line}",
                    f"KB064 the template names {how}: templates may not name each other in a circle, even under "
                    f"a condition (unguarded, every page would repeat it to Python's recursion limit); {fix} "
                    "(a tree is drawn with a recursive for loop, {% for … recursive %})",
                )
            )
    return found


def _components(edges: dict[Path, set[Path]]) -> dict[Path, int]:
    """Strongly connected components (Kosaraju, without recursion): node -> number."""
    nodes = set(edges) | {t for ts in edges.values() for t in ts}
    order, seen = [], set()
    for root in sorted(nodes):
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(sorted(edges.get(root, ()))))]
        while stack:
            node, rest = stack[-1]
            nxt = next(rest, None)
            if nxt is None:
                stack.pop()
                order.append(node)
            elif nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, iter(sorted(edges.get(nxt, ())))))
    back: dict[Path, list[Path]] = {}
    for node, ts in edges.items():
        for t in ts:
            back.setdefault(t, []).append(node)
    component: dict[Path, int] = {}
    for root in reversed(order):
        if root in component:
            continue
        component[root], todo = len(component), [root]
        number = component[root]
        while todo:
            for prev in back.get(todo.pop(), ()):
                if prev not in component:
                    component[prev] = number
                    todo.append(prev)
    return component


def on_builder_inited(app) -> None:
    found = template_problems(
        [Path(app.confdir, p) for p in app.config.templates_path], app.config.kb_template_seconds
    )
    for location, message in found:
        logger.warning(message, location=location, type="kb", subtype="template")
    if found:
        raise BuildStopped


def setup(app) -> dict[str, Any]:
    app.add_config_value("kb_template_seconds", 20, "", types=[int, float])
    # and all pages together (the site's 1,000-article benchmark: 0.4 s)
    app.add_config_value("kb_template_build_seconds", 60, "", types=[int, float])
    app.connect("builder-inited", on_builder_inited)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
