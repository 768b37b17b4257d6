"""Landmark-guided program search (beyond AlphaNPI and AlphaNPI-X).

The planning core's landmark graph of a program's goal ψ says which facts every way of
reaching ψ passes through, and in which order. The search uses it to favour the calls that
reach the *next* landmark:

- ψ is a disjunction (e.g. "a tower of all four blocks in any order"); a fact landmark of the
  whole disjunction is rare, so each disjunct gets its own graph (``compute_landmarks`` of the
  task "reach this disjunct" from the search's start state). A landmark counts if it is a
  landmark of any disjunct.
- Progress follows LAMA: a landmark is *reached* once it holds after all its predecessors were
  reached; a goal landmark that no longer holds is needed again. The *next* landmarks are the
  unreached ones whose predecessors are all reached (all unreached ones if orderings block all).
- A call *may reach* a landmark when some disjunct of its ψ makes the landmark's literal true
  (an add for a positive literal, a delete for a negated one).
- ``SearchConfig.landmark``: ``prior`` mixes the priors with a uniform distribution over the
  legal calls that may reach a next landmark, P' = (1 - λ)·P + λ·U; ``bonus`` adds
  λ / (1 + n(a)) to their selection score, fading with visits.

Graphs are cached per (program, disjunct, fluent atoms of the start state).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from asg.learning.npi.table import ProgramTable
from asg.planning.landmarks import compute_landmarks
from asg.planning.programs import DONE, Formula
from asg.planning.task import Atom


@dataclass(frozen=True)
class Alternative:
    """The landmarks of one disjunct of ψ: their literals, predecessors (indices) and goal flags."""

    literals: tuple[Atom, ...]
    preds: tuple[frozenset[int], ...]
    goal: tuple[bool, ...]


@dataclass(frozen=True)
class LandmarkProgress:
    """Which landmarks of each alternative a search path has reached, and its current atoms."""

    alternatives: tuple[Alternative, ...]
    reached: tuple[frozenset[int], ...]
    atoms: frozenset[Atom]


def holds(literal: Atom, atoms: frozenset[Atom]) -> bool:
    """A positive literal is in ``atoms``; a negated one's atom is not."""
    return (literal.positive() not in atoms) if literal.negated else (literal in atoms)


class LandmarkGuide:
    """Landmark graphs of the programs of a table and the progress along search paths."""

    def __init__(self, table: ProgramTable, reasonable: bool = False) -> None:
        self.table, self.reasonable = table, reasonable
        self.library = table.library
        fluent = set(self.library.predicates)
        self._fluent = fluent
        makes = []
        for p in table.programs:
            lits = {a for c in p.post.clauses for a in c.pos} | {a.negate() for c in p.post.clauses for a in c.neg}
            makes.append(frozenset(lits))
        self._makes = makes + [frozenset()]  # Stop reaches nothing
        self._cache: dict[tuple, tuple[Alternative, ...]] = {}
        self._pseudo: dict[tuple[str, int], tuple] = {}

    def alternatives(self, program: str, atoms: frozenset[Atom]) -> tuple[Alternative, ...]:
        """The landmarks of every disjunct of ``program``'s ψ from ``atoms`` (cached)."""
        start = frozenset(a for a in atoms if a.predicate in self._fluent and not a.negated)
        key = (program, start)
        if key not in self._cache:
            post = self.library.get(program).post
            alts = (self._alternative(program, k, start) for k in range(len(post.clauses)))
            self._cache[key] = tuple(a for a in alts if a is not None)
        return self._cache[key]

    def _alternative(self, program: str, k: int, start: frozenset[Atom]) -> Alternative | None:
        if (program, k) not in self._pseudo:
            base = self.library.get(program)
            pseudo = replace(base, name=f"{base.name}__disjunct{k}", post=Formula((base.post.clauses[k],)))
            self._pseudo[(program, k)] = (pseudo.name, replace(self.library, programs=(pseudo,), _cache={}))
        name, library = self._pseudo[(program, k)]
        clause = self.library.get(program).post.clauses[k]
        wanted = clause.pos | {a.negate() for a in clause.neg}  # the disjunct's own literals are goals
        graph = compute_landmarks(library.program_task(name, start), reasonable=self.reasonable)
        if not graph.relaxed_solvable:
            return None
        kept = [lm for lm in graph.landmarks if lm.kind == "fact" and lm.atom != DONE]
        index = {lm.id: i for i, lm in enumerate(kept)}
        preds: list[set[int]] = [set() for _ in kept]
        for o in list(graph.orderings) + list(graph.reasonable):
            if o.source in index and o.target in index:
                preds[index[o.target]].add(index[o.source])
        return Alternative(tuple(lm.atom for lm in kept), tuple(frozenset(p) for p in preds),
                           tuple(lm.goal or lm.atom in wanted for lm in kept))

    def start(self, program: str, atoms: frozenset[Atom]) -> LandmarkProgress:
        """Progress at the start of a search: the landmarks true now are reached."""
        alts = self.alternatives(program, atoms)
        reached = tuple(frozenset(i for i, lit in enumerate(a.literals) if holds(lit, atoms)) for a in alts)
        return LandmarkProgress(alts, reached, atoms)

    def advance(self, progress: LandmarkProgress, atoms: frozenset[Atom]) -> LandmarkProgress:
        """Progress after moving to a state with ``atoms``."""
        reached = []
        for alt, done in zip(progress.alternatives, progress.reached):
            done = set(done)
            grew = True
            while grew:
                new = {i for i, lit in enumerate(alt.literals)
                       if i not in done and alt.preds[i] <= done and holds(lit, atoms)}
                done |= new
                grew = bool(new)
            reached.append(frozenset(done))
        return LandmarkProgress(progress.alternatives, tuple(reached), atoms)

    def next_literals(self, progress: LandmarkProgress) -> frozenset[Atom]:
        """The literals of the next landmarks over all alternatives."""
        out: set[Atom] = set()
        for alt, done in zip(progress.alternatives, progress.reached):
            todo = [i for i, lit in enumerate(alt.literals)
                    if i not in done or (alt.goal[i] and not holds(lit, progress.atoms))]
            ready = [i for i in todo if alt.preds[i] <= done] or todo
            out.update(alt.literals[i] for i in ready)
        return frozenset(out)

    def achievers(self, progress: LandmarkProgress | None, legal: np.ndarray) -> np.ndarray:
        """(A,) bool: legal calls whose ψ may make a next landmark true."""
        out = np.zeros(len(legal), dtype=bool)
        if progress is None:
            return out
        wanted = self.next_literals(progress)
        if wanted:
            for a in np.flatnonzero(legal):
                out[a] = bool(self._makes[a] & wanted)
        return out
