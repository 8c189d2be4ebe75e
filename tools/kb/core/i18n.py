"""The message catalog of the strings the kb extensions put on pages.

Every reader-visible string our extensions write goes through ``_`` (Sphinx's
documented ``sphinx.locale.get_translation``), so ``sphinx-build -b gettext``
lists them and another edition is a translation, not a code change. The
source strings are the Chinese of this edition.
"""

from __future__ import annotations

from sphinx.locale import get_translation

CATALOG = "kb"

_ = get_translation(CATALOG)
