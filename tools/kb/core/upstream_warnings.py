"""A KB code and a fix for every warning Sphinx, docutils or MyST gives.

The package's own warnings start with their code (``KB012 …``). What Sphinx,
docutils and MyST report about a page (an unknown directive, a link to a
label that does not exist, an image that is not there) has its location but
no code and seldom says what to do. Each such warning, as Sphinx's handlers
take it (kb.core.log.PlainWarnings), gets the code of its kind and the fix,
and keeps its own words:

    docs/training/x.md:15: WARNING: KB101 Unknown directive type: 'notee';
    check the name (…) [myst.directive_unknown]

A warning's kind is read from the type and subtype Sphinx and MyST give it
(the names ``suppress_warnings`` documents: ``ref.ref``, ``image.not_readable``,
``myst.directive_unknown`` …; the keyword arguments of Sphinx's logger, which
it keeps on the log record, where its own filters read them too), and for
docutils' messages, which have none, from their words. A warning of no known kind gets KB100 with its own words,
so that no warning of the build lacks a code; tests/test_upstream_warnings.py
fails when a warning of a known kind comes out as KB100 (Sphinx, docutils or
MyST reworded it, or renamed its type).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The message of the package's own warnings, and of one already coded.
CODED = re.compile(r"KB\d{3} ")


@dataclass(frozen=True)
class Kind:
    code: str
    fix: str
    types: frozenset[str] = frozenset()  # "type.subtype", or "type" for all its subtypes
    words: re.Pattern | None = None  # docutils' messages (type "docutils", or none)


UNKNOWN_NAME = Kind(
    "KB101",
    "check the name (a directive is written ```{note}, a role {ref}`…`; the names pages may use "
    "are MyST's and Sphinx's); to show the braces as text, put them in backticks",
    frozenset({"myst.directive_unknown", "myst.role_unknown"}),
    re.compile(r"^(Unknown directive type|Unknown interpreted text role|No (directive|role) entry for)"),
)
MISSING_TARGET = Kind(
    "KB102",
    "link to what exists: a page by its path from docs/ (/training/x), a label written as "
    "(name)= on the line above a heading, a term of the glossary, a web address that opens; "
    "a footnote [^name] needs its line [^name]: text",
    frozenset({"ref", "myst.xref_missing", "myst.iref_ambiguous", "toc.not_readable", "toc.excluded"}),
    re.compile(
        r"^(Unknown target name|Too many autonumbered footnote|Too many symbol footnote|"
        r"Indirect hyperlink target .* refers to target .* which does not exist|"
        r"undefined label|unknown document|broken link:)"
    ),
)
UNUSED = Kind(
    "KB108",
    "refer to it where it belongs ([^name] in the text), or remove it",
    frozenset({"ref.footnote"}),
    re.compile(r"^(Footnote|Citation) .* is not referenced"),
)
MISSING_FILE = Kind(
    "KB103",
    "commit the file under docs/ (pictures and downloads also under _static/) and give its "
    "path relative to the page, or from docs/ with a leading /",
    frozenset({"image.not_readable", "download.not_readable"}),
    re.compile(r"(file not found|not found or reading it failed|Problems with \".*\" directive path)"),
)
DUPLICATE = Kind(
    "KB104",
    "give each label, target, footnote and term a name used once in the site",
    frozenset({"myst.duplicate_def", "toc.duplicate_entry"}),
    re.compile(
        r"^(Duplicate (explicit|implicit)? ?target name|duplicate (label|term|citation|object))", re.I
    ),
)
HEADINGS = Kind(
    "KB105",
    "headings go down one level at a time (## under #, ### under ##), a page has one # title, "
    "no heading stands inside a list, a table or a directive, and each page is listed in its "
    "guide's index.md toctree (make new adds it)",
    frozenset({"myst.header", "toc.no_title", "toc.not_included"}),
    re.compile(
        r"^(Title level inconsistent|Unexpected section title|Document or section may not begin|"
        r"document isn't included in any toctree)"
    ),
)
CODE_LANGUAGE = Kind(
    "KB106",
    "name a language Pygments knows (python, bash, console, yaml, json, text) after the ```, "
    "or text for a block that is not code in one language",
    frozenset({"misc.highlighting_failure"}),
)
DIRECTIVE_USE = Kind(
    "KB107",
    "write the directive as its documentation says: only the options it has, values of their "
    "kind, an argument only where it takes one, content of the form it asks for",
    frozenset({"myst.directive_option", "myst.directive_parse", "myst.directive_body"}),
    re.compile(
        r"^(Error in \".*\" directive|Invalid .* directive|invalid line number spec|"
        r"line number spec is out of range|\".*\" directive:|.* content is not a list|"
        r"Content block expected|The \".*\" directive|No suitable element following)",
        re.I,
    ),
)
# a file read with a codec that fails on it (docutils' include: a
# UnicodeError in a "Problem with … directive" message of several lines)
FILE_ENCODING = Kind(
    "KB054",
    "save the file as UTF-8 and remove :encoding: (the files of this site are UTF-8)",
    words=re.compile(
        r"UnicodeError|UnicodeDecodeError|codec can't decode|is not a text encoding|"
        r"Encoding .* used for reading included file .* seems to be wrong"
    ),
)
OTHER = Kind(
    "KB100",
    "change what the message names at this place",
)

KINDS = (
    UNKNOWN_NAME,
    UNUSED,
    MISSING_TARGET,
    MISSING_FILE,
    DUPLICATE,
    HEADINGS,
    CODE_LANGUAGE,
    FILE_ENCODING,
    DIRECTIVE_USE,
)
# A warning's type as Sphinx shows it at the end of the message (show_warning_types).
TYPE_TAG = re.compile(r" \[([\w.-]+)\]$")


def kind_of(message: str, type_: str | None, subtype: str | None) -> Kind:
    """The kind of a warning: from its type and subtype (a kind naming the
    subtype before one naming the whole type), else its words."""
    for name in (f"{type_}.{subtype}", type_) if subtype else (type_,):
        for kind in KINDS:
            if name and name in kind.types:
                return kind
    if type_ in (None, "", "docutils"):
        for kind in KINDS:
            if kind.words is not None and kind.words.search(message):
                return kind
    return OTHER


def coded(message: str, type_: str | None = None, subtype: str | None = None) -> str:
    """``message`` with the code of its kind before it and the fix after it
    (before Sphinx's ``[type.subtype]`` tag); a message already coded, as is."""
    if CODED.match(message):
        return message
    tag = TYPE_TAG.search(message)
    words = message[: tag.start()] if tag else message
    kind = kind_of(words, type_, subtype)
    return f"{kind.code} {words.rstrip('.')}; {kind.fix}{tag[0] if tag else ''}"
