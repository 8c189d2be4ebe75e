"""A PDF the site publishes (a download) does nothing by itself when opened.

A PDF can carry JavaScript, actions that run when it is opened or a page is
shown (``/OpenAction``, ``/AA``), forms that send what the reader types
elsewhere, launch programs or open other files, embedded files and media.
Browsers' PDF viewers run some of it (Chromium's runs PDF JavaScript), and
a reader who saves the file runs it in a desktop reader. So kb.guard.html
reads every PDF the build wrote with qpdf (``pikepdf``), every object,
compressed object streams included and names unescaped (``/J#61vaScript``
is ``/JavaScript``), and refuses the file (KB015) when any of these appear.
A file qpdf can read only by repairing it, or only with a password, is
refused too: another reader may repair it otherwise than the check read it.
Links (``/URI`` actions, followed on a click, like ``<a href>``) stay allowed,
and so does an ``/OpenAction`` that only shows a page (LaTeX's books have one).
"""

from __future__ import annotations

import io
import re

import pikepdf

from kb.guard.untrusted import LINK_SCHEMES, url_scheme

# Keys that make a PDF act when opened, shown or filled in, or hold another file
ACTIVE_KEYS = {
    "/JS": "JavaScript",
    "/JavaScript": "JavaScript",
    "/AA": "an action on opening, closing or showing a page",
    "/XFA": "an XFA form (scripted)",
    "/EmbeddedFiles": "embedded files",
    "/EF": "an embedded file",
    "/RichMediaContent": "embedded media",
}
# Action types (/S) other than following a link or going to a page
ACTIVE_ACTIONS = {
    "/JavaScript",
    "/Launch",
    "/SubmitForm",
    "/ImportData",
    "/GoToR",
    "/GoToE",
    "/Rendition",
    "/RichMediaExecute",
    "/Movie",
    "/Sound",
    "/SetOCGState",
    "/Hide",
    "/Trans",
    "/GoTo3DView",
}


# What an /OpenAction may do: show a page (a destination, as LaTeX's hyperref
# writes it: [page /Fit]), by itself or as a GoTo action
def _shows_a_page(value) -> bool:
    if isinstance(value, pikepdf.Array):
        return True
    return (
        isinstance(value, pikepdf.Dictionary)
        and value.get("/S") == pikepdf.Name.GoTo
        and "/Next" not in value
    )


# The named actions that only turn pages (others print, open dialogs, quit)
PAGE_TURNS = {"/NextPage", "/PrevPage", "/FirstPage", "/LastPage"}


def _link_refused(uri) -> bool:
    """A link's URI that the site's pages could not link (LINK_SCHEMES, or a
    path on this site; not \\\\host, a Windows share on another host). Read
    as a PDF text string (UTF-16 with its byte order mark), a name as its text
    (review 25)."""
    if isinstance(uri, pikepdf.Name):
        text = str(uri)[1:]
    elif isinstance(uri, pikepdf.String):
        text = str(uri).lstrip("\ufeff")
    else:
        return True
    scheme = url_scheme(text)
    if scheme is None:
        stripped = re.sub(r"[\x00-\x20\x7f]", "", text)
        return stripped.startswith(("\\", "/\\", "\\/"))
    return scheme not in LINK_SCHEMES


def _name(value) -> str:
    return str(value)[1:] if isinstance(value, pikepdf.Name) else type(value).__name__


def _found(obj, seen: set[str]) -> None:
    """What ``obj`` and the direct objects inside it hold (an indirect one is
    read as one of the file's objects, once)."""
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, pikepdf.Stream):
            item = item.stream_dict
        if isinstance(item, pikepdf.Dictionary):
            for key in item:
                if key in ACTIVE_KEYS:
                    seen.add(ACTIVE_KEYS[key])
                value = item.get(key)
                if key == "/OpenAction" and not _shows_a_page(value):
                    seen.add("an action when it is opened")
                if key == "/S" and isinstance(value, pikepdf.Name) and str(value) in ACTIVE_ACTIONS:
                    seen.add(f"a {str(value)[1:]} action")
                if key == "/S" and value == pikepdf.Name.URI and _link_refused(item.get("/URI")):
                    seen.add("a link to a script or local URL (javascript:, data:, file:)")
                if key == "/S" and value == pikepdf.Name.Named and str(item.get("/N")) not in PAGE_TURNS:
                    seen.add(f"a named action {_name(item.get('/N'))!r}")
                if isinstance(value, (pikepdf.Dictionary, pikepdf.Array)) and not value.is_indirect:
                    stack.append(value)
        elif isinstance(item, pikepdf.Array):
            stack.extend(
                v for v in item if isinstance(v, (pikepdf.Dictionary, pikepdf.Array)) and not v.is_indirect
            )


def pdf_problems(data: bytes) -> list[tuple[int, str]]:
    """(1, what is wrong) for a PDF that acts by itself or cannot be read as it is."""
    try:
        with pikepdf.open(io.BytesIO(data), attempt_recovery=False) as pdf:
            if pdf.is_encrypted:
                return [(1, "an encrypted PDF cannot be checked; publish it unencrypted")]
            seen: set[str] = set()
            base = pdf.Root.get("/URI")
            if isinstance(base, pikepdf.Dictionary) and "/Base" in base:
                # prefixed to every relative link: /Base (javascript:) + (app.alert(1)) (review 25)
                seen.add("a base URI for its links")
            for obj in pdf.objects:
                _found(obj, seen)
            if warnings := pdf.get_warnings():
                # an object qpdf could not read is null to it, and may be
                # read by another reader's repair (review 24)
                return [
                    (
                        1,
                        f"a PDF this check cannot read whole ({warnings[0][:120]}); save it again with a PDF tool",
                    )
                ]
    except pikepdf.PasswordError:
        return [(1, "a PDF that needs a password cannot be checked; publish it without one")]
    except pikepdf.PdfError as exc:
        return [
            (1, f"a PDF this check cannot read as it is ({str(exc)[:120]}); save it again with a PDF tool")
        ]
    return [
        (1, f"a PDF with {what}: a PDF viewer runs or opens it; publish the PDF without it")
        for what in sorted(seen)
    ]


def version() -> str:
    """What the outcome depends on besides this file: qpdf and pikepdf."""
    return f"pikepdf {pikepdf.__version__} qpdf {pikepdf.__libqpdf_version__}"
