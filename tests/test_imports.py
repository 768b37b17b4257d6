"""The planning core stays light: no numpy, torch or gymnasium behind any ``asg.planning`` module."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path


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
                    texts = [n.value for n in ast.walk(node.exc)
                             if isinstance(n, ast.Constant) and isinstance(n.value, str)]
                    if any(flag.search(text) for text in texts):
                        found.append(f"{file.relative_to(root)}:{node.lineno}")
    assert not found, found


# -- the house rules of issue 15 -----------------------------------------------------------------
ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("planning", "envs", "learning")


def _imports(file: Path, *, local: bool):
    """(line, module, names) of each absolute import in ``file``: inside functions, or at module level."""
    import ast

    tree = ast.parse(file.read_text(encoding="utf-8"))
    inside = {id(n) for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
              for n in ast.walk(fn) if n is not fn}
    for node in ast.walk(tree):
        if (id(node) in inside) != local:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module, tuple(a.name for a in node.names)


def _library_files():
    for package in LIBRARY:
        yield from sorted((ROOT / package).rglob("*.py"))


# Function-local imports of asg's own modules that may stay, as "file: module" (one entry per import).
LOCAL_IMPORTS_ALLOWED = (
    # asg.planning's public names load on first use (PEP 562): `import asg.planning` stays cheap.
    "planning/__init__.py: asg.planning.grounding",
    "planning/__init__.py: asg.planning.parse",
    # torch: Ray rollout workers import fetch_baselines for NonAtomicTask and run without torch.
    "learning/fetch_baselines.py: asg.learning.goal_policy.trainer",
    "learning/fetch_baselines.py: asg.learning.goal_policy.trainer",
    # The CLI imports fetch_programs for its names at start-up; its stages load torch and MuJoCo.
    "learning/fetch_programs.py: asg.learning.goal_policy.carry",
    "learning/fetch_programs.py: asg.learning.goal_policy.carry",
    "learning/fetch_programs.py: asg.learning.goal_policy.config",
    "learning/fetch_programs.py: asg.learning.goal_policy.config",
    "learning/fetch_programs.py: asg.learning.goal_policy.evaluate",
    "learning/fetch_programs.py: asg.learning.goal_policy.evaluate",
    "learning/fetch_programs.py: asg.learning.goal_policy.trainer",
    "learning/fetch_programs.py: asg.learning.goal_policy.trainer",
    "learning/fetch_programs.py: asg.learning.npi",
    "learning/fetch_programs.py: asg.learning.npi.config",
    "learning/fetch_programs.py: asg.learning.npi.config",
    "learning/fetch_programs.py: asg.learning.npi.pipeline",
    "learning/fetch_programs.py: asg.learning.world_models",
    "learning/fetch_programs.py: asg.learning.world_models.behaviour_model",
    "learning/fetch_programs.py: asg.learning.world_models.behaviour_model",
    "learning/fetch_programs.py: asg.planning.programs",
    # A cycle: the trainer writes carry files at every checkpoint; carry reads the trainer's checkpoint.
    "learning/goal_policy/carry.py: asg.learning.goal_policy.trainer",
    # torch: only deep skills need it (Mario's tabular run imports no torch).
    "learning/asgrl/hierarchical.py: asg.learning.asgrl",
    # matplotlib: drawn once at the end of a run, not at import.
    "learning/run_dir.py: asg.learning.plots",
    "learning/world_models/behaviour_model.py: asg.learning.plots",
)


def test_no_new_function_local_imports_of_asg():
    """Function-local imports are for heavy optional dependencies, not asg's own modules (no cycle
    needs one): a new one must move to module level, or earn a commented entry above."""
    from collections import Counter

    found = Counter(f"{file.relative_to(ROOT).as_posix()}: {module}" for file in _library_files()
                    for _, module, _ in _imports(file, local=True) if module.split(".")[0] == "asg")
    allowed = Counter(LOCAL_IMPORTS_ALLOWED)
    assert not found - allowed, f"new function-local imports of asg modules: {sorted(found - allowed)}"
    assert not allowed - found, f"gone, remove from LOCAL_IMPORTS_ALLOWED: {sorted(allowed - found)}"


def test_envs_fetch_front_door_exports_lazily():
    """``asg.envs.fetch`` names every public name once, each resolves, and importing it loads none of them."""
    code = ("import sys, asg.envs.fetch as f\n"
            "print(sorted(m for m in sys.modules if m.startswith('asg.envs.fetch.') or m == 'mujoco'))\n"
            "print(sorted(f.__all__) == sorted(f._LAZY), len(f.__all__) == len(set(f.__all__)))\n"
            "print([n for n in f.__all__ if getattr(f, n) is None])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["[]", "True True", "[]"]


# Imports of envs/fetch's modules (not its front door) that learning code still makes, as
# "file: module" or "file: asg.envs.fetch.name" for a submodule taken through the package.
FETCH_INTERNALS_ALLOWED: frozenset[str] = frozenset()


def test_learning_reaches_envs_fetch_only_through_its_front_door():
    """learning imports names from ``asg.envs.fetch`` (its ``__all__``), never its modules."""
    import asg.envs.fetch as fetch

    found = set()
    for file in sorted((ROOT / "learning").rglob("*.py")):
        rel = file.relative_to(ROOT).as_posix()
        for local in (False, True):
            for _, module, names in _imports(file, local=local):
                if module.startswith("asg.envs.fetch."):
                    found.add(f"{rel}: {module}")
                elif module == "asg.envs.fetch":
                    found.update(f"{rel}: asg.envs.fetch.{n}" for n in names if n not in fetch.__all__)
    assert not found - FETCH_INTERNALS_ALLOWED, sorted(found - FETCH_INTERNALS_ALLOWED)
    assert not FETCH_INTERNALS_ALLOWED - found, f"gone, remove: {sorted(FETCH_INTERNALS_ALLOWED - found)}"
