"""The symbolic models shipped with asg (ASGRL Appendix H; the Fetch program library).

``path(name)`` gives a file's location; ``names()`` lists them (via importlib.resources).
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path


def names() -> list[str]:
    """The shipped model files, sorted (e.g. ``household_v1.pddl``)."""
    return sorted(p.name for p in resources.files(__name__).iterdir() if p.name.endswith(".pddl"))


def path(name: str) -> Path:
    """Path of a shipped model; ``name`` may omit the ``.pddl`` suffix."""
    if not name.endswith(".pddl"):
        name += ".pddl"
    target = resources.files(__name__) / name
    if not target.is_file():
        raise FileNotFoundError(f"no shipped model {name!r}; have {names()}")
    return Path(str(target))
