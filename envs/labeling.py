"""Labelers: the bridge F(s, f) from an environment state to the true atoms of a PDDL model.

A ``Labeler`` is declared once per domain as a table ``"(atom)" -> predicate(state)``; the
predicates read the env's hashable state (``env.unwrapped.hashable_state()``), never the
observation. Everything downstream (MVTR, subgoal rewards, learners) asks the labeler, so no
``if`` chain over atoms lives anywhere else.

Truth is *instantaneous*: ``labeler.atoms_of(state)`` are the atoms true in that state. The
official ASGRL code counts a landmark as reached once its flag was ever on in the episode
(sticky ``info`` flags such as ``visited_bottom``); ``AchievementTracker`` gives that sticky
reading on top of any labeler. Atoms the env dynamics never make false again are listed in
``Labeler.monotone`` (for them both readings agree).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Iterable, Mapping, TypeVar

from asg.planning.errors import AsgError
from asg.planning.task import Atom

S = TypeVar("S")
Predicate = Callable[[Any], bool]


class UnknownAtomError(AsgError):
    """A model names atoms that the domain's labeler cannot evaluate."""


@dataclass(frozen=True, eq=False)
class Labeler(Generic[S]):
    """F(s, f) for one domain: a fixed vocabulary of ground atoms, each with a state predicate."""

    domain: str
    table: tuple[tuple[Atom, Predicate], ...]
    monotone: frozenset[Atom] = frozenset()
    _index: dict[Atom, Predicate] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        index = dict(self.table)
        if len(index) != len(self.table):
            raise ValueError(f"labeler {self.domain}: an atom is declared twice")
        if any(atom.negated for atom in index):
            raise ValueError(f"labeler {self.domain}: declare positive atoms only")
        if not self.monotone <= index.keys():
            raise ValueError(f"labeler {self.domain}: monotone atoms must be declared atoms")
        object.__setattr__(self, "_index", index)

    @classmethod
    def from_table(cls, domain: str, table: Mapping[str, Predicate],
                   monotone: Iterable[str] = ()) -> "Labeler":
        """Build a labeler from ``{"(has-key)": lambda s: s.has_key, ...}``."""
        rows = tuple((Atom.parse(text), pred) for text, pred in table.items())
        return cls(domain, rows, frozenset(Atom.parse(text) for text in monotone))

    @property
    def atoms(self) -> frozenset[Atom]:
        """Every atom this labeler can evaluate."""
        return frozenset(self._index)

    def holds(self, atom: Atom | str, state: S) -> bool:
        """F(state, atom); a negated atom holds when its positive atom does not."""
        atom = Atom.parse(atom) if isinstance(atom, str) else atom
        value = bool(self._index[atom.positive()](state))
        return not value if atom.negated else value

    def atoms_of(self, state: S) -> frozenset[Atom]:
        """The declared atoms true in ``state`` (positive atoms only)."""
        return frozenset(atom for atom, pred in self.table if pred(state))

    def __call__(self, env: Any) -> frozenset[Atom]:
        """The atoms true in an env's current state (wrappers are looked through)."""
        return self.atoms_of(env.unwrapped.hashable_state())

    def check_vocabulary(self, atoms: Iterable[Atom], source: str = "model") -> None:
        """Raise ``UnknownAtomError`` naming the atoms of ``atoms`` this labeler does not know."""
        unknown = sorted({a.positive() for a in atoms} - self.atoms)
        if unknown:
            known = " ".join(str(a) for a in sorted(self.atoms))
            raise UnknownAtomError(
                f"{source}: the {self.domain} labeler does not know "
                f"{' '.join(str(a) for a in unknown)}; it knows {known}")


class AchievementTracker:
    """Sticky truth within one episode: the step at which each atom first held."""

    def __init__(self) -> None:
        self.first: dict[Atom, int] = {}
        self.step = -1

    def reset(self, atoms: Iterable[Atom]) -> frozenset[Atom]:
        """Start a new episode at a state where ``atoms`` hold; returns them."""
        self.first.clear()
        self.step = -1
        return self.update(atoms)

    def update(self, atoms: Iterable[Atom]) -> frozenset[Atom]:
        """Record the next state's true atoms; returns those achieved for the first time."""
        self.step += 1
        new = frozenset(a for a in atoms if a not in self.first)
        for atom in new:
            self.first[atom] = self.step
        return new

    @property
    def achieved(self) -> frozenset[Atom]:
        """Atoms that have held at some step of this episode."""
        return frozenset(self.first)
