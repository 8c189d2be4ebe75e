# A glossary from data/glossary.yaml and a page that links its terms
# (tests/test_reading.py: pinyin order, readable anchors, definitions on term links).
from pathlib import Path

project = "glossary"
language = "zh_CN"
extensions = ["myst_parser", "kb.pages.glossary"]
source_suffix = {".md": "markdown"}
html_theme = "furo"
kb_data_dir = str(Path(__file__).resolve().parent / "data")
