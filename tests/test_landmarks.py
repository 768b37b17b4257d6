"""Landmarks and orderings: the paper's expectations, and semantic checks on IPC tasks."""
from __future__ import annotations

import json

import networkx as nx
import pytest
from conftest import IPC, PITFALLS, ipc_paths, ipc_rows

from asg import pddl_models
from asg.planning import compute_landmarks, find_plan, load_task
from asg.planning.landmarks.hm import relaxed_reachable
from asg.planning.task import Task


def gn_edges(graph) -> set[tuple[str, str]]:
    return {(str(graph.by_id(o.source)), str(graph.by_id(o.target)))
            for o in graph.orderings if o.kind == "greedy-necessary"}


def names(graph, **flags) -> set[str]:
    return {str(lm) for lm in graph.landmarks if all(getattr(lm, k) == v for k, v in flags.items())}


def test_household_v1_matches_the_paper():
    graph = compute_landmarks(load_task(pddl_models.path("household_v1")))
    assert names(graph) == {"(has-key)", "(door-open)", "(charged)", "(at-final-room)", "(at-destination)"}
    assert gn_edges(graph) == {("(has-key)", "(door-open)"), ("(has-key)", "(charged)"),
                               ("(door-open)", "(at-final-room)"), ("(charged)", "(at-final-room)"),
                               ("(at-final-room)", "(at-destination)")}
    assert names(graph, goal=True) == {"(at-destination)"}
    conj = compute_landmarks(load_task(pddl_models.path("household_v1")), m=2)
    assert {str(lm) for lm in conj.landmarks if lm.kind == "conjunctive"} == {"{(charged), (door-open)}"}


def test_household_v2_minecraft_mario_match_the_paper():
    v2 = compute_landmarks(load_task(pddl_models.path("household_v2")))
    assert gn_edges(v2) == {("(at-final-room)", "(at-destination)")}
    mc = compute_landmarks(load_task(pddl_models.path("minecraft")))
    assert gn_edges(mc) == {("(wood-processed)", "(plank_made)"), ("(wood-processed)", "(stick_made)"),
                            ("(plank_made)", "(ladder_made)"), ("(stick_made)", "(ladder_made)")}
    mario = compute_landmarks(load_task(pddl_models.path("mario")))
    assert names(mario, initially_true=True) == {"(at-upper-platform)"}
    chain = ["(at-upper-platform)", "(at-bottom)", "(has-key)", "(at-upper-platform-with-key)", "(door-open)"]
    closure = nx.transitive_closure_dag(mario.graph)
    for before, after in zip(chain, chain[1:]):
        assert closure.has_edge(mario.find(before).id, mario.find(after).id)
    assert [str(lm) for lm in mario.subgoals()] == chain[1:]


def test_linearizations_and_subgoals_respect_orderings():
    graph = compute_landmarks(load_task(pddl_models.path("household_v1")))
    orders = graph.subgoal_linearizations()
    assert [[str(lm) for lm in o] for o in orders] == [
        ["(has-key)", "(charged)", "(door-open)", "(at-final-room)", "(at-destination)"],
        ["(has-key)", "(door-open)", "(charged)", "(at-final-room)", "(at-destination)"]]
    assert len(graph.linearizations(limit=1)) == 1
    assert graph.linearizations() == graph.linearizations()  # deterministic


def _without(task: Task, atoms) -> bool:
    """Is the goal relaxed-reachable when ``atoms`` can never be made true?"""
    ops = tuple(op for op in task.operators if not (op.add & atoms))
    reduced = Task(task.name, task.domain_name, task.facts, ops, task.init - atoms, task.goal)
    return task.goal <= relaxed_reachable(reduced)


# p01/p02 of every domain but the three largest (snake, mprime, barman: covered by test_fd_agreement)
SAMPLE = [r for r in ipc_rows("strips") if r["problem_file"].endswith(("p01.pddl", "p02.pddl"))
          and r["domain"] not in ("snake", "mprime", "barman")]


@pytest.mark.parametrize("row", SAMPLE, ids=lambda r: r["problem_file"])
def test_every_fact_landmark_is_necessary_and_orderings_hold_in_a_plan(row):
    task = load_task(*ipc_paths(row))
    graph = compute_landmarks(task)
    assert nx.is_directed_acyclic_graph(graph.graph)
    for lm in graph.landmarks:
        if not lm.initially_true:
            assert not _without(task, lm.atoms), f"{lm} is not necessary"
    result = find_plan(task)
    assert result.solved
    states = task.replay(result.plan)
    first = {}
    for lm in graph.landmarks:
        first[lm.id] = next(i for i, s in enumerate(states) if lm.atoms <= s)  # every landmark is reached
    for o in graph.orderings:
        if o.kind == "greedy-necessary":
            assert first[o.source] < first[o.target] or graph.by_id(o.target).initially_true
        else:
            assert first[o.source] < first[o.target]


def test_conjunctive_landmarks_hold_together_in_a_plan(need_ipc):
    task = load_task(IPC / "blocks/domain.pddl", IPC / "blocks/p01.pddl")
    graph = compute_landmarks(task, m=2)
    assert sum(lm.kind == "conjunctive" for lm in graph.landmarks) == 42
    states = task.replay(find_plan(task).plan)
    for lm in graph.landmarks:
        assert any(lm.atoms <= s for s in states), lm


def test_fact_landmarks_of_m1_are_within_m2(need_ipc):
    task = load_task(IPC / "gripper/domain.pddl", IPC / "gripper/p02.pddl")
    m1 = {lm.atoms for lm in compute_landmarks(task, m=1).landmarks}
    m2 = {lm.atoms for lm in compute_landmarks(task, m=2).landmarks if lm.kind == "fact"}
    assert m1 <= m2


def test_negative_precondition_gives_a_negated_landmark(need_pitfalls):
    task = load_task(PITFALLS / "negpre_domain.pddl", PITFALLS / "negpre_problem.pddl")
    graph = compute_landmarks(task)
    assert names(graph) == {"(done)", "(inside)", "(not (alarm))", "(alarm)"}
    assert ("(not (alarm))", "(inside)") in gn_edges(graph)


def test_static_relations_are_folded_nullary_kept(need_pitfalls):
    task = load_task(PITFALLS / "case_domain.pddl", PITFALLS / "case_problem.pddl")
    assert {str(a) for a in task.static_facts} == {"(link r1 r2)", "(link r2 r3)"}
    graph = compute_landmarks(task)
    assert names(graph) == {"(at r1)", "(at r2)", "(at r3)"}


def test_reasonable_orderings_are_kept_apart(need_ipc):
    task = load_task(IPC / "blocks/domain.pddl", IPC / "blocks/p01.pddl")
    graph = compute_landmarks(task, reasonable=True)
    pairs = {(str(graph.by_id(o.source)), str(graph.by_id(o.target))) for o in graph.reasonable}
    assert ("(on b a)", "(on c b)") in pairs and ("(on c b)", "(on d c)") in pairs
    assert all(o.kind != "reasonable" for o in graph.orderings)
    assert graph.ordering_counts()["reasonable"] == len(graph.reasonable) == 6


def test_unreachable_goal_gives_goal_only_graph():
    from conftest import DATA
    graph = compute_landmarks(load_task(DATA / "bad" / "unreachable_goal.pddl"))
    assert not graph.relaxed_solvable
    assert names(graph) == {"(r)"}


def test_json_contract_and_dot(tmp_path):
    graph = compute_landmarks(load_task(pddl_models.path("household_v1")), m=2)
    data = json.loads(json.dumps(graph.to_json()))
    assert set(data) == {"domain", "problem", "factory", "method", "m", "landmarks", "orderings", "stats", "notes"}
    assert (data["domain"], data["problem"], data["factory"], data["m"]) == ("grid_world", "prob", "hm", 2)
    assert data["method"] == data["factory"]  # the key's name before issue 35, kept for readers
    for lm in data["landmarks"]:
        assert set(lm) == {"id", "atoms", "kind", "initially_true", "goal"}
        assert all(a.startswith("(") and a == a.lower() for a in lm["atoms"])
    assert {o["kind"] for o in data["orderings"]} <= {"natural", "greedy-necessary", "reasonable"}
    assert set(data["stats"]) >= {"facts", "operators", "seconds"}  # and what the task has beyond STRIPS
    dot = graph.to_dot()
    assert dot.startswith("digraph") and dot.count("->") == len(graph.orderings)


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_drawing(tmp_path, suffix):
    from asg.planning.draw import draw
    graph = compute_landmarks(load_task(pddl_models.path("household_v1")))
    out = draw(graph, tmp_path / f"g.{suffix}")
    head = out.read_bytes()[:64]
    assert head.startswith(b"\x89PNG") if suffix == "png" else b"<svg" in out.read_bytes()[:400]


def test_transitive_reduction_keeps_closure():
    graph = compute_landmarks(load_task(pddl_models.path("household_v1")), m=2)
    reduced = graph.transitive_reduction()
    assert nx.transitive_closure_dag(reduced).edges == nx.transitive_closure_dag(graph.graph).edges


def test_landmarks_json_text_and_reasonable_run_without_networkx():
    import subprocess
    import sys
    code = ("import sys\n"
            "from asg import pddl_models\n"
            "from asg.planning import compute_landmarks, load_task\n"
            "task = load_task(pddl_models.path('household_v1'))\n"
            "graph = compute_landmarks(task, reasonable=True)\n"
            "graph.to_json(); graph.to_dot(); graph.subgoal_linearizations()\n"
            "graph.predecessors(graph.find('(at-final-room)'))\n"
            "compute_landmarks(task, m=2)\n"
            "print('networkx' in sys.modules)\n"
            "graph.graph\n"
            "print('networkx' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_graph_is_a_digraph_built_on_first_use_with_the_documented_schema():
    graph = compute_landmarks(load_task(pddl_models.path("household_v1")), m=2)
    dag = graph.graph
    assert isinstance(dag, nx.DiGraph) and graph.graph is dag
    assert sorted(dag.nodes) == [lm.id for lm in graph.landmarks]
    assert all(dag.nodes[lm.id]["landmark"] == lm for lm in graph.landmarks)
    assert sorted(dag.edges(data="kind")) == sorted((o.source, o.target, o.kind) for o in graph.orderings)
    for lm in graph.landmarks:
        assert [p.id for p in graph.predecessors(lm)] == sorted(dag.predecessors(lm.id))
        assert graph.out_edges(lm.id) == {v: dag.edges[lm.id, v]["kind"] for v in dag.successors(lm.id)}


def test_a_cycle_of_sound_orderings_is_refused():
    from asg.planning import AsgError
    from asg.planning.landmark_graph import LandmarkGraph, Ordering
    good = compute_landmarks(load_task(pddl_models.path("household_v1")))
    first, second = good.landmarks[0].id, good.landmarks[1].id
    loop = [Ordering(first, second, "natural"), Ordering(second, first, "greedy-necessary")]
    with pytest.raises(AsgError, match="cycle"):
        LandmarkGraph(good.task, good.landmarks, loop)


