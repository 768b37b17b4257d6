"""The rhw and zg landmark factories: agreement with Fast Downward's lm_rhw / lm_zg, meaning
(every landmark is necessary in the relaxed task), conditional effects and axioms on hand-built
tasks, reasonable orderings over them, and the CLI. The whole corpus is under ``slow``
(benchmarks/landmarks.py is the full report)."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import IPC, ipc_paths, ipc_rows

from asg.cli.main import main
from asg.planning import compute_landmarks, load_task
from asg.planning.landmarks import FACTORIES, build_graph
from asg.planning.landmarks.rhw import rhw_landmarks
from asg.planning.peer import asg_view, compare, fd_landmarks, pddl_texts
from asg.planning.task import Atom, Axiom, Effect, Operator, Task

SMALL = ["blocks/p01.pddl", "gripper/p01.pddl", "logistics/p01.pddl", "depot/p01.pddl", "visitall/p01.pddl"]
SMALL_ROWS = [r for r in ipc_rows("strips") if r["problem_file"] in SMALL]
need_small = pytest.mark.skipif(not SMALL_ROWS, reason=f"the IPC corpus in {IPC} is absent (../shared)")


def _agree(row, factory: str, fd_order: bool = False):
    domain, problem = ipc_paths(row)
    task = load_task(domain, problem)
    peer = fd_landmarks(*pddl_texts(domain, problem), factory=factory, timeout=120)
    if fd_order:
        graph = build_graph(task, rhw_landmarks(task, peer.variable_order), "rhw")
    else:
        graph = compute_landmarks(task, factory=factory)
    return compare(asg_view(graph), peer)


@pytest.mark.parametrize("factory", ["rhw", "zg"])
@pytest.mark.parametrize("row", SMALL_ROWS, ids=lambda r: r["problem_file"])
def test_small_tasks_agree_with_fd(row, factory):
    result = _agree(row, factory)
    assert result.landmarks_equal, (result.missing, result.extra)
    assert result.orderings_equal, (result.closure_missing, result.closure_extra, result.gn_missing, result.gn_extra)


def _reachable(task: Task, banned: frozenset[Atom]) -> frozenset[Atom]:
    """Delete-relaxed reachability with conditional effects, never making a ``banned`` atom true."""
    reached = set(task.init - banned)
    changed = True
    while changed:
        changed = False
        for op in task.operators:
            if not op.pre <= reached:
                continue
            adds = set(op.add) | {a for e in op.conditional if e.condition <= reached for a in e.add}
            if op.add & banned:  # the operator itself would make a banned atom true
                continue
            new = adds - banned - reached
            if new:
                reached |= new
                changed = True
        for rule in task.axioms:
            if rule.body <= reached and rule.head not in reached and rule.head not in banned:
                reached.add(rule.head)
                changed = True
    return frozenset(reached)


@pytest.mark.parametrize("factory", ["rhw", "zg"])
@pytest.mark.parametrize("row", SMALL_ROWS, ids=lambda r: r["problem_file"])
def test_every_landmark_is_necessary_in_the_relaxed_task(row, factory):
    task = load_task(*ipc_paths(row))
    graph = compute_landmarks(task, factory=factory)
    assert task.goal <= _reachable(task, frozenset())
    checked = 0
    for lm in graph.landmarks:
        if lm.initially_true or any(a.negated for a in lm.atoms):
            continue
        # fact: without it the goal is out of reach; disjunctive: without all of its atoms
        assert not task.goal <= _reachable(task, lm.atoms), str(lm)
        checked += 1
    assert checked


@need_small
def test_gripper_gives_disjunctive_landmarks_and_complements_true_initially():
    row = next(r for r in SMALL_ROWS if r["problem_file"] == "gripper/p01.pddl")
    graph = compute_landmarks(load_task(*ipc_paths(row)), factory="rhw")
    disjunctive = [lm for lm in graph.landmarks if lm.kind == "disjunctive"]
    assert {str(lm) for lm in disjunctive} >= {"(carry ball1 left) | (carry ball1 right)"}
    assert all(2 <= len(lm.atoms) <= 4 and not lm.initially_true for lm in disjunctive)
    negated = [lm for lm in graph.landmarks if lm.kind == "fact" and lm.atom.negated]
    assert negated and all(lm.initially_true for lm in negated)
    zg = compute_landmarks(load_task(*ipc_paths(row)), factory="zg")
    assert all(lm.kind == "fact" for lm in zg.landmarks)
    goals = {lm.id for lm in zg.landmarks if lm.goal}
    assert all(o.target in goals and o.kind == "natural" for o in zg.orderings)


def _atom(name: str) -> Atom:
    return Atom(name)


def _condeff_task() -> Task:
    """g comes only from b's effect when r holds; b needs q."""
    q, r, g = _atom("q"), _atom("r"), _atom("g")
    ops = (Operator("(make-q)", frozenset(), frozenset({q}), frozenset()),
           Operator("(make-r)", frozenset(), frozenset({r}), frozenset()),
           Operator("(b)", frozenset({q}), frozenset(), frozenset(),
                    conditional=(Effect(frozenset({r}), frozenset({g}), frozenset()),)))
    return Task("condeff", "hand", (g, q, r), ops, frozenset(), frozenset({g}))


def _axiom_task() -> Task:
    """d is derived from p and q, each made by its own operator."""
    p, q, d = _atom("p"), _atom("q"), _atom("d")
    ops = (Operator("(make-p)", frozenset(), frozenset({p}), frozenset()),
           Operator("(make-q)", frozenset(), frozenset({q}), frozenset()))
    return Task("axiom", "hand", (d, p, q), ops, frozenset(), frozenset({d}),
                axioms=(Axiom(0, d, frozenset({p, q})),), derived=frozenset({d}))


@pytest.mark.parametrize("factory", ["rhw", "zg"])
def test_effect_conditions_are_landmarks(factory):
    graph = compute_landmarks(_condeff_task(), factory=factory)
    names = {str(lm) for lm in graph.landmarks}
    assert {"(g)", "(q)", "(r)"} <= names
    if factory == "rhw":  # the shared effect condition and the precondition: greedy-necessary
        kinds = {(str(graph.by_id(o.source)), o.kind) for o in graph.orderings if str(graph.by_id(o.target)) == "(g)"}
        assert {("(q)", "greedy-necessary"), ("(r)", "greedy-necessary")} <= kinds


@pytest.mark.parametrize("factory", ["rhw", "zg"])
def test_axioms_act_as_operators(factory):
    graph = compute_landmarks(_axiom_task(), factory=factory)
    assert {"(d)", "(p)", "(q)"} <= {str(lm) for lm in graph.landmarks}
    assert graph.find("(d)").goal


@pytest.mark.parametrize("factory", ["rhw", "zg"])
def test_a_derived_atom_made_false_goes_through_default_value_axioms(factory):
    """Goal (not (d)) with d derived from p, p true initially: as FD's landmark heuristics, the
    factories get the rule (not d) <- (not p), so (not (p)) and what deletes p are landmarks."""
    p, q, d = _atom("p"), _atom("q"), _atom("d")
    ops = (Operator("(make-q)", frozenset(), frozenset({q}), frozenset()),
           Operator("(drop-p)", frozenset({q}), frozenset(), frozenset({p})))
    task = Task("negated-derived", "hand", (d, p, q), ops, frozenset({p}), frozenset({d.negate()}),
                axioms=(Axiom(0, d, frozenset({p})),), derived=frozenset({d}))
    names = {str(lm) for lm in compute_landmarks(task, factory=factory).landmarks}
    assert {"(not (d))", "(not (p))", "(q)"} <= names


@need_small
@pytest.mark.parametrize("factory", sorted(FACTORIES))
def test_reasonable_orderings_work_on_every_factory_and_skip_disjunctions(factory):
    row = next(r for r in SMALL_ROWS if r["problem_file"] == "gripper/p01.pddl")
    graph = compute_landmarks(load_task(*ipc_paths(row)), factory=factory, reasonable=True)
    for o in graph.reasonable:
        assert "disjunctive" not in (graph.by_id(o.source).kind, graph.by_id(o.target).kind)


def test_unknown_factory_and_m_with_another_factory_are_refused():
    task = _condeff_task()
    with pytest.raises(ValueError, match="unknown landmark factory"):
        compute_landmarks(task, factory="exhaustive")
    with pytest.raises(ValueError, match="m=2"):
        compute_landmarks(task, factory="rhw", m=2)


def test_cli_rhw_json_has_a_disjunctive_landmark(need_ipc):
    result = CliRunner().invoke(main, ["landmarks", str(IPC / "gripper/domain.pddl"), str(IPC / "gripper/p01.pddl"),
                                       "--factory", "rhw", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["factory"] == "rhw" and data["method"] == "rhw"
    disjunctive = [lm for lm in data["landmarks"] if lm["kind"] == "disjunctive"]
    assert disjunctive and all(len(lm["atoms"]) >= 2 for lm in disjunctive)
    text = CliRunner().invoke(main, ["landmarks", str(IPC / "gripper/domain.pddl"), str(IPC / "gripper/p01.pddl"),
                                     "--factory", "zg"])
    assert text.exit_code == 0 and "(zg)" in text.output.splitlines()[0]


def test_cli_m_with_another_factory_is_one_line_exit_2():
    from conftest import one_line

    from asg import pddl_models

    result = CliRunner().invoke(main, ["landmarks", str(pddl_models.path("household_v1")), "--factory", "zg",
                                       "--m", "2"])
    line = one_line(result, 2)
    assert "--m 2" in line and "--factory hm" in line


@pytest.mark.slow
@pytest.mark.parametrize("factory", ["rhw", "zg"])
def test_whole_ipc_corpus_agrees_with_fd(factory):
    rows = ipc_rows("strips")
    if not rows:
        pytest.skip("the IPC corpus in ../shared is absent")
    agree = 0
    for row in rows:
        result = _agree(row, factory, fd_order=factory == "rhw")
        agree += result.landmarks_equal and result.orderings_equal
    assert agree >= 0.95 * len(rows)


@need_small
def test_exports_show_disjunctions(tmp_path):
    from asg.planning.draw import draw
    from asg.planning.html_view import page_data

    row = next(r for r in SMALL_ROWS if r["problem_file"] == "gripper/p01.pddl")
    graph = compute_landmarks(load_task(*ipc_paths(row)), factory="rhw")
    assert "(carry ball1 left)\\n| (carry ball1 right)" in graph.to_dot()
    assert "disjunctive" in graph.to_text() and "19 landmarks (rhw)" in graph.to_text()
    kinds = {lm["kind"] for lm in page_data(graph)["landmarks"]}
    assert kinds == {"fact", "disjunctive"}
    assert draw(graph, str(tmp_path / "rhw.png")).stat().st_size > 0


@pytest.mark.parametrize("factory", ["rhw", "zg"])
def test_reasonable_orderings_on_tasks_with_axioms_and_effect_conditions(factory):
    for task in (_axiom_task(), _condeff_task()):
        graph = compute_landmarks(task, factory=factory, reasonable=True)
        assert graph.landmarks and all(o.kind == "reasonable" for o in graph.reasonable)
