"""Typed errors of the planning core.

Every error the CLI can meet on bad input is an ``AsgError``; its ``str`` is the one line the
CLI prints (``FILE:LINE:COL: error: message`` where a place is known).
"""
from __future__ import annotations


class AsgError(Exception):
    """Base class: bad input or a failed stage, reported as one line, exit code 2."""

    exit_code = 2


class PDDLError(AsgError):
    """A PDDL file that cannot be read, with the place when it is known."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None,
                 column: int | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        super().__init__(self.format())

    def format(self, severity: str = "error") -> str:
        place = [str(self.path)] if self.path else []
        if self.path and self.line is not None:
            place.append(str(self.line))
            place.append(str(self.column if self.column is not None else 1))
        prefix = ":".join(place) + ": " if place else ""
        return f"{prefix}{severity}: {self.message}"


class PDDLSyntaxError(PDDLError):
    """Unbalanced parentheses, unknown keywords, empty or binary files."""


class UnsupportedRequirementError(PDDLError):
    """A PDDL feature asg does not support (conditional effects, quantifiers, numeric...)."""


class ModelError(PDDLError):
    """A model that parses but is inconsistent (undeclared predicate, wrong arity, ...)."""


class PlannerError(AsgError):
    """The external planner failed or is unavailable."""
