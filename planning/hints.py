"""Repair hints: what a model is missing, read from the traces ``asg mvtr`` collects (issue 39).

Pure logic over ``AtomTrace``s labelled with the labeler's *whole* vocabulary (atoms outside
the model included) and the model's grounded ``Task``. For every model atom ``Y`` that the
goal-reaching traces make true, the step ``n`` where it first holds is one use of an action of
the model that adds ``Y``: the *identified* action is the achiever whose model precondition holds
at ``n - 1`` (the one with the fewest false preconditions when none does). Five kinds of hint:

* ``missing-precondition``: an atom ``X`` that became true during the trace before ``Y`` and
  still holds at ``n - 1``, in every goal-reaching trace, is not a precondition of the identified
  action (nor a landmark the model orders before ``Y``): add it;
* ``missing-landmark``: the same, but ``X`` no longer holds at ``n - 1``: the model lacks a
  landmark ordered before ``Y`` (the edit is the same precondition, which orders ``X`` first);
* ``missing-undo``: an atom ``X`` that holds from the start and at ``n - 1`` in every
  goal-reaching trace, which the env took away and gave back before ``n`` in enough of them. The
  model lacks the undo and the redo (one object in the hand: the key goes down before the ball
  comes up). Edits: ``X`` in the initial state and in the identified action's precondition, its
  delete on every model action that takes it away each time it runs, and an achiever that makes
  it true again (read from the steps where it comes back). A first-true reading cannot see this,
  since ``X`` first holds at step 0;
* ``wrong-effect``: a model atom the env turns false at ``n`` in every goal-reaching trace
  while the identified action keeps it (add the delete) or even adds it (remove the effect);
* ``unreachable-as-modelled``: a landmark of the model that the goal-reaching traces reach while
  no achiever's precondition holds: they reach it through atoms the model does not mention.

Only the earliest ``Y`` is kept for each ``X`` (``X`` before ``door-open`` also puts it before
everything after). Evidence is counted in traces: ``support`` goal-reaching traces show the hint
and none contradicts it; a hint is never asserted from fewer than
``HintConfig.min_goal_traces``. ``confidence`` is Laplace's rule of succession over every trace
(goal-reaching or not) where the situation occurs: ``(agree + 1) / (occurrences + 2)``. Hints
rank by support, then kind (in ``KINDS`` order: those that change the landmarks first), then
confidence, then the edit text, so ties are deterministic.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields

import networkx as nx

from asg.planning.errors import AsgError
from asg.planning.landmark_graph import LandmarkGraph
from asg.planning.mvtr import AtomTrace, unmet
from asg.planning.task import Atom, Operator, Task

KINDS = ("unreachable-as-modelled", "missing-precondition", "missing-landmark", "missing-undo", "wrong-effect")


class NoGoalTraceError(AsgError):
    """No trace reached a goal state, so no hint can be asserted."""


@dataclass(frozen=True)
class HintConfig:
    """How much evidence a hint needs, and how many are reported."""

    min_goal_traces: int = 3
    """A hint is never asserted from fewer goal-reaching traces: each needs this many showing it
    (and none against it). With fewer goal-reaching traces in all, the report says so instead."""
    max_hints: int = 10
    """Hints kept after ranking."""
    max_examples: int = 3
    """(trace, step) pairs quoted as evidence per hint."""

    def __post_init__(self) -> None:
        if self.min_goal_traces < 1 or self.max_hints < 1 or self.max_examples < 0:
            raise ValueError("min_goal_traces and max_hints must be >= 1, max_examples >= 0")


@dataclass(frozen=True, order=True)
class Edit:
    """One change to the PDDL domain, on an action schema (all its groundings)."""

    op: str
    """``add-precondition``, ``remove-precondition``, ``add-delete``, ``remove-effect``,
    ``declare`` (a predicate), ``add-init`` (an atom of the problem's initial state) or
    ``add-action`` (a parameterless achiever of ``atom``)."""
    action: str
    atom: str
    precondition: tuple[str, ...] = ()
    """For ``add-action``: its precondition atoms."""
    also: tuple[str, ...] = ()
    """For ``add-action``: effects besides ``atom`` (atoms every goal-reaching trace makes true in
    the same step)."""
    removes: tuple[str, ...] = ()
    """For ``add-action``: delete effects (atoms every trace turns false in the step ``atom`` comes back)."""

    def __str__(self) -> str:
        if self.op == "add-precondition":
            return f"add {self.atom} to the precondition of {self.action}"
        if self.op == "remove-precondition":
            return f"remove {self.atom} from the precondition of {self.action}"
        if self.op == "add-delete":
            return f"add (not {self.atom}) to the effect of {self.action}"
        if self.op == "remove-effect":
            return f"remove {self.atom} from the effect of {self.action}"
        if self.op == "declare":
            return f"declare {self.atom} in :predicates"
        if self.op == "add-init":
            return f"add {self.atom} to the problem's :init"
        pre = " ".join(self.precondition)
        eff = " ".join((self.atom, *self.also, *(f"(not {r})" for r in self.removes)))
        return (f"add (:action {self.action} :parameters () :precondition (and {pre}) "
                f":effect (and {eff}))")


@dataclass(frozen=True)
class Hint:
    """A proposed edit with its evidence."""

    kind: str
    edits: tuple[Edit, ...]
    atoms: tuple[str, ...]
    """The atoms the hint is about (what it tells the user the model is missing)."""
    reason: str
    support: int
    """Goal-reaching traces that show it (none contradicts it)."""
    goal_traces: int
    confidence: float
    agree: int
    occurrences: int
    """Traces of any kind where the situation occurs, and those agreeing with the hint."""
    examples: tuple[tuple[str, int], ...]
    """(trace, step): where a goal-reaching trace shows it."""
    evidence: str = ""
    """The evidence in words where it is not counted in traces (hints from a learner's skills,
    ``asg.planning.segment_hints``); empty: the traces' counts."""

    def rank_key(self) -> tuple:
        return (-self.support, KINDS.index(self.kind), -self.confidence, tuple(map(str, self.edits)))

    def lines(self) -> list[str]:
        where = ", ".join(f"{t}@{s}" for t, s in self.examples)
        main = next(e for e in self.edits if e.op not in ("declare", "add-action", "add-init"))  # what the hint is for
        evidence = self.evidence or (f"{self.support} of {self.goal_traces} goal-reaching traces ({where}); "
                                     f"{self.agree} of {self.occurrences} traces agree")
        return [f"[{self.kind}] {main}",
                *(f"    and {e}" for e in self.edits if e is not main),
                f"    why: {self.reason}",
                f"    evidence: {evidence}; confidence {self.confidence:.2f}"]

    @classmethod
    def from_json(cls, data: dict) -> Hint:
        """Rebuild from an entry of ``HintReport.to_json()["hints"]``."""
        edits = tuple(Edit(str(e["op"]), str(e["action"]), str(e["atom"]), tuple(e.get("precondition", ())),
                           tuple(e.get("also", ())), tuple(e.get("removes", ()))) for e in data["edit_ops"])
        kept = {k: v for k, v in data.items() if k not in ("edits", "edit_ops")}
        return cls(**{**kept, "edits": edits, "atoms": tuple(data["atoms"]),
                      "examples": tuple(tuple(e) for e in data["examples"])})


@dataclass(frozen=True)
class HintReport:
    """Ranked hints, or why there are none."""

    status: str
    """``ok`` or ``too-few-traces``."""
    goal_traces: int
    min_goal_traces: int
    hints: tuple[Hint, ...] = ()
    more_episodes: int | None = None
    """With too few goal-reaching traces: about how many more random episodes to run (None: the
    random episodes gave no rate to estimate it from); for hints from skills, about how many more
    training episodes the next hint needs."""
    message: str = ""
    title: str = "repair hints"
    basis: str = ""
    """What the hints were read from and what each needs, in words (empty: the goal-reaching traces)."""
    notes: tuple[str, ...] = ()
    """Lines printed after the hints: what was seen but not asserted, and why."""

    def to_json(self) -> dict:
        data = asdict(self)
        for hint, raw in zip(self.hints, data["hints"]):
            raw["edits"] = [str(e) for e in hint.edits]
            raw["edit_ops"] = [asdict(e) for e in hint.edits]
        return data

    @classmethod
    def from_json(cls, data: dict) -> HintReport:
        """Rebuild from :meth:`to_json` output (``KeyError`` / ``TypeError`` when it is not one)."""
        names = {f.name for f in fields(cls)}
        kept = {k: v for k, v in data.items() if k in names}
        return cls(**{**kept, "hints": tuple(Hint.from_json(h) for h in data["hints"]),
                      "notes": tuple(data.get("notes", ()))})

    def lines(self, top: int | None = None, brief: bool = False) -> list[str]:
        """The report for a terminal; ``top``: only the first hints (and notes); ``brief``: each hint's
        main edit only."""
        notes = [f"  {note}" for note in self.notes[:top]]
        if self.status != "ok":
            return [f"{self.title}: {self.message}", *notes]
        basis = self.basis or (f"from {self.goal_traces} goal-reaching traces; each needs at least "
                               f"{self.min_goal_traces}")
        head = f"{self.title} ({len(self.hints)}, {basis}):"
        if not self.hints:
            why = self.message or "every goal-reaching trace agrees with the model"
            return [head.rstrip(":") + f": none ({why})", *notes]
        shown = self.hints[:top]
        more = [f"  ... {len(self.hints) - len(shown)} more"] if len(shown) < len(self.hints) else []
        return [head, *(f"  {k}. {line}" if i == 0 else f"     {line}" for k, hint in enumerate(shown, 1)
                        for i, line in enumerate(hint.lines()[:1 if brief else None])), *more, *notes]


# ----------------------------------------------------------------------------- evidence
def schema(op: Operator) -> str:
    """The action schema of a ground operator: ``(pickup_key red)`` -> ``pickup_key``."""
    return op.name.strip("()").split()[0]


def _laplace(agree: int, occurrences: int) -> float:
    return round((agree + 1) / (occurrences + 2), 3)


@dataclass(frozen=True)
class _Use:
    """Where a goal-reaching trace first makes a model atom true, and which action did it."""

    trace: AtomTrace
    step: int
    op: Operator
    identified: bool
    """The action's model precondition held at ``step - 1``."""


def _achiever(task: Task, atom: Atom, state: frozenset[Atom], after: frozenset[Atom]) -> tuple[Operator, bool] | None:
    """The model action that explains ``atom`` becoming true from ``state`` to ``after``."""
    ops = [op for op in task.operators if atom in op.add]
    if not ops:
        return None
    def key(op: Operator) -> tuple:
        return (len(unmet(op, state)), -len(op.add & after), op.name)
    best = min(ops, key=key)
    return best, not unmet(best, state)


def _uses(task: Task, traces: Sequence[AtomTrace]) -> dict[Atom, list[_Use]]:
    """Per model atom not true initially: its first achievement in each trace that reaches it."""
    uses: dict[Atom, list[_Use]] = {}
    facts = sorted({a.positive() for a in task.facts} - set(task.init))
    for trace in traces:
        first = trace.first_true()
        for atom in facts:
            n = first.get(atom)
            if not n:
                continue
            found = _achiever(task, atom, trace.states[n - 1], trace.states[n])
            if found is not None:
                uses.setdefault(atom, []).append(_Use(trace, n, *found))
    return uses


def _ordered_before(graph: LandmarkGraph) -> dict[Atom, set[Atom]]:
    """Model atom -> the landmark atoms the model's landmark graph orders before it."""
    full = graph.graph
    before: dict[Atom, set[Atom]] = {}
    for lm in graph.landmarks:
        ancestors = nx.ancestors(full, lm.id)
        atoms = {a for i in ancestors for a in graph.by_id(i).atoms}
        for atom in lm.atoms:
            before.setdefault(atom, set()).update(atoms)
    return before


def suggest(task: Task, traces: Sequence[AtomTrace], graph: LandmarkGraph,
            config: HintConfig = HintConfig()) -> HintReport:
    """Ranked repair hints for ``task`` from ``traces`` (labelled with the labeler's whole
    vocabulary); ``graph``: the model's landmarks. Raises ``NoGoalTraceError`` when no trace
    reaches a goal state."""
    goal = [t for t in traces if t.reaches_goal]
    if not goal:
        raise NoGoalTraceError(f"no goal-reaching trace among {len(traces)}: no repair hint can be "
                               "asserted; explore more or longer episodes")
    if len(goal) < config.min_goal_traces:
        more = _more_episodes(traces, config.min_goal_traces - len(goal))
        random = [t for t in traces if t.source == "random"]
        if more is None:
            how = "run random episodes (none were run)"
        elif any(t.reaches_goal for t in random):
            how = f"run about {more} more random episodes"
        else:
            how = (f"run at least {more} more random episodes (none of {len(random)} reached the goal; "
                   f"that many at the rate's 95% bound, 3 in {len(random)})")
        return HintReport("too-few-traces", len(goal), config.min_goal_traces, more_episodes=more,
                          message=f"{len(goal)} goal-reaching trace(s), fewer than the {config.min_goal_traces} "
                                  f"a hint needs: no hint asserted; {how}")
    all_uses = _uses(task, traces)
    before = _ordered_before(graph)
    hints = [*_precondition_hints(task, goal, traces, all_uses, before, config),
             *_undo_hints(task, goal, traces, all_uses, before, config),
             *_effect_hints(task, goal, all_uses, config),
             *_unreachable_hints(task, goal, traces, all_uses, graph, config)]
    hints.sort(key=Hint.rank_key)
    kept = [h for h in hints if not any(_subsumes(other, h) for other in hints)]
    return HintReport("ok", len(goal), config.min_goal_traces, tuple(kept[:config.max_hints]))


def _subsumes(big: Hint, small: Hint) -> bool:
    """``big`` makes every edit of ``small`` and more (a precondition hint inside an unreachable one)."""
    return big is not small and set(small.edits) < set(big.edits)


def _more_episodes(traces: Sequence[AtomTrace], missing: int) -> int | None:
    """Random episodes expected to add ``missing`` goal-reaching traces, from the random ones' rate
    (none reaching the goal: the rule of three's bound on the rate, 3 / episodes)."""
    random = [t for t in traces if t.source == "random"]
    if not random:
        return None
    rate = sum(t.reaches_goal for t in random) / len(random) or 3 / len(random)
    return math.ceil(missing / rate)


def _goal_uses(uses: list[_Use], goal: Sequence[AtomTrace]) -> list[_Use]:
    names = {t.name for t in goal}
    return [u for u in uses if u.trace.name in names]


def _every_goal_use(uses: list[_Use], goal: Sequence[AtomTrace], config: HintConfig) -> list[_Use] | None:
    """The goal-reaching traces' uses of a model atom, when every goal-reaching trace makes it true
    and they are enough for a hint (else None)."""
    g_uses = _goal_uses(uses, goal)
    return g_uses if len(g_uses) >= config.min_goal_traces and len(g_uses) >= len(goal) else None


def _known(g_uses: list[_Use], y: Atom, before: dict[Atom, set[Atom]]) -> set[Atom]:
    """What the model already says before ``y``: its achievers' preconditions and effects, and the
    landmarks it orders before any of them."""
    known = set.union(*(set(u.op.pre) | set(u.op.add) for u in g_uses))
    return known | {b for a in known | {y} for b in before.get(a, set())}


def _precondition_hints(task: Task, goal: Sequence[AtomTrace], traces: Sequence[AtomTrace],
                        all_uses: dict[Atom, list[_Use]], before: dict[Atom, set[Atom]],
                        config: HintConfig) -> list[Hint]:
    vocabulary = {a.positive() for a in task.facts}
    achieved = {a for op in task.operators for a in op.add}
    # (X, Y) -> holds at n - 1 in every goal-reaching trace?
    candidates: dict[Atom, list[tuple[Atom, list[_Use], bool]]] = {}
    for y, uses in sorted(all_uses.items()):
        g_uses = _every_goal_use(uses, goal, config)
        if g_uses is None:
            continue
        firsts = [u.trace.first_true() for u in g_uses]
        common = set.intersection(*({x for x, m in f.items() if 0 < m < u.step} for f, u in zip(firsts, g_uses)))
        known = _known(g_uses, y, before)
        xs = sorted(common - known - {y})
        held = {x: all(x in u.trace.states[u.step - 1] for u in g_uses) for x in xs}
        for x in xs:
            if any(_narrower(other, x, goal, traces) for other in xs if other != x and held[other] >= held[x]):
                continue  # a more specific atom that comes true with it (and holds as long) is the better one
            candidates.setdefault(x, []).append((y, g_uses, held[x]))
    hints = []
    for x, options in sorted(candidates.items()):
        for y, g_uses, holds in _earliest(options):
            op = g_uses[0].op
            all_y = all_uses[y]
            agree = sum(_shows(x, u, holds) for u in all_y)
            edits = _requirement(x, schema(op), goal, traces, vocabulary, achieved)
            # x lasts as p does
            weaker = sorted(p for p in op.pre if holds and not p.negated and _narrower(x, p, goal, traces))
            edits += [Edit("remove-precondition", schema(op), str(p)) for p in weaker]
            kind = "missing-precondition" if holds else "missing-landmark"
            where = "and still holds when" if holds else "(no longer true when"
            closing = "" if holds else ")"
            reason = (f"{x} first holds before {y} in every goal-reaching trace {where} "
                      f"{schema(op)} makes {y} true{closing}"
                      + ("; the model does not mention it" if x not in vocabulary else "")
                      + (f"; it replaces {' '.join(map(str, weaker))}, which comes true with it and holds "
                         "wherever it does" if weaker else ""))
            hints.append(Hint(kind, tuple(edits), (str(x),), reason, len(g_uses), len(goal),
                              _laplace(agree, len(all_y)), agree, len(all_y),
                              _examples(g_uses, config)))
    return hints


def _narrower(a: Atom, b: Atom, goal: Sequence[AtomTrace], traces: Sequence[AtomTrace]) -> bool:
    """``a`` says more than ``b``, which comes true with it: both first hold at the same step of every
    goal-reaching trace, ``b`` holds in every observed state where ``a`` does, and not the other way
    round (``(holding red)`` and ``(has-key)``: a learner given both as subgoals can reach neither
    first, and the first is what the goal needs)."""
    if not all((f := t.first_true()).get(a) is not None and f.get(a) == f.get(b) for t in goal):
        return False
    def implies(p: Atom, q: Atom) -> bool:
        states = [s for t in traces for s in t.states if p in s]
        return bool(states) and all(q in s for s in states)
    return implies(a, b) and not implies(b, a)


def _requirement(x: Atom, action: str, goal: Sequence[AtomTrace], traces: Sequence[AtomTrace],
                 vocabulary: set[Atom], achieved: set[Atom], declared: Sequence[Atom] = ()) -> list[Edit]:
    """The edits that make ``x`` a precondition of ``action``: declared and given an achiever first
    where the model has neither. ``declared``: atoms the same hint brings into the model, which the
    achiever's precondition may use as well as the model's own (they order the new atoms)."""
    edits: list[Edit] = []
    if x not in achieved:
        new = _new_achiever(x, goal, traces, vocabulary | set(declared), achieved)
        edits = [Edit("declare", "", a) for a in (new.atom, *new.also) if Atom.parse(a) not in vocabulary]
        edits.append(new)
    return edits + [Edit("add-precondition", action, str(x))]


def _earliest(options: list[tuple[Atom, list[_Use], bool]]) -> list[tuple[Atom, list[_Use], bool]]:
    """The options whose Y no other option's Y precedes in every goal-reaching trace."""
    def first(y: Atom) -> dict[str, int]:
        return {u.trace.name: u.step for u in next(o[1] for o in options if o[0] == y)}
    steps = {y: first(y) for y, _, _ in options}
    kept = []
    for y, uses, holds in options:
        earlier = any(other != y and all(steps[other].get(t, math.inf) < s for t, s in steps[y].items())
                      for other in steps)
        if not earlier:
            kept.append((y, uses, holds))
    return kept


def _shows(x: Atom, use: _Use, holds: bool) -> bool:
    if holds:
        return x in use.trace.states[use.step - 1]
    return 0 < use.trace.first_true().get(x, math.inf) < use.step


def _new_achiever(x: Atom, goal: Sequence[AtomTrace], traces: Sequence[AtomTrace], vocabulary: set[Atom],
                  achieved: set[Atom]) -> Edit:
    """A parameterless action making ``x`` true: its precondition the model's atoms that hold just
    before ``x`` first does in every trace where it becomes true (goal-reaching or not: the goal
    traces alone follow one route, and would make each step of it a precondition of the next),
    its effects ``x`` and the atoms no model action adds that every goal-reaching trace makes true
    in the same step (one step, one action: two actions would order them, which no trace does)."""
    firsts = [t.first_true() for t in goal]
    steps = achieving_steps(x, traces, again=False)
    pre = held_before(steps, vocabulary)
    together = set.intersection(*({a for a, m in f.items() if m == f.get(x)} for f in firsts)) if steps else set()
    group = sorted((together - achieved) | {x})  # one name per group: two hints share the action
    name = "achieve_" + "_and_".join("_".join((a.predicate, *a.args)) for a in group).replace("-", "_")
    return Edit("add-action", name, str(group[0]), tuple(sorted(map(str, pre))), tuple(map(str, group[1:])))


def held_before(steps: Sequence[tuple[AtomTrace, int]], vocabulary: set[Atom]) -> set[Atom]:
    """The atoms of ``vocabulary`` that hold just before every one of ``steps`` (none: no steps): a
    new achiever's precondition."""
    return set.intersection(*(set(t.states[n - 1]) & vocabulary for t, n in steps)) if steps else set()


def achieving_steps(x: Atom, traces: Sequence[AtomTrace], again: bool) -> list[tuple[AtomTrace, int]]:
    """(trace, step) where ``x`` comes true: the first time in each trace, or with ``again`` every
    time it comes back (an atom true from the start). A new achiever's precondition is what holds
    before every one of them (``held_before``: ``_new_achiever``, ``_re_achiever``,
    ``repair.refine_achievers``)."""
    if again:
        return [(t, n) for t in traces for n in _rises(t, x)]
    return [(t, f[x]) for t in traces if (f := t.first_true()).get(x)]


def _fall(trace: AtomTrace, x: Atom, before: int) -> int | None:
    """The first step (< ``before``) at which ``x``, true since the start, turns false."""
    return next((n for n in range(1, before) if x not in trace.states[n]), None)


def _rises(trace: AtomTrace, x: Atom) -> list[int]:
    """Every step at which ``x`` turns true (it was false at the step before)."""
    return [n for n in range(1, len(trace.states)) if x in trace.states[n] and x not in trace.states[n - 1]]


def _events(task: Task, traces: Sequence[AtomTrace]) -> list[tuple[AtomTrace, int, Operator]]:
    """Every step at which a model atom comes true (each time, not only the first), with the model
    action that explains it (``_achiever``); one entry per trace, step and action."""
    facts = sorted({a.positive() for a in task.facts})
    found: dict[tuple[str, int, str], tuple[AtomTrace, int, Operator]] = {}
    for trace in traces:
        for atom in facts:
            for n in _rises(trace, atom):
                explained = _achiever(task, atom, trace.states[n - 1], trace.states[n])
                if explained is not None:
                    found.setdefault((trace.name, n, explained[0].name), (trace, n, explained[0]))
    return list(found.values())


def _deleters(x: Atom, events: list[tuple[AtomTrace, int, Operator]]) -> dict[str, list[Operator]]:
    """The model's action schemas that take ``x`` away: every time one runs with ``x`` true, in
    any trace, ``x`` is false after it; with the ground actions seen."""
    ran: dict[str, list[Operator]] = {}
    kept: set[str] = set()
    for trace, n, op in events:
        if x in trace.states[n - 1]:
            ran.setdefault(schema(op), []).append(op)
            if x in trace.states[n]:
                kept.add(schema(op))
    return {name: ops for name, ops in sorted(ran.items()) if name not in kept}


def _undo_hints(task: Task, goal: Sequence[AtomTrace], traces: Sequence[AtomTrace],
                all_uses: dict[Atom, list[_Use]], before: dict[Atom, set[Atom]],
                config: HintConfig) -> list[Hint]:
    """Atoms true from the start that hold whenever an action of the model fires, in every
    goal-reaching trace, and that the env had taken away and given back before it in at least
    ``min_goal_traces`` of them (``missing-undo``; the others may not have taken it away yet). The
    undo goes on the model actions that take the atom away every time they run (``_deleters``), and
    where a goal-reaching trace took it away, the step that first did must be one of theirs: a hint
    whose undo would be a guess is not asserted. Unlike the first-true kinds, every such action of
    the model gets its hint, not only the earliest: the atom may be taken away again between two of
    them (the ball, then the key, in the hand)."""
    vocabulary = {a.positive() for a in task.facts}
    achieved = {a for op in task.operators for a in op.add}
    initial = set.intersection(*(set(t.states[0]) for t in traces))
    events = _events(task, traces)
    at: dict[tuple[str, int], set[str]] = {}  # (trace, step) -> the model actions that ran there
    for t, n, op in events:
        at.setdefault((t.name, n), set()).add(schema(op))
    deleters: dict[Atom, dict[str, list[Operator]]] = {}  # read for the candidate atoms only
    hints = []
    hinted: set[tuple[Atom, str]] = set()  # (atom, action): an action adding two atoms is one hint
    for y, uses in sorted(all_uses.items()):
        g_uses = _every_goal_use(uses, goal, config)
        if g_uses is None:
            continue
        known = _known(g_uses, y, before)
        held = set.intersection(*(set(u.trace.states[u.step - 1]) for u in g_uses)) & initial
        for x in sorted(held - known - {y}):
            if (x, schema(g_uses[0].op)) in hinted:
                continue
            fell = [(u, f) for u in g_uses if (f := _fall(u.trace, x, u.step - 1)) is not None]
            if len(fell) < config.min_goal_traces:
                continue
            if x not in deleters:
                deleters[x] = _deleters(x, events)
            takers = deleters[x]
            if not all(at.get((u.trace.name, f), set()) & set(takers) for u, f in fell):
                continue
            op = g_uses[0].op
            hinted.add((x, schema(op)))
            edits = [Edit("declare", "", str(x))] if x not in vocabulary else []
            if x not in task.init:
                edits.append(Edit("add-init", "", str(x)))
            if x not in achieved:
                edits.append(_re_achiever(x, traces, vocabulary | {x}))
            edits.append(Edit("add-precondition", schema(op), str(x)))  # the hint's main edit: printed first
            edits += [Edit("add-delete", name, str(x)) for name, ops in takers.items()
                      if any(x not in o.delete for o in ops)]
            all_y = all_uses[y]
            agree = sum(x in u.trace.states[0] and x in u.trace.states[u.step - 1] for u in all_y)
            again = "in every one" if len(fell) == len(g_uses) else f"in {len(fell)} of them"
            reason = (f"{x} holds from the start and whenever {schema(op)} makes {y} true, in every goal-reaching "
                      f"trace; {again} it was taken away first ({' and '.join(takers)} take it away every time "
                      "they run) and came back; "
                      + ("the model does not mention it" if x not in vocabulary else
                         "the model neither takes it away nor requires it there"))
            hints.append(Hint("missing-undo", tuple(edits), (str(x),), reason, len(g_uses), len(goal),
                              _laplace(agree, len(all_y)), agree, len(all_y), _examples(g_uses, config)))
    return hints


def _re_achiever(x: Atom, traces: Sequence[AtomTrace], vocabulary: set[Atom]) -> Edit:
    """A parameterless action making ``x`` true again: its precondition the atoms that hold, and its
    deletes those that turn false, in every step of every trace where ``x`` comes back (``(has-key)``
    and ``(not (has-key))`` for ``(hands-empty)``: the key is put down)."""
    steps = achieving_steps(x, traces, again=True)
    pre = held_before(steps, vocabulary)
    removes = set.intersection(*(set(t.states[n - 1] - t.states[n]) & vocabulary for t, n in steps))
    name = "restore_" + "_".join((x.predicate, *x.args)).replace("-", "_")
    return Edit("add-action", name, str(x), tuple(sorted(map(str, pre))), (), tuple(sorted(map(str, removes))))


def _effect_hints(task: Task, goal: Sequence[AtomTrace], all_uses: dict[Atom, list[_Use]],
                  config: HintConfig) -> list[Hint]:
    """Atoms of the model the env turns false as an action takes effect, which the model keeps (or adds)."""
    vocabulary = {a.positive() for a in task.facts}
    hints = []
    for y, uses in sorted(all_uses.items()):
        g_uses = [u for u in _goal_uses(uses, goal) if u.identified]
        if len(g_uses) < config.min_goal_traces or len(g_uses) < len(goal):
            continue
        op = g_uses[0].op
        if any(u.op != op for u in g_uses):
            continue
        turned = set.intersection(*(set(u.trace.states[u.step - 1] - u.trace.states[u.step]) for u in g_uses))
        for z in sorted(turned & vocabulary - op.delete):
            edit = Edit("remove-effect" if z in op.add else "add-delete", schema(op), str(z))
            agree = sum(z in u.trace.states[u.step - 1] and z not in u.trace.states[u.step]
                        for u in uses if u.op == op)
            n = sum(u.op == op for u in uses)
            verb = "adds" if z in op.add else "keeps"
            reason = (f"{z} turns false when {schema(op)} makes {y} true, in every goal-reaching trace; "
                      f"the model {verb} it")
            hints.append(Hint("wrong-effect", (edit,), (str(z),), reason, len(g_uses), len(goal),
                              _laplace(agree, n), agree, n, _examples(g_uses, config)))
    return hints


def _unreachable_hints(task: Task, goal: Sequence[AtomTrace], traces: Sequence[AtomTrace],
                       all_uses: dict[Atom, list[_Use]], graph: LandmarkGraph, config: HintConfig) -> list[Hint]:
    """Landmarks reached while no achiever of the model could fire: through atoms it does not mention."""
    vocabulary = {a.positive() for a in task.facts}
    landmarks = {a for lm in graph.landmarks if lm.kind == "fact" for a in lm.atoms}
    hints = []
    for y, uses in sorted(all_uses.items()):
        if y not in landmarks:
            continue
        g_uses = _every_goal_use(uses, goal, config)
        if g_uses is None or any(u.identified for u in g_uses):
            continue
        op = g_uses[0].op
        failing = set.intersection(*(set(unmet(u.op, u.trace.states[u.step - 1])) for u in g_uses))
        instead = set.intersection(*({a for a, m in u.trace.first_true().items() if 0 < m < u.step}
                                     - vocabulary for u in g_uses))
        holding = sorted(set.intersection(*(set(u.trace.states[u.step - 1]) for u in g_uses)) & instead)
        if not failing or not holding:  # no atom the model lacks stands in for the failing precondition
            continue
        achieved = {a for o in task.operators for a in o.add}
        edits = [Edit("remove-precondition", schema(op), str(p)) for p in sorted(failing)]
        for x in holding:
            edits += [e for e in _requirement(x, schema(op), goal, traces, vocabulary, achieved, holding)
                      if e not in edits]
        agree = sum(not u.identified for u in uses)
        through = " ".join(map(str, sorted(instead)))
        reason = (f"every goal-reaching trace reaches the landmark {y} while "
                  f"{' '.join(map(str, sorted(failing)))} is false, through {through}, which the model "
                  f"does not mention; of those, {' '.join(map(str, holding))} still hold when it becomes true")
        hints.append(Hint("unreachable-as-modelled", tuple(edits), tuple(map(str, holding)), reason,
                          len(g_uses), len(goal), _laplace(agree, len(uses)), agree, len(uses),
                          _examples(g_uses, config)))
    return hints


def _examples(uses: Sequence[_Use], config: HintConfig) -> tuple[tuple[str, int], ...]:
    return tuple((u.trace.name, u.step) for u in uses[:config.max_examples])
