"""CPU tests: no GPU needed; tests that need torch skip with a message where it is missing."""

import sys
from pathlib import Path

_PYTHON_DIR = Path(__file__).resolve().parents[2] / "python"
if str(_PYTHON_DIR) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(_PYTHON_DIR))
