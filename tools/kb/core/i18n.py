"""The message catalog of the strings the kb extensions put on pages.

Every reader-visible string our extensions write goes through ``_`` (Sphinx's
documented ``sphinx.locale.get_translation``), so another edition is a
translation, not a code change. The source strings are the Chinese of this
edition; a string kept in a constant is marked with ``N_`` and translated
with ``_`` where it is shown.

Two catalogs, both under ``kb_locale_dirs`` (conf.py: ``locale/``), compiled
into the build's own folder (``kb_locale_build_dir``, kb.guard.locale):

- ``<lang>/LC_MESSAGES/sphinx.po``: the theme's and our templates' strings.
  kb.guard.locale compiles it when conf.py runs, before Sphinx reads its
  own translations. For zh_CN it translates furo, which ships no Chinese.
- ``<lang>/LC_MESSAGES/kb.po``: the strings of this package, registered with
  ``app.add_message_catalog`` when the builder starts, from the ``kb.mo``
  compiled with the other catalogs. zh_CN needs none: its strings are the
  source.

``kb.guard.locale`` checks both catalogs before the build uses them (nothing
else may be in the locale folders; placeholders as in the msgids; UTF-8),
and makes their contents a setting, so that a changed translation rewrites
every page.

``sphinx-build -b gettext`` writes ``kb.pot`` beside the documents'
templates: every ``_(…)`` / ``N_(…)`` string of the package, extracted with
Babel's Python extractor; and ``sphinx.pot``, the strings of our templates
(``templates_path``), when Sphinx wrote none: its gettext builder looks for
the templates under the source folder, and ours are beside conf.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.locale import get_translation

CATALOG = "kb"
PACKAGE = Path(__file__).resolve().parent.parent

_translation = get_translation(CATALOG)


def _(message: str) -> str:
    """The translation of ``message`` in the build's language, as a str (Sphinx's
    function returns a lazy proxy before a catalog is registered, which
    ``str.join`` and docutils' attributes do not take)."""
    return str(_translation(message))


def N_(message: str) -> str:  # noqa: N802 (the gettext convention)
    """Mark a string for the catalog without translating it (yet)."""
    return message


def extract(package: Path = PACKAGE):
    """Every ``_(…)`` and ``N_(…)`` string of the package, as a Babel catalog."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_from_dir

    catalog = Catalog(project="51 算力知识库", domain=CATALOG, charset="utf-8")
    keywords = {"_": None, "N_": None}
    method_map = [("**.py", "python")]
    for filename, lineno, message, comments, context in extract_from_dir(
        str(package), method_map=method_map, keywords=keywords, comment_tags=("Translators:",)
    ):
        catalog.add(message, None, [(f"kb/{filename}", lineno)], auto_comments=comments, context=context)
    return catalog


def template_strings(app):
    """The strings of the templates in ``templates_path``, as a Babel catalog."""
    from babel.messages.catalog import Catalog
    from jinja2.ext import babel_extract

    catalog = Catalog(project="51 算力知识库", domain="sphinx", charset="utf-8")
    for folder in app.config.templates_path:
        base = Path(app.confdir, folder)
        for path in sorted(base.rglob("*.html")):
            with path.open("rb") as src:
                for lineno, _func, message, comments in babel_extract(src, ["_", "gettext"], [], {}):
                    catalog.add(message, None, [(path.name, lineno)], auto_comments=comments)
    return catalog


def on_builder_inited(app) -> None:
    """Register kb.mo of the build's language: conf.py compiled every catalog
    into the build's own folder (``locale_dirs``, kb.guard.locale), once
    they had passed the checks."""
    language = app.config.language
    for folder in app.config.locale_dirs:
        if Path(app.srcdir, folder, language, "LC_MESSAGES", f"{CATALOG}.mo").is_file():
            app.add_message_catalog(CATALOG, str(Path(app.srcdir, folder)))


def on_build_finished(app, exception) -> None:
    """``-b gettext``: kb.pot beside the documents' catalogs."""
    if exception is not None or app.builder.name != "gettext":
        return
    from babel.messages.pofile import write_po

    with (Path(app.outdir) / f"{CATALOG}.pot").open("wb") as out:
        write_po(out, extract(), sort_by_file=True, width=0)
    templates = Path(app.outdir) / "sphinx.pot"
    if not templates.exists():
        with templates.open("wb") as out:
            write_po(out, template_strings(app), sort_by_file=True, width=0)


def setup(app) -> dict[str, Any]:
    app.connect("builder-inited", on_builder_inited)
    app.connect("build-finished", on_build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
