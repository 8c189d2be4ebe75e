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
change: such a name, however the template computed it, is refused
(``KB011``) and renders as nothing. Every other name is looked up exactly as
before.

A template cannot stall the build either: Jinja's sandbox bounds one
``range`` (100,000 items) but not loops inside loops, nor ``"x" * 10**10``.
A page whose templates run longer than ``kb_template_seconds`` (default 20;
a page takes milliseconds) is KB064 at that page, and ``*`` or ``**`` that
would make a string, list or number over ``MAX_PRODUCT`` items or bits is
refused (Jinja's documented ``intercepted_binops`` / ``call_binop``).
"""

from __future__ import annotations

import re
import signal
import threading
from pathlib import Path
from typing import Any

from jinja2 import TemplateSyntaxError
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment
from sphinx.jinja2glue import BuiltinTemplateLoader
from sphinx.util import logging

from kb.guard.silent_loss import BuildStopped
from kb.guard.untrusted import shown

logger = logging.getLogger(__name__)


def confined(name: str) -> bool:
    """Whether a template name stays inside the folders it is looked up in."""
    if not name or "\0" in name or "\\" in name or name.startswith("/"):
        return False
    if len(name) > 1 and name[1] == ":":  # a drive letter
        return False
    return ".." not in name.split("/")


def _named_at(folders: list[Path], name: str) -> str | None:
    """path:LINE of the first template that writes ``name`` out."""
    for folder in folders:
        for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
            if not path.is_file() or path.is_symlink():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            at = text.find(name)
            if at >= 0:
                return f"{shown(path)}:{text.count(chr(10), 0, at) + 1}"
    return None


class ConfinedTemplates(BuiltinTemplateLoader):
    """Sphinx's template bridge; names that leave the template folders are refused."""

    def get_source(self, environment, template: str):
        name = template.removeprefix("!")
        if confined(name):
            return super().get_source(environment, template)
        config = self.builder.config if hasattr(self, "builder") else None
        folders = [Path(self.builder.confdir, p) for p in config.templates_path] if config else []
        logger.warning(
            "KB011 a template includes %r: templates may name only other templates, "
            "inside the templates folders (no absolute path, no '..'); remove it",
            template,
            location=_named_at(folders, name) or (folders[0].as_posix() if folders else None),
            type="kb",
            subtype="template",
        )
        return "", template, lambda: True

    def init(self, builder, theme=None, dirs=None) -> None:
        self.builder = builder
        super().init(builder, theme, dirs)
        # before any template is compiled: the compiler reads it
        self.environment.intercepted_binops = frozenset({"*", "**"})
        self.environment.call_binop = bounded_binop

    def render(self, template: str, context: dict) -> str:
        """A template that fails as it renders (a template including itself,
        a filter given the wrong value, a division by zero, a loop that does
        not end in time) is KB064 at the page, not a traceback or a stalled
        build. (BuildStopped is not an Exception: it still ends the build.)"""
        try:
            with time_limit(self.builder.config.kb_template_seconds):
                return super().render(template, context)
        except Exception as exc:  # noqa: BLE001 (whatever a template's expression raises: 1 / 0 too)
            logger.warning(
                "KB064 the template %s failed on this page (%s: %s); fix the template",
                template,
                type(exc).__name__,
                str(exc)[:200],
                location=(context.get("pagename"), None) if context.get("pagename") else None,
                type="kb",
                subtype="template",
            )
            return ""


class TemplateTimeout(Exception):
    def __str__(self) -> str:
        return "the page's templates ran longer than kb_template_seconds; a loop in a loop?"


class time_limit:
    """Raise TemplateTimeout in the block after ``seconds`` (the main thread
    of a process only: where Sphinx and its worker processes write pages)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds if threading.current_thread() is threading.main_thread() else 0

    def __enter__(self) -> None:
        if self.seconds > 0:
            self.before = signal.signal(signal.SIGALRM, self._expired)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc) -> None:
        if self.seconds > 0:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.before)

    @staticmethod
    def _expired(signum, frame):
        raise TemplateTimeout


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

# {% include "x" %}, {% import 'x' as y %}, {% from "x" import y %}, {% extends "x" %}
NAMED = re.compile(r"{%-?\s*(?:include|import|from|extends)\s+([\"'])(.*?)\1", re.S)


def template_problems(folders: list[Path]) -> list[tuple[str, str]]:
    """(path:LINE, KB line) for what the templates folders may not hold."""
    found = []
    for folder in folders:
        for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
            if path.is_dir():
                continue
            if path.suffix.lower() != ".html":
                found.append(
                    (
                        f"{shown(path)}:1",
                        "KB018 the templates folder holds only the site's HTML templates (.html); "
                        "a book builder would render this file as a template too: remove it",
                    )
                )
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            try:
                SYNTAX.parse(text)
            except TemplateSyntaxError as exc:
                found.append(
                    (
                        f"{shown(path)}:{exc.lineno or 1}",
                        f"KB064 the template does not parse ({exc.message}); fix it (Jinja syntax)",
                    )
                )
                continue
            for match in NAMED.finditer(text):
                if not confined(match.group(2)):
                    found.append(
                        (
                            f"{shown(path)}:{text.count(chr(10), 0, match.start()) + 1}",
                            f"KB011 a template includes {match.group(2)!r}: templates may name only "
                            "other templates, inside the templates folders (no absolute path, no '..'); "
                            "remove it",
                        )
                    )
    return found


def on_builder_inited(app) -> None:
    found = template_problems([Path(app.confdir, p) for p in app.config.templates_path])
    for location, message in found:
        logger.warning(message, location=location, type="kb", subtype="template")
    if found:
        raise BuildStopped


def setup(app) -> dict[str, Any]:
    app.add_config_value("kb_template_seconds", 20, "", types=[int, float])
    app.connect("builder-inited", on_builder_inited)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
