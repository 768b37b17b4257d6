"""Applying repair hints to a model: the ``pddl`` package's objects, edited and written back.

``apply_edits`` changes a parsed ``Model`` (``asg.planning.parse``) edit by edit and renders it
with ``pddl.formatter`` (the package asg parses into; no second PDDL writer). ``repair`` takes
the ranked hints of ``asg.planning.hints`` in order and keeps each one whose edits apply and
leave a model that is still an MVTR on the same traces (both conditions of
``asg.planning.mvtr``), up to ``top`` hints: the top-ranked consistent set. The written file
loses the source's comments and orders its actions by name (``pddl.formatter``'s order).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import networkx as nx
from pddl.action import Action
from pddl.core import Domain, Problem
from pddl.formatter import domain_to_string, problem_to_string
from pddl.logic.base import And, Not
from pddl.logic.predicates import Predicate
from pddl.logic.terms import Constant, Variable

from asg.planning.errors import AsgError
from asg.planning.grounding import ground
from asg.planning.hints import Edit, Hint, achieving_steps, held_before
from asg.planning.landmark_graph import LandmarkGraph
from asg.planning.landmarks import compute_landmarks
from asg.planning.mvtr import AtomTrace, MVTRReport, check_mvtr
from asg.planning.parse import Model, parse_text
from asg.planning.task import Atom, Task


class EditError(AsgError):
    """An edit that does not fit the model (an unknown action, a precondition it lacks)."""


@dataclass(frozen=True)
class RepairResult:
    """The repaired model's text, what was applied and skipped, and its re-check."""

    text: str
    applied: tuple[Hint, ...]
    skipped: tuple[tuple[Hint, str], ...]
    """Hints not applied, with why."""
    report: MVTRReport
    subgoals: tuple[str, ...]
    """The repaired model's landmark sequence (``LandmarkGraph.subgoals``)."""
    landmarks: tuple[str, ...] = field(default=())
    """Every fact landmark of the repaired model."""
    again: tuple[str, ...] = field(default=())
    """Initially true landmarks the repaired model needs again, each with the landmark it comes after
    (``LandmarkGraph.needed_again``): ``(hands-empty) after (has-key)``."""
    edits: tuple[Edit, ...] = field(default=())
    """The edits written: the applied hints', with the new achievers' preconditions read again over
    the repaired model's atoms (``refine_achievers``)."""

    def to_json(self) -> dict:
        return {"applied": [[str(e) for e in h.edits] for h in self.applied],
                "edits": [str(e) for e in self.edits],
                "skipped": [{"edits": [str(e) for e in h.edits], "why": why} for h, why in self.skipped],
                "mvtr": self.report.verdict, "subgoals": list(self.subgoals),
                "landmarks": list(self.landmarks), "needed_again": list(self.again)}


def _predicate(atom: Atom, constants: dict[str, Constant]) -> Predicate:
    return Predicate(atom.predicate, *(constants[a] for a in atom.args))


def _literals(formula) -> list:
    if formula is None:
        return []
    return list(formula.operands) if isinstance(formula, And) else [formula]


def _same(literal, pred: Predicate) -> bool:
    return isinstance(literal, Predicate) and literal.name == pred.name and \
        tuple(str(t) for t in literal.terms) == tuple(str(t) for t in pred.terms)


def apply_edits(model: Model, edits: Sequence[Edit]) -> str:
    """The model with ``edits`` applied, as PDDL text (domain, then problem)."""
    domain, problem = model.domain, model.problem
    objects = {str(o.name): o for o in (problem.objects if problem is not None else ())}
    constants = {str(c.name): c for c in domain.constants}
    predicates = {str(p.name): p for p in domain.predicates}
    actions = {str(a.name): a for a in domain.actions}
    init = list(problem.init) if problem is not None else []
    for edit in dict.fromkeys(edits):  # two hints may share an edit (the same new achiever)
        atom = Atom.parse(edit.atom)
        named = [atom, *(Atom.parse(a) for a in (*edit.precondition, *edit.also, *edit.removes))]
        for arg in dict.fromkeys(a for n in named for a in n.args):  # a ground atom in a schema needs
            if arg not in constants:  # its objects as domain constants: the problem's, or new ones
                constants[arg] = objects.pop(arg) if arg in objects else Constant(arg)
        pred = _predicate(atom, constants)
        if edit.op == "declare":
            if atom.predicate not in predicates:
                params = [Variable(f"a{i}", constants[a].type_tags) for i, a in enumerate(atom.args)]
                predicates[atom.predicate] = Predicate(atom.predicate, *params)
            continue
        if edit.op == "add-init":
            if problem is None:
                raise EditError(f"{edit}: the model has no problem")
            init += [] if any(_same(a, pred) for a in init) else [pred]
            continue
        if edit.op == "add-action":
            if edit.action in actions:
                raise EditError(f"{edit}: an action {edit.action} exists")
            pre = [_predicate(Atom.parse(p), constants) for p in edit.precondition]
            eff = [pred, *(_predicate(Atom.parse(a), constants) for a in edit.also),
                   *(Not(_predicate(Atom.parse(a), constants)) for a in edit.removes)]
            actions[edit.action] = Action(edit.action, [], precondition=And(*pre), effect=And(*eff))
            continue
        action = actions.get(edit.action)
        if action is None:
            raise EditError(f"{edit}: no action {edit.action}")
        pre, eff = _literals(action.precondition), _literals(action.effect)
        if edit.op == "add-precondition":
            pre = pre + [pred] if not any(_same(p, pred) for p in pre) else pre
        elif edit.op == "remove-precondition":
            if not any(_same(p, pred) for p in pre):
                raise EditError(f"{edit}: not a precondition")
            pre = [p for p in pre if not _same(p, pred)]
        elif edit.op == "add-delete":
            eff = [e for e in eff if not _same(e, pred)] + [Not(pred)]
        elif edit.op == "remove-effect":
            if not any(_same(e, pred) for e in eff):
                raise EditError(f"{edit}: not an effect")
            eff = [e for e in eff if not _same(e, pred)]
        else:
            raise EditError(f"unknown edit {edit.op}")
        actions[edit.action] = Action(action.name, list(action.parameters), precondition=And(*pre),
                                      effect=And(*eff))
    new_domain = Domain(domain.name, requirements=domain.requirements, types=domain.types,
                        constants=constants.values(), predicates=predicates.values(),
                        derived_predicates=domain.derived_predicates, functions=domain.functions,
                        actions=actions.values())
    text = domain_to_string(new_domain) + "\n"
    if problem is not None:
        new_problem = Problem(problem.name, domain_name=domain.name, requirements=problem.requirements,
                              objects=objects.values(), init=init, goal=problem.goal,
                              metric=problem.metric)
        text += "\n" + problem_to_string(new_problem) + "\n"
    return text


def project(traces: Sequence[AtomTrace], task: Task) -> list[AtomTrace]:
    """The traces seen through ``task``'s vocabulary (what ``asg mvtr`` checks a model on)."""
    vocabulary = frozenset(a.positive() for a in task.facts)
    return [AtomTrace(t.source, t.index, tuple(s & vocabulary for s in t.states), t.goal, t.env_states)
            for t in traces]


def atom_orderings(graph: LandmarkGraph) -> list[tuple[frozenset[Atom], frozenset[Atom], str]]:
    """A landmark graph's orderings as (source atoms, target atoms, kind), as ``check_mvtr`` takes them."""
    by_id = {lm.id: lm.atoms for lm in graph.landmarks}
    return [(by_id[o.source], by_id[o.target], o.kind) for o in graph.orderings]


def check_text(text: str, traces: Sequence[AtomTrace],
               name: str = "repaired") -> tuple[Task, LandmarkGraph, MVTRReport]:
    """Ground a model given as text, compute its landmarks and check it is an MVTR on ``traces``."""
    task = ground(parse_text(text, name=name, require_problem=True))
    graph = compute_landmarks(task)
    return task, graph, check_mvtr(task, project(traces, task), model=name, landmark_orderings=atom_orderings(graph))


def _landmark_atoms(graph: LandmarkGraph) -> set[Atom]:
    return {a for lm in graph.landmarks if lm.kind == "fact" for a in lm.atoms}


def inseparable(task: Task, traces: Sequence[AtomTrace],
                graph: LandmarkGraph | None = None) -> set[tuple[str, str, str]]:
    """Pairs of the task's subgoals (the landmarks a learner is given, ``LandmarkGraph.subgoals``)
    that first hold at the same step of a goal-reaching trace, with that trace's name. A learner
    pursues one subgoal at a time and fails a skill when another pending one comes true first
    (ASGRL's strict ordering, learning/asgrl/subgoals.py): on such a pair, whichever it pursues
    first fails whenever it succeeds the way the trace does. ``graph``: the task's landmark graph
    when the caller has it already."""
    subgoals = [(str(lm), lm.atoms) for lm in (graph or compute_landmarks(task)).subgoals()]
    pairs: set[tuple[str, str, str]] = set()
    for trace in (t for t in traces if t.reaches_goal):
        first: dict[int, list[str]] = {}
        for name, atoms in subgoals:
            step = next((n for n, state in enumerate(trace.states) if atoms <= state), None)
            if step:  # 0: true from the start, None: never (the MVTR check's business)
                first.setdefault(step, []).append(name)
        for names in first.values():
            pairs |= {(a, b, trace.name) for i, a in enumerate(sorted(names)) for b in sorted(names)[i + 1:]}
    return pairs


def _replaced(hint: Hint) -> set[Atom]:
    """Atoms a hint takes out of an action's precondition while it adds another there: a narrower
    atom in place of one it implies (``(holding red)`` for ``(has-key)``), not a loss."""
    added = {e.action for e in hint.edits if e.op == "add-precondition"}
    return {Atom.parse(e.atom) for e in hint.edits if e.op == "remove-precondition" and e.action in added}


def refine_achievers(edits: Sequence[Edit], traces: Sequence[AtomTrace], task: Task) -> list[Edit]:
    """``edits`` with each new achiever's precondition read again over every atom of ``task``, the
    repaired model. A hint reads its achiever's precondition over the model's atoms and its own,
    so two hints that bring in the steps of one chain (B's key, then B's door) leave them unordered,
    and a learner given both as subgoals could be sent to the door first. Over the repaired model's
    atoms, the door's achiever requires what held every time the door first opened: the key.
    ``hints.achieving_steps`` gives the steps, the first ones or, for an atom of the initial state,
    every return."""
    vocabulary = {a.positive() for a in task.facts}
    out = []
    for edit in edits:
        if edit.op == "add-action":
            x = Atom.parse(edit.atom)
            steps = achieving_steps(x, traces, again=x in task.init)
            held = held_before(steps, vocabulary)
            edit = replace(edit, precondition=tuple(sorted({str(a) for a in held - {x}} | set(edit.precondition))))
        out.append(edit)
    return out


def _ordering_only(applied: Sequence[Hint], edits: Sequence[Edit]) -> list[Edit]:
    """The preconditions that ``missing-landmark`` hints add: the atom came true before the action
    and no longer holds when it fires, so the precondition is there only to order the atom first."""
    return [e for hint in applied if hint.kind == "missing-landmark"
            for e in hint.edits if e.op == "add-precondition" and e in edits]


def _keeps_orderings(before: LandmarkGraph, after: LandmarkGraph, atom: Atom) -> bool:
    """``after`` orders ``atom``'s landmark before every landmark ``before`` orders it before
    (paths through other landmarks count)."""
    def later(graph: LandmarkGraph) -> set[frozenset[Atom]]:
        try:
            source = graph.find(atom)
        except KeyError:
            return set()
        return {graph.by_id(v).atoms for v in nx.descendants(graph.graph, source.id)}

    return later(before) <= later(after)


def repair(model: Model, hints: Sequence[Hint], traces: Sequence[AtomTrace], top: int = 3) -> RepairResult:
    """Apply the top-ranked hints that fit together: in rank order, each whose edits apply, keep
    the model an MVTR on ``traces``, keep every landmark of the model that every goal-reaching
    trace reaches (the traces confirm it) and bring in no pair of subgoals the goal-reaching traces
    make true in the same step (``inseparable``), until ``top`` are applied. The new achievers'
    preconditions are then read again over the repaired model's atoms (``refine_achievers``), kept
    where the result passes the same checks. Last, a ``missing-landmark`` hint's precondition, which
    the traces show false when its action fires, is taken out again where the rest of the repair
    already orders its atom first (B's key before A's key, through B's door once the door's achiever
    asks for the key): a written precondition the env contradicts would tell a learner that keeps
    its landmarks (``protect_landmarks``) to hold B's key while it takes A's."""
    applied: list[Hint] = []
    skipped: list[tuple[Hint, str]] = []
    edits: list[Edit] = []
    text = apply_edits(model, [])
    task, graph, report = check_text(text, traces)
    goal = [t for t in traces if t.reaches_goal]
    confirmed = {a for a in _landmark_atoms(graph) if all(any(a in s for s in t.states) for t in goal)}
    together = {pair[:2] for pair in inseparable(task, project(traces, task), graph)}

    def attempt(trial_edits: list[Edit], replaced: set[Atom]) -> tuple[str, Task, LandmarkGraph, MVTRReport] | str:
        """The model with ``trial_edits`` and its re-check, or why it is refused."""
        try:
            trial = apply_edits(model, trial_edits)
            trial_task, trial_graph, trial_report = check_text(trial, traces)
        except AsgError as err:
            return f"does not apply: {err}"
        if not trial_report.holds:
            return "the model would no longer be an MVTR on the traces"
        lost = confirmed - _landmark_atoms(trial_graph) - replaced
        if lost:
            return (f"the model would lose the landmark(s) {' '.join(map(str, sorted(lost)))}, "
                    "which every goal-reaching trace reaches")
        new = sorted(p for p in inseparable(trial_task, project(traces, trial_task), trial_graph)
                     if p[:2] not in together)
        if new:
            a, b, trace = new[0]
            return (f"a learner could not reach {a} and {b} one at a time: they first hold in the "
                    f"same step of goal-reaching trace {trace}")
        return trial, trial_task, trial_graph, trial_report

    for hint in hints:
        if len(applied) >= top:
            break
        outcome = attempt(edits + list(hint.edits), _replaced(hint))
        if isinstance(outcome, str):
            skipped.append((hint, outcome))
            continue
        applied.append(hint)
        confirmed -= _replaced(hint)
        edits.extend(hint.edits)
        text, task, graph, report = outcome
    refined = refine_achievers(edits, traces, task)
    if refined != edits and not isinstance(outcome := attempt(refined, set()), str):
        edits = refined
        text, task, graph, report = outcome
    for edit in _ordering_only(applied, edits):
        trial = [e for e in edits if e != edit]
        outcome = attempt(trial, set())
        if not isinstance(outcome, str) and _keeps_orderings(graph, outcome[2], Atom.parse(edit.atom)):
            edits = trial
            text, task, graph, report = outcome
    subgoals = tuple(str(lm) for lm in graph.subgoals())  # the landmark sequence a learner is given
    landmarks = tuple(sorted(str(a) for lm in graph.landmarks if lm.kind == "fact" for a in lm.atoms))
    again = tuple(f"{lm} after {after}" for lm, after in compute_landmarks(task, reasonable=True).needed_again())
    return RepairResult(text, tuple(applied), tuple(skipped), report, subgoals, landmarks, again,
                        tuple(dict.fromkeys(edits)))
