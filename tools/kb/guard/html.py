"""The written pages hold no script, redirect or third-party request that the
site did not mean to ship, wherever it came from.

``kb.guard.untrusted`` and ``kb.guard.raw_html`` refuse what pages say. Templates,
the theme and other extensions write HTML too, and a pull request can change
them, and a pull request can add files that browsers run as documents
(an ``.html`` or ``.svg`` under ``_static/``, a download, an image). So once
the site is written, every page this build wrote, and every such document
among the files it copied, is read again twice: token by token with
``html.parser`` (which knows each tag's line, and refuses markup it cannot
read as a browser does), and as the tree a browser builds, by lexbor
(``selectolax``, WHATWG-conformant), with scripting on and off. In either
reading these fail the build (``KB015``), at the file and line:

- an inline ``<script>`` (data blocks such as ``type="application/json"``
  are not scripts), or a script loaded from another host;
- an event-handler attribute (``onclick=`` …), ``<meta http-equiv>``, and
  ``<iframe>``, ``<frame>``, ``<object>``, ``<embed>``;
- a ``javascript:``, ``vbscript:`` or ``data:`` URL in any attribute
  (raster images inline as ``data:image/…`` excepted);
- a resource the browser loads from another host: ``src``, ``srcset``,
  ``poster``, ``<link rel=stylesheet|icon|preload|…>``, ``<base>``, and
  ``url(…)`` in styles.

A published PDF is read by ``kb.guard.pdf`` (script, actions, embedded files).

A page must also carry the policy as ``<meta>`` (below).

That is what the Content-Security-Policy the site ships (``_static/_headers``)
forbids, so a page that passes here works under it. Links to other sites
(``<a href>``, canonical and feed links) are not requests and stay allowed.

The policy itself: ``_static/_headers`` holds the headers for hosts that
send them (copied to the site's root). GitHub Pages sends none, so every
page also carries the policy as ``<meta http-equiv="Content-Security-Policy">``
(``kb_csp_meta`` in the template context), less the directives browsers
ignore there; that one ``meta`` is the only ``http-equiv`` allowed.
"""

from __future__ import annotations

import bisect
import hashlib
import html as html_lib
import json
import multiprocessing
import os
import pyexpat
import re
import shutil
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from html.entities import html5 as html5_entities
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from xml.parsers import expat

import selectolax
import tinycss2
from selectolax.lexbor import LexborHTMLParser

from kb.core import data as kb_data
from kb.core.builders import serves_pages
from kb.core.log import getLogger
from kb.guard import pdf as guard_pdf
from kb.guard import untrusted
from kb.guard.untrusted import is_remote, shown, url_scheme
from kb.search import pagefind as kb_pagefind
from kb.search.pagefind import BREAKOUT, MAX_NESTING, NESTED, nesting

logger = getLogger(__name__)

# \75 rl( is url( to a browser: escapes are undone before reading
CSS_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})([ \t\r\n\f]?)|(.))", re.S)
CSS_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)", re.S)


def css_unescaped(css: str) -> str:
    """CSS with its escapes undone, line breaks kept where they were (to
    tell whether an attribute's value may be CSS that fetches)."""

    def one(m: re.Match) -> str:
        if m.group(1) is None:
            return m.group(3)  # \x is x (an escaped line break stays one)
        code = int(m.group(1), 16)
        char = chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"
        return (" " if char in "\r\n\f" else char) + ("\n" if m.group(2) and m.group(2) in "\r\n\f" else "")

    return CSS_ESCAPE.sub(one, css)


def css_urls(css: str) -> list[tuple[int, str]]:
    """(line, URL) of what a stylesheet or a style attribute would load from
    another host, read by CSS's own tokenizer (tinycss2): every url() and
    every string that names another host's address, wherever it stands. A
    string can become a URL through image-set(), cross-fade(), @import or a
    custom property (var(--u)), so each one is read as one; comments,
    escapes and quotes are the browser's (review 23: a regex took "/*"
    inside a string for a comment). data: is inline (CSP img-src). A quoted
    url("…") is a string to the tokenizer, and read as one."""
    found: list[tuple[int, str]] = []
    stack = list(tinycss2.parse_component_value_list(css, skip_comments=True))
    while stack:
        token = stack.pop()
        if token.type in ("url", "string"):
            scheme = url_scheme(token.value.strip())
            # a string is an address only when it looks like one: content: "Note: …" has a "scheme" too
            if (
                is_remote(token.value)
                and scheme != "data"
                and (token.type == "url" or scheme in FETCHED_SCHEMES)
            ):
                found.append((token.source_line, token.value))
        elif token.type == "function":
            stack.extend(token.arguments)
        elif token.type in ("() block", "[] block", "{} block"):
            stack.extend(token.content)
    return sorted(found)


FETCHED_SCHEMES = {None, "http", "https", "ftp", "ws", "wss"}


DATA_BLOCKS = {"application/json", "application/ld+json", "text/plain"}
EMBEDDING = {"iframe", "frame", "frameset", "object", "embed", "applet"}
# Elements whose content browsers read as text up to their end tag
# (HTML's raw text and escapable raw text elements, <noscript> with
# scripting on); html.parser does so only for <script> and <style>.
RAW_TEXT = {"title", "textarea", "xmp", "iframe", "noembed", "noframes", "noscript"}
# <link rel> values that only name a page to go to: a <link> with any other
# (stylesheet, icon, preload, compression-dictionary, search's OpenSearch
# description, one a browser adds next year) is taken to make the browser
# fetch or connect, so a new fetching rel needs no entry here
NAVIGATION_RELS = {
    "alternate",
    "author",
    "bookmark",
    "canonical",
    "external",
    "help",
    "index",
    "license",
    "next",
    "nofollow",
    "noopener",
    "noreferrer",
    "prev",
    "self",  # an Atom feed's own address
    "tag",
    "up",
}
URL_ATTRS = {
    "href",
    "src",
    "action",
    "formaction",
    "poster",
    "data",
    "xlink:href",
    "cite",
    "background",
    "manifest",
    "ping",
    "longdesc",
    "codebase",
    "archive",
    "attributionsrc",  # Attribution Reporting: a request when the element loads (review 23)
}
LOADED_ATTRS = {
    "src",
    "poster",
    "data",
    "background",
    "srcset",
    "imagesrcset",
    "ping",
    "archive",
    "attributionsrc",
}
# a form sends what the reader types to its action: to this site only
SUBMITTING_ATTRS = {"action", "formaction"}
# lists of URLs: srcset-like ("a.png 1x, b.png 2x") and ping (space-separated)
LIST_ATTRS = {"srcset", "imagesrcset"}
DATA_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp)[;,]", re.IGNORECASE)

_build_start: dict[str, float] = {"time": 0.0}
_policy: dict[str, str] = {"meta": ""}

HEADERS = Path("_static") / "_headers"
# Directives a <meta> policy cannot carry (browsers ignore them and say so).
NOT_IN_META = ("frame-ancestors", "report-uri", "report-to", "sandbox")


# _static/_headers is a few lines; more is not a headers file
MAX_HEADERS_BYTES = 64 * 1024


def _headers_text(path: Path) -> str:
    with path.open("rb") as f:
        return f.read(MAX_HEADERS_BYTES).decode("utf-8", errors="replace")


def header_policy(confdir: Path) -> str:
    """The Content-Security-Policy of ``_static/_headers`` ("" if none)."""
    path = confdir / HEADERS
    if path.is_symlink() or not path.is_file():
        return ""  # a link is refused before anything is copied (KB011, kb.guard.untrusted)
    for line in _headers_text(path).splitlines():
        name, _, value = line.strip().partition(":")
        if name.lower() == "content-security-policy":
            return value.strip()
    return ""


def meta_policy(policy: str) -> str:
    parts = [p.strip() for p in policy.split(";") if p.strip()]
    return "; ".join(p for p in parts if p.split()[0].lower() not in NOT_IN_META)


def browser_tag(tag: str) -> tuple[int | None, list[tuple[str, str]]]:
    """The start tag ``tag`` opens as an HTML tokenizer reads it: where it ends
    (the index after its ">", or None if not within ``tag``) and its
    attributes, (lower-case name, value with references decoded). Values are
    quoted only right after "=", and only HTML's five space characters
    separate (html.parser also takes "==" and Python's other spaces; review 21,
    22)."""
    stops, i, n = HTML_SPACE + "/>", 1, len(tag)
    attrs: list[tuple[str, str]] = []
    while i < n and tag[i] not in stops:  # the name
        i += 1
    while i < n:
        if tag[i] in HTML_SPACE + "/":
            i += 1
            continue
        if tag[i] == ">":
            return i + 1, attrs
        start = i
        i += 1  # an attribute's name (its first character may be "=")
        while i < n and tag[i] not in stops + "=":
            i += 1
        name, value = tag[start:i].lower(), ""
        while i < n and tag[i] in HTML_SPACE:
            i += 1
        if i < n and tag[i] == "=":
            i += 1
            while i < n and tag[i] in HTML_SPACE:
                i += 1
            if i < n and tag[i] in "\"'":
                end = tag.find(tag[i], i + 1)
                if end < 0:
                    return None, attrs
                value, i = tag[i + 1 : end], end + 1
            else:
                begin = i
                while i < n and tag[i] not in HTML_SPACE + ">":
                    i += 1
                value = tag[begin:i]
        attrs.append((name, html_lib.unescape(value)))
    return None, attrs


class _Scanner(HTMLParser):
    """Reads a written file the way a browser tokenizes it (``<script/x>``,
    ``<meta/http-equiv=…>`` and unquoted values included), and notes each
    finding at its line."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[int, str]] = []
        self.csp_meta = False
        self.tags: dict[str, int] = {}  # start tags read, by name
        self._inline: tuple[int, list[str]] | None = None  # an inline script being read
        self._style: tuple[int, list[str]] | None = None  # a <style> being read
        self._noscript: tuple[int, list[str]] | None = None
        # the open <svg> and the elements open in it, innermost last: its
        # content is markup, even in <style>. An end tag closes the innermost
        # open element of its name; one that closes nothing opened in the svg
        # (</div> of the <div> around it: the browser leaves the svg there) is
        # refused (review 20); a breakout tag (<img>, <p>…) leaves them all, as
        # a browser does when no HTML integration point is open, and none can
        # be: <foreignObject> and <math> are refused, and an <svg> <title> or
        # <desc> may hold text only (review 19)
        self._foreign: list[str] = []
        self._text_only: tuple[int, str] | None = None  # an open <svg> <title>/<desc>
        self._before_policy = True  # no element but html, head, meta, title yet, nor text
        self._title = False
        self._script: int | None = None  # the line of an open <script> of any type

    def handle_starttag(self, tag: str, pairs: list[tuple[str, str | None]]) -> None:
        line = self.getpos()[0]
        self.tags[tag] = self.tags.get(tag, 0) + 1
        text = self.get_starttag_text() or ""
        end, browser_attrs = browser_tag(text)
        if end != len(text) or browser_attrs != [(name, value or "") for name, value in pairs]:
            # html.parser took more (or less) for this tag, or other attributes,
            # than a browser does: title=='x>…', title=\xa0'x>…', a\xa0content=…
            # (review 21, 22)
            self.found.append((line, f"{text[:60]!r}: a browser reads this tag otherwise than this check"))
        attrs: dict[str, str] = {}
        for name, value in pairs:
            attrs.setdefault(name, value or "")  # a browser keeps the first of two
        if (
            tag == "meta"
            and attrs.get("http-equiv", "").lower() == "content-security-policy"
            and _policy["meta"]
            and attrs.get("content") == _policy["meta"]
            and self._before_policy  # a browser obeys it in <head> only, and only for what follows
        ):
            self.csp_meta = True
        if tag not in ("html", "head", "meta", "title"):
            self._before_policy = False
        self._title = self._title or tag == "title"
        if self._text_only is not None:
            self.found.append(
                (line, f"<{tag}> inside an <svg> <{self._text_only[1]}>: it may hold text only")
            )
        if self._foreign and (
            tag in FOREIGN_BREAKOUT or (tag == "font" and {"color", "face", "size"} & set(attrs))
        ):
            self._foreign.clear()  # the browser leaves the svg: this is HTML again
        if tag == "math" or (self._foreign and tag in INTEGRATION_POINTS):
            self.found.append(
                (
                    line,
                    f"<{tag}>: in it a browser reads HTML by other rules than this check; not used by this site",
                )
            )
        if self._foreign and tag in ("title", "desc"):
            self._text_only = (line, tag)
        if tag in ("svg", "math") or self._foreign:
            self._foreign.append(tag)
        self.found += [(line, what) for what in _tag_problems(tag, attrs, pairs)]
        if tag == "script" and "src" not in attrs and attrs.get("type", "").lower() not in DATA_BLOCKS:
            self._inline = (line, [])
        if tag == "script":
            self._script = line
        if tag == "style" and self._style is None:
            # its text is checked whole at </style>: a browser joins the text
            # that a comment or an element splits inside <svg><style>
            self._style = (line, [])
        if tag in RAW_TEXT and not self._foreign:
            # html.parser reads only <script> and <style> as raw text; a browser
            # reads these up to their end tag too (what looks like a tag inside
            # is text, and what looks like an attribute may close them)
            self.set_cdata_mode(tag)
            if tag == "noscript":  # and, with scripting off, as HTML
                self._noscript = (line, [])

    def handle_startendtag(self, tag: str, pairs: list[tuple[str, str | None]]) -> None:
        """<style/> is a start tag to a browser (a slash does not close an HTML
        element that is not void): what follows is its raw text."""
        self.handle_starttag(tag, pairs)
        if tag in RAW_TEXT | {"script", "style"} and not self._foreign:
            self.set_cdata_mode(tag)
        elif self._foreign and self._foreign[-1] == tag:
            self._foreign.pop()  # "/>" closes an element in svg content
            if self._text_only is not None and self._text_only[1] == tag:
                self._text_only = None  # <title/> in svg: closed

    def set_cdata_mode(self, elem: str, **kwargs) -> None:
        """Inside <svg> and <math> a browser reads <style> and <script> content
        as markup (an <img> there is an HTML element); html.parser would read
        it as text."""
        if not self._foreign:
            super().set_cdata_mode(elem, **kwargs)  # (newer Pythons pass escapable=)

    def handle_data(self, data: str) -> None:
        if self._script is not None and "<!--" in data:
            # "<!--<script>" in a script: a browser then reads on past the first
            # </script> (its "double escaped" state); html.parser does not (review 20)
            self.found.append(
                (self._script, "'<!--' in a <script>: browsers end it elsewhere than this check")
            )
        if not self._title and data.strip(HTML_SPACE):
            # text ends <head> for a browser: a policy <meta> after it is in
            # <body>, where a browser ignores it
            self._before_policy = False
        if self._noscript is not None:
            self._noscript[1].append(data)
        elif self._inline is not None:
            self._inline[1].append(data)
        elif self._style is not None:
            self._style[1].append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag not in ("title", "head"):
            # </br>, </body>, </html> in <head> start the body for a browser: a
            # policy <meta> after them is ignored (review 20); the others, stricter
            self._before_policy = False
        if tag == "script":
            self._script = None
        if self._text_only is not None:
            if tag == self._text_only[1]:
                self._text_only = None
            else:
                self.found.append(
                    (
                        self.getpos()[0],
                        f"</{tag}> inside an <svg> <{self._text_only[1]}>: it may hold text only",
                    )
                )
        if self._foreign and tag in ("br", "p"):
            self._foreign.clear()  # </br>, </p> leave the svg, as a breakout tag does
        elif tag in self._foreign:
            del self._foreign[len(self._foreign) - 1 - self._foreign[::-1].index(tag) :]
        elif self._foreign:
            self.found.append(
                (
                    self.getpos()[0],
                    f"</{tag}> inside an <svg> closes nothing opened in it: a browser may leave the svg there",
                )
            )
        if tag == "title":
            self._title = False
        if tag == "noscript" and self._noscript is not None:
            line, body = self._noscript
            self._noscript = None
            self.found += [(line + at - 1, what) for at, what in scan("".join(body))[0]]
        if tag == "script" and self._inline is not None:
            line, body = self._inline
            self.found.append(
                (
                    line,
                    f"inline <script> ({''.join(body).strip()[:60]!r}); serve it "
                    "as a file under _static/ instead",
                )
            )
            self._inline = None
        if tag == "style" and self._style is not None:
            line, body = self._style
            self._style = None
            self.found += [(line, what) for what in _css_problems("style", "".join(body))]

    def close(self) -> None:
        super().close()
        if self.cdata_elem and self.rawdata:  # raw text never closed: html.parser keeps it back
            self.handle_data(self.rawdata)
            self.rawdata = ""
        if self._inline is not None:  # never closed: the rest of the file is script
            self.handle_endtag("script")
        if self._noscript is not None:
            self.handle_endtag("noscript")
        if self._style is not None:
            self.handle_endtag("style")


# HTML's white space: text of any other character (U+00A0, U+3000) before the
# policy <meta> ends <head> for a browser (str.strip() would take them for space)
HTML_SPACE = " \t\n\f\r"
# Start tags that end <svg> content in a browser (the HTML standard's "in
# foreign content" list; <font> with color, face or size too)
FOREIGN_BREAKOUT = frozenset(tag.decode("ascii") for tag in BREAKOUT if tag != b"font")
# Elements in <svg> and <math> inside which a browser reads HTML again, with
# raw text (<textarea>, <style>…) where this check would read markup: refused
# (an <svg> <title> or <desc> is kept, holding text only)
INTEGRATION_POINTS = frozenset({"foreignobject", "annotation-xml", "mi", "mo", "mn", "ms", "mtext"})


# An end tag with something after its name (</style x>, </title/>): a browser
# ignores the rest; html.parser (before Python 3.13) takes it for text, and
# inside <style> or <title> would read the rest of the file as text.
END_TAG_REST = re.compile(r"</([a-zA-Z][^\t\n\r\f />]*)[\t\n\r\f /][^>]*>")


# Comments a browser ends where html.parser does not (<!-->, <!--->, --!>),
# and any "<![" (a CDATA section in any case, <![if …]>, <![temp …]]>), which
# html.parser reads as a marked section up to "]>" or "]]>" and HTML as a
# comment ending at its first ">" (in an XML file expat is the judge of "<![").
# Review 20: "-- >" (html.parser ends a comment there, a browser does not),
# and "</" before anything but a letter ("</ textarea>" ends raw text for
# html.parser; for a browser it is text).
# Review 21: a character Python's "\\s" takes for space and HTML does not,
# where html.parser would end a comment or an end tag on it ("--" + VT + ">",
# "</title" + NBSP + ">"); the C0/C1 controls no page holds; and quotes in an
# end tag, whose value a browser reads past a ">" (</i title="a>…">).
NOT_HTML_SPACE = "\x0b\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
DIFFERENTIAL = re.compile(
    r"<!---?>|--!>|<!\[|--\s+>|</(?![A-Za-z])"
    rf"|</[A-Za-z][^\t\n\f\r />]*[{NOT_HTML_SPACE}]|[\x0b\x1c-\x1f\x85]"
    r"|</[A-Za-z][^\t\n\f\r />]*[\t\n\f\r /][^>]*[\"']"
)


# Bidirectional controls in a written page, as characters or as references
# (&#x202E;, &#8238;, &rlm;): whatever wrote them (a template, an extension, a
# data file the page checks did not see), the page is refused (KB095 is where
# they come in).
# <image> is <img> to a browser's tree builder (lexbor drops it where a table
# moves it out: review 23), so the tree cannot show it: read in the text
IMAGE_TAG = re.compile(r"<image[\t\n\f\r />]", re.IGNORECASE)
# kb_data.BIDI's characters as they are, or as character references (any
# numeric one, and every named one HTML gives them: &lrm;, &ZeroWidthSpace;,
# &NegativeThinSpace; …)
BIDI_NAMED = sorted(
    (name for name, value in html5_entities.items() if kb_data.BIDI.fullmatch(value)), key=len, reverse=True
)
BIDI_IN_HTML = re.compile(
    kb_data.BIDI.pattern
    + r"|&#(?:[xX]0*([0-9a-fA-F]{1,6})|0*([0-9]{1,8}));?|&(?:"
    + "|".join(map(re.escape, BIDI_NAMED))
    + ")"
)


def _hidden_reference(match: re.Match) -> bool:
    """Whether a BIDI_IN_HTML match is one of kb_data.BIDI's characters (a
    numeric reference may name any character)."""
    if match[1] is None and match[2] is None:
        return True
    code = int(match[1], 16) if match[1] is not None else int(match[2])
    return code <= 0x10FFFF and bool(kb_data.BIDI.fullmatch(chr(code)))


def scan(
    text: str, xml: bool = False, tags: dict[str, int] | None = None
) -> tuple[list[tuple[int, str]], bool]:
    """(line, what is wrong) for every finding in one file's HTML or SVG, and
    whether it carries the site's policy as <meta>, first thing in <head>
    (and, into ``tags``, how many start tags of each name it read)."""
    scanner = _Scanner()
    if tags is not None:
        scanner.tags = tags
    early = [
        (
            text.count("\n", 0, m.start()) + 1,
            f"{m[0]!r}: browsers end this where this check does not; remove it",
        )
        for m in DIFFERENTIAL.finditer(text)
        if not (xml and m[0] == "<![")
    ]
    scanner.found += early
    scanner.found += [
        (
            text.count("\n", 0, m.start()) + 1,
            f"bidirectional control or invisible character {m[0]!r} (KB095): the text is shown "
            "in another order than it is copied, or holds what readers do not see; remove it",
        )
        for m in BIDI_IN_HTML.finditer(text)
        if _hidden_reference(m)
    ]
    if not xml:  # in SVG, <image> is SVG's own element
        scanner.found += [
            (text.count("\n", 0, m.start()) + 1, "<image> is <img> to a browser; write <img>")
            for m in IMAGE_TAG.finditer(text)
        ]
    text = END_TAG_REST.sub(lambda m: f"</{m[1]}>" + "\n" * m[0].count("\n"), text)
    scanner.feed(text)
    scanner.close()
    return sorted(scanner.found), scanner.csp_meta


# The page as the browser builds it: html.parser (above) gives the lines, but
# it tokenizes by its own rules, and each difference to a browser's was a way
# past this check (reviews 18 to 22). So each page is also parsed by lexbor
# (selectolax), a WHATWG-conformant HTML parser, into the tree a browser
# builds (foreign content, implied <head> and <body>, the first of two
# attributes, <template> contents), and the same rules run on that tree. What
# only the tree shows is reported at the line of the tag it came from.
ANY_TAG_START = re.compile(r"<([a-zA-Z][^\t\n\f\r />]*)")


def _tree_elements(node):
    """Every element under ``node`` in document order, the contents of each
    <template> (a declarative shadow root is one) at the template's place."""
    for element in node.traverse(include_text=False):
        if not element.is_element_node:
            continue
        yield element
        if element.tag == "template":
            for fragment in element.template_fragments()[:1]:
                yield from _tree_elements(fragment)


def tree_scan(text: str, tags: dict[str, int] | None = None) -> tuple[list[tuple[int, str]], bool]:
    """(line, what is wrong) in the trees a browser builds from the page, with
    scripting on (what most readers get: <noscript> holds text) and off (its
    content is markup), and whether the site's policy <meta> is in <head>
    before anything it governs in both. With ``tags`` (how many start tags
    of each name html.parser read, _Scanner.tags), an element the browser
    builds more often than the tokens read as tags is refused: the check
    took markup for text there (review 23: <template><col><textarea>)."""
    found: dict[tuple[int, str], None] = {}
    policy = True
    # the flag changes how a parser reads <noscript> only: without one, one tree
    readings = (True, False) if re.search("noscript", text, re.IGNORECASE) else (True,)
    for scripting in readings:
        try:
            tree_found, has_policy = _tree_findings(
                text, LexborHTMLParser(text, scripting=scripting).root, tags if scripting else None
            )
        except RecursionError:  # selectolax reads a <template>'s content recursively
            return [(1, "<template> elements nest too deep for this check to read them; remove them")], False
        found.update(dict.fromkeys(tree_found))
        policy = policy and has_policy
    return list(found), policy


# Elements a browser makes without a start tag of their own: implied ones
# (</p> and </br> make a <p> and a <br>), and formatting elements it opens
# again after a block (<b><p> … gives the <p> a <b> of its own)
IMPLIED = {"html", "head", "body", "tbody", "tr", "colgroup", "p", "br"}
FORMATTING = {"a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u"}


def _tag_lines(text: str) -> dict[str, list[int]]:
    """The lines of every "<name" in the text, by lower-case name, in one pass."""
    newlines = [m.start() for m in re.finditer("\n", text)]
    index: dict[str, list[int]] = {}
    for m in ANY_TAG_START.finditer(text):
        index.setdefault(m[1].lower(), []).append(bisect.bisect_right(newlines, m.start()) + 1)
    return index


def _in_svg(element) -> bool:
    node = element.parent
    while node is not None and node.tag not in ("svg", "foreignObject", None):
        node = node.parent
    return node is not None and node.tag == "svg"


def _tree_findings(text: str, root, tags: dict[str, int] | None) -> tuple[list[tuple[int, str]], bool]:
    found: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    index: dict[str, list[int]] | None = None  # tag name -> lines of its "<name", built on first use
    has_policy, before_policy = False, True

    def line_of(tag: str, n: int) -> int:
        """The line of the n-th <tag in the text."""
        nonlocal index
        if index is None:
            index = _tag_lines(text)
        tag_lines = index.get(tag, [])
        return tag_lines[n - 1] if n <= len(tag_lines) else 1

    for element in _tree_elements(root):
        tag = element.tag.lower()
        n = seen[tag] = seen.get(tag, 0) + 1
        pairs = [(name.lower(), value or "") for name, value in element.attributes.items()]
        attrs = dict(pairs)
        problems = list(_tag_problems(tag, attrs, pairs))
        parent = element.parent
        if tag == "selectedcontent":
            problems.append("<selectedcontent> copies the chosen option's markup; not used by this site")
        if parent is not None and parent.tag in ("style", "script"):
            problems.append(
                f"<{tag}> inside a <{parent.tag}>: a browser reads only its text; remove the markup"
            )
        if tag == "script" and attrs.get("type", "").lower() not in DATA_BLOCKS:
            # an <svg> <script> loads its href=, an HTML one its src= only;
            # and a script's own text runs when it loads nothing
            names = ("href", "xlink:href") if _in_svg(element) else ("src",)
            sources = [attrs[name] for name in names if name in attrs]
            body = element.text(deep=True)
            if not sources or body.strip():
                problems.append(
                    f"inline <script> ({body.strip()[:60]!r}); serve it as a file under _static/ instead"
                )
            problems += [f"script from another host: {url!r}" for url in sources if is_remote(url)]
        if tag == "style":
            problems += _css_problems("style", element.text(deep=True))
        if (
            tag == "meta"
            and before_policy
            and parent is not None
            and parent.tag == "head"
            and attrs.get("http-equiv", "").lower() == "content-security-policy"
            and _policy["meta"]
            and attrs.get("content") == _policy["meta"]
        ):
            has_policy = True
        if tag not in ("html", "head", "meta", "title"):
            before_policy = False
        if problems:
            line = line_of(tag, n)
            found += [(line, what) for what in dict.fromkeys(problems)]
    if tags is not None:
        for tag, count in seen.items():
            if tag not in IMPLIED | FORMATTING and count > tags.get(tag, 0) and tag != "selectedcontent":
                found.append(
                    (
                        line_of(tag, tags.get(tag, 0) + 1),
                        f"<{tag}>: a browser reads markup here that this check reads as text; remove "
                        "what makes the difference (a raw-text element such as <textarea> or <title> "
                        "where the browser ignores it)",
                    )
                )
    return found, has_policy


def _meta_problem(attrs: dict[str, str]) -> str | None:
    """A <meta http-equiv> other than the site's own policy."""
    if "http-equiv" not in attrs or (
        attrs["http-equiv"].lower() == "content-security-policy"
        and _policy["meta"]
        and attrs.get("content") == _policy["meta"]
    ):
        return None
    return f"<meta http-equiv={attrs['http-equiv']!r}> can redirect or change the policy"


# What makes an attribute's value a CSS value that may fetch: url() and, in
# any attribute (mask=, cursor=, an animation's to=), image-set() and
# cross-fade() (review 22)
CSS_FETCHING = ("url(", "image-set(", "cross-fade(", "@import", "src(")
# what a browser reads a stylesheet as (an HTTP header without a charset leaves it to this)
CSS_CHARSET = re.compile(r"@charset\s*[\"']([^\"']*)", re.IGNORECASE)


def _css_like(value: str) -> bool:
    if "(" not in value and "@" not in value and "\\" not in value:
        return False  # each word holds one of them, or an escape that makes one (most values: none)
    unescaped = css_unescaped(value).lower()
    # comments out too: url/**/( is not a function, but @import/**/"x" imports
    bare = CSS_COMMENT.sub("", unescaped)
    return any(word in text for word in CSS_FETCHING for text in (unescaped, bare))


def _tag_problems(tag: str, attrs: dict[str, str], pairs: list[tuple[str, str | None]]):
    if tag in EMBEDDING:
        yield f"<{tag}> embeds another document; link to it instead"
    if tag == "meta" and (problem := _meta_problem(attrs)):
        yield problem
    for name, value in pairs:
        value = value or ""
        if name.startswith("on"):
            yield f"event handler {name}= on <{tag}>; attach it from a script file"
        elif name in URL_ATTRS or name in LIST_ATTRS:
            yield from _url_problems(tag, name, value, attrs)
        elif name == "style" or _css_like(value):
            yield from _css_problems(tag, value)  # also fill=, filter=, mask=, cursor= … "url(…)"
    yield from _animation_problems(tag, attrs)
    if tag == "script" and "src" in attrs and is_remote(attrs["src"]):
        yield f"script from another host: {attrs['src']!r}"
    if tag == "meta" and attrs.get("name", "").lower() == "referrer":
        yield "<meta name=referrer> changes what the site's links tell other sites; the policy is a header"
    if "charset" in attrs and tag != "meta":
        yield f"charset= on <{tag}> makes the browser read a file in another encoding than this check; remove it"
    if tag == "plaintext":
        yield "<plaintext> makes the rest of the page text, read differently by browsers and this check"


XML_ANIMATION = {"set", "animate", "animatemotion", "animatetransform", "animatecolor"}


def _animation_problems(tag: str, attrs: dict[str, str]):
    """An SVG animation that sets a link or a handler (in .svg files and in
    <svg> inside pages alike)."""
    if tag not in XML_ANIMATION:
        return
    target = _local(attrs.get("attributename", attrs.get("attributeName", "")))
    values = " ".join(attrs.get(a, "") for a in ("to", "from", "by", "values"))
    if (
        target in ("href", "src")
        or target.startswith("on")
        or url_scheme(values.strip()) in ("javascript", "vbscript", "data")
    ):
        yield f"<{tag} attributeName={target!r}> sets a link or handler by animation"


def _url_problems(tag: str, name: str, value: str, attrs: dict[str, str]):
    if name in LIST_ATTRS:
        urls = [part.strip().split(" ")[0] for part in value.split(",")]
    elif name in ("ping", "attributionsrc"):
        urls = value.split()
    else:
        urls = [value]
    for url in urls:
        scheme = url_scheme(url)
        if scheme in ("javascript", "vbscript") or (
            scheme == "data"
            and not (name in LOADED_ATTRS and tag in ("img", "source") and DATA_IMAGE.match(url.strip()))
        ):
            yield f"{scheme}: URL in {name}= on <{tag}>: {url[:60]!r}"
        elif is_remote(url) and _loads(tag, name, attrs):
            yield f"<{tag} {name}={url[:80]!r}> makes the reader's browser call another host"


def _loads(tag: str, name: str, attrs: dict[str, str]) -> bool:
    """Whether the browser fetches this URL by itself (not a link to follow)."""
    if name in LOADED_ATTRS or name in SUBMITTING_ATTRS:
        return True
    if name in ("href", "xlink:href") and tag in XML_LOADS:  # inline <svg>: <image href>, <use href>
        return True
    if tag == "link" and name == "href":
        return not set(attrs.get("rel", "").lower().split()) <= NAVIGATION_RELS
    return tag == "base" and name == "href"


def _css_problems(tag: str, css: str):
    for _line, url in css_urls(css):
        yield f"style on <{tag}> loads {url[:80]!r} from another host"


# In XML documents (SVG, XHTML, XSLT) a script can hide behind a namespace
# prefix (<h:script>) or inside <style>, which html.parser reads as text:
# they are read as XML, by local name.
XML_TYPES = (".svg", ".xml", ".xht", ".xhtml", ".xsl", ".xslt")
XML_ACTIVE = {
    "applet",
    "script",
    "foreignobject",
    "iframe",
    "frame",
    "object",
    "embed",
    "handler",
    "listener",
    "stylesheet",
    "transform",
    "template",
    "import",
    "include",
}


XML_LOADS = {"image", "use", "feimage", "audio", "video", "source", "track"}


def _local(name: str) -> str:
    return name.rsplit("}", 1)[-1].rsplit(":", 1)[-1].lower()


XHTML_NS = "http://www.w3.org/1999/xhtml}"


def scan_xml(text: str, svg: bool = False) -> list[tuple[int, str]]:
    """(line, what is wrong) in an XML document a browser would render (an
    SVG file with ``svg``)."""
    found: list[tuple[int, str]] = []
    parser = expat.ParserCreate(namespace_separator="}")
    styles: list[tuple[int, list[str]]] = []  # open <style> elements and their text, which is CSS

    def start(name: str, attrib: dict[str, str]) -> None:
        # by local name: a prefix (<h:meta xmlns:h="…xhtml">) names the same element
        line, tag = parser.CurrentLineNumber, _local(name)
        # what the element means is said by its attributes in no namespace: x:http-equiv,
        # x:rel of another namespace mean nothing to a browser and must not hide the real ones
        attrs = {k.lower(): v for k, v in attrib.items() if "}" not in k}
        if svg and name.startswith(XHTML_NS):
            found.append(
                (line, f"<{tag}> of HTML in an SVG file: a browser honours it there; draw with SVG only")
            )
        if tag in XML_ACTIVE:
            found.append((line, f"<{tag}> in an XML document runs or embeds content"))
        if tag == "meta" and (problem := _meta_problem(attrs)):
            found.append((line, problem))
        if tag == "meta" and attrs.get("name", "").lower() == "referrer":
            found.append((line, "<meta name=referrer> changes what links tell other sites"))
        for attr_name, value in attrib.items():
            attr = _local(attr_name)
            if attr.startswith("on"):
                found.append((line, f"event handler {attr}= on <{tag}>; attach it from a script file"))
            elif attr in URL_ATTRS or attr == "srcset":
                loads = attr == "href" and tag in XML_LOADS  # <image href> fetches, like src
                found.extend(
                    (line, what) for what in _url_problems(tag, "src" if loads else attr, value, attrs)
                )
            elif attr == "style" or _css_like(value):
                found.extend((line, what) for what in _css_problems(tag, value))  # fill="url(…)" too
        found.extend(
            (line, what) for what in _animation_problems(tag, {_local(k): v for k, v in attrib.items()})
        )
        if styles:
            found.append(
                (line, f"<{tag}> inside a <style>: a browser reads only its text; remove the markup")
            )
        if tag == "style":
            styles.append((line, []))

    def end(name: str) -> None:
        if _local(name) == "style" and styles:
            line, text = styles.pop()  # read whole: expat hands url&#40; over in pieces
            found.extend((line, what) for what in _css_problems("style", "".join(text)))

    def data(chunk: str) -> None:
        if styles:
            styles[-1][1].append(chunk)

    def instruction(target: str, _data: str) -> None:
        if target.lower() == "xml-stylesheet":
            found.append(
                (
                    parser.CurrentLineNumber,
                    "<?xml-stylesheet?> makes the browser run a stylesheet (XSLT can write scripts)",
                )
            )

    def doctype(_name, _system, _public, internal: bool) -> None:
        # declarations in the document: after a parameter entity expat stops reading them
        # while a browser's parser reads on, so an entity could hold what this check never sees
        if internal:
            found.append(
                (
                    parser.CurrentLineNumber,
                    "a DOCTYPE with declarations (entities): browsers and this check read them "
                    "differently; remove them",
                )
            )

    parser.StartElementHandler, parser.EndElementHandler = start, end
    parser.CharacterDataHandler, parser.ProcessingInstructionHandler = data, instruction
    parser.StartDoctypeDeclHandler = doctype
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        found.append(
            (
                exc.lineno,
                f"not well-formed XML ({expat.ErrorString(exc.code)}); a "
                "browser's lenient reading cannot be checked",
            )
        )
    return found


def decoded(data: bytes) -> str:
    """A file's text as ``read_text`` gives it (UTF-8, universal newlines)."""
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


REOPENED = "a formatting element"


def nesting_problem(data: bytes) -> list[tuple[int, str]]:
    reopened: list[tuple[int, bytes]] = []
    found = nesting(data, reopened)
    problems = [
        (
            line,
            f"{REOPENED} <{name.decode()}> is closed by the end of the element around it, not by "
            "its own end tag: a browser opens it again after, and a page of them can make it build "
            "millions of elements; close it first",
        )
        for line, name in reopened[:1]
    ]
    if found is None:
        return problems
    line, depth = found
    return problems + [
        (
            line,
            f"{NESTED} {MAX_NESTING} levels deep here ({depth} open): a browser would not "
            "show them so, and the search index would take hours to build",
        )
    ]


# A document is checked as UTF-8; a browser reads it in the encoding it
# declares (an XML declaration's encoding=, a <meta charset>, a byte order
# mark). In Shift_JIS or GBK a lead byte takes the ASCII byte after it, so the
# "]" of a "]]>" or the "<" of a "<!--" is not there for the browser, and what
# the check read as a comment is markup. So a published document is UTF-8,
# says so or nothing, and holds no escape byte (ISO-2022-JP's switch).
XML_ENCODING = re.compile(rb"\A\s*<\?xml\b[^>]*?\bencoding\s*=\s*[\"']([^\"']*)[\"']", re.I)
# a charset in a <meta> tag (its charset= or a content-type's), read across
# quoted values that hold a ">" as a browser's tokenizer does; a page's text
# cannot hold "<meta" (it is written &lt;meta)
META_TAG = re.compile(rb"<meta\b(?:[^>\"']|\"[^\"]*\"|'[^']*')*>?", re.I)
CHARSET = re.compile(rb"\bcharset\s*=\s*[\"']?\s*([^\s\"'/>;,]*)", re.I)
OTHER_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff", b"\x2b\x2f\x76")
UTF8_NAMES = {b"utf-8", b"utf8"}


def encoding_problems(data: bytes, xml: bool, page_markup: bool = True) -> list[tuple[int, str]]:
    """(line, what is wrong) when a browser could read ``data`` in another
    encoding than UTF-8, the one it is checked in."""
    line = lambda at: data.count(b"\n", 0, at) + 1  # noqa: E731
    if data.startswith(OTHER_BOMS):
        return [
            (1, "the file starts with the byte order mark of another encoding than UTF-8; save it as UTF-8")
        ]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [
            (
                line(exc.start),
                "not UTF-8; save it as UTF-8 (a browser would read it otherwise than this check)",
            )
        ]
    if (escape := data.find(b"\x1b")) >= 0:
        return [
            (line(escape), "an escape byte (0x1B), which switches some encodings (ISO-2022-JP); remove it")
        ]
    if (nul := data.find(b"\x00")) >= 0:  # "<\0?\0x\0": a browser reads the file as UTF-16
        return [(line(nul), "a NUL byte: a browser may read the file as UTF-16; remove it")]
    declared = XML_ENCODING.match(data)  # an HTML page's <?xml encoding=…?> counts to a browser too
    found = [declared] if declared else []
    if page_markup:
        found += [
            c for tag in META_TAG.finditer(data) for c in CHARSET.finditer(data, tag.start(), tag.end())
        ]
    return [
        (
            line(m.start()),
            f"declares the encoding {m[1].decode('ascii', 'replace')!r}: publish it as UTF-8 and say so",
        )
        for m in found
        if m[1].strip().lower() not in UTF8_NAMES
    ]


def check_file(path: Path, page: bool = True, data: bytes | None = None) -> list[tuple[int, str]]:
    """(line, what is wrong) in one written file (its bytes ``data`` if
    given, as read once by the caller); a page must also carry the site's
    policy as <meta> (when the site ships one)."""
    if path.suffix.lower() == ".svgz":
        return [(1, "a compressed SVG cannot be checked; publish it as .svg")]
    data = path.read_bytes() if data is None else data
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return guard_pdf.pdf_problems(data)
    if problems := encoding_problems(data, suffix in XML_TYPES, suffix in (".html", ".htm")):
        return problems  # read in another encoding, the file is another document than the one checked
    text = decoded(data)
    if suffix in XML_TYPES:
        return sorted(set(scan(text, xml=True)[0] + scan_xml(text, svg=suffix == ".svg")))
    if suffix == ".css":
        charsets = [
            (text.count("\n", 0, m.start()) + 1, f"@charset {m[1]!r}: a stylesheet is UTF-8; remove it")
            for m in CSS_CHARSET.finditer(text)
            if m[1].strip().lower() not in ("utf-8", "utf8")
        ]
        return charsets + [
            (line, f"style on <style> loads {url[:80]!r} from another host") for line, url in css_urls(text)
        ]
    tags: dict[str, int] = {}
    found, has_policy = scan(text, tags=tags)
    if nested := nesting_problem(data):
        # refused as it is; nested that deep, a tree takes minutes to build
        # (lexbor, like browsers, looks through the open elements at each tag)
        return [*found, *nested]
    tree_found, tree_policy = tree_scan(text, tags)
    said = {what for _, what in found}
    found = sorted(found + [(line, what) for line, what in tree_found if what not in said])
    has_policy = has_policy and tree_policy
    if page and _policy["meta"] and not has_policy:
        found.insert(
            0,
            (
                1,
                'the page lacks the site\'s <meta http-equiv="Content-Security-Policy"> '
                "(the kb_csp_meta block of _templates/page.html)",
            ),
        )
    return found


# Files a browser runs as documents: a script in any of them runs on the
# site's origin (GitHub Pages serves them without the policy header).
ACTIVE = (
    ".html",
    ".htm",
    ".xhtml",
    ".xht",
    ".shtml",
    ".svg",
    ".svgz",
    ".xml",
    ".xsl",
    ".xslt",
    ".mht",
    ".mhtml",
    ".pdf",  # kb.guard.pdf
)
ASSETS = ("_static", "_images", "_downloads")


def written_files(outdir: Path, since: float):
    """(path, is_page): the pages this build wrote, and every active document
    among the files it copied (assets keep their source's time when copied)."""
    for folder, dirs, files in os.walk(outdir):
        top = Path(folder) == outdir
        if top:
            # Pagefind's own output (no page can be written there: KB057)
            dirs[:] = [d for d in dirs if d != "pagefind"]
        asset = Path(folder) != outdir and Path(folder).relative_to(outdir).parts[0] in ASSETS
        for name in files:
            path = Path(folder) / name
            if not name.lower().endswith(ACTIVE) and not (asset and name.lower().endswith(".css")):
                continue
            if asset or not name.endswith(".html"):
                yield path, False
            elif path.stat().st_mtime >= since:
                yield path, True


# What _static/_headers may say. Hosts that read it (Netlify, Cloudflare Pages)
# apply it to every reader, and its policy is also every page's <meta>.
HEADER_NAMES = {
    "content-security-policy",
    "x-content-type-options",
    "referrer-policy",
    "x-frame-options",
    "permissions-policy",
    "cross-origin-opener-policy",
    "cross-origin-resource-policy",
    "cross-origin-embedder-policy",
    "strict-transport-security",
    "cache-control",
    "x-robots-tag",
}
# Sources a directive may allow: the site's own files, and no one else's.
CSP_SOURCES = {"'self'", "'none'"}
CSP_EXTRA = {
    "script-src": {"'wasm-unsafe-eval'"},
    "style-src": {"'unsafe-inline'"},
    "img-src": {"data:"},
    "font-src": {"data:"},
}
CSP_VALUELESS = {"upgrade-insecure-requests", "block-all-mixed-content"}
CSP_REQUIRED = {"default-src", "script-src", "object-src", "base-uri"}


def header_problems(text: str) -> list[tuple[int, str]]:
    """(line, what is wrong) in a _headers file."""
    found, policies = [], 0
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            if not line.startswith("/"):
                found.append((number, f"{line.strip()!r} is neither a path (/…) nor an indented header"))
            continue
        name, colon, value = line.strip().partition(":")
        if not colon or name.lower() not in HEADER_NAMES:
            found.append(
                (
                    number,
                    f"header {name!r} is not one the site sends (allowed: {', '.join(sorted(HEADER_NAMES))})",
                )
            )
            continue
        if name.lower() == "content-security-policy":
            policies += 1
            found += [(number, what) for what in _policy_problems(value)]
    if not policies:
        found.append((1, "no Content-Security-Policy: the site ships one (see CONTRIBUTING)"))
    return found


def _policy_problems(policy: str):
    seen = set()
    for part in filter(None, (p.strip() for p in policy.split(";"))):
        directive, *sources = part.split()
        directive = directive.lower()
        seen.add(directive)
        if directive in CSP_VALUELESS:
            continue
        allowed = CSP_SOURCES | CSP_EXTRA.get(directive, set())
        for source in sources:
            if source.lower() not in allowed and not (directive == "frame-ancestors" and source == "'none'"):
                yield (
                    f"{directive} allows {source}: the site loads nothing from other hosts "
                    f"and runs no inline or evaluated script (allowed here: "
                    f"{' '.join(sorted(allowed))})"
                )
    for directive in sorted(CSP_REQUIRED - seen):
        yield f"the policy has no {directive}"


def on_config_inited(app, config) -> None:
    """Every page carries the policy of _static/_headers as <meta>: it is a
    setting of the HTML output (``kb_csp_meta``), so that when it changes,
    Sphinx writes every page again, as for any changed setting."""
    config.kb_csp_meta = meta_policy(header_policy(Path(app.confdir)))


def on_builder_inited(app) -> None:
    # file times have a coarser clock than time.time() on some file systems
    _build_start["time"] = time.time() - 2
    _policy["meta"] = app.config.kb_csp_meta
    shutil.rmtree(Path(app.doctreedir) / CHECKED, ignore_errors=True)  # of a build that stopped
    _passed.clear()
    _passed.update(passed_before(Path(app.doctreedir)))
    _passed.update(_passed_in_process.get(rules(), ()))
    _stop_background()  # of a build that stopped
    _background["main"] = os.getpid()
    headers = Path(app.confdir) / HEADERS
    if headers.is_symlink():
        pass  # refused as a link (KB011, kb.guard.untrusted), never read
    elif headers.exists() and not headers.is_file():
        logger.warning(
            "KB015 _static/_headers is not a file: it holds the site's HTTP headers (see CONTRIBUTING)",
            location=f"{shown(headers)}:1",
            type="kb",
            subtype="html-guard",
        )
    elif headers.exists():
        for line, what in header_problems(_headers_text(headers)):
            logger.warning(
                "KB015 %s", what, location=f"{shown(headers)}:{line}", type="kb", subtype="html-guard"
            )


def on_page_context(app, pagename, templatename, context, doctree) -> None:
    context["kb_csp_meta"] = _policy["meta"]


# The files that passed, by content: every build checks every asset again (a
# copied file keeps its source's time, so there is no telling which ones this
# build copied) and the pages it wrote (the generated tag, search and 404
# pages are written every build), and bytes that passed under the same rules
# pass again. Kept beside the doctrees, never in the published folder.
PASSED = "kb-guard-passed.json"
_passed: set[str] = set()  # of this build; forked workers inherit it
# What passed in the earlier builds of this process, by rules(): a build
# into another folder (make serve's rebuilds, a test's tiny project) does not
# read the same bytes again (furo's pages of a tiny project are the same each time)
_passed_in_process: dict[str, set[str]] = {}
# Pages are checked as soon as they are written (``kb-html-page-written``,
# from kb.site.build_speed's builder), in the process that wrote them: in a
# parallel build, the worker processes, while the main process prepares the
# next pages; in a serial write, one forked process (``_background``). Each
# worker process appends the digests that passed to a file of its own here;
# build-finished reads them. A page that failed is checked again there, and
# reported once.
CHECKED = "kb-guard-checked"


def rules() -> str:
    """What a check's outcome depends on besides the file: this code, the
    policy a page's <meta> must equal, and the parsers (Python's html.parser,
    libexpat, selectolax's lexbor, tinycss2, qpdf)."""
    digest = hashlib.sha256()
    for module in (__file__, untrusted.__file__, kb_pagefind.__file__, guard_pdf.__file__):
        digest.update(Path(module).read_bytes())
    for part in (
        _policy["meta"],
        sys.version,
        pyexpat.EXPAT_VERSION,
        selectolax.__version__,
        tinycss2.__version__,
        guard_pdf.version(),
    ):
        digest.update(b"\0" + part.encode("utf-8"))
    return digest.hexdigest()


def content_digest(path: Path, data: bytes, page: bool = False) -> str:
    kind = b"page" if page else b"file"  # a page must carry the policy too
    return hashlib.sha256(path.suffix.lower().encode() + b"\0" + kind + b"\0" + data).hexdigest()


def _check(item: tuple[Path, bool]) -> tuple[str, list[tuple[int, str]] | None]:
    """(the file's content digest, its findings, or None when those very
    bytes passed before); the file is read once, for both."""
    path, page = item
    data = path.read_bytes()
    digest = content_digest(path, data, page)
    if digest in _passed:
        return digest, None
    return digest, check_file(path, page, data)


def passed_before(doctreedir: Path) -> set[str]:
    """What passed in the last build, under the same rules."""
    try:
        known = json.loads((doctreedir / PASSED).read_text(encoding="utf-8"))
        return set(known["passed"]) if known.get("rules") == rules() else set()
    except (OSError, ValueError, KeyError, TypeError):
        return set()


# Pages the main process writes (a few, after an edit: kb.site.build_speed)
# are checked by one forked process meanwhile, on the core the serial write
# leaves idle; build-finished takes their outcomes.
_background: dict[str, Any] = {"main": 0, "pool": None, "checks": []}


def on_page_written(app, pagename: str, path: Path) -> None:
    """Check a page as it is written; record its digest if it passed."""
    if not serves_pages(app.builder):
        return
    if os.getpid() == _background["main"] and _can_fork():
        if _background["pool"] is None:
            _background["pool"] = _checkers(1)
        _background["checks"].append(_background["pool"].submit(_check, (path, True)))
        return
    data = path.read_bytes()
    digest = content_digest(path, data, page=True)
    if digest in _passed or check_file(path, True, data):
        return
    folder = Path(app.doctreedir) / CHECKED
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{os.getpid()}.txt", "a", encoding="ascii") as record:
        record.write(digest + "\n")


def checked_while_writing(doctreedir: Path) -> set[str]:
    """The digests of the pages that passed as they were written (a page
    that failed is checked again, and reported, at build-finished)."""
    passed = set()
    for record in sorted((doctreedir / CHECKED).glob("*.txt")):
        passed.update(record.read_text(encoding="ascii").split())
    for check in _background["checks"]:
        try:
            digest, found = check.result()
        except Exception:  # noqa: BLE001 (the process died: its pages are checked again below)
            continue
        if not found:
            passed.add(digest)
    _stop_background()
    return passed


def _stop_background() -> None:
    if _background["pool"] is not None:
        _background["pool"].shutdown(cancel_futures=True)
    _background.update(pool=None, checks=[])


def _checkers(processes: int) -> ProcessPoolExecutor:
    """Forked processes that check pages; each ends when the build's process
    does (killed, or stopped by the template watchdog), instead of waiting on
    its queue for ever with the build's output pipes open."""
    return ProcessPoolExecutor(
        processes,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_end_with_parent,
        initargs=(os.getpid(),),
    )


def _end_with_parent(parent: int) -> None:
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def _can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


# From this many written files on (a title edit at 1,000 articles writes 200),
# they are checked by one process per core: the check reads every byte.
PARALLEL_FILES = 64


def check_files(files: list[tuple[Path, bool]]) -> list[tuple[str | None, list[tuple[int, str]] | None]]:
    """_check for each (path, page), in order; in parallel when there are
    many (forked workers: they inherit the policy read at builder-inited and
    the digests that passed)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if len(files) < PARALLEL_FILES or cores < 2 or not _can_fork():
        return [_check(item) for item in files]
    with _checkers(min(cores, 8)) as pool:
        return list(pool.map(_check, files, chunksize=16))


def check_book_pages(app) -> None:
    """An epub's pages are read by a book reader, not served with the site's
    headers, so they need not carry its policy; but a reader follows a
    redirect and loads from other hosts as a browser does, and the book is
    published beside the site. Each of its XHTML pages gets the checks of a
    document and each stylesheet those of the site's (KB015: epubcheck passes
    ``image-set("https://…")`` and CSS escapes); a book that fails them is
    deleted, so that no later step can publish it."""
    out = Path(app.outdir)
    found = False
    read = (".xhtml", ".html", ".htm", ".svg", ".css")
    for path in sorted(p for p in out.rglob("*") if p.suffix.lower() in read):
        for line, what in check_file(path, page=False):
            found = True
            logger.warning(
                "KB015 %s; look for it in the page's source, _templates/ or an extension",
                what,
                location=f"{shown(path)}:{line}",
                type="kb",
                subtype="html-guard",
            )
    if found:
        for book in out.glob("*.epub"):
            book.unlink()


def on_build_finished(app, exception) -> None:
    if exception is None and app.builder.name == "epub":
        check_book_pages(app)
    # pages a browser opens, under the site's policy
    if exception is not None or not serves_pages(app.builder):
        _stop_background()
        return
    _passed.update(checked_while_writing(Path(app.doctreedir)))
    clean = set()
    files = []
    for path, page in sorted(written_files(Path(app.outdir), _build_start["time"])):
        digest = content_digest(path, path.read_bytes(), page)
        if digest in _passed:
            clean.add(digest)
        else:
            files.append((path, page))
    for (path, _page), (digest, found) in zip(files, check_files(files)):
        if not found:
            clean.add(digest)  # passed now, or before (found is None)
        for line, what in found or ():
            logger.warning(
                "KB015 %s; %slook for it in the page's source, _templates/ or an extension",
                what,
                ""
                if what.startswith((NESTED, REOPENED))
                else "the page must run under the site's Content-Security-Policy (see _static/_headers): ",
                location=f"{shown(path)}:{line}",
                type="kb",
                subtype="html-guard",
            )
    record = Path(app.doctreedir) / PASSED
    record.parent.mkdir(parents=True, exist_ok=True)
    current = rules()
    record.write_text(json.dumps({"rules": current, "passed": sorted(clean)}), encoding="utf-8")
    _passed_in_process.setdefault(current, set()).update(clean)
    shutil.rmtree(Path(app.doctreedir) / CHECKED, ignore_errors=True)


def setup(app) -> dict[str, Any]:
    # set from _static/_headers at config-inited, never in conf.py
    app.add_config_value("kb_csp_meta", "", "html", types=[str])
    app.connect("config-inited", on_config_inited)
    app.connect("builder-inited", on_builder_inited)
    app.connect("html-page-context", on_page_context)
    app.setup_extension("kb.site.build_speed")  # defines kb-html-page-written
    app.connect("kb-html-page-written", on_page_written)
    # after the other handlers of the event, which write files too (feed.xml,
    # sitemap.xml): the default priority is 500
    app.connect("build-finished", on_build_finished, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
