"""A published PDF (a download) that would act by itself is refused
(kb.guard.pdf, through kb.guard.html's check of written files); a plain one,
links included, passes. The PDFs are made here with pikepdf, compressed in
object streams as PDF tools write them."""

from __future__ import annotations

import io
from pathlib import Path

import pikepdf
import pytest
from kb.guard import html as guard
from one_build import register
from test_contributor_kit import _append
from test_hostile_input import assert_refused


def _pdf(change=None, encrypt: pikepdf.Encryption | None = None) -> bytes:
    pdf = pikepdf.new()
    pdf.add_blank_page(page_size=(200, 200))
    link = pikepdf.Dictionary(
        Type=pikepdf.Name.Annot,
        Subtype=pikepdf.Name.Link,
        Rect=[10, 10, 100, 30],
        A=pikepdf.Dictionary(S=pikepdf.Name.URI, URI=pikepdf.String("https://example.com/")),
    )
    pdf.pages[0].Annots = pdf.make_indirect(pikepdf.Array([link]))
    if change:
        change(pdf)
    out = io.BytesIO()
    pdf.save(out, object_stream_mode=pikepdf.ObjectStreamMode.generate, encryption=encrypt or False)
    return out.getvalue()


def _js_on_open(pdf):
    pdf.Root.OpenAction = pikepdf.Dictionary(S=pikepdf.Name.JavaScript, JS=pikepdf.String("app.alert(1)"))


def _uri_on_open(pdf):
    pdf.Root.OpenAction = pikepdf.Dictionary(S=pikepdf.Name.URI, URI=pikepdf.String("https://evil.example/"))


def _goto_then_js(pdf):
    pdf.Root.OpenAction = pikepdf.Dictionary(
        S=pikepdf.Name.GoTo,
        D=[pdf.pages[0].obj, pikepdf.Name.Fit],
        Next=pikepdf.Dictionary(S=pikepdf.Name.JavaScript, JS=pikepdf.String("app.alert(4)")),
    )


def _js_in_names(pdf):
    action = pdf.make_indirect(
        pikepdf.Dictionary(S=pikepdf.Name.JavaScript, JS=pikepdf.String("app.alert(2)"))
    )
    pdf.Root.Names = pikepdf.Dictionary(JavaScript=pikepdf.Dictionary(Names=[pikepdf.String("a"), action]))


def _page_action(pdf):
    pdf.pages[0].AA = pikepdf.Dictionary(
        O=pikepdf.Dictionary(S=pikepdf.Name.URI, URI=pikepdf.String("https://evil.example/"))
    )


def _launch_link(pdf):
    pdf.pages[0].Annots[0].A = pikepdf.Dictionary(S=pikepdf.Name.Launch, F=pikepdf.String("calc.exe"))


def _submit_form(pdf):
    pdf.pages[0].Annots[0].A = pikepdf.Dictionary(
        S=pikepdf.Name.SubmitForm,
        F=pikepdf.Dictionary(FS=pikepdf.Name.URL, F=pikepdf.String("https://evil.example/")),
    )


def _embedded_file(pdf):
    pdf.attachments["payload.html"] = pikepdf.AttachedFileSpec(pdf, b"<script>alert(3)</script>")


def _javascript_link(pdf):
    pdf.pages[0].Annots[0].A = pikepdf.Dictionary(
        S=pikepdf.Name.URI, URI=pikepdf.String(" JavaScript:app.alert(5)")
    )


def _link_to(uri):
    def change(pdf):
        pdf.pages[0].Annots[0].A = pikepdf.Dictionary(S=pikepdf.Name.URI, URI=uri)

    return change


def _base_uri(pdf):
    pdf.Root.URI = pikepdf.Dictionary(Base=pikepdf.String("javascript:"))
    _link_to(pikepdf.String("app.alert(6)"))(pdf)


def _print_link(pdf):
    pdf.pages[0].Annots[0].A = pikepdf.Dictionary(S=pikepdf.Name.Named, N=pikepdf.Name.Print)


HOSTILE = {
    "javascript-on-open": (_js_on_open, "JavaScript"),
    "javascript-in-names": (_js_in_names, "JavaScript"),
    "uri-on-open": (_uri_on_open, "an action when it is opened"),
    "goto-then-javascript-on-open": (_goto_then_js, "JavaScript"),
    "page-open-action": (_page_action, "an action on opening, closing or showing a page"),
    "launch-link": (_launch_link, "a Launch action"),
    "submit-form": (_submit_form, "a SubmitForm action"),
    "embedded-file": (_embedded_file, "embedded file"),
    "named-print": (_print_link, "a named action 'Print'"),
    "javascript-link": (_javascript_link, "a link to a script or local URL"),
    # review 25 (helper-120): a base for relative links, a share on another
    # host, a UTF-16 string with its byte order mark, a name
    "base-uri": (_base_uri, "a base URI for its links"),
    "windows-share-link": (_link_to(pikepdf.String("\\\\evil\\share\\x")), "a link to a script or local URL"),
    "smb-link": (_link_to(pikepdf.String("smb://evil/share")), "a link to a script or local URL"),
    "utf16-javascript-link": (
        _link_to(pikepdf.String(b"\xfe\xff" + "javascript:x".encode("utf-16-be"))),
        "a link to a script or local URL",
    ),
    "name-javascript-link": (_link_to(pikepdf.Name("/javascript:x")), "a link to a script or local URL"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_pdf_that_acts_by_itself_is_refused(tmp_path, case):
    change, what = HOSTILE[case]
    data = _pdf(change)
    assert what.encode() not in data or case == "embedded-file"  # in compressed object streams
    path = tmp_path / "x.pdf"
    path.write_bytes(data)
    found = guard.check_file(path, page=False)
    assert found and all(line == 1 for line, _ in found), found
    assert any(what in message for _, message in found), found


def _fit_on_open(pdf):
    pdf.Root.OpenAction = pikepdf.Array([pdf.pages[0].obj, pikepdf.Name.Fit])  # as LaTeX's hyperref writes it


def _goto_on_open(pdf):
    pdf.Root.OpenAction = pikepdf.Dictionary(S=pikepdf.Name.GoTo, D=[pdf.pages[0].obj, pikepdf.Name.Fit])


@pytest.mark.parametrize(
    "change", [None, _fit_on_open, _goto_on_open], ids=["link", "fit-on-open", "goto-on-open"]
)
def test_a_plain_pdf_passes(tmp_path, change):
    path = tmp_path / "x.pdf"
    path.write_bytes(_pdf(change))
    assert guard.check_file(path, page=False) == []


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (_pdf(encrypt=pikepdf.Encryption(user="", owner="o")), "encrypted"),
        (_pdf(encrypt=pikepdf.Encryption(user="u", owner="o")), "password"),
        (_pdf()[:-200], "cannot read"),  # cut short: qpdf would have to repair it
        (b"%PDF-1.7\nnot a PDF at all\n", "cannot read"),
    ],
    ids=["encrypted", "password", "truncated", "garbage"],
)
def test_a_pdf_that_cannot_be_read_as_it_is_is_refused(tmp_path, data, what):
    path = tmp_path / "x.PDF"
    path.write_bytes(data)
    found = guard.check_file(path, page=False)
    assert len(found) == 1 and what in found[0][1], found


def _hand_made(objects: list[bytes], off_by: dict[int, int]) -> bytes:
    """A PDF written by hand, its cross-reference offsets moved by ``off_by``."""
    out, offsets = bytearray(b"%PDF-1.7\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out) + off_by.get(number, 0))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % at for at in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


PAGE_WITH_SCRIPT = [
    b"<< /Type /Catalog /Pages 2 0 R >>",
    b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Resources << >> /AA << /O << /S /JavaScript /JS (app.alert(1)) >> >> >>",
]


@pytest.mark.parametrize("off_by", [0, 1, 9])
def test_an_object_qpdf_cannot_read_fails_the_pdf(tmp_path, off_by):
    """An xref entry a few bytes off: qpdf reads the object as null (and warns),
    another reader's repair may find it (review 24): the PDF is refused."""
    path = tmp_path / "x.pdf"
    path.write_bytes(_hand_made(PAGE_WITH_SCRIPT, {3: off_by}))
    found = guard.check_file(path, page=False)
    assert found, found
    assert ("JavaScript" if off_by == 0 else "cannot read whole") in found[0][1], found


# -- in a build: the download of a page ---------------------------------------------


def _download(data: bytes):
    def apply(repo, at):
        name = f"x-{at.tag}.pdf"
        (repo / "docs/training" / name).write_bytes(data)
        _append(repo, f"{{download}}`下载 <{name}>`\n", at.article())
        return name

    return apply


register("pages", "pdf", {"javascript": _download(_pdf(_js_on_open))})
register("valid", "pdf", {"plain": _download(_pdf())})


@pytest.mark.slow
def test_a_downloaded_pdf_with_script_fails_the_build_at_its_file(one_build):
    r = one_build("pages")["pdf/javascript"]
    out = assert_refused(r.run.proc)
    assert "/_downloads/" in out and f"{r.value}:1: WARNING: KB015 a PDF with JavaScript" in out, out[-3000:]


@pytest.mark.slow
def test_a_plain_pdf_is_published(one_build):
    r = one_build("valid")["pdf/plain"]
    assert r.run.proc.returncode == 0, r.out[-3000:]
    assert [p.name for p in Path(r.repo / "_build/html/_downloads").rglob("*.pdf")] == [r.value]
