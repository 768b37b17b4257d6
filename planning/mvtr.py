"""Minimally Viable Task Representation (ASGRL Sec. 4.1, Definitions 4.1-4.3), over traces.

Pure logic: the environment side (``asg.envs.mvtr_traces``) turns episodes into
``AtomTrace``s (the labeler's atoms at every step, and whether the env counts the state
as a goal state); this module checks them against a grounded ``Task``:

* Condition 1: the goal atoms hold only in goal states (and, once a goal state is met, in
  at least one of them).
* Condition 2: some goal-reaching trace instantiates a symbolic plan (Def. 4.1): for every
  ordering f_i < f_j the plan's state sequence establishes (Def. 4.2: f_j first true at
  step n, f_i true at some step m < n), the trace makes f_j true and f_i true strictly
  before f_j first holds. Plans are enumerated by breadth-first search over symbolic states
  (acyclic paths, stopped at the first goal state; the models are tiny). Orderings are over
  positive atoms; complement atoms from negative preconditions are not fluents here.
  With no goal-reaching trace at all, condition 2 is *unknown* (``Condition2.unknown``): the
  traces neither show nor refute it, and the report's exit code says so (3).
* An incompleteness report for the model's author: actions never seen to have their stated
  effects, fluents never observed, landmark orderings the env reaches differently.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from asg.planning.task import Atom, Operator, Task

Ordering = tuple[Atom, Atom]  # (f_i, f_j): f_i precedes f_j


@dataclass(frozen=True)
class AtomTrace:
    """One episode seen through a labeler: the atoms true at each step s_0..s_T."""

    source: str
    index: int
    states: tuple[frozenset[Atom], ...]
    goal: tuple[bool, ...]
    """The env's own verdict: is s_t a goal state (S_G)?"""
    env_states: tuple[Hashable, ...] = ()
    """Opaque env states, shown (``str``) when a state is reported."""

    def __post_init__(self) -> None:
        if len(self.states) != len(self.goal) or not self.states:
            raise ValueError("a trace needs one goal flag per state and at least one state")

    @property
    def name(self) -> str:
        return f"{self.source}#{self.index}"

    @property
    def reaches_goal(self) -> bool:
        return self.goal[-1]

    def first_true(self) -> dict[Atom, int]:
        """Step at which each atom first holds."""
        first: dict[Atom, int] = {}
        for step, atoms in enumerate(self.states):
            for atom in atoms:
                first.setdefault(atom, step)
        return first

    def describe(self, step: int) -> str:
        return str(self.env_states[step]) if self.env_states else f"step {step}"


def holds(atom: Atom, state: frozenset[Atom]) -> bool:
    """Truth of a possibly negated atom in a state of positive atoms."""
    return atom.positive() not in state if atom.negated else atom in state


def unmet(op: Operator, state: frozenset[Atom]) -> frozenset[Atom]:
    """The conditions of ``op``'s precondition that fail in a state of positive atoms (a labeler's):
    a negative precondition is the complement atom ``(not p)`` grounding gives it, true where p is
    false; a ``neg_pre`` atom fails where it holds."""
    return frozenset({a for a in op.pre if not holds(a, state)} | {a for a in op.neg_pre if holds(a, state)})


def first_layers(states: Sequence[frozenset[Atom]]) -> tuple[tuple[str, ...], ...]:
    """The positive atoms each state makes true for the first time, initial state first."""
    seen: set[Atom] = set()
    layers = []
    for state in states:
        new = {a for a in state if not a.negated} - seen
        if new:
            layers.append(tuple(sorted(map(str, new))))
        seen |= new
    return tuple(layers)


def established_orderings(states: Sequence[frozenset[Atom]]) -> frozenset[Ordering]:
    """Def. 4.2: f_i < f_j when f_j first holds at n > 0 and f_i holds at some m < n."""
    seen: set[Atom] = set()
    orderings: set[Ordering] = set()
    for step, state in enumerate(states):
        positive = {a for a in state if not a.negated}
        if step:
            for new in positive - seen:
                orderings.update((old, new) for old in seen)
        seen |= positive
    return frozenset(orderings)


@dataclass(frozen=True)
class SymbolicPlan:
    """A plan of the model with the orderings its state sequence establishes."""

    actions: tuple[str, ...]
    orderings: frozenset[Ordering]
    layers: tuple[tuple[str, ...], ...] = ()
    """Positive atoms first made true at each step (initial state first), empty steps left out."""

    def __str__(self) -> str:
        return " ".join(self.actions) if self.actions else "<empty plan>"


@dataclass(frozen=True)
class PlanEnumeration:
    """The plans found, and whether the search ran to the end."""

    plans: tuple[SymbolicPlan, ...]
    complete: bool
    """False when the length or path bound cut the search short."""


def enumerate_plans(task: Task, max_length: int = 12, max_paths: int = 50_000) -> PlanEnumeration:
    """Plans along acyclic symbolic paths, shortest first, one per distinct ordering set."""
    found: dict[frozenset[Ordering], SymbolicPlan] = {}
    queue: deque[tuple[tuple[frozenset[Atom], ...], tuple[Operator, ...]]] = deque([((task.init,), ())])
    complete, paths = True, 0
    while queue:
        states, ops = queue.popleft()
        if task.goal_reached(states[-1]):
            plan = SymbolicPlan(tuple(op.name for op in ops), established_orderings(states),
                                first_layers(states))
            found.setdefault(plan.orderings, plan)
            continue
        if len(ops) >= max_length:
            complete = False
            continue
        for op in task.operators:
            if not op.applicable(states[-1]):
                continue
            nxt = task.successor(states[-1], op)
            if nxt in states:
                continue
            paths += 1
            if paths > max_paths:
                return PlanEnumeration(tuple(found.values()), False)
            queue.append((states + (nxt,), ops + (op,)))
    return PlanEnumeration(tuple(found.values()), complete)


def unmet_orderings(plan: SymbolicPlan, first: dict[Atom, int]) -> list[Ordering]:
    """The plan's orderings a trace (given by its first-true steps) does not reflect."""
    unmet = []
    for before, after in plan.orderings:
        n, m = first.get(after), first.get(before)
        if n is None or m is None or m >= n:
            unmet.append((before, after))
    return sorted(unmet)


def explain_unmet(ordering: Ordering, first: dict[Atom, int]) -> str:
    """Why a trace (its first-true steps) does not reflect one ordering, in words."""
    before, after = ordering
    if after not in first:
        return f"{after} never holds"
    if before not in first:
        return f"{before} never holds (needed before {after}, first true at step {first[after]})"
    return (f"{after} first holds at step {first[after]} but {before} only from step "
            f"{first[before]}")


# ----------------------------------------------------------------------------- results
@dataclass(frozen=True)
class GoalViolation:
    """A non-goal state of the env in which the model's goal atoms hold."""

    trace: str
    step: int
    state: str
    atoms: tuple[str, ...]


@dataclass(frozen=True)
class Condition1:
    """Def. 4.3(1): the goal atoms hold only in goal states."""

    holds: bool
    states_checked: int
    violating_states: int
    violations: tuple[GoalViolation, ...]
    """Counter-examples: the first violating state for each distinct set of true atoms."""
    goal_states: int
    goal_states_without_goal_atoms: int
    reason: str = ""


@dataclass(frozen=True)
class Condition2:
    """Def. 4.3(2): a goal-reaching trace instantiates a plan; the witness, or why not."""

    holds: bool
    goal_traces: int
    plans_considered: int
    enumeration_complete: bool
    plan: str | None = None
    trace: str | None = None
    trace_length: int | None = None
    orderings: tuple[str, ...] = ()
    plan_layers: tuple[tuple[str, ...], ...] = ()
    first_steps: tuple[tuple[str, int], ...] = ()
    """Step at which each of the plan's atoms first holds in the witness trace."""
    reason: str = ""
    unknown: bool = False
    """Neither shown nor refuted: no trace reached a goal state, so none could be checked
    (``holds`` is then False too)."""

    @property
    def verdict(self) -> str:
        """``holds``, ``fails`` or ``unknown``."""
        return "holds" if self.holds else "unknown" if self.unknown else "fails"


@dataclass(frozen=True)
class OrderDifference:
    """A landmark ordering of the model and how the goal-reaching traces reach its ends."""

    source: tuple[str, ...]
    target: tuple[str, ...]
    kind: str
    respected: int
    reversed: int
    target_missing: int


@dataclass(frozen=True)
class Incompleteness:
    """What the env never showed of the model."""

    unrealised_actions: tuple[tuple[str, str], ...]
    unobserved_fluents: tuple[str, ...]
    order_differences: tuple[OrderDifference, ...]


@dataclass(frozen=True)
class MVTRReport:
    """The whole check: both conditions, the incompleteness report, and what was explored."""

    domain: str
    model: str
    traces: dict[str, int]
    condition1: Condition1
    condition2: Condition2
    incompleteness: Incompleteness
    notes: tuple[str, ...] = field(default=())

    @property
    def holds(self) -> bool:
        return self.condition1.holds and self.condition2.holds

    @property
    def verdict(self) -> str:
        """``holds`` (both conditions), ``fails`` (one fails) or ``unknown`` (condition 1 holds,
        condition 2 neither shown nor refuted)."""
        if self.holds:
            return "holds"
        return "unknown" if self.condition1.holds and self.condition2.unknown else "fails"

    @property
    def exit_code(self) -> int:
        """0 both conditions hold, 1 one fails, 3 not shown either way (``asg mvtr``'s codes)."""
        return {"holds": 0, "fails": 1, "unknown": 3}[self.verdict]

    def to_json(self) -> dict:
        data = asdict(self)
        data["holds"] = self.holds
        data["verdict"] = self.verdict
        data["condition2"]["verdict"] = self.condition2.verdict
        return data


    def to_text(self) -> str:
        """The report ``asg mvtr`` prints: the verdict, both conditions with their evidence, and what
        the env never showed of the model."""
        c1, c2, inc = self.condition1, self.condition2, self.incompleteness
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.traces.items()) if k != "goal_reaching")
        headline = {"holds": "is an MVTR", "fails": "NOT an MVTR",
                    "unknown": "not shown either way (condition 2 unknown)"}[self.verdict]
        lines = [
            f"MVTR of model {self.model} on domain {self.domain}: {headline}",
            f"traces: {kinds}; {self.traces.get('goal_reaching', 0)} reach the goal",
            *(f"  {note}" for note in self.notes),
            f"condition 1 (goal atoms only in goal states): {_verdict(c1.holds)}; "
            f"{c1.states_checked} distinct states checked"
            + (f", {c1.violating_states} of them non-goal states with the goal atoms true"
               if c1.violating_states else ""),
        ]
        if c1.reason:
            lines.append(f"  {c1.reason}")
        for v in c1.violations:
            lines.append(f"  counter-example: trace {v.trace} step {v.step}: {v.state}")
            lines.append(f"    true atoms: {' '.join(v.atoms) or '-'}")
        if c1.goal_states_without_goal_atoms and c1.holds:
            lines.append(f"  note: the goal atoms are false in {c1.goal_states_without_goal_atoms} "
                         f"of {c1.goal_states} goal state(s)")
        lines.append(f"condition 2 (a goal-reaching trace instantiates a plan): "
                     f"{'unknown' if c2.unknown else _verdict(c2.holds)}; "
                     f"{c2.plans_considered} plan(s) considered, {c2.goal_traces} goal-reaching trace(s)"
                     + ("" if c2.enumeration_complete else " (plan enumeration cut by its bound)"))
        if c2.holds:
            lines.append(f"  trace {c2.trace} ({c2.trace_length} steps) instantiates plan [{c2.plan}]")
            layers = " < ".join("{" + ", ".join(layer) + "}" for layer in c2.plan_layers)
            lines.append(f"  plan makes true, in order: {layers}")
            lines.append("  trace first makes true: "
                         + ", ".join(f"{atom}@{step}" for atom, step in c2.first_steps))
        else:
            lines.append(f"  {c2.reason}")
        lines.append("incompleteness of the model:")
        lines.append("  actions never seen to have their stated effects:"
                     + ("" if inc.unrealised_actions else " none"))
        lines.extend(f"    {name}: {why}" for name, why in inc.unrealised_actions)
        lines.append("  fluents never observed: " + (" ".join(inc.unobserved_fluents) or "none"))
        lines.append("  landmark orderings the env reaches differently:"
                     + ("" if inc.order_differences else " none"))
        for d in inc.order_differences:
            total = d.respected + d.reversed + d.target_missing
            lines.append(f"    {' '.join(d.source)} < {' '.join(d.target)} ({d.kind}): respected in "
                         f"{d.respected}, not in {d.reversed}, target never reached in "
                         f"{d.target_missing}, of {total} goal-reaching traces")
        return "\n".join(lines)


def _verdict(ok: bool) -> str:
    return "holds" if ok else "FAILS"


# ----------------------------------------------------------------------------- checks

def check_condition1(task: Task, traces: Sequence[AtomTrace], max_reported: int = 3) -> Condition1:
    """Goal atoms true only in goal states, over every state of every trace."""
    violations: dict[frozenset[Atom], GoalViolation] = {}  # the first one per set of true atoms
    seen: set[Hashable] = set()
    checked = goals = missed = violating = 0
    for trace in traces:
        for step, (atoms, is_goal) in enumerate(zip(trace.states, trace.goal)):
            key = trace.env_states[step] if trace.env_states else (trace.name, step)
            if key in seen:
                continue
            seen.add(key)
            checked += 1
            model_goal = task.goal_reached(atoms)
            goals += is_goal
            missed += is_goal and not model_goal
            if model_goal and not is_goal:
                violating += 1
                if atoms not in violations and len(violations) < max_reported:
                    violations[atoms] = GoalViolation(trace.name, step, trace.describe(step),
                                                      tuple(sorted(map(str, atoms))))
    # Def. 4.3(1) asks for a set of goal states where the goal atoms hold; read literally it
    # may be empty, which would pass a model whose goal never holds. We require it non-empty
    # once the env's goal has been seen.
    empty = goals > 0 and missed == goals
    reason = ""
    if violating:
        reason = f"the goal atoms hold in {violating} non-goal state(s)"
    elif empty:
        reason = f"the goal atoms hold in none of the {goals} goal state(s) met"
    return Condition1(not (violating or empty), checked, violating, tuple(violations.values()),
                      goals, missed, reason)


def check_condition2(task: Task, traces: Sequence[AtomTrace], max_length: int = 12,
                     max_paths: int = 50_000) -> Condition2:
    """Some goal-reaching trace instantiates some plan of the model (Def. 4.1)."""
    enum = enumerate_plans(task, max_length, max_paths)
    goal_traces = [t for t in traces if t.reaches_goal]
    common: dict[str, Any] = dict(goal_traces=len(goal_traces), plans_considered=len(enum.plans),
                  enumeration_complete=enum.complete)
    if not enum.plans:
        bound = "" if enum.complete else f" within {max_length} actions"
        return Condition2(False, reason=f"the model has no plan{bound}", **common)
    if not goal_traces:
        return Condition2(False, reason="no trace reached a goal state of the env, so none could be "
                                        "checked against the model's plans", unknown=True, **common)
    plans = sorted(enum.plans, key=lambda p: (len(p.actions), p.actions))
    best: tuple[int, SymbolicPlan, AtomTrace, list[Ordering], dict] | None = None
    for trace in goal_traces:
        first = trace.first_true()
        for plan in plans:
            unmet = unmet_orderings(plan, first)
            if not unmet:
                orderings = tuple(f"{a} < {b}" for a, b in sorted(plan.orderings))
                atoms = {a for pair in plan.orderings for a in pair}
                steps = tuple(sorted(((str(a), first[a]) for a in atoms), key=lambda x: (x[1], x[0])))
                return Condition2(True, plan=str(plan), trace=trace.name,
                                  trace_length=len(trace.states) - 1, orderings=orderings,
                                  plan_layers=plan.layers, first_steps=steps, **common)
            if best is None or len(unmet) < best[0]:
                best = (len(unmet), plan, trace, unmet, first)
    assert best is not None  # goal_traces and plans are non-empty and no pair met every ordering
    _, plan, trace, unmet, first = best
    why = "; ".join(explain_unmet(o, first) for o in unmet[:3])
    more = f" (and {len(unmet) - 3} more)" if len(unmet) > 3 else ""
    reason = (f"no goal-reaching trace instantiates a plan; closest: trace {trace.name} against "
              f"plan [{plan}]: {why}{more}")
    return Condition2(False, reason=reason, **common)


def _effect_seen(op: Operator, trace: AtomTrace) -> bool:
    start = next((i for i, s in enumerate(trace.states) if not unmet(op, s)), None)
    if start is None:
        return False
    deletes = op.delete - op.add
    return any(all(holds(a, s) for a in op.add) and not any(holds(d, s) for d in deletes)
               for s in trace.states[start + 1:])


def _why_unrealised(op: Operator, traces: Sequence[AtomTrace], observed: set[Atom]) -> str:
    pre_seen = any(not unmet(op, s) for t in traces for s in t.states)
    if not pre_seen:
        return "its precondition never held"
    missing = sorted(str(a) for a in op.add if not a.negated and a not in observed)
    if missing:
        return f"{' '.join(missing)} never held"
    together = any(all(holds(a, s) for a in op.add) for t in traces for s in t.states)
    if len(op.add) > 1 and not together:
        names = " and ".join(sorted(str(a) for a in op.add))
        return f"{names} never held together (each held on its own)"
    if not together:
        return "its effects never held after its precondition"
    return "its effects never held with its deletes false, after its precondition"


def incompleteness(task: Task, traces: Sequence[AtomTrace],
                   landmark_orderings: Iterable[tuple[frozenset[Atom], frozenset[Atom], str]] = ()
                   ) -> Incompleteness:
    """What the env never showed of the model, and landmark orders the env reaches otherwise."""
    observed = {a for t in traces for s in t.states for a in s}
    unrealised = tuple((op.name, _why_unrealised(op, traces, observed))
                       for op in sorted(task.operators, key=lambda o: o.name)
                       if not any(_effect_seen(op, t) for t in traces))
    fluents = sorted(str(f) for f in task.facts if not f.negated and f not in observed)
    goal_firsts = [_first_together(t) for t in traces if t.reaches_goal]
    differences = []
    for source, target, kind in landmark_orderings:
        respected = reversed_ = missing = 0
        for first in goal_firsts:
            s, g = first(source), first(target)
            if g is None:
                missing += 1
            elif s is not None and s < g:
                respected += 1
            else:
                reversed_ += 1
        if reversed_ or missing:
            differences.append(OrderDifference(
                tuple(sorted(map(str, source))), tuple(sorted(map(str, target))), kind,
                respected, reversed_, missing))
    return Incompleteness(unrealised, tuple(fluents), tuple(differences))


def _first_together(trace: AtomTrace):
    def first(atoms: frozenset[Atom]) -> int | None:
        return next((i for i, s in enumerate(trace.states) if atoms <= s), None)
    return first


def check_mvtr(task: Task, traces: Sequence[AtomTrace], *, domain: str = "", model: str = "",
               landmark_orderings: Iterable[tuple[frozenset[Atom], frozenset[Atom], str]] = (),
               max_plan_length: int = 12, max_paths: int = 50_000,
               notes: Sequence[str] = ()) -> MVTRReport:
    """Both MVTR conditions and the incompleteness report for ``task`` on ``traces``."""
    counts: dict[str, int] = {}
    for trace in traces:
        counts[trace.source] = counts.get(trace.source, 0) + 1
    counts["goal_reaching"] = sum(t.reaches_goal for t in traces)
    return MVTRReport(domain, model, counts, check_condition1(task, traces),
                      check_condition2(task, traces, max_plan_length, max_paths),
                      incompleteness(task, traces, landmark_orderings), tuple(notes))
