"""What a landmark factory hands to the graph builder: landmarks and orderings, by position."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from asg.planning.task import Atom

if TYPE_CHECKING:
    from asg.planning.landmarks.binary import BinaryTask


@dataclass(frozen=True)
class RawLandmark:
    """A landmark before ids are given: its atoms, kind and flags."""

    atoms: frozenset[Atom]
    kind: str  # "fact" | "conjunctive" | "disjunctive"
    initially_true: bool
    goal: bool


@dataclass(frozen=True)
class FactoryResult:
    """Landmarks and sound orderings ``(i, j) -> kind`` between positions in ``landmarks``."""

    landmarks: tuple[RawLandmark, ...]
    edges: dict[tuple[int, int], str] = field(default_factory=dict)
    relaxed_solvable: bool = True

    @classmethod
    def of(cls, binary: BinaryTask, nodes: Iterable[tuple[frozenset[int], bool]], goal: set[int],
           init: set[int], edges: dict[tuple[int, int], str], relaxed_solvable: bool = True) -> FactoryResult:
        """From fact-id nodes ``(facts, disjunctive)`` of a :class:`BinaryTask`."""
        landmarks = []
        for facts, disjunctive in nodes:
            atoms = frozenset(binary.atom(f) for f in facts)
            if disjunctive:
                landmarks.append(RawLandmark(atoms, "disjunctive", bool(facts & init), False))
            else:
                landmarks.append(RawLandmark(atoms, "fact", facts <= init, facts <= goal))
        return cls(tuple(landmarks), dict(edges), relaxed_solvable)
