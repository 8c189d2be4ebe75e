# Headings' anchors from their titles (kb.core.anchors; tests/test_ext_anchors.py),
# set as in the site's conf.py.
project = "anchors"
extensions = ["myst_parser", "kb.core.anchors"]
source_suffix = {".md": "markdown"}
myst_heading_anchors = 6
myst_heading_slug_func = "kb.core.anchors.heading_slug"
