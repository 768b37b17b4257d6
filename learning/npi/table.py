"""A program library as the arrays the search and the network index into.

Actions are the library's programs in library order (atomic first) followed by Stop, so
action ``a < n`` calls program ``a`` and action ``n`` is Stop. Tasks (what the network is
conditioned on, one embedding row each) are the non-atomic programs, in library order.

Masks follow AlphaNPI (reference_code.md §2.3): a program may call only the programs its
``calls`` list names (all of strictly lower level), only when their pre-condition holds; Stop
is always legal, and once ``max_calls`` calls are made Stop is the only legal action (the limit of
the task's level: ``SearchConfig.call_limit``, which the search and the inference pass in).
Two prunings of ours, both exact (rewards come only at Stop, γ**calls on success), a switch
(``SearchConfig.psi_prunings``, on by default, off for the paper's masks): a program whose ψ
holds may only Stop, and so a non-atomic program whose ψ already holds is not called (it would
return at once, the state unchanged, one call spent). With them on, Stop after success is decided
by the mask, not learned by the network.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from asg.learning.errors import ConfigError
from asg.planning.programs import Program, ProgramLibrary
from asg.planning.task import Atom


@dataclass(frozen=True)
class ProgramTable:
    """Index arrays of a :class:`ProgramLibrary` (build with :func:`program_table`)."""

    library: ProgramLibrary
    programs: tuple[Program, ...]
    levels: np.ndarray  # (n,) program levels
    tasks: tuple[int, ...]  # program index of each embedding row (the non-atomic programs)
    callable: np.ndarray  # (n, A) bool: callable[i, a] = program i may call action a (Stop included)
    _pre_cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_programs(self) -> int:
        return len(self.programs)

    @property
    def n_actions(self) -> int:
        return len(self.programs) + 1

    @property
    def stop(self) -> int:
        """The action index of Stop."""
        return len(self.programs)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.programs)

    def index(self, name: str) -> int:
        """The action index of program ``name`` (case-insensitive)."""
        try:
            return self.programs.index(self.library.get(name))
        except KeyError:
            raise ConfigError(f"unknown program {name!r}; e.g. {self.names[-1]}") from None

    def task_row(self, program: int) -> int:
        """The embedding row of non-atomic program ``program``."""
        try:
            return self.tasks.index(program)
        except ValueError:
            raise ConfigError(f"{self.programs[program].name} is atomic: it is not a task") from None

    def is_atomic(self, action: int) -> bool:
        """Whether ``action`` calls an atomic program (Stop is not one)."""
        return action < self.n_programs and self.programs[action].atomic

    def label(self, action: int) -> str:
        """The program name of ``action``, or STOP."""
        return "STOP" if action == self.stop else self.programs[action].name

    def preconditions(self, atoms: frozenset[Atom]) -> np.ndarray:
        """(A,) bool: φ of every program in ``atoms`` (Stop: True)."""
        return self._conditions(atoms)[0]

    def worth_calling(self, atoms: frozenset[Atom]) -> np.ndarray:
        """(A,) bool: φ holds and, for a non-atomic program, ψ does not yet (Stop: True)."""
        return self._conditions(atoms)[1]

    def _conditions(self, atoms: frozenset[Atom]) -> tuple[np.ndarray, np.ndarray]:
        hit = self._pre_cache.get(atoms)
        if hit is None:
            pre = np.array([p.pre.holds(atoms) for p in self.programs] + [True])
            done = np.array([not p.atomic and p.post.holds(atoms) for p in self.programs] + [False])
            hit = (pre, pre & ~done)
            if len(self._pre_cache) > 200_000:
                self._pre_cache.clear()
            self._pre_cache[atoms] = hit
        return hit

    def legal(self, task: int, atoms: frozenset[Atom], depth: int, max_calls: int,
              prunings: bool = True) -> np.ndarray:
        """(A,) bool: the actions program ``task`` may take after ``depth`` calls in ``atoms``, of at
        most ``max_calls`` (the limit of its level, ``SearchConfig.call_limit``).

        With ``prunings`` (ours, ``SearchConfig.psi_prunings``): once ``task``'s ψ holds, Stop is its
        only action: rewards come only at Stop, discounted by the calls made, so no call can earn
        more than stopping now (a solved node, as in MCTS-Solver); and a non-atomic callee whose ψ
        holds is not callable. Without them (the paper's masks) the network must learn when to stop.
        """
        if depth >= max_calls or (prunings and self.post_holds(task, atoms)):
            out = np.zeros(self.n_actions, dtype=bool)
            out[self.stop] = True
            return out
        return self.callable[task] & (self.worth_calling(atoms) if prunings else self.preconditions(atoms))

    def post_holds(self, program: int, atoms: frozenset[Atom]) -> bool:
        """ψ of ``program`` in ``atoms``."""
        return self.programs[program].post.holds(atoms)


def program_table(library: ProgramLibrary) -> ProgramTable:
    """The :class:`ProgramTable` of ``library``."""
    programs = tuple(library.programs)
    n = len(programs)
    position = {p.name: i for i, p in enumerate(programs)}
    allowed = np.zeros((n, n + 1), dtype=bool)
    for i, program in enumerate(programs):
        if program.atomic:
            continue
        for callee in program.calls:
            j = position[callee]
            if programs[j].level >= program.level:
                raise ConfigError(f"{program.name} calls {callee} of level {programs[j].level}")
            allowed[i, j] = True
        allowed[i, n] = True
    tasks = tuple(i for i, p in enumerate(programs) if not p.atomic)
    if not tasks:
        raise ConfigError(f"{library.path}: the library has no non-atomic program to learn")
    levels = np.array([p.level for p in programs], dtype=int)
    return ProgramTable(library, programs, levels, tasks, allowed)
