"""asg.planning: PDDL in, grounded STRIPS task, landmarks and orderings, plans.

The planning core imports neither numpy, torch nor gymnasium. Its public names load on first
use (PEP 562), so ``import asg.planning.errors`` (what every CLI module needs) stays cheap.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for readers and type checkers; at run time ``__getattr__`` loads them
    from asg.planning.errors import AsgError, ModelError, PDDLError, PDDLSyntaxError, UnsupportedRequirementError
    from asg.planning.grounding import ground
    from asg.planning.landmark_graph import Landmark, LandmarkGraph, Ordering
    from asg.planning.landmarks import compute_landmarks
    from asg.planning.parse import Model, parse_files, parse_text
    from asg.planning.plan import PlanResult, find_plan, to_up
    from asg.planning.task import Atom, Operator, Task

# public name -> the module that defines it
_LAZY = {
    **dict.fromkeys(("AsgError", "ModelError", "PDDLError", "PDDLSyntaxError", "UnsupportedRequirementError"),
                    "asg.planning.errors"),
    "ground": "asg.planning.grounding",
    **dict.fromkeys(("Model", "parse_files", "parse_text"), "asg.planning.parse"),
    **dict.fromkeys(("Atom", "Operator", "Task"), "asg.planning.task"),
    "compute_landmarks": "asg.planning.landmarks",
    **dict.fromkeys(("LandmarkGraph", "Landmark", "Ordering"), "asg.planning.landmark_graph"),
    **dict.fromkeys(("find_plan", "PlanResult", "to_up"), "asg.planning.plan"),
}


def load_task(domain: str | Path, problem: str | Path | None = None, *, lenient: bool = False) -> Task:
    """Parse and ground a domain and problem (both may stand in ``domain``)."""
    from asg.planning.grounding import ground
    from asg.planning.parse import parse_files

    return ground(parse_files(domain, problem, lenient=lenient))


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = ["AsgError", "Atom", "Landmark", "LandmarkGraph", "Model", "ModelError", "Operator", "Ordering", "PDDLError",
           "PDDLSyntaxError", "PlanResult", "Task", "UnsupportedRequirementError", "compute_landmarks", "find_plan",
           "ground", "load_task", "parse_files", "parse_text", "to_up"]
