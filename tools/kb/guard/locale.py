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
And gettext and Babel read a catalog in time and memory that a short file
can make huge (``nplurals=1000000000``, a header of many lines, one msgid
given thousands of times), printing what they cannot parse to stdout.
So Sphinx never reads the project's locale folders (``kb_locale_dirs``):
conf.py's ``locale_dirs`` is :func:`prepared_locale_dirs`, a folder the build
owns (``kb_locale_build_dir``: ``_build/locale``) holding the ``sphinx.mo``
compiled here from the build language's ``sphinx.po``, once every catalog
has passed :func:`catalog_problems` (layout by ``lstat``, size, the
text's plural forms, messages and duplicates, Babel's strict parse, the
checks below); else no folder at all. The same check reports why at
``config-inited`` and stops the build. A ``.mo`` under locale/ is never read.

The catalogs' contents are a setting of the build (``kb_locale_digest``,
rebuild ``env``): when one changes, Sphinx reads and writes every page again,
so an incremental build ends equal to a full one.
"""

from __future__ import annotations

import codecs
import contextlib
import datetime
import gettext
import hashlib
import io
import os
import re
import shutil
import stat
import string
from collections import Counter
from pathlib import Path
from typing import Any

from kb.core import data as kb_data
from kb.core.log import clipped, getLogger
from kb.guard.committed_build import git, in_checkout
from kb.guard.silent_loss import BuildStopped
from kb.guard.untrusted import at_most, shown

logger = getLogger(__name__)

CATALOGS = ("sphinx", "kb")
ALLOWED = "<lang>/LC_MESSAGES/sphinx.po and <lang>/LC_MESSAGES/kb.po"

# what a browser reads as markup in a template's HTML: tags, and quotes that
# end an attribute (the theme writes some strings inside title="…")
MARKUP = re.compile(r"<[^>]*>?|>|[\"'`]")
# TeX's special characters (and ^^xx, which TeX reads as any character)
TEX_SPECIAL = re.compile(r"[\\{}^~$&#%]")
# (pattern, message) of what a translation may not add to its msgid
ADDED = (
    (
        MARKUP,
        "msgstr {text} adds markup or quotes the msgid does not have ({extra}): the strings go into "
        "the pages' HTML as they are; write the text without them (“” for quotes)",
    ),
    (
        TEX_SPECIAL,
        "msgstr {text} adds characters TeX reads as commands ({extra}) that the msgid does not have: "
        "the book writes some translations into its LaTeX as they are; write the text without them "
        "(full-width ＼ ｛ ｝ ＃ ％ ＆ if they are meant as text)",
    ),
)
# printf-style conversions, as the templates' ``%`` fills them
PERCENT = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?[a-zA-Z%]?")


def locale_roots(app) -> list[Path]:
    """The locale folders (relative to the source folder): the project's
    (kb_locale_dirs), and any Sphinx was given besides."""
    folders = [*getattr(app.config, "kb_locale_dirs", []), *app.config.locale_dirs]
    return list(dict.fromkeys(Path(app.srcdir, folder) for folder in folders))


# The largest catalog (the site's sphinx.po is 6 KiB), and what one may hold:
# Babel and gettext take time and memory that grow with the plural forms, the
# messages, and the square of the times one msgid is given.
MAX_CATALOG_BYTES = 64 << 10
MAX_PLURALS = 6
MAX_MESSAGES = 2000
CATALOG_FILES = frozenset(f"{name}.{suffix}" for name in CATALOGS for suffix in ("po", "mo"))
LANGUAGE_FOLDER = re.compile(r"[A-Za-z0-9_@-]{1,32}")
MAX_LANGUAGES = 64


def layout_problems(root: Path) -> list[tuple[Path, str, str]]:
    """(path, code, why) for what a locale folder holds besides
    ``<lang>/LC_MESSAGES/{sphinx,kb}.{po,mo}`` as regular files, a .po of at
    most MAX_CATALOG_BYTES (a .mo there is never read: the build compiles
    its own). Reads names and lstat only, three levels deep at most."""

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
        elif entry.name.endswith(".po") and entry.stat(follow_symlinks=False).st_size > MAX_CATALOG_BYTES:
            found.append(
                (path, "KB019", f"is larger than {MAX_CATALOG_BYTES >> 10} KiB, more than a catalog may be")
            )
    return found


def _catalogs(root: Path) -> list[Path]:
    """The .po catalogs of a locale folder that passed layout_problems."""
    return sorted(
        path
        for language in (root.iterdir() if root.is_dir() else ())
        for path in (language / "LC_MESSAGES").glob("*.po")
        if path.stem in CATALOGS
    )


def catalog_problems(folders: list[Path]) -> list[tuple[Path, int, str, str]]:
    """(path, line, code, why) for everything in the locale folders that the
    build would not read as it is: the layout (KB011, KB019), then each
    catalog's text and messages (KB029, KB039)."""
    layout = [(path, f"{code} {why}") for root in folders for path, code, why in layout_problems(root)]
    if layout:  # 20 lines of a kind at most
        return [(path, 1, text[:5], text[6:]) for path, text in at_most(at_most(layout, "KB019"), "KB011")]
    found = []
    for root in folders:
        for po in _catalogs(root):
            if why := _language_problem(po.parent.parent.name):
                found.append((po, 1, "KB019", why))
                continue
            catalog = read_catalog(po, po.parent.parent.name)
            if isinstance(catalog, tuple):
                found.append((po, catalog[0], "KB029", catalog[1]))
                continue
            problems = message_problems(po, catalog)
            found += [(po, line, "KB039", why) for line, why in problems]
            if not problems and (why := _unloadable(catalog)):
                found.append((po, 1, "KB029", why))
    return found


def _language_problem(language: str) -> str | None:
    """Why Babel cannot compile a catalog for the folder's language (the
    build compiles each catalog for the language its folder names)."""
    from babel import Locale, UnknownLocaleError

    try:
        Locale.parse(language)
    except (ValueError, UnknownLocaleError) as exc:
        return (
            f"the folder {clipped(language, 60)!r} names no language Babel knows ({clipped(str(exc))}): "
            "name the folder after the language, as locale/zh_CN/ is"
        )
    return None


def _unloadable(catalog) -> str | None:
    """Why gettext would not load the catalog compiled (Sphinx drops such a
    catalog without a word: the pages would show the theme's English)."""
    try:
        gettext.GNUTranslations(io.BytesIO(compile_bytes(catalog)))
    except Exception as exc:  # gettext's and Babel's errors: a header they read otherwise
        return (
            f"cannot be compiled to a catalog gettext reads ({type(exc).__name__}: {clipped(str(exc))}); "
            "fix its header (Content-Type: text/plain; charset=UTF-8, Plural-Forms)"
        )
    return None


def prepared_locale_dirs(folders: list[str], language: str, into: str) -> list[str]:
    """conf.py's ``locale_dirs``: ``[into]``, holding ``<lang>/LC_MESSAGES/<catalog>.mo``
    compiled from each catalog of ``folders`` (the first folder that has a
    language's catalog gives it; ``-D language=…`` may pick another
    language), and nothing else, when no catalog has a problem
    (:func:`catalog_problems`, reported when the configuration is read);
    else ``[]``. ``language`` is conf.py's; any language present will do."""
    roots = [Path(folder) for folder in folders]
    if catalog_problems(roots):
        return []
    expected: dict[Path, bytes] = {}
    for root in roots:
        for po in _catalogs(root):
            relative = Path(po.parent.parent.name, "LC_MESSAGES", f"{po.stem}.mo")
            if relative not in expected:
                expected[relative] = compile_bytes(read_catalog(po, po.parent.parent.name))
    return [into] if expected and own_folder(Path(into), expected) else []


def own_folder(root: Path, files: dict[Path, bytes]) -> bool:
    """Make ``root`` hold exactly ``files`` (relative path -> bytes): what is
    there besides them (committed under _build, left from another language)
    is removed, without following links; each file is written through a
    temporary file beside ``root``, not in it (a build running at the same
    time sees only whole files). False, changing nothing, if ``root``'s
    parent is not a plain folder (a committed ``_build`` that is a link)."""
    try:
        if not stat.S_ISDIR(root.parent.lstat().st_mode):
            return False
    except FileNotFoundError:
        try:
            root.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            return False
    except OSError:
        return False
    keep = {root / f for f in files} | {root / p for f in files for p in list(f.parents)[:-1]}
    try:
        _prune(root, keep)
        for relative, data in files.items():
            target = root / relative
            for folder in reversed(target.parents[: len(relative.parts) - 1]):
                folder.mkdir(exist_ok=True)
                if not stat.S_ISDIR(folder.lstat().st_mode):
                    return False
            if target.is_file() and not target.is_symlink() and target.read_bytes() == data:
                continue
            temporary = root.parent / f".{root.name}-{os.getpid()}-{target.name}.tmp"
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(temporary, target)
    except OSError:
        return False
    return True


def _prune(root: Path, keep: set[Path]) -> None:
    """Remove what is at or under ``root`` and not in ``keep`` (links are
    removed, never followed)."""
    # Another build may prune the same folder at the same time: what it made
    # or removed first is not an error here.
    if root.is_symlink() or (os.path.lexists(root) and not root.is_dir()):
        root.unlink(missing_ok=True)
    root.mkdir(exist_ok=True)
    for entry in list(os.scandir(root)):
        path = Path(entry.path)
        if path not in keep:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        elif entry.is_dir(follow_symlinks=False):
            _prune(path, keep)
        elif entry.is_symlink() or not entry.is_file(follow_symlinks=False):
            path.unlink(missing_ok=True)


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


def committed_mo(roots: list[Path]) -> list[Path]:
    """The .mo files git tracks under the locale folders (their layout has
    passed catalog_problems: symlinks and stray files are refused there)."""
    found = []
    for root in roots:
        tracked = _tracked(root) if root.is_dir() else None
        if tracked:
            found += sorted(p for p in tracked if p.suffix == ".mo")
    return found


def read_catalog(po: Path, language: str | None = None):
    """The catalog of ``po``, or (line, why) when it cannot be read: the text
    is checked first (text_problem), and Babel's strict parse prints nothing."""
    from babel.messages.pofile import PoFileError, read_po

    with open(po, "rb") as file:
        data = file.read(MAX_CATALOG_BYTES + 1)
    if len(data) > MAX_CATALOG_BYTES:
        return 1, f"is larger than {MAX_CATALOG_BYTES >> 10} KiB, more than a catalog may be"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return data[: exc.start].count(b"\n") + 1, "is not UTF-8: save it as UTF-8"
    problem = text_problem(text)
    if problem:
        return problem
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            catalog = read_po(io.StringIO(text), locale=language, abort_invalid=True)
    except PoFileError as exc:
        return (
            exc.lineno + 1,
            f"is not a valid .po file ({exc.args[0].rsplit(' on ', 1)[0]}: {exc.line.strip()!r}); fix the line",
        )
    except Exception as exc:  # babel's parser raises what it meets
        return 1, f"is not a valid .po file ({type(exc).__name__}: {clipped(str(exc))}); fix it"
    try:
        utf8 = codecs.lookup(catalog.charset or "").name == "utf-8"
    except LookupError:
        utf8 = False
    if not utf8:
        return (
            1,
            f"declares the charset {clipped(str(catalog.charset))!r}: write Content-Type: text/plain; charset=UTF-8",
        )
    return catalog


# "nplurals" as Babel and gettext read it from the header: a number of one
# or two digits, quoted or not; anything else (+1000000000, 1_000_000_000, a
# number of 5,000 digits) is refused before Babel reads it.
PLURALS = re.compile(r"nplurals", re.IGNORECASE)
PLURALS_VALUE = re.compile(r'\s*=\s*"?\s*(\d{1,2})\s*"?\s*(?:;|$)')
PO_STRING = re.compile(r'^(msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?)?\s*"(.*)"\s*$')


def text_problem(text: str) -> tuple[int, str] | None:
    """(line, why) for a catalog text that would make Babel or gettext take
    long or much memory: more than MAX_PLURALS plural forms, more than
    MAX_MESSAGES messages, or a msgid (in its context) given twice."""
    seen: dict[tuple[str, str], int] = {}
    context = key = None
    field, parts, start, last_id = None, [], 0, None

    def finish() -> tuple[int, str] | None:
        nonlocal context, last_id
        if field and field.startswith("msgstr") and last_id == "":
            return _header_problem("".join(parts), start)
        if field == "msgctxt":
            context = "".join(parts)
        elif field == "msgid":
            message = (context or "", "".join(parts))
            context, last_id = None, message[1]
            if message in seen:
                return (
                    start,
                    f"gives the msgid {message[1][:80]!r} twice (first at line {seen[message]}): keep one",
                )
            seen[message] = start
            if len(seen) > MAX_MESSAGES:
                return start, f"holds more than {MAX_MESSAGES:,} messages, more than a catalog may"
        return None

    for number, line in enumerate(text.split("\n"), 1):  # lines as Babel splits them
        match = PO_STRING.match(line.strip())
        if match is None:
            continue
        if match[1] is None:  # a continuation of the field before
            parts.append(match[2])
            continue
        key = finish()
        if key:
            return key
        field, parts, start = match[1], [match[2]], number
    return finish()


def _header_problem(header: str, line: int) -> tuple[int, str] | None:
    """A header (the msgstr of an empty msgid, as written, with its escapes)
    whose plural forms Babel would make a list of, per plural message."""
    text = header.replace('\\"', '"').replace("\\n", "\n")
    text = re.sub(r"\n[ \t]+", " ", text)  # a folded header line goes on
    for match in PLURALS.finditer(text):
        value = PLURALS_VALUE.match(text, match.end())
        if value is None or int(value[1]) > MAX_PLURALS:
            return (
                line,
                f"declares nplurals as {text[match.end() : match.end() + 24]!r}: write Plural-Forms: "
                f"nplurals=N; plural=…; with N a number of at most {MAX_PLURALS}",
            )
    return None


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
                        "msgstr has the {} (KB095: {}); remove it".format(
                            *kb_data.hidden_character(bidi.group())
                        ),
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
            # What the translation adds that its msgid lacks: markup goes into the
            # pages' HTML as it is; the LaTeX builder writes some translations
            # into the .tex as they are (the date, from "%b %d, %Y"; admonition
            # labels), where a backslash or brace is TeX and \special{pdf:fstream …}
            # copies any file of the machine into the PDF.
            for pattern, why in ADDED:
                extra = Counter(pattern.findall(text)) - sum(
                    (Counter(pattern.findall(i)) for i in ids), Counter()
                )
                if extra:
                    found.append((line, why.format(text=repr(text), extra=" ".join(sorted(extra)))))
                    break
    return found


# The dates a compiled catalog's header states: fixed, so that the same .po
# compiles to the same bytes (Babel states the time of the compile when the
# header has none, and the catalog would be written again every minute).
COMPILED_DATE = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)


def compile_bytes(catalog, use_fuzzy: bool = False) -> bytes:
    from babel.messages.mofile import write_mo

    catalog.creation_date = catalog.revision_date = COMPILED_DATE
    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=use_fuzzy)
    return out.getvalue()


def digest(catalogs: list[Path]) -> str:
    sha = hashlib.sha256()
    for po in sorted(catalogs):
        sha.update(f"{po.parent.parent.name}/{po.name}".encode("utf-8", "surrogateescape") + b"\0")
        sha.update(hashlib.sha256(po.read_bytes()).digest())
    return sha.hexdigest()


def on_config_inited(app, config) -> None:
    found = catalog_problems(locale_roots(app))
    for path, line, code, why in found:
        _warn(code, path, line, "%s", why)
    if found:
        raise BuildStopped
    roots = locale_roots(app)
    catalogs = [po for root in roots for po in _catalogs(root)]
    refused = False
    for mo in committed_mo(roots):
        _warn(
            "KB019",
            mo,
            1,
            "is committed: the build compiles .mo files from their .po; remove it from git (git rm --cached %s)",
            shown(mo),
        )
        refused = True
    prepared = Path(app.confdir, config.kb_locale_build_dir)
    wanted = bool(catalogs)  # then conf.py compiled them into the build's folder, unless it could not
    if wanted and [str(prepared)] != [str(Path(app.confdir, d)) for d in config.locale_dirs]:
        # catalog_problems found nothing, so conf.py could not write the catalog
        _warn(
            "KB019",
            prepared,
            1,
            "the build compiles the catalogs into this folder and could not: delete %s (a link or a file "
            "there, committed?) and build again",
            shown(prepared.parent),
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
    # the build's folder of catalogs compiled from them, prepared_locale_dirs)
    app.add_config_value("kb_locale_dirs", [], "env", types=[list])
    app.add_config_value("kb_locale_build_dir", "_build/locale", "env", types=[str])
    app.connect("config-inited", on_config_inited, priority=100)
    app.connect("env-before-read-docs", on_env_before_read_docs)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
