"""Labelers: the bridge F(s, f) from an environment state to the true atoms of a PDDL model.

A ``Labeler`` is declared once per domain as a table ``"(atom)" -> predicate``. What a
predicate receives is the labeler's ``reads``: ``"state"`` (asg's own worlds) passes the env's
hashable state (``env.unwrapped.hashable_state()``); ``"env"`` (plug-in worlds, see
``asg.envs.plugins``) passes the unwrapped env itself, so a labeler of a Minigrid env reads
``env.carrying`` or ``env.grid``. Never the observation. Everything downstream (MVTR, subgoal
rewards, learners) asks the labeler, so no ``if`` chain over atoms lives anywhere else.
``LabelTable`` builds a labeler atom by atom with a decorator.

Truth is *instantaneous*: ``labeler.atoms_of(state)`` are the atoms true in that state. The
official ASGRL code counts a landmark as reached once its flag was ever on in the episode
(sticky ``info`` flags such as ``visited_bottom``); ``AchievementTracker`` gives that sticky
reading on top of any labeler. Atoms the env dynamics never make false again are listed in
``Labeler.monotone`` (for them both readings agree).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from asg.envs.user_code import UserCodeError
from asg.planning.errors import AsgError
from asg.planning.task import Atom

S = TypeVar("S")
Predicate = Callable[[Any], bool]


READS = ("state", "env")


class UnknownAtomError(AsgError):
    """A model names atoms that the domain's labeler cannot evaluate."""


class LabelerEvaluationError(UserCodeError):
    """A predicate of a plug-in labeler raised; names the atom and the exception (``call``: ``labeler
    atom (door-open)``, ``error``: the exception)."""


@dataclass(frozen=True, eq=False)
class Labeler(Generic[S]):
    """F(s, f) for one domain: a fixed vocabulary of ground atoms, each with a state predicate."""

    domain: str
    table: tuple[tuple[Atom, Predicate], ...]
    monotone: frozenset[Atom] = frozenset()
    reads: str = "state"
    """What a predicate receives: ``"state"``, ``env.unwrapped.hashable_state()``; ``"env"``, ``env.unwrapped``."""
    _index: dict[Atom, Predicate] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        index = dict(self.table)
        if len(index) != len(self.table):
            raise ValueError(f"labeler {self.domain}: an atom is declared twice")
        if any(atom.negated for atom in index):
            raise ValueError(f"labeler {self.domain}: declare positive atoms only")
        if not self.monotone <= index.keys():
            raise ValueError(f"labeler {self.domain}: monotone atoms must be declared atoms")
        if self.reads not in READS:
            raise ValueError(f"labeler {self.domain}: reads must be one of {', '.join(READS)}")
        object.__setattr__(self, "_index", index)

    @classmethod
    def from_table(cls, domain: str, table: Mapping[str, Predicate],
                   monotone: Iterable[str] = (), reads: str = "state") -> Labeler:
        """Build a labeler from ``{"(has-key)": lambda s: s.has_key, ...}``."""
        rows = tuple((Atom.parse(text), pred) for text, pred in table.items())
        return cls(domain, rows, frozenset(Atom.parse(text) for text in monotone), reads)

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
        if self.reads == "env":
            return self._atoms_of_env(env.unwrapped)
        return self.atoms_of(env.unwrapped.hashable_state())

    def _atoms_of_env(self, base: Any) -> frozenset[Atom]:
        # A plug-in's predicates are user code: a failure names the atom, not a traceback.
        atom: Atom | None = None
        true: list[Atom] = []
        try:
            for atom, pred in self.table:
                if pred(base):
                    true.append(atom)
        except Exception as exc:
            raise LabelerEvaluationError(f"labeler {self.domain}: {atom} raised {type(exc).__name__}: {exc}",
                                         call=f"labeler atom {atom}", error=exc) from exc
        return frozenset(true)

    def check_vocabulary(self, atoms: Iterable[Atom], source: str = "model") -> None:
        """Raise ``UnknownAtomError`` naming the atoms of ``atoms`` this labeler does not know."""
        unknown = sorted({a.positive() for a in atoms} - self.atoms)
        if unknown:
            known = " ".join(str(a) for a in sorted(self.atoms))
            raise UnknownAtomError(
                f"{source}: the {self.domain} labeler does not know "
                f"{' '.join(str(a) for a in unknown)}; it knows {known}")


class LabelTable:
    """A labeler declared atom by atom with a decorator; ``labeler()`` freezes it.

    ::

        DOORKEY = LabelTable("doorkey")

        @DOORKEY.atom("(has-key)")
        def has_key(env):
            return env.carrying is not None and env.carrying.type == "key"

    Predicates receive the unwrapped env (``reads="env"``) unless told otherwise.
    """

    def __init__(self, domain: str, reads: str = "env") -> None:
        self.domain = domain
        self.reads = reads
        self.rows: dict[str, Predicate] = {}
        self.monotone: list[str] = []

    def atom(self, text: str, *, monotone: bool = False) -> Callable[[Predicate], Predicate]:
        """Decorator: ``pred`` decides ground atom ``text`` (e.g. ``"(has-key)"``)."""
        def add(pred: Predicate) -> Predicate:
            if text in self.rows:
                raise ValueError(f"labeler {self.domain}: {text} is declared twice")
            self.rows[text] = pred
            if monotone:
                self.monotone.append(text)
            return pred
        return add

    def labeler(self) -> Labeler:
        """The frozen ``Labeler`` of the atoms declared so far."""
        return Labeler.from_table(self.domain, self.rows, self.monotone, reads=self.reads)


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
