"""The message catalogs are untrusted input too: only the two the site uses,
each checked before anything reads or publishes it.

``locale_dirs`` (conf.py: ``locale/``) is read by Sphinx in several ways a
pull request could use: ``<lang>/LC_MESSAGES/sphinx.js`` is published as
``_static/translations.js`` (a symlink there published CI's ``.git/config``),
a ``<document>.po`` rewrites that document's published text while ``docs/``
is unchanged (reviewers, claim checks and lint read only ``docs/``), and a
committed ``.mo`` is read instead of its ``.po``. So, at ``config-inited``,
before the build reads or copies anything (each is a warning at the file,
then the build stops):

- ``KB011`` any symlink under the locale folders, or a locale folder that is one;
- ``KB019`` any file there other than ``<lang>/LC_MESSAGES/sphinx.po`` and
  ``kb.po``, and the ``sphinx.mo`` / ``kb.mo`` compiled from them: a ``.mo``
  git tracks, one without its ``.po``, or one that is not what its ``.po``
  compiles to; and a page whose translation domain would be one of those two
  catalogs (``docs/sphinx.md``, ``docs/kb/…``), so that their strings never
  rewrite a page;
- ``KB029`` a catalog that is not UTF-8 or not a valid .po file (line of the problem);
- ``KB039`` a translation whose placeholders (``{name}`` in kb.po, which our
  code fills with ``str.format``; ``%(name)s`` in sphinx.po, which the
  templates fill with ``%``) differ from its msgid's, or that adds HTML markup
  or quotes (sphinx.po's strings go into the pages' HTML unescaped).

Sphinx itself reads the interface catalog before any extension is set up
(right after conf.py: it compiles ``sphinx.po`` to ``sphinx.mo``, following
links, and loads it), so a symlinked ``sphinx.po`` printed the file it
points to into the log, and a symlinked ``sphinx.mo`` was written through.
So conf.py gives Sphinx a locale folder only when :func:`readable_locale_dirs`
finds in it nothing but the catalogs' regular files, each of at most
MAX_CATALOG_BYTES (``lstat`` only; nothing is opened); the folders to check
are ``kb_locale_dirs``, and the same check reports why at ``config-inited``.

The catalogs' contents are a setting of the build (``kb_locale_digest``,
rebuild ``env``): when one changes, Sphinx reads and writes every page again,
so an incremental build ends equal to a full one.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import string
from collections import Counter
from pathlib import Path
from typing import Any

from kb.core import data as kb_data
from kb.core.log import getLogger
from kb.guard.committed_build import git, in_checkout
from kb.guard.silent_loss import BuildStopped
from kb.guard.untrusted import shown

logger = getLogger(__name__)

CATALOGS = ("sphinx", "kb")
ALLOWED = "<lang>/LC_MESSAGES/sphinx.po and <lang>/LC_MESSAGES/kb.po"

# what a browser reads as markup in a template's HTML: tags, and quotes that
# end an attribute (the theme writes some strings inside title="…")
MARKUP = re.compile(r"<[^>]*>?|>|[\"'`]")
# printf-style conversions, as the templates' ``%`` fills them
PERCENT = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?[a-zA-Z%]?")


def locale_roots(app) -> list[Path]:
    """The locale folders (relative to the source folder): the project's
    (kb_locale_dirs), and any Sphinx was given besides."""
    folders = [*getattr(app.config, "kb_locale_dirs", []), *app.config.locale_dirs]
    return list(dict.fromkeys(Path(app.srcdir, folder) for folder in folders))


# The largest catalog: the site's sphinx.po is 6 KiB
MAX_CATALOG_BYTES = 1 << 20
CATALOG_FILES = frozenset(f"{name}.{suffix}" for name in CATALOGS for suffix in ("po", "mo"))
LANGUAGE_FOLDER = re.compile(r"[A-Za-z0-9_@-]{1,32}")
MAX_LANGUAGES = 64


def layout_problems(root: Path) -> list[tuple[Path, str, str]]:
    """(path, code, why) for what a locale folder holds besides
    ``<lang>/LC_MESSAGES/{sphinx,kb}.{po,mo}`` as regular files of at most
    MAX_CATALOG_BYTES. Reads names and lstat only, three levels deep at most."""

    def entries(folder: Path) -> list[os.DirEntry]:
        try:
            with os.scandir(folder) as listing:
                return sorted(listing, key=lambda e: e.name)
        except OSError:
            return []

    if not os.path.lexists(root):
        return []
    if root.is_symlink():
        return [(root, "KB011", "is a symlink: commit the folder itself instead")]
    stray = f"the locale folder may hold only {ALLOWED} (the build compiles their .mo): delete this"
    found = []
    languages = entries(root)
    for language in languages[:MAX_LANGUAGES]:
        path = Path(language.path)
        if language.is_symlink():
            found.append((path, "KB011", "is a symlink: commit the folder itself instead"))
        elif not language.is_dir(follow_symlinks=False) or not LANGUAGE_FOLDER.fullmatch(language.name):
            found.append((path, "KB019", stray))
        else:
            for sub in entries(path):
                sub_path = Path(sub.path)
                if sub.is_symlink():
                    found.append((sub_path, "KB011", "is a symlink: commit the folder itself instead"))
                elif sub.name != "LC_MESSAGES" or not sub.is_dir(follow_symlinks=False):
                    found.append((sub_path, "KB019", stray))
                else:
                    found += _catalog_problems(entries(sub_path), stray)
    if len(languages) > MAX_LANGUAGES:
        found.append((root, "KB019", f"the locale folder holds more than {MAX_LANGUAGES} entries: {stray}"))
    return found


def _catalog_problems(files: list[os.DirEntry], stray: str) -> list[tuple[Path, str, str]]:
    found = []
    for entry in files:
        path = Path(entry.path)
        if entry.is_symlink():
            found.append(
                (
                    path,
                    "KB011",
                    "is a symlink: the build would read, or write, whatever it points to (inside the "
                    "repository that includes .git/ and CI's credentials); commit the file itself instead",
                )
            )
        elif entry.name not in CATALOG_FILES or not entry.is_file(follow_symlinks=False):
            found.append((path, "KB019", stray))
        elif entry.stat(follow_symlinks=False).st_size > MAX_CATALOG_BYTES:
            found.append(
                (path, "KB019", f"is larger than {MAX_CATALOG_BYTES >> 20} MiB, more than a catalog may be")
            )
    return found


def readable_locale_dirs(folders: list[str]) -> list[str]:
    """The folders of ``folders`` that Sphinx may read as they are (conf.py's
    ``locale_dirs``): those whose layout_problems are none. The others are
    reported, and the build stopped, when the configuration is read."""
    return [folder for folder in folders if not layout_problems(Path(folder))]


def _warn(code: str, path: Path, line: int, message: str, *args) -> None:
    logger.warning(
        f"{code} %s: {message}",
        shown(path),
        *args,
        location=f"{shown(path)}:{line}",
        type="kb",
        subtype="locale",
    )


def _tracked(root: Path) -> set[Path] | None:
    """The files git tracks under ``root`` (None: not a checkout, or git cannot say)."""
    if not in_checkout(root):
        return None
    proc = git(["ls-files", "-z", "--", "."], root)
    if proc is None or proc.returncode != 0:
        return None
    return {(root / os.fsdecode(name)).absolute() for name in proc.stdout.split(b"\0") if name}


def _is_catalog(root: Path, path: Path, suffixes: tuple[str, ...]) -> bool:
    parts = path.relative_to(root).parts
    return len(parts) == 3 and parts[1] == "LC_MESSAGES" and path.suffix in suffixes and path.stem in CATALOGS


def files_problems(app) -> tuple[list[Path], bool]:
    """Warn for every symlink and stray file under the locale folders:
    (the .po catalogs found, whether anything was refused)."""
    refused = False
    catalogs = []
    for root in locale_roots(app):
        if root.is_symlink():
            _warn(
                "KB011",
                root,
                1,
                "is a symlink (to %r): the build would read whatever it points to; commit the "
                "folder itself instead",
                os.readlink(root),
            )
            refused = True
            continue
        if not root.is_dir():
            continue
        tracked = _tracked(root)
        for folder, dirs, files in os.walk(root):
            for name in sorted(dirs + files):
                path = Path(folder) / name
                if path.is_symlink():
                    _warn(
                        "KB011",
                        path,
                        1,
                        "is a symlink (to %r): the build would publish or read whatever it "
                        "points to (inside the repository that includes .git/ and CI's credentials); commit "
                        "the file itself instead",
                        os.readlink(path),
                    )
                    refused = True
                elif path.is_dir():
                    continue
                elif _is_catalog(root, path, (".po",)):
                    catalogs.append(path)
                elif not _is_catalog(root, path, (".mo",)):
                    _warn(
                        "KB019",
                        path,
                        1,
                        "the locale folder may hold only %s (the build compiles their .mo); a "
                        "page is translated in docs/ itself, where reviewers and checks read it (a catalog "
                        "of a page would change the published page unseen): delete this file",
                        ALLOWED,
                    )
                    refused = True
                elif tracked is not None and path.absolute() in tracked:
                    _warn(
                        "KB019",
                        path,
                        1,
                        "is committed: the build compiles .mo files from their .po and "
                        "would read a committed one instead; remove it from git (git rm --cached %s)",
                        shown(path),
                    )
                    refused = True
                elif not path.with_suffix(".po").is_file():
                    _warn(
                        "KB019",
                        path,
                        1,
                        "has no %s beside it: a .mo is compiled from its .po by the build; delete it",
                        path.with_suffix(".po").name,
                    )
                    refused = True
    return catalogs, refused


def read_catalog(po: Path, language: str | None = None):
    """The catalog of ``po``, or (line, why) when it cannot be read."""
    from babel.messages.pofile import PoFileError, read_po

    data = po.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return data[: exc.start].count(b"\n") + 1, "is not UTF-8: save it as UTF-8"
    try:
        return read_po(io.StringIO(text), locale=language, abort_invalid=True)
    except PoFileError as exc:
        return (
            exc.lineno + 1,
            f"is not a valid .po file ({exc.args[0].rsplit(' on ', 1)[0]}: {exc.line.strip()!r}); fix the line",
        )
    except Exception as exc:  # babel's parser raises what it meets
        return 1, f"is not a valid .po file ({exc}); fix it"


def format_fields(text: str) -> Counter | None:
    """The ``{…}`` fields of a ``str.format`` template (None: not one)."""
    try:
        return Counter(
            (name, conversion, spec)
            for _literal, name, spec, conversion in string.Formatter().parse(text)
            if name is not None
        )
    except ValueError:
        return None


def _field_text(fields: Counter) -> str:
    return (
        " ".join(
            sorted(
                "{" + name + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "") + "}"
                for name, conv, spec in fields
            )
        )
        or "none"
    )


def placeholders_expected(got: Counter, wanted: list[Counter], plural: bool) -> Counter | None:
    """The msgid's placeholders when a translation's differ from them (a
    plural form may use any of its msgids' placeholders), else None."""
    union = sum(wanted, Counter())
    if (plural and not set(got) <= set(union)) or (not plural and got != wanted[0]):
        return union if plural else wanted[0]
    return None


def message_problems(po: Path, catalog) -> list[tuple[int, str]]:
    """(line, why) for each translation that would break or change the pages."""
    found = []
    kb = po.stem == "kb"
    for message in catalog:
        if not message.id or not message.string:
            continue
        ids = message.id if isinstance(message.id, (tuple, list)) else (message.id,)
        strings = message.string if isinstance(message.string, (tuple, list)) else (message.string,)
        line = getattr(message, "lineno", None) or 1
        plural = len(ids) > 1
        for text in strings:
            if not text:
                continue
            bidi = kb_data.BIDI.search(text)
            if bidi:
                found.append(
                    (
                        line,
                        f"msgstr has the bidirectional control character U+{ord(bidi.group()):04X} "
                        "(KB095: shown in another order than it is copied); remove it",
                    )
                )
                continue
            if kb:
                wanted = [format_fields(i) for i in ids]
                got = format_fields(text)
                if got is None:
                    found.append(
                        (
                            line,
                            f"msgstr {text!r} has a stray {{ or }}: write {{{{ and }}}} for a "
                            f"brace, and keep the msgid's {{placeholders}}",
                        )
                    )
                    continue
                if all(w is not None for w in wanted):
                    expected = placeholders_expected(got, wanted, plural)
                    if expected is not None:
                        found.append(
                            (
                                line,
                                f"msgstr {text!r} has the placeholders {_field_text(got)} but the "
                                f"msgid has {_field_text(expected)}: use "
                                f"exactly the msgid's placeholders",
                            )
                        )
                        continue
            else:
                wanted = [Counter(PERCENT.findall(i)) for i in ids]
                got = Counter(PERCENT.findall(text))
                expected = placeholders_expected(got, wanted, plural)
                if expected is not None:
                    found.append(
                        (
                            line,
                            f"msgstr {text!r} has the placeholders "
                            f"{' '.join(sorted(got.elements())) or 'none'} but the msgid has "
                            f"{' '.join(sorted(expected.elements())) or 'none'}: "
                            f"use exactly the msgid's %(…)s placeholders",
                        )
                    )
                    continue
            allowed_markup = sum((Counter(MARKUP.findall(i)) for i in ids), Counter())
            extra = Counter(MARKUP.findall(text)) - allowed_markup
            if extra:
                found.append(
                    (
                        line,
                        f"msgstr {text!r} adds markup or quotes the msgid does not have "
                        f"({' '.join(sorted(extra))}): the strings go into the pages' HTML as "
                        f"they are; write the text without them (“” for quotes)",
                    )
                )
    return found


def compiled_messages(data: bytes) -> dict:
    from babel.messages.mofile import read_mo

    catalog = read_mo(io.BytesIO(data))
    return {(m.id, m.context): m.string for m in catalog if m.id}


def compile_bytes(catalog, use_fuzzy: bool = False) -> bytes:
    from babel.messages.mofile import write_mo

    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=use_fuzzy)
    return out.getvalue()


def stale_mo(po: Path, catalog, use_fuzzy: bool) -> bool:
    """Whether the .mo beside ``po`` says other than ``po`` does."""
    mo = po.with_suffix(".mo")
    if not mo.is_file():
        return False
    try:
        return compiled_messages(mo.read_bytes()) != compiled_messages(compile_bytes(catalog, use_fuzzy))
    except Exception:  # not a catalog at all
        return True


def digest(catalogs: list[Path]) -> str:
    sha = hashlib.sha256()
    for po in sorted(catalogs):
        sha.update(f"{po.parent.parent.name}/{po.name}".encode("utf-8", "surrogateescape") + b"\0")
        sha.update(hashlib.sha256(po.read_bytes()).digest())
    return sha.hexdigest()


def on_config_inited(app, config) -> None:
    layout = [problem for root in locale_roots(app) for problem in layout_problems(root)]
    for path, code, why in layout:
        _warn(code, path, 1, "%s", why)
    if layout:
        raise BuildStopped
    catalogs, refused = files_problems(app)
    for po in catalogs:
        catalog = read_catalog(po, None)
        if isinstance(catalog, tuple):
            _warn("KB029", po, catalog[0], "%s", catalog[1])
            refused = True
            continue
        for line, why in message_problems(po, catalog):
            _warn("KB039", po, line, "%s", why)
            refused = True
        # Sphinx read sphinx.mo before the extensions were set up (kb.mo is
        # compiled by kb.core.i18n): it must say what sphinx.po says
        if po.stem == "sphinx" and stale_mo(po, catalog, config.gettext_allow_fuzzy_translations):
            _warn(
                "KB019",
                po.with_suffix(".mo"),
                1,
                "is not what %s compiles to (committed, or left from "
                "another checkout): delete it; the build compiles it from the .po",
                po.name,
            )
            refused = True
    if refused:
        raise BuildStopped
    config.kb_locale_digest = digest(catalogs)


def page_domain(docname: str, compact) -> str:
    """The text domain of a page's translations (Sphinx's ``gettext_compact``)."""
    if isinstance(compact, str):
        return compact
    return docname.split("/", 1)[0] if compact else docname


def on_env_before_read_docs(app, env, docnames: list[str]) -> None:
    """A page whose translations would come from sphinx.po or kb.po."""
    clashes = sorted(d for d in env.found_docs if page_domain(d, app.config.gettext_compact) in CATALOGS)
    for docname in clashes:
        path = Path(env.doc2path(docname))
        _warn(
            "KB019",
            path,
            1,
            "Sphinx would translate this page with the interface catalog %s.po (its "
            "translation domain): rename it or its top folder",
            page_domain(docname, app.config.gettext_compact),
        )
    if clashes:
        raise BuildStopped


def setup(app) -> dict[str, Any]:
    # the catalogs' contents: a changed translation reads and writes every page again
    app.add_config_value("kb_locale_digest", "", "env", types=[str])
    # the locale folders to check (conf.py; Sphinx's locale_dirs holds those
    # that passed the check, readable_locale_dirs)
    app.add_config_value("kb_locale_dirs", [], "env", types=[list])
    app.connect("config-inited", on_config_inited, priority=100)
    app.connect("env-before-read-docs", on_env_before_read_docs)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
