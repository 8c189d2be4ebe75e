# Bad calculator directives: each one a KB08x warning at its line (tests/test_calc_directive.py).
# The settings are test-ext-calc's (read from the repository: the tests build a copy of this folder).
from pathlib import Path

import kb

_GOOD = Path(kb.__file__).resolve().parents[2] / "tests" / "roots" / "test-ext-calc" / "conf.py"
exec(compile(_GOOD.read_text(encoding="utf-8"), str(_GOOD), "exec"))
