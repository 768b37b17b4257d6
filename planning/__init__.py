"""asg.planning: PDDL in, grounded STRIPS task, landmarks and orderings, plans.

The planning core imports neither numpy, torch nor gymnasium.
"""
from __future__ import annotations

from pathlib import Path

from asg.planning.errors import AsgError, ModelError, PDDLError, PDDLSyntaxError, UnsupportedRequirementError
from asg.planning.grounding import ground
from asg.planning.parse import Model, parse_files, parse_text
from asg.planning.task import Atom, Operator, Task


def load_task(domain: str | Path, problem: str | Path | None = None, *, lenient: bool = False) -> Task:
    """Parse and ground a domain and problem (both may stand in ``domain``)."""
    return ground(parse_files(domain, problem, lenient=lenient))


def __getattr__(name: str):
    # Heavier parts load on first use, so ``import asg.planning`` stays light.
    if name == "compute_landmarks":
        from asg.planning.landmarks import compute_landmarks
        return compute_landmarks
    if name in ("LandmarkGraph", "Landmark", "Ordering"):
        from asg.planning import landmark_graph
        return getattr(landmark_graph, name)
    if name in ("find_plan", "PlanResult", "to_up"):
        from asg.planning import plan
        return getattr(plan, name)
    raise AttributeError(name)


__all__ = ["AsgError", "Atom", "Model", "ModelError", "Operator", "PDDLError", "PDDLSyntaxError", "Task",
           "UnsupportedRequirementError", "compute_landmarks", "find_plan", "ground", "load_task",
           "parse_files", "parse_text"]
