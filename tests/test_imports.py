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


def _modules_after(args: list[str], names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` are in sys.modules after ``asg ARGS`` ran in a fresh interpreter."""
    code = ("import sys\nfrom asg.cli.main import main\n"
            f"try:\n    main({args!r})\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            f"print(sorted(m for m in {names!r} if m in sys.modules), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return eval(out.stderr.strip().splitlines()[-1])


# Issue 19: none of these load for `asg landmarks FILE --format json` (networkx and lark since the
# landmark graph and the reader stopped importing them at module level).
HEAVY = ("torch", "gymnasium", "numpy", "matplotlib", "unified_planning", "mujoco", "networkx", "lark")


def test_asg_help_imports_only_click_and_the_group():
    loaded = _modules_after(["--help"], HEAVY + ("tqdm", "asg.planning.parse", "asg.cli.planning_cmds",
                                                 "asg.cli.train_cmds", "asg.cli.env_cmds", "asg.cli.fetch_cmds"))
    assert loaded == []


def test_landmarks_json_imports_no_heavy_module(tmp_path):
    from asg import pddl_models

    loaded = _modules_after(["landmarks", str(pddl_models.path("household_v1")), "--format", "json",
                             "-o", str(tmp_path / "g.json")], HEAVY)
    assert loaded == []


def test_library_code_never_prints_exits_or_draws():
    """planning, envs and learning return results and raise typed errors; only the CLI prints."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    found = []
    for package in ("planning", "envs", "learning"):
        for file in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call):
                    func = node.func
                    name = func.id if isinstance(func, ast.Name) else (
                        f"{getattr(func.value, 'id', '?')}.{func.attr}" if isinstance(func, ast.Attribute) else "")
                    if name in ("print", "exit", "quit", "sys.exit", "os._exit", "breakpoint"):
                        found.append(f"{file.relative_to(root)}:{node.lineno}: {name}()")
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                    for mod in names:
                        if mod.split(".")[0] in ("click", "tqdm"):
                            found.append(f"{file.relative_to(root)}:{node.lineno}: import {mod}")
    assert not found, found


def test_imports_point_one_way():
    """planning <- envs <- learning <- cli: no module imports a layer above its own."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    above = {"planning": ("envs", "learning", "cli"), "envs": ("learning", "cli"), "learning": ("cli",)}
    found = []
    for package, forbidden in above.items():
        for file in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    modules = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    modules = [node.module or ""]
                else:
                    continue
                for mod in modules:
                    parts = mod.split(".")
                    if parts[0] == "asg" and len(parts) > 1 and parts[1] in forbidden:
                        found.append(f"{file.relative_to(root)}:{node.lineno}: {package} imports {mod}")
    assert not found, found


def test_library_errors_name_arguments_and_config_fields_not_cli_flags():
    """A library error is read by Python callers too: it names what they pass, not `--flags`."""
    import ast
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    flag = re.compile(r"(^|[\s(`'\"])--[a-z][a-z-]*")
    found = []
    for package in ("planning", "envs", "learning"):
        for file in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Raise) and node.exc is not None:
                    texts = [n.value for n in ast.walk(node.exc) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
                    if any(flag.search(text) for text in texts):
                        found.append(f"{file.relative_to(root)}:{node.lineno}")
    assert not found, found
