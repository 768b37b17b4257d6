"""The grounded task: atoms, operators (with costs and conditional effects), axioms, the task.

These are the value types every later stage consumes (landmarks, plans, MVTR, subgoals).
They are frozen and hashable; anything whose order reaches output is kept sorted.

A STRIPS model grounds to operators with ``pre``/``add``/``delete`` only. What Fast
Downward's translator reads beyond STRIPS keeps the same shape, as the translator leaves it:

* action costs: ``Operator.cost`` (1 for every operator of a task without ``:action-costs``,
  the ``increase (total-cost)`` amount otherwise, 0 where an action has none);
* conditional effects (``when``, ``forall`` in effects): ``Operator.conditional``, each an
  :class:`Effect` whose ``condition`` is read in the state before the step;
* derived predicates (``:derived``, and the ``new-axiom@N`` atoms that compile universal
  conditions and complex goals): ``Task.axioms``, evaluated layer by layer after every step
  (:meth:`Task.closure`); ``Task.derived`` lists the derived atoms, false unless derived.
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


@dataclass(frozen=True, order=True)
class Effect:
    """A conditional effect: if every atom of ``condition`` holds before the step, ``delete``
    then ``add`` apply (complement atoms ``(not p)`` stand for negative conditions)."""

    condition: frozenset[Atom]
    add: frozenset[Atom]
    delete: frozenset[Atom]


@dataclass(frozen=True)
class Operator:
    """A ground action: ``name`` is its PDDL call, e.g. ``(pickup_key red)``.

    ``add``/``delete`` are its unconditional effects, ``conditional`` the others; ``cost`` is
    the ``total-cost`` increase (1 in a task without action costs).
    """

    name: str
    pre: frozenset[Atom]
    add: frozenset[Atom]
    delete: frozenset[Atom]
    neg_pre: frozenset[Atom] = frozenset()
    cost: int = 1
    conditional: tuple[Effect, ...] = ()

    def applicable(self, state: frozenset[Atom] | set[Atom]) -> bool:
        return self.pre <= state and not (self.neg_pre & state)

    def apply(self, state: frozenset[Atom]) -> frozenset[Atom]:
        """Successor state; PDDL semantics: conditions read before the step, deletes first, then adds."""
        if not self.conditional:
            return (state - self.delete) | self.add
        delete, add = set(self.delete), set(self.add)
        for effect in self.conditional:
            if effect.condition <= state:
                delete |= effect.delete
                add |= effect.add
        return (state - delete) | add

    def all_add(self) -> frozenset[Atom]:
        """Atoms some effect of this operator may add (conditions ignored)."""
        if not self.conditional:
            return self.add
        return self.add.union(*(e.add for e in self.conditional))

    def all_delete(self) -> frozenset[Atom]:
        """Atoms some effect of this operator may delete (conditions ignored)."""
        if not self.conditional:
            return self.delete
        return self.delete.union(*(e.delete for e in self.conditional))

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, order=True)
class Axiom:
    """A ground derivation rule: ``head`` holds where every atom of ``body`` holds.

    Rules are evaluated layer by layer (``layer`` ascending), each to its fixpoint, so a rule
    whose body negates a derived atom runs after every rule that derives that atom.
    """

    layer: int
    head: Atom
    body: frozenset[Atom]


@dataclass(frozen=True)
class Task:
    """A grounded task: STRIPS, plus action costs, conditional effects and axioms where the
    model has them (see the module docstring).

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
    axioms: tuple[Axiom, ...] = ()
    derived: frozenset[Atom] = field(default_factory=frozenset)
    action_costs: bool = False

    @property
    def has_conditional_effects(self) -> bool:
        return any(op.conditional for op in self.operators)

    def closure(self, state: Iterable[Atom]) -> frozenset[Atom]:
        """``state`` with its derived atoms recomputed from the rest (a no-op without axioms).

        Derived atoms and their complements are first removed; each layer's rules then run
        to their fixpoint; a derived atom left underived gets its complement ``(not d)``
        where the task uses one.
        """
        state = frozenset(state)
        if not self.axioms:
            return state
        base = {a for a in state if a.positive() not in self.derived}
        rules_by_layer: dict[int, list[Axiom]] = {}
        for rule in self.axioms:
            rules_by_layer.setdefault(rule.layer, []).append(rule)
        for layer in sorted(rules_by_layer):
            rules = rules_by_layer[layer]
            changed = True
            while changed:
                changed = False
                for rule in rules:
                    if rule.head not in base and rule.body <= base:
                        base.add(rule.head)
                        changed = True
            # complements of this layer's heads are final now: later layers may read them
            for rule in rules:
                if rule.head not in base:
                    complement = rule.head.negate()
                    if complement in self._derived_complements:
                        base.add(complement)
        for atom in self._derived_complements:
            if atom.positive() not in base:
                base.add(atom)
        return frozenset(base)

    @property
    def _derived_complements(self) -> frozenset[Atom]:
        try:
            return self.__dict__["_complements"]
        except KeyError:
            facts = set(self.facts)
            value = frozenset(d.negate() for d in self.derived if d.negate() in facts)
            object.__setattr__(self, "_complements", value)
            return value

    def successor(self, state: frozenset[Atom], op: Operator) -> frozenset[Atom]:
        """The state after ``op``, derived atoms included."""
        return self.closure(op.apply(state)) if self.axioms else op.apply(state)

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

    def plan_cost(self, plan: Sequence[Operator]) -> int:
        """The summed operator costs of ``plan`` (its length in a task without action costs)."""
        return sum(op.cost for op in plan)

    def replay(self, plan: Sequence[Operator | str]) -> list[frozenset[Atom]]:
        """States visited by ``plan`` from init; raises ValueError at an inapplicable step."""
        state = self.init
        states = [state]
        for step, item in enumerate(plan):
            op = item if isinstance(item, Operator) else self.operator(item)
            if not op.applicable(state):
                missing = sorted(str(a) for a in op.pre - state)
                raise ValueError(f"step {step + 1} {op.name} is not applicable: needs {missing}")
            state = self.successor(state, op)
            states.append(state)
        return states
