"""Work around sphinx-doc/sphinx#14229: Chinese search never answers.

Sphinx 9.0.x writes ``window.Stemmer = ChineseStemmer;`` into
``_static/language_data.js`` for ``language = "zh_CN"``, but the stemmer code
it ships for Chinese is the English one, which defines ``EnglishStemmer``.
The search page then throws ``ChineseStemmer is not defined`` and stays at
"Searching…". Fixed upstream in Sphinx 9.1.1 (needs Python ≥ 3.12).

The fix is self-disabling: it only rewrites the last line when the generated
stemmer code assigns a class that the code does not define, and the class
named by the stemmer file does exist. Once Sphinx is fixed the code is
consistent and nothing is changed. No configuration; nothing to write in pages.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from sphinx.search import IndexBuilder

_ASSIGN = re.compile(r"window\.Stemmer = (\w+);\s*$")


def repair_stemmer_code(code: str, rawcode: str | None) -> str:
    """Return ``code`` with a dangling ``window.Stemmer`` assignment repaired."""
    match = _ASSIGN.search(code)
    if not match or not rawcode:
        return code
    assigned = match.group(1)
    defined = set(re.findall(r"\b(\w+Stemmer)\s*=", code)) | set(
        re.findall(r"class\s+(\w+Stemmer)\b", code))
    if assigned in defined:
        return code
    # 'english-stemmer.js' -> 'EnglishStemmer'
    actual = rawcode.split("-")[0].capitalize() + "Stemmer"
    if actual not in defined:
        return code
    return code[: match.start()] + f"window.Stemmer = {actual};\n"


_original = IndexBuilder.get_js_stemmer_code


def _patched(self: IndexBuilder) -> str:
    return repair_stemmer_code(_original(self), getattr(self.lang, "js_stemmer_rawcode", None))


def setup(app) -> dict[str, Any]:
    # jieba (the zh splitter) logs its dictionary loading at DEBUG to stderr.
    import jieba

    jieba.setLogLevel(logging.WARNING)
    if IndexBuilder.get_js_stemmer_code is not _patched:
        IndexBuilder.get_js_stemmer_code = _patched
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
