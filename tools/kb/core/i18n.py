"""The message catalog of the strings the kb extensions put on pages.

Every reader-visible string our extensions write goes through ``_`` (Sphinx's
documented ``sphinx.locale.get_translation``), so another edition is a
translation, not a code change. The source strings are the Chinese of this
edition; a string kept in a constant is marked with ``N_`` and translated
with ``_`` where it is shown.

Two catalogs, both under ``locale_dirs`` (conf.py: ``locale/``):

- ``<lang>/LC_MESSAGES/sphinx.po``: the theme's and our templates' strings.
  Sphinx reads it before its own translations and compiles it to ``.mo``
  itself (``gettext_auto_build``). For zh_CN it translates furo, which ships
  no Chinese.
- ``<lang>/LC_MESSAGES/kb.po``: the strings of this package. This extension
  compiles it when set up (Babel, which Sphinx itself uses for that), into
  the doctree folder, not the repository, and registers it with
  ``app.add_message_catalog``. zh_CN needs none: its strings are the source.

``sphinx-build -b gettext`` writes ``kb.pot`` beside the documents'
templates: every ``_(…)`` / ``N_(…)`` string of the package, extracted with
Babel's Python extractor.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.locale import get_translation
from sphinx.util import logging

CATALOG = "kb"
PACKAGE = Path(__file__).resolve().parent.parent

_ = get_translation(CATALOG)

logger = logging.getLogger(__name__)


def N_(message: str) -> str:  # noqa: N802 (the gettext convention)
    """Mark a string for the catalog without translating it (yet)."""
    return message


def catalog_files(app) -> list[Path]:
    """The kb.po files of the build's language in ``locale_dirs``."""
    language = app.config.language
    found = []
    for folder in app.config.locale_dirs:
        po = Path(app.srcdir, folder, language, "LC_MESSAGES", f"{CATALOG}.po")
        if po.is_file():
            found.append(po)
    return found


def compile_catalog(po: Path, language: str, target: Path) -> Path:
    """``po`` compiled to ``target/<language>/LC_MESSAGES/kb.mo``, if older."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    mo = target / language / "LC_MESSAGES" / f"{CATALOG}.mo"
    if not mo.exists() or mo.stat().st_mtime < po.stat().st_mtime:
        mo.parent.mkdir(parents=True, exist_ok=True)
        with po.open("rb") as src:
            catalog = read_po(src, locale=language)
        tmp = mo.with_suffix(".tmp")
        with tmp.open("wb") as out:
            write_mo(out, catalog)
        tmp.replace(mo)
    return mo


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


def on_builder_inited(app) -> None:
    for po in catalog_files(app):
        # the doctree folder is the build's own: nothing compiled lands in the repository
        app.add_message_catalog(CATALOG, compile_catalog(po, app.config.language, Path(app.doctreedir, "kb-locale")).parents[2])


def on_build_finished(app, exception) -> None:
    """``-b gettext``: kb.pot beside the documents' catalogs."""
    if exception is not None or app.builder.name != "gettext":
        return
    from babel.messages.pofile import write_po

    with (Path(app.outdir) / f"{CATALOG}.pot").open("wb") as out:
        write_po(out, extract(), sort_by_file=True, width=0)


def setup(app) -> dict[str, Any]:
    app.connect("builder-inited", on_builder_inited)
    app.connect("build-finished", on_build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
