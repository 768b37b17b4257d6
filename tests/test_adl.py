"""What Fast Downward's translator reads beyond STRIPS: action costs, ADL, derived predicates.

Each test states the meaning: a cost is what the metric says, a conditional effect fires only
where its condition held, a quantified condition means what it says in every state (checked
against a brute-force evaluation of the PDDL formula), plans replay to the goal at the cost
Fast Downward finds on the original files, and what FD refuses is refused in one line.
"""
from __future__ import annotations

import itertools
import subprocess
import sys

import pytest
from click.testing import CliRunner
from conftest import SHARED

from asg.cli.main import main
from asg.planning import compute_landmarks, find_plan, load_task, parse_text
from asg.planning.errors import AsgError, ModelError, UnsupportedRequirementError
from asg.planning.grounding import ground
from asg.planning.task import Atom

SUITE = SHARED / "benchmarks" / "ipc_suite"
need_suite = pytest.mark.skipif(not SUITE.is_dir(), reason=f"{SUITE} absent (the shared IPC suite)")


def task_of(domain: str, problem: str):
    return ground(parse_text(domain, problem, require_problem=True))


def made_true(state: frozenset[Atom], atom: Atom) -> frozenset[Atom]:
    """``state`` with ``atom`` true (and its complement fact gone)."""
    return (state - {atom.negate()}) | {atom}


# -- action costs ------------------------------------------------------------------------------
COSTS = """
(define (domain roads) (:requirements :typing :action-costs)
  (:types place)
  (:predicates (at ?p - place) (road ?a ?b - place))
  (:functions (length ?a ?b - place) - number (total-cost) - number)
  (:action drive :parameters (?a ?b - place)
    :precondition (and (at ?a) (road ?a ?b))
    :effect (and (not (at ?a)) (at ?b) (increase (total-cost) (length ?a ?b))))
  (:action fly :parameters (?a ?b - place) :precondition (at ?a)
    :effect (and (not (at ?a)) (at ?b) (increase (total-cost) 10))))
"""
COSTS_PROBLEM = """
(define (problem r1) (:domain roads) (:objects a b c - place)
  (:init (at a) (road a b) (road b c) (= (length a b) 2) (= (length b c) 3) (= (total-cost) 0))
  (:goal (at c)) {metric})
"""


def test_costs_come_from_the_increase_and_the_function_values():
    task = task_of(COSTS, COSTS_PROBLEM.format(metric="(:metric minimize (total-cost))"))
    assert task.action_costs
    assert task.operator("(drive a b)").cost == 2 and task.operator("(drive b c)").cost == 3
    assert task.operator("(fly a c)").cost == 10


def test_without_the_metric_every_operator_costs_one_as_in_fast_downward():
    task = task_of(COSTS, COSTS_PROBLEM.format(metric=""))
    assert not task.action_costs and {op.cost for op in task.operators} == {1}


def test_optimal_plan_minimises_cost_not_length():
    task = task_of(COSTS, COSTS_PROBLEM.format(metric="(:metric minimize (total-cost))"))
    result = find_plan(task, optimal=True, timeout=60)
    assert [op.name for op in result.plan] == ["(drive a b)", "(drive b c)"] and result.cost == 5
    assert result.to_json()["cost"] == 5
    length_only = find_plan(task_of(COSTS, COSTS_PROBLEM.format(metric="")), optimal=True, timeout=60)
    assert len(length_only.plan) == 1 and length_only.cost == 1  # (fly a c): one step


def test_a_missing_cost_value_is_one_line():
    problem = COSTS_PROBLEM.format(metric="(:metric minimize (total-cost))").replace("(= (length b c) 3)", "")
    with pytest.raises(ModelError, match=r"no value for \(length b c\) in :init"):
        task_of(COSTS, problem)


# -- ADL: quantifiers, disjunctions, conditional effects -----------------------------------------
ADL = """
(define (domain lights) (:requirements :adl)
  (:types room lamp)
  (:predicates (in ?l - lamp ?r - room) (on ?l - lamp) (here ?r - room) (powered) (fuse) (done ?r - room))
  (:action switch-all :parameters (?r - room)
    :precondition (and (here ?r) (or (powered) (fuse)))
    :effect (forall (?l - lamp) (when (and (in ?l ?r) (powered)) (on ?l))))
  (:action get-power :parameters () :precondition (fuse) :effect (and (powered) (not (fuse))))
  (:action get-fuse :parameters () :precondition (not (fuse)) :effect (fuse))
  (:action walk :parameters (?from ?to - room)
    :precondition (and (here ?from) (exists (?l - lamp) (and (in ?l ?from) (on ?l))))
    :effect (and (not (here ?from)) (here ?to)))
  (:action finish :parameters (?r - room)
    :precondition (and (here ?r) (forall (?l - lamp) (imply (in ?l ?r) (on ?l))))
    :effect (done ?r)))
"""
ADL_PROBLEM = """
(define (problem l1) (:domain lights) (:objects r1 r2 - room l1 l2 l3 - lamp)
  (:init (here r1) (in l1 r1) (in l2 r1) (in l3 r2))
  (:goal (and (done r2) (not (fuse)))))
"""


def test_universal_precondition_becomes_an_axiom_as_in_the_translator():
    task = task_of(ADL, ADL_PROBLEM)
    finish = task.operator("(finish r1)")
    negated = [a for a in finish.pre if a.negated and a.predicate.startswith("new-axiom@")]
    assert len(negated) == 1  # (not (new-axiom@k r1)): no lamp of r1 is off
    heads = {ax.head for ax in task.axioms}
    assert negated[0].positive() in heads
    state = made_true(task.init, Atom("on", ("l1",)))
    assert negated[0] not in task.closure(state)  # l2 still off: the axiom holds, finish is blocked
    assert negated[0] in task.closure(made_true(state, Atom("on", ("l2",))))


def test_existential_precondition_and_disjunction_split_operators_named_by_their_parameters():
    task = task_of(ADL, ADL_PROBLEM)
    walks = [op for op in task.operators if op.name == "(walk r1 r2)"]
    assert len(walks) == 2  # one copy per lamp of r1 that may be on, named by the action's own parameters
    switches = [op for op in task.operators if op.name == "(switch-all r1)"]
    assert len(switches) == 2  # (or (powered) (fuse)): one copy per disjunct


def test_conditional_effect_fires_only_where_its_condition_held():
    task = task_of(ADL, ADL_PROBLEM)
    powered = next(op for op in task.operators if op.name == "(switch-all r1)" and Atom("powered") in op.pre)
    assert not powered.conditional  # its precondition implies the condition: the effects are unconditional
    assert sorted(map(str, powered.add)) == ["(on l1)", "(on l2)"]
    unpowered = next(op for op in task.operators if op.name == "(switch-all r1)" and Atom("fuse") in op.pre)
    assert sorted((sorted(map(str, e.condition)), sorted(map(str, e.add))) for e in unpowered.conditional) == [
        (["(powered)"], ["(on l1)"]), (["(powered)"], ["(on l2)"])]
    state = task.closure(made_true(task.init, Atom("fuse")))
    assert Atom("on", ("l1",)) not in unpowered.apply(state)  # the condition (powered) did not hold
    assert Atom("on", ("l1",)) in unpowered.apply(made_true(state, Atom("powered")))


def test_plan_replays_to_the_goal_through_axioms_and_conditional_effects():
    task = task_of(ADL, ADL_PROBLEM)
    for optimal in (False, True):
        result = find_plan(task, optimal=optimal, timeout=60)
        assert result.solved, result.message
        states = task.replay(result.plan)
        assert task.goal_reached(states[-1])
    assert "driver" in result.planner  # unified-planning has no axioms: FD's own driver planned it


def test_hm_refuses_axioms_as_fast_downward_does():
    with pytest.raises(AsgError, match="do not support axioms"):
        compute_landmarks(task_of(ADL, ADL_PROBLEM), factory="hm")


# -- derived predicates: the closure is the least fixpoint, layered by negation ----------------------
DERIVED = """
(define (domain graph) (:requirements :derived-predicates :negative-preconditions)
  (:predicates (edge ?a ?b) (reach ?a ?b) (cut ?a) (isolated ?a) (flag))
  (:derived (reach ?a ?b) (or (and (edge ?a ?b) (not (cut ?b))) (exists (?c) (and (reach ?a ?c) (reach ?c ?b)))))
  (:derived (isolated ?a) (forall (?b) (not (reach ?a ?b))))
  (:action cut-node :parameters (?a) :precondition (not (cut ?a)) :effect (cut ?a))
  (:action raise :parameters (?a) :precondition (isolated ?a) :effect (flag)))
"""
DERIVED_PROBLEM = """
(define (problem g1) (:domain graph) (:objects n1 n2 n3 n4)
  (:init (edge n1 n2) (edge n2 n3) (edge n3 n4)) (:goal (flag)))
"""


def _brute_reach(state: frozenset[Atom], nodes: list[str]) -> set[tuple[str, str]]:
    edges = {(a.args[0], a.args[1]) for a in state if a.predicate == "edge"}
    cut = {a.args[0] for a in state if a.predicate == "cut" and not a.negated}
    reach = {(a, b) for a, b in edges if b not in cut}
    while True:
        more = {(a, d) for a, b in reach for c, d in reach if b == c} - reach
        if not more:
            return reach
        reach |= more


def test_derived_atoms_equal_a_brute_force_evaluation_in_every_state():
    task = task_of(DERIVED, DERIVED_PROBLEM)
    nodes = ["n1", "n2", "n3", "n4"]
    edges = frozenset(a for a in task.init if a.predicate == "edge") | task.static_facts
    for cut in itertools.chain.from_iterable(itertools.combinations(nodes, k) for k in range(5)):
        base = {a for a in task.init if a.predicate not in ("reach", "isolated", "cut")
                and not (a.negated and a.predicate in ("cut", "reach", "isolated"))}
        base |= {Atom("cut", (n,)) for n in cut} | {Atom("cut", (n,), True) for n in nodes if n not in cut}
        state = task.closure(base)
        expected = _brute_reach(frozenset(base) | edges, nodes)
        assert {a.args for a in state if a.predicate == "reach" and not a.negated} == expected
        isolated = {n for n in nodes if not any(a == n for a, _ in expected)}
        assert {a.args[0] for a in state if a.predicate == "isolated" and not a.negated} == isolated


def test_derived_predicates_give_a_plan():
    task = task_of(DERIVED, DERIVED_PROBLEM)
    result = find_plan(task, optimal=True, timeout=60)
    assert result.solved and len(result.plan) == 1  # n4 has no edge out: (raise n4) at once
    assert result.plan[0].name == "(raise n4)"


# -- what Fast Downward refuses ----------------------------------------------------------------------
REFUSED = [
    ("(decrease (fuel) 1)", ":numeric-fluents"),
    ("(increase (fuel) 1)", ":numeric-fluents"),
    ("(assign (fuel) 1)", ":numeric-fluents"),
]


@pytest.mark.parametrize("effect,requirement", REFUSED)
def test_numeric_effects_beyond_costs_are_refused_in_one_line(tmp_path, effect, requirement):
    path = tmp_path / "d.pddl"
    path.write_text("(define (domain d) (:requirements :numeric-fluents)\n (:predicates (p) (q)) (:functions (fuel))\n"
                    f" (:action a :parameters () :precondition (p) :effect (and (q) {effect})))\n"
                    "(define (problem x) (:domain d) (:init (p)) (:goal (q)))")
    result = CliRunner().invoke(main, ["landmarks", str(path)])
    assert result.exit_code == 2
    line = result.output.strip()
    assert line.count("\n") == 0 and line.startswith(f"{path}:3:") and requirement in line
    assert "Traceback" not in result.output


def test_numeric_comparison_and_durative_action_are_refused():
    with pytest.raises(UnsupportedRequirementError, match=":numeric-fluents"):
        parse_text("(define (domain d) (:predicates (p)) (:functions (f)) (:action a :parameters ()"
                   " :precondition (< (f) 3) :effect (p)))")
    with pytest.raises(UnsupportedRequirementError, match=":durative-actions"):
        parse_text("(define (domain d) (:predicates (p)) (:durative-action a :parameters () :duration (= ?duration 1)"
                   " :condition (at start (p)) :effect (at end (p))))")


def test_an_action_changing_a_derived_predicate_is_an_error_with_its_place():
    text = DERIVED.replace(":effect (cut ?a))", ":effect (and (cut ?a) (isolated ?a)))")
    with pytest.raises(ModelError, match="derived predicate 'isolated' is changed by action 'cut-node'"):
        parse_text(text)


# -- the corpus: costs and ADL read, plans at Fast Downward's optimal cost ----------------------------
@need_suite
@pytest.mark.parametrize("domain,problem", [
    ("elevators-opt08-strips/domain.pddl", "elevators-opt08-strips/p01.pddl"),
    ("miconic-simpleadl/domain.pddl", "miconic-simpleadl/s1-0.pddl"),
    ("openstacks-opt08-adl/domain.pddl", "openstacks-opt08-adl/p01.pddl"),
])
def test_optimal_cost_equals_fast_downward_on_the_original_files(tmp_path, domain, problem):
    from asg.planning.peer import fd_driver

    task = load_task(SUITE / domain, SUITE / problem)
    result = find_plan(task, optimal=True, timeout=120)
    assert result.solved and task.goal_reached(task.replay(result.plan)[-1])
    proc = subprocess.run([sys.executable, str(fd_driver()), str(SUITE / domain), str(SUITE / problem),
                           "--search", "astar(blind())"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    costs = [line.split("Plan cost:")[1].strip() for line in proc.stdout.splitlines() if "Plan cost:" in line]
    assert costs and int(costs[0]) == result.cost


def test_new_axioms_are_numbered_as_the_translator_numbers_them():
    # What Fast Downward 26.6's translator gives on this task (checked by hand with
    # `python -m fast_downward.translate`): a universal condition nested in a negated one becomes an
    # axiom first (new-axiom@0 for (forall (?z) (r ?z)), then @1 for the exists, @2 for a's
    # precondition), and b's identical condition reuses new-axiom@0.
    domain = """
    (define (domain n) (:requirements :adl)
      (:predicates (q ?x ?y) (r ?z) (done) (go))
      (:action a :parameters () :precondition (forall (?x) (exists (?y) (and (q ?x ?y) (forall (?z) (r ?z)))))
        :effect (done))
      (:action b :parameters () :precondition (forall (?z) (r ?z)) :effect (done))
      (:action mk :parameters (?x ?y) :precondition (go) :effect (and (q ?x ?y) (r ?x))))"""
    task = task_of(domain, "(define (problem n1) (:domain n) (:objects o1 o2) (:init (go)) (:goal (done)))")
    pre = {op.name: sorted(map(str, op.pre)) for op in task.operators}
    assert pre["(a)"] == ["(not (new-axiom@2))"] and pre["(b)"] == ["(not (new-axiom@0))"]
    assert {str(ax.head) for ax in task.axioms} == {"(new-axiom@0)", "(new-axiom@1 o1)", "(new-axiom@1 o2)",
                                                    "(new-axiom@2)"}


def test_a_learners_subgoals_on_an_adl_model_are_atoms_a_labeler_reports():
    from asg.learning.asgrl.subgoals import landmark_subgoals
    from asg.learning.errors import DomainError

    task = task_of(ADL, ADL_PROBLEM)  # axioms (a universal precondition): RHW, not h^m
    subgoals = landmark_subgoals(task)
    assert subgoals.names() == ["(fuse)", "(powered)", "(here r2)", "(on l3)", "(done r2)"]
    complicated = ADL_PROBLEM.replace("(:goal (and (done r2) (not (fuse))))", "(:goal (or (done r1) (done r2)))")
    with pytest.raises(DomainError, match="not a conjunction of literals"):
        landmark_subgoals(task_of(ADL, complicated))


def test_cli_says_what_hm_does_not_read():
    runner = CliRunner()
    lights = "tests/data/adl/lights.pddl"
    refused = runner.invoke(main, ["landmarks", lights])
    assert refused.exit_code == 2 and f"--factory hm: {lights} has axioms" in refused.output
    assert runner.invoke(main, ["landmarks", lights, "--factory", "rhw"]).exit_code == 0
    text = COSTS.replace("(:action fly", "(:action hop :parameters (?a ?b - place) :precondition (at ?a)"
                         " :effect (when (at ?b) (not (at ?a))))\n  (:action fly")
    import json
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".pddl", delete=False) as handle:
        handle.write(text + COSTS_PROBLEM.format(metric=""))
    result = runner.invoke(main, ["landmarks", handle.name, "--format", "json"])
    data = json.loads(result.stdout)
    assert data["notes"] and "effect conditions ignored" in data["notes"][0]
    assert data["stats"]["conditional_effects"] > 0 and data["stats"]["action_costs"] is False
