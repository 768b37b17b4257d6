"""The planning core stays light: no numpy, torch or gymnasium behind any ``asg.planning`` module."""
from __future__ import annotations

import subprocess
import sys


def test_planning_imports_no_heavy_modules():
    code = ("import sys, pkgutil, importlib, asg.planning as p\n"
            "for m in pkgutil.walk_packages(p.__path__, 'asg.planning.'):\n"
            "    if m.name != 'asg.planning.draw': importlib.import_module(m.name)\n"
            "print(sorted(m for m in ('torch', 'gymnasium', 'numpy', 'matplotlib', 'mujoco') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_drawing_imports_matplotlib_only_when_drawing():
    code = "import sys, asg.planning.draw; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
