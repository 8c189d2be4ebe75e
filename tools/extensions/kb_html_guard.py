"""The written pages hold no script, redirect or third-party request that the
site did not mean to ship, wherever it came from.

``kb_untrusted`` and ``kb_no_raw_html`` refuse what pages say. Templates,
the theme and other extensions write HTML too, and a pull request can change
them. So once the pages are written, every page written by this build is
read again and these fail the build (``KB015``), at the page's file and line:

- an inline ``<script>`` (data blocks such as ``type="application/json"``
  are not scripts), or a script loaded from another host;
- an event-handler attribute (``onclick=`` …), ``<meta http-equiv>``, and
  ``<iframe>``, ``<frame>``, ``<object>``, ``<embed>``;
- a ``javascript:``, ``vbscript:`` or ``data:`` URL in any attribute
  (raster images inline as ``data:image/…`` excepted);
- a resource the browser loads from another host: ``src``, ``srcset``,
  ``poster``, ``<link rel=stylesheet|icon|preload|…>``, ``<base>``, and
  ``url(…)`` in styles.

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
import html
import os
import re
import time
from pathlib import Path
from typing import Any

from sphinx.util import logging

from kb_untrusted import is_remote, url_scheme

logger = logging.getLogger(__name__)

TAG = re.compile(r"<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s=>/]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]+))?)*)"
                 r"\s*/?>")
ATTR = re.compile(r"([^\s=>/]+)(?:\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s>]+))?")
SCRIPT_END = re.compile(r"</script\s*>", re.IGNORECASE)
CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")]+)|@import\s+['\"]([^'\"]+)", re.IGNORECASE)

DATA_BLOCKS = {"application/json", "application/ld+json", "text/plain"}
EMBEDDING = {"iframe", "frame", "frameset", "object", "embed", "applet"}
# <link rel> values that make the browser fetch or connect
FETCHING_RELS = {"stylesheet", "icon", "shortcut", "apple-touch-icon", "preload", "prefetch",
                 "modulepreload", "preconnect", "dns-prefetch", "prerender", "manifest"}
URL_ATTRS = {"href", "src", "action", "formaction", "poster", "data", "xlink:href", "cite",
             "background", "manifest", "ping", "longdesc", "codebase"}
LOADED_ATTRS = {"src", "poster", "data", "background", "srcset"}
DATA_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp)[;,]", re.IGNORECASE)

_build_start: dict[str, float] = {"time": 0.0}
_policy: dict[str, str] = {"meta": ""}

HEADERS = Path("_static") / "_headers"
# Directives a <meta> policy cannot carry (browsers ignore them and say so).
NOT_IN_META = ("frame-ancestors", "report-uri", "report-to", "sandbox")


def header_policy(confdir: Path) -> str:
    """The Content-Security-Policy of ``_static/_headers`` ("" if none)."""
    path = confdir / HEADERS
    if not path.exists():
        return ""
    for line in path.read_text(encoding="utf-8").splitlines():
        name, _, value = line.strip().partition(":")
        if name.lower() == "content-security-policy":
            return value.strip()
    return ""


def meta_policy(policy: str) -> str:
    parts = [p.strip() for p in policy.split(";") if p.strip()]
    return "; ".join(p for p in parts if p.split()[0].lower() not in NOT_IN_META)


def attributes(text: str) -> dict[str, str]:
    out = {}
    for name, value in ATTR.findall(text):
        if value[:1] in "\"'":
            value = value[1:-1]
        out[name.lower()] = html.unescape(value)
    return out


def problems(page: str) -> list[tuple[int, str]]:
    """(offset, what is wrong) for every finding in one page's HTML."""
    found = []
    for match in TAG.finditer(page):
        tag, attrs = match.group(1).lower(), attributes(match.group(2))
        for what in _tag_problems(tag, attrs):
            found.append((match.start(), what))
        if tag == "script" and "src" not in attrs and \
                attrs.get("type", "").lower() not in DATA_BLOCKS:
            end = SCRIPT_END.search(page, match.end())
            body = page[match.end(): end.start() if end else len(page)].strip()
            found.append((match.start(), f"inline <script> ({body[:60]!r}); serve it as a file "
                                          "under _static/ instead"))
    return found


def _tag_problems(tag: str, attrs: dict[str, str]):
    if tag in EMBEDDING:
        yield f"<{tag}> embeds another document; link to it instead"
    if tag == "meta" and "http-equiv" in attrs and not (
            attrs["http-equiv"].lower() == "content-security-policy" and _policy["meta"]
            and attrs.get("content") == _policy["meta"]):
        yield f"<meta http-equiv={attrs['http-equiv']!r}> can redirect or change the policy"
    for name, value in attrs.items():
        if name.startswith("on"):
            yield f"event handler {name}= on <{tag}>; attach it from a script file"
        elif name in URL_ATTRS or name == "srcset":
            yield from _url_problems(tag, name, value, attrs)
        elif name == "style":
            yield from _css_problems(tag, value)
    if tag == "script" and "src" in attrs and is_remote(attrs["src"]):
        yield f"script from another host: {attrs['src']!r}"


def _url_problems(tag: str, name: str, value: str, attrs: dict[str, str]):
    urls = [part.strip().split(" ")[0] for part in value.split(",")] if name == "srcset" else [value]
    for url in urls:
        scheme = url_scheme(url)
        if scheme in ("javascript", "vbscript") or (scheme == "data" and not (
                name in LOADED_ATTRS and tag in ("img", "source") and DATA_IMAGE.match(url.strip()))):
            yield f"{scheme}: URL in {name}= on <{tag}>: {url[:60]!r}"
        elif is_remote(url) and _loads(tag, name, attrs):
            yield f"<{tag} {name}={url[:80]!r}> makes the reader's browser call another host"


def _loads(tag: str, name: str, attrs: dict[str, str]) -> bool:
    """Whether the browser fetches this URL by itself (not a link to follow)."""
    if name in LOADED_ATTRS:
        return True
    if tag == "link" and name == "href":
        return bool(FETCHING_RELS & set(attrs.get("rel", "").lower().split()))
    return tag == "base" and name == "href"


def _css_problems(tag: str, css: str):
    for match in CSS_URL.finditer(css):
        url = match.group(1) or match.group(2)
        if is_remote(url) and not DATA_IMAGE.match(url):
            yield f"style on <{tag}> loads {url[:80]!r} from another host"


def check_file(path: Path) -> list[tuple[int, str]]:
    """(line, what is wrong) in one written page."""
    text = path.read_text(encoding="utf-8", errors="replace")
    # <style> elements: their text is CSS, not tags
    findings = problems(text)
    for style in re.finditer(r"<style\b[^>]*>(.*?)</style>", text, re.S | re.IGNORECASE):
        findings += [(style.start(), what) for what in _css_problems("style", style.group(1))]
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    return sorted((bisect.bisect_right(starts, offset), what) for offset, what in findings)


def _shown(path: Path) -> str:
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)


def written_pages(outdir: Path, since: float):
    for folder, dirs, files in os.walk(outdir):
        if Path(folder) == outdir:
            dirs[:] = [d for d in dirs if d not in ("_static", "_images", "_downloads", "pagefind",
                                                    ".doctrees", "_sources")]
        for name in files:
            path = Path(folder) / name
            if name.endswith(".html") and path.stat().st_mtime >= since:
                yield path


def on_builder_inited(app) -> None:
    # file times have a coarser clock than time.time() on some file systems
    _build_start["time"] = time.time() - 2
    _policy["meta"] = meta_policy(header_policy(Path(app.confdir)))


def on_page_context(app, pagename, templatename, context, doctree) -> None:
    context["kb_csp_meta"] = _policy["meta"]


def on_build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for path in sorted(written_pages(Path(app.outdir), _build_start["time"])):
        for line, what in check_file(path):
            logger.warning("KB015 %s; the page must run under the site's Content-Security-"
                           "Policy (see _static/_headers): look for it in the page's source, "
                           "_templates/ or an extension", what, location=f"{_shown(path)}:{line}",
                           type="kb", subtype="html-guard")


def setup(app) -> dict[str, Any]:
    app.connect("builder-inited", on_builder_inited)
    app.connect("html-page-context", on_page_context)
    app.connect("build-finished", on_build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
