# Bad calculator directives: each one a KB08x warning at its line (tests/test_calc_directive.py).
from pathlib import Path

import kb

project = "calc"
extensions = ["myst_parser", "kb.calc.directive"]
source_suffix = {".md": "markdown"}
myst_enable_extensions = ["colon_fence"]
html_theme = "furo"
# the repository's data/gpus.yaml (tests may point it at a copy)
REPO = Path(kb.__file__).resolve().parents[2]
kb_data_dir = str(REPO / "data")
html_static_path = [str(REPO / "_static")]  # kb-calc/calc.js, formulas.js, calc.css
