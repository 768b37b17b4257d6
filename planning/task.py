"""The grounded STRIPS task: atoms, operators, and the task itself.

These are the value types every later stage consumes (landmarks, plans, MVTR, subgoals).
They are frozen and hashable; anything whose order reaches output is kept sorted.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Atom:
    """A ground atom such as ``(holding red)``; names are lower-case.

    ``negated`` marks the complement fact ``(not (p ...))`` that grounding introduces for an
    atom used in a negative precondition or goal (Fast Downward's ``NegatedAtom``).
    """

    predicate: str
    args: tuple[str, ...] = ()
    negated: bool = False

    def __hash__(self) -> int:
        # Atoms are hashed millions of times (sets of facts, operator tables), so the hash is
        # computed once; ``__reduce__`` keeps the cached value out of pickles, whose reader
        # may hash strings differently.
        try:
            return self.__dict__["_hash"]
        except KeyError:
            value = hash((self.predicate, self.args, self.negated))
            object.__setattr__(self, "_hash", value)
            return value

    def __reduce__(self):
        return (Atom, (self.predicate, self.args, self.negated))

    def __str__(self) -> str:
        text = "(" + " ".join((self.predicate, *self.args)) + ")"
        return f"(not {text})" if self.negated else text

    def positive(self) -> Atom:
        return Atom(self.predicate, self.args) if self.negated else self

    @classmethod
    def parse(cls, text: str) -> Atom:
        """Read ``(pred a b)`` or ``pred a b`` back into an Atom."""
        body = text.strip().lower()
        if body.startswith("(not "):
            return cls.parse(body[5:-1]).negate()
        parts = body.strip("()").split()
        if not parts:
            raise ValueError(f"empty atom: {text!r}")
        return cls(parts[0], tuple(parts[1:]))

    def negate(self) -> Atom:
        return Atom(self.predicate, self.args, not self.negated)


@dataclass(frozen=True)
class Operator:
    """A ground action: ``name`` is its PDDL call, e.g. ``(pickup_key red)``."""

    name: str
    pre: frozenset[Atom]
    add: frozenset[Atom]
    delete: frozenset[Atom]
    neg_pre: frozenset[Atom] = frozenset()

    def applicable(self, state: frozenset[Atom] | set[Atom]) -> bool:
        return self.pre <= state and not (self.neg_pre & state)

    def apply(self, state: frozenset[Atom]) -> frozenset[Atom]:
        """Successor state; PDDL semantics: deletes first, then adds."""
        return (state - self.delete) | self.add

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Task:
    """A grounded STRIPS task.

    ``facts`` are the fluents (atoms some operator changes, plus those named in init,
    goal or preconditions that survive static folding). ``static_facts`` are the atoms of
    static relations (predicates with arguments that no action changes: types, adjacency),
    which grounding checked and then removed from operators, as Fast Downward's
    translator does. Nullary predicates are never folded: in an approximate model they
    are propositions the modeller named as part of the state, which the environment may
    change even where the model does not (Mario leaves ``at-upper-platform``).
    """

    name: str
    domain_name: str
    facts: tuple[Atom, ...]
    operators: tuple[Operator, ...]
    init: frozenset[Atom]
    goal: frozenset[Atom]
    static_facts: frozenset[Atom] = field(default_factory=frozenset)
    negative_goal: frozenset[Atom] = field(default_factory=frozenset)

    def goal_reached(self, state: Iterable[Atom]) -> bool:
        state = frozenset(state)
        return self.goal <= state and not (self.negative_goal & state)

    def operator(self, name: str) -> Operator:
        """Look an operator up by its call, e.g. ``(open_door)``."""
        key = name.strip().lower()
        if not key.startswith("("):
            key = f"({key})"
        for op in self.operators:
            if op.name == key:
                return op
        raise KeyError(name)

    def replay(self, plan: Sequence[Operator | str]) -> list[frozenset[Atom]]:
        """States visited by ``plan`` from init; raises ValueError at an inapplicable step."""
        state = self.init
        states = [state]
        for step, item in enumerate(plan):
            op = item if isinstance(item, Operator) else self.operator(item)
            if not op.applicable(state):
                missing = sorted(str(a) for a in op.pre - state)
                raise ValueError(f"step {step + 1} {op.name} is not applicable: needs {missing}")
            state = op.apply(state)
            states.append(state)
        return states
