"""Run Pagefind over a built site: one run at a time, swapped in whole.

Used by ``kb.search.index`` (not a Sphinx extension). Pagefind writes the new index
next to the site and it replaces ``<site>/pagefind`` by renaming, so a reader
never meets a half-written index; a lock makes runs wait for each other,
so the last build's run is the one that stays. The lock file is kept
outside the build folder (in a folder of this user's under the system's
temporary folder, named by the site's path): ``rm -r _build`` while a
background run goes on must not let the next build's run start beside it.
A run whose site was deleted meanwhile leaves nothing behind: its index and
its failure belong to a site that no longer exists.

``kb.search.index`` runs it in the build when the site has no index yet, and in
the background after an incremental build (the HTML is ready first; at 1,000
articles the index follows 5–10 s later). A background run that fails leaves
``.<site>.pagefind-failed`` with Pagefind's output; the next build reports it.

Command line (what the background run executes)::

    python kb_pagefind.py SITE CONFDIR     # index SITE with CONFDIR's pagefind.yml
    python kb_pagefind.py --locked SITE CONFDIR   # the same, holding the lock on stdin
    python kb_pagefind.py --wait SITE      # wait until no run is in progress
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections import Counter
from contextlib import contextmanager, suppress
from pathlib import Path


def _sibling(site: Path, suffix: str) -> Path:
    return site.parent / f".{site.name}.{suffix}"


# Pagefind's time grows with the square of how deep elements nest (60,000
# levels: 5 s; the million a template can write within the page limit: most
# of an hour). Browsers build at most 512 levels (Chromium's HTML parser puts
# a deeper element beside the 512th), so no page needs more: a deeper page is
# not indexed, and the HTML guard names it (KB015).
MAX_NESTING = 512
NESTED = "elements nest more than"
# Whatever else slows Pagefind down, a run ends after this long (KB098).
PAGEFIND_SECONDS = 600
_VOID = frozenset(
    b"area base br col embed hr img input keygen link meta param source track wbr basefont bgsound frame".split()
)
# what a browser reads as text up to the element's end tag (in HTML content;
# inside <svg> it is markup): start tags in it count, end tags do not
_RAW_TEXT = frozenset(b"script style textarea title xmp iframe noembed noframes noscript".split())
_HTML_SPACE = rb"\t\n\f\r "
_WS = rb"[\t\n\f\r ]"
_TOKEN = re.compile(
    rb"<!--"  # a comment
    rb"|<!\[CDATA\["  # a CDATA section (text in svg/math content)
    rb"|<[!?][^>]*+>?"  # a doctype, or a bogus comment
    rb"|</(?![a-zA-Z])[^>]*+>?"  # </3 …>: a bogus comment too
    rb"|<(/?)([a-zA-Z][^\t\n\f\r />]*+)"  # a tag and its name
    # its attributes as the HTML tokenizer reads them: a name, then "=" and a
    # value, quoted only when the quote comes first (an unclosed quote runs
    # to the end of the file)
    rb"((?:[\t\n\f\r /]++|[^\t\n\f\r />][^\t\n\f\r />=]*+(?:" + _WS + rb"*+=" + _WS + rb"*+"
    rb"(?:\"[^\"]*+\"?|'[^']*+'?|[^\t\n\f\r >]*+))?)*+)(>?)",
)
_START_TAG = re.compile(rb"<([a-zA-Z][^\t\n\f\r />]*+)")


# <svg> and <math> content: "/>" closes an element there (Pagefind reads it so
# too); these start tags leave it (and are HTML), and inside these integration
# points the content is HTML again
_FOREIGN = frozenset((b"svg", b"math"))
BREAKOUT = frozenset(
    b"b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img li "
    b"listing menu meta nobr ol p pre ruby s small span strong strike sub sup table tt u ul var font".split()
)
_INTEGRATION = frozenset(b"foreignobject desc title mi mo mn ms mtext annotation-xml".split())


# Elements a browser opens again after the element that held them closes
# (its "active formatting elements"): <p><b>x</p><p> gives a second <b>.
FORMATTING = frozenset(b"a b big code em font i nobr s small strike strong tt u".split())


def nesting(data: bytes, reopened: list[tuple[int, bytes]] | None = None) -> tuple[int, int] | None:
    """(line, depth) where elements first nest deeper than MAX_NESTING, or
    None. It never counts less than a browser or Pagefind would: an end tag
    closes only an open element of its name; "/>" closes an element only in
    <svg> or <math> content, and once a breakout tag (or </p>, </br>) has
    left it, nowhere; in text that one
    parser may read as markup and another as text, start tags count and end
    tags do not: a comment, up to its last possible end "-->"; a CDATA
    section, up to "]]>"; the content of
    an HTML raw-text element (<script>, <style> …), and to the end of the
    file if it holds "<!--" (a browser may then read on past its end tag). It
    may count more (an unclosed <p> or <li> before the next one).

    `reopened`, if given, gets the (line, name) of the first formatting
    element (FORMATTING) that an end tag of another element closed."""
    stack: list[bytes] = []
    foreign: list[bool] = []  # whether the content of each open element is <svg>/<math> content
    html: list[bool] = []  # whether each open element is an HTML element
    open_ = Counter()
    pos = 0

    def leave_foreign() -> None:
        # a breakout tag, or </p> or </br>, in svg/math content: browsers and
        # Pagefind leave it, each its own way; from here on "/>" closes nothing
        foreign[:] = [False] * len(foreign)

    def push(name: bytes, at: int, closed: bool = False, in_text: bool = False) -> tuple[int, int] | None:
        if name in _VOID:
            return None
        inside = foreign[-1] if foreign else False
        if inside and name not in BREAKOUT:
            if closed:
                return None  # <path … /> in <svg>
            content, is_html = name not in _INTEGRATION, False
        else:
            if inside:
                leave_foreign()
            content, is_html = name in _FOREIGN, not in_text
        stack.append(name)
        foreign.append(content)
        html.append(is_html)
        open_[name] += 1
        return (data.count(b"\n", 0, at) + 1, len(stack)) if len(stack) > MAX_NESTING else None

    def text_until(end: int) -> tuple[int, int] | None:
        for m in _START_TAG.finditer(data, pos, end):
            if found := push(m.group(1).lower(), m.start(), in_text=True):
                return found
        return None

    while (m := _TOKEN.search(data, pos)) is not None:
        pos = m.end()
        if m.group(0) in (b"<!--", b"<![CDATA["):
            end = data.find(b"-->" if m.group(0) == b"<!--" else b"]]>", pos)
            end = len(data) if end < 0 else end
            if found := text_until(end):
                return found
            pos = end
            continue
        name = m.group(2)
        if name is None:
            continue
        name = name.lower()
        if m.group(1):  # an end tag
            if name in (b"p", b"br") and foreign[-1:] == [True]:
                leave_foreign()
            if open_[name]:
                while (top := stack.pop()) != name:
                    foreign.pop()
                    open_[top] -= 1
                    if html.pop() and top in FORMATTING and reopened is not None and not reopened:
                        reopened.append((data.count(b"\n", 0, m.start()) + 1, top))
                foreign.pop()
                html.pop()
                open_[name] -= 1
            continue
        attributes, closing = m.group(3), m.group(4)
        if found := push(name, m.start(), closed=bool(closing) and attributes.endswith(b"/")):
            return found
        if name in _RAW_TEXT and html[-1:] == [True] and stack[-1:] == [name]:
            close = re.compile(rb"</" + re.escape(name) + rb"[\t\n\f\r />]", re.I).search(data, pos)
            end = close.start() if close else len(data)
            if data.find(b"<!--", pos, end) >= 0:
                end = len(data)  # "<!--<script>" in a script: it may end at a later end tag
            if found := text_until(end):
                return found
            pos = end
    return None


def _has_pages(site: Path) -> bool:
    try:
        return next(site.rglob("*.html"), None) is not None
    except OSError:
        return False


def too_deep(site: Path) -> str | None:
    """The first page of `site` Pagefind would read whose elements nest too
    deep, as ``path:LINE: KB015 …``; None if there is none."""
    try:
        pages = sorted(site.rglob("*.html"))
    except OSError:  # the site is being deleted (rm -r _build)
        return None
    for page in pages:
        if page.relative_to(site).parts[0] == "pagefind" or not page.is_file():
            continue
        try:
            data = page.read_bytes()
        except FileNotFoundError:  # the site is being deleted (rm -r _build)
            continue
        if found := nesting(data):
            line, depth = found
            return (
                f"{page}:{line}: KB015 {NESTED} {MAX_NESTING} levels deep here ({depth} open), so "
                "the search index was not built (Pagefind's time grows with the square of the "
                "depth): look for it in the page's source, _templates/ or an extension"
            )
    return None


def failure_file(site: Path) -> Path:
    return _sibling(site, "pagefind-failed")


def binary(confdir: Path) -> Path:
    """The ``pagefind`` command npm installs: whether Pagefind is installed."""
    return confdir / "node_modules" / ".bin" / "pagefind"


# Node's names (os.arch()) of the machines Pagefind ships binaries for.
_NODE_ARCH = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}


def command(confdir: Path) -> Path:
    """What to run to index: the binary that ``pagefind``, a node script,
    would run (node_modules/pagefind/lib/resolveBinary.js: pagefind_extended,
    which segments Chinese, from @pagefind/<platform>-<arch>), so that a run
    does not start node first (0.15 s of CPU); the script itself when the
    binary is not there or the script would pick another one (its
    environment variables). tests/test_pagefind_runs.py fails when the two
    disagree (the script's --verbose names the binary it runs)."""
    wrapper = binary(confdir)
    chosen = {"PAGEFIND_EXTENDED_BINARY_PATH", "PAGEFIND_BINARY_PATH", "npm_config_arch"} & set(os.environ)
    arch = _NODE_ARCH.get(platform.machine().lower())
    if chosen or arch is None or sys.platform not in ("linux", "darwin"):
        return wrapper
    folder = confdir / "node_modules" / "@pagefind" / f"{sys.platform}-{arch}" / "bin"
    for name in ("pagefind_extended", "pagefind"):
        if (folder / name).is_file() and os.access(folder / name, os.X_OK):
            return folder / name
    return wrapper


def inputs(confdir: Path) -> str:
    """What an index depends on besides the pages: Pagefind's settings
    (``pagefind.yml``) and its version. An index made with others is
    rebuilt, as a full build would make it."""
    digest = hashlib.sha256()
    for path in (confdir / "pagefind.yml", confdir / "node_modules" / "pagefind" / "package.json"):
        digest.update(path.read_bytes() if path.is_file() else b"-")
        digest.update(b"\0")
    return digest.hexdigest()


def indexed_with(site: Path) -> str | None:
    """inputs() of the run that made the site's index (None: not known)."""
    try:
        return _sibling(site, "pagefind-inputs").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None


class LockFolderError(RuntimeError):
    """The folder of the lock files is not this user's own (another user of
    the machine made it first, or it lets others in)."""


def lock_file(site: Path) -> Path:
    """Where runs on `site` take their turn: the same file for the same
    site path, whatever happens to the build folder."""
    folder = Path(tempfile.gettempdir()) / f"kb-pagefind-{os.getuid()}"
    with suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    info = os.lstat(folder)  # not a link, and nobody else's (a shared /tmp)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise LockFolderError(f"{folder} is not a private folder of this user")
    name = hashlib.sha256(str(site.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return folder / f"{name}.lock"


def _acquire(site: Path):
    """The lock file of `site`, opened and locked (waits for a running index)."""
    fd = os.open(lock_file(site), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    handle = os.fdopen(fd, "r+")  # held by the caller until the lock is released
    fcntl.flock(handle, fcntl.LOCK_EX)
    return handle


def _still(site: Path, folder: int) -> bool:
    """Whether `site` is still the folder open as `folder` (held open, a
    deleted folder's inode cannot be reused for a new one meanwhile)."""
    try:
        now, then = os.stat(site), os.fstat(folder)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (then.st_dev, then.st_ino)


@contextmanager
def _lock(site: Path, held: bool = False):
    if held:  # inherited from the build that started this run
        yield
        return
    with _acquire(site):
        yield


@contextmanager
def _opened(site: Path):
    """`site` open as a folder while the run goes on (None if there is none:
    Pagefind then says so)."""
    try:
        folder = os.open(site, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        yield None
        return
    try:
        yield folder
    finally:
        os.close(folder)


def wait(site: Path) -> None:
    """Return once no Pagefind run on `site` is in progress."""
    with _lock(site):
        pass


def index(site: Path, confdir: Path, held: bool = False) -> str | None:
    """Index `site`; on failure return Pagefind's output (and record it)."""
    with _lock(site, held), _opened(site) as folder:
        made_with = inputs(confdir)
        new, old = _sibling(site, "pagefind-new"), _sibling(site, "pagefind-old")
        for path in (new, old):
            shutil.rmtree(path, ignore_errors=True)
        # One fragment file per page (no --max-fragments): the search page
        # fetches a result's fragment by its id (_static/kb-search/fragment.js).
        if deep := too_deep(site):
            failure_file(site).write_text(deep, encoding="utf-8")
            return deep
        try:
            proc = subprocess.run(
                [str(command(confdir)), "--site", str(site), "--output-path", str(new), "--silent"],
                cwd=confdir,
                capture_output=True,
                text=True,
                timeout=PAGEFIND_SECONDS,
            )
        except subprocess.TimeoutExpired:
            proc = None
        if (folder is not None and not _still(site, folder)) or not _has_pages(site):
            # deleted meanwhile (rm -r _build), or being deleted: the folder
            # is there but its pages are gone
            shutil.rmtree(new, ignore_errors=True)
            return None
        if proc is None:
            output = (
                f"KB098 Pagefind did not finish within {PAGEFIND_SECONDS} s, so the search index "
                "was not built: look for pages that are very large or nest elements deeply, in "
                "their source, _templates/ or an extension"
            )
        elif proc.returncode != 0 or not (new / "pagefind-entry.json").exists():
            output = (proc.stderr or proc.stdout or f"exit status {proc.returncode}").strip()
        if proc is None or proc.returncode != 0 or not (new / "pagefind-entry.json").exists():
            shutil.rmtree(new, ignore_errors=True)
            failure_file(site).write_text(output, encoding="utf-8")
            return output
        current = site / "pagefind"
        if current.exists():
            os.rename(current, old)
        os.rename(new, current)
        shutil.rmtree(old, ignore_errors=True)
        _sibling(site, "pagefind-inputs").write_text(made_with + "\n", encoding="ascii")
        failure_file(site).unlink(missing_ok=True)
        return None


def index_in_background(site: Path, confdir: Path, log: Path) -> None:
    """Start `index(site, confdir)` in a process of its own and return.

    The lock is taken here (after waiting for a run still in progress) and
    handed to that process as its standard input: an inherited file
    descriptor keeps the lock. Whoever waits after this returns therefore
    waits for this run; nobody slips in before it starts.
    """
    with _acquire(site) as handle, open(log, "w") as out:
        subprocess.Popen(
            [sys.executable, __file__, "--locked", str(site), str(confdir)],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=handle.fileno(),
            start_new_session=True,
            cwd=confdir,
        )


def main(argv: list[str]) -> int:
    try:
        return run(argv)
    except LockFolderError as exc:
        print(f"{exc}: remove it, or set TMPDIR to a folder of your own", file=sys.stderr)
        return 2


def run(argv: list[str]) -> int:
    if argv[:1] == ["--wait"] and len(argv) == 2:
        wait(Path(argv[1]))
        return 0
    held = argv[:1] == ["--locked"]
    argv = argv[1:] if held else argv
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    failed = index(Path(argv[0]), Path(argv[1]), held)
    if failed:
        print(failed, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
