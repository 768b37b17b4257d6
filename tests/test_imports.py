"""The planning core stays light: no numpy, torch or gymnasium behind ``import asg.planning``."""
from __future__ import annotations

import subprocess
import sys


def test_planning_imports_no_heavy_modules():
    code = ("import sys, asg.planning, asg.planning.landmarks, asg.planning.plan, asg.planning.peer; "
            "print(sorted(m for m in ('torch', 'gymnasium', 'numpy', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
