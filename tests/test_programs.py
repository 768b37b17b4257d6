"""The Fetch program library compiled from pddl_models/fetch_programs.pddl (AlphaNPI-X Table 3)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from asg.pddl_models import path
from asg.planning import load_task
from asg.planning.programs import ProgramError, compile_library, fetch_library
from asg.planning.task import Atom

# Appendix A, Table 3, in the paper's order (note: the paper's "Move blue blocks to the orange
# zone" description of Move_All_To_Zone_BLUE is a typo; its name says blue).
TABLE_3 = [
    "Stack_0_1", "Stack_0_2", "Stack_0_3", "Stack_1_0", "Stack_1_2", "Stack_1_3",
    "Stack_2_0", "Stack_2_1", "Stack_2_3", "Stack_3_0", "Stack_3_1", "Stack_3_2",
    "Move_To_Zone_0_ORANGE", "Move_To_Zone_1_ORANGE", "Move_To_Zone_2_ORANGE", "Move_To_Zone_3_ORANGE",
    "Move_To_Zone_0_BLUE", "Move_To_Zone_1_BLUE", "Move_To_Zone_2_BLUE", "Move_To_Zone_3_BLUE",
    "Stack_All_To_Zone_ORANGE", "Stack_All_To_Zone_BLUE", "Move_All_To_Zone_ORANGE",
    "Move_All_To_Zone_BLUE", "Stack_All_Blocks", "Clean_Table", "Clean_And_Stack",
]
TABLE_ON = frozenset(Atom("on-table", (b,)) for b in ("b0", "b1", "b2", "b3"))


def atoms(*texts: str) -> frozenset[Atom]:
    return frozenset(Atom.parse(t) for t in texts)


@pytest.fixture(scope="module")
def lib():
    return fetch_library()


def test_table_3_programs_exactly(lib):
    assert [p.name for p in lib] == TABLE_3
    assert len(lib.atomic) == 20 and len(lib.non_atomic) == 7


def test_levels_follow_appendix_a(lib):
    levels = {p.name: p.level for p in lib}
    assert all(levels[n] == 0 for n in TABLE_3[:20])
    assert {n for n, lv in levels.items() if lv == 1} == {
        "Stack_All_To_Zone_ORANGE", "Stack_All_To_Zone_BLUE", "Move_All_To_Zone_ORANGE",
        "Move_All_To_Zone_BLUE", "Stack_All_Blocks"}
    assert {n for n, lv in levels.items() if lv == 2} == {"Clean_Table", "Clean_And_Stack"}


def test_calls_only_go_down_the_hierarchy(lib):
    for p in lib:
        assert all(lib.get(c).level < p.level for c in p.calls), p.name
        assert not p.atomic or p.calls == ()
    assert set(lib.get("Stack_All_Blocks").calls) == set(TABLE_3[:20])
    assert set(lib.get("Clean_And_Stack").calls) == set(TABLE_3[:25])


def test_atomic_programs_are_the_pddl_actions(lib):
    p = lib.get("Stack_0_1")
    assert p.action == "(stack b0 b1)" and p.arguments == ("b0", "b1")
    assert lib.get("Move_To_Zone_2_BLUE").action == "(move_to_zone b2 blue)"


def test_stack_pre_is_both_blocks_clear(lib):
    stack = lib.get("Stack_0_1")
    assert stack.pre.holds(TABLE_ON)
    assert not stack.pre.holds(TABLE_ON | atoms("(on b2 b1)"))   # something on the target
    assert not stack.pre.holds(TABLE_ON | atoms("(on b3 b0)"))   # something on the moved block
    assert not stack.pre.holds(TABLE_ON | atoms("(on b0 b1)"))   # already done: b1 is covered
    assert stack.pre.holds(TABLE_ON | atoms("(on b2 b3)"))       # elsewhere does not matter


def test_stack_post_is_its_effect(lib):
    post = lib.get("Stack_0_1").post
    assert post.holds(atoms("(on b0 b1)", "(on-table b1)"))
    assert not post.holds(atoms("(on b0 b1)", "(on-table b0)"))
    assert not post.holds(atoms("(on b0 b2)"))


def test_move_to_zone_pre_and_post(lib):
    move = lib.get("Move_To_Zone_0_ORANGE")
    assert move.pre.holds(TABLE_ON)
    assert not move.pre.holds(TABLE_ON | atoms("(in-zone b0 orange)"))
    assert not move.pre.holds(TABLE_ON | atoms("(zone-full orange)"))
    assert move.pre.holds(TABLE_ON | atoms("(zone-full blue)"))
    assert move.post.holds(atoms("(in-zone b0 orange)", "(on-table b0)"))
    assert not move.post.holds(atoms("(in-zone b0 blue)", "(on-table b0)"))


def test_stack_all_blocks_is_a_real_disjunction(lib):
    post = lib.get("Stack_All_Blocks").post
    assert len(post.clauses) == 24  # one per order of the four blocks
    assert post.holds(atoms("(on b2 b0)", "(on b0 b3)", "(on b3 b1)"))
    assert post.holds(atoms("(on b1 b0)", "(on b2 b1)", "(on b3 b2)"))
    assert not post.holds(atoms("(on b1 b0)", "(on b3 b2)"))          # two towers
    assert not post.holds(atoms("(on b1 b0)", "(on b2 b1)"))          # three high


def test_zone_programs(lib):
    stack_orange = lib.get("Stack_All_To_Zone_ORANGE").post
    assert stack_orange.holds(atoms("(in-zone b1 orange)", "(on b0 b1)"))
    assert stack_orange.holds(atoms("(in-zone b0 orange)", "(on b1 b0)"))
    assert not stack_orange.holds(atoms("(in-zone b2 orange)", "(on b1 b2)"))  # b2 is blue
    assert not stack_orange.holds(atoms("(in-zone b0 blue)", "(on b1 b0)"))
    move_blue = lib.get("Move_All_To_Zone_BLUE").post
    assert move_blue.holds(atoms("(in-zone b2 blue)", "(in-zone b3 blue)"))
    assert not move_blue.holds(atoms("(in-zone b2 blue)", "(in-zone b0 blue)"))
    clean = lib.get("Clean_Table").post
    assert clean.holds(atoms("(in-zone b0 orange)", "(in-zone b1 orange)", "(in-zone b2 blue)",
                             "(in-zone b3 blue)"))
    assert not clean.holds(atoms("(in-zone b0 orange)", "(in-zone b1 orange)", "(in-zone b2 blue)"))


def test_clean_and_stack_accepts_every_order(lib):
    post = lib.get("Clean_And_Stack").post
    assert len(post.clauses) == 4
    for lo, hi in (("b0", "b1"), ("b1", "b0")):
        for blo, bhi in (("b2", "b3"), ("b3", "b2")):
            state = atoms(f"(in-zone {lo} orange)", f"(on {hi} {lo})", f"(in-zone {blo} blue)", f"(on {bhi} {blo})")
            assert post.holds(state)
            assert not post.holds(state - {Atom("on", (bhi, blo))})


def test_non_atomic_pre_is_true(lib):
    assert all(p.pre.holds(frozenset()) for p in lib.non_atomic)


def test_json_schema(lib):
    data = lib.to_json()["programs"]
    assert [d["name"] for d in data] == TABLE_3
    assert set(data[0]) >= {"name", "level", "arguments", "calls", "pre", "post"}
    assert data[0]["arguments"] == ["b0", "b1"] and data[-1]["level"] == 2


def test_the_file_is_an_ordinary_planning_task():
    task = load_task(path("fetch_programs"))
    assert len(task.operators) == 20
    plan = ["(move_to_zone b0 orange)", "(move_to_zone b1 orange)", "(move_to_zone b2 blue)",
            "(move_to_zone b3 blue)"]
    assert task.goal_reached(task.replay(plan)[-1])
    with pytest.raises(ValueError):  # b1 is covered once b0 is on it
        task.replay(["(stack b0 b1)", "(move_to_zone b1 orange)"])


def test_programs_module_imports_no_numpy():
    code = "import asg.planning.programs as p, sys; p.fetch_library(); print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- declaration errors ------------------------------------------------------------------------
DOMAIN = """
(define (domain d) (:requirements :strips :typing)
  (:types thing)
  (:constants a b - thing)
  (:predicates (done ?x - thing) (mark ?x - thing))
  (:action act :parameters (?x - thing) :precondition (and) :effect (done ?x)))
(define (problem p) (:domain d) (:init (mark a)) (:goal (done a)))
"""


def _compile(tmp_path, directives: str):
    f = tmp_path / "lib.pddl"
    f.write_text(textwrap.dedent(directives) + DOMAIN)
    return compile_library(f)


def test_minimal_library_compiles(tmp_path):
    lib = _compile(tmp_path, """\
        ; @program Act ?x - thing
        ;   @level 0
        ;   @action act
        ; @program All
        ;   @level 1
        ;   @post (forall (?x - thing) (imply (mark ?x) (done ?x)))
        """)
    assert [p.name for p in lib] == ["Act_A", "Act_B", "All"]
    assert str(lib.get("All").post) == "(done a)"   # (mark ?x) is static: only a is marked
    assert lib.get("All").calls == ("Act_A", "Act_B")


@pytest.mark.parametrize("directives, message", [
    ("; @level 0\n", "before any @program"),
    ("; @program Act ?x - thing\n;   @action act\n", "has no @level"),
    ("; @program Act ?x - thing\n;   @level 0\n;   @action nope\n", "needs @action"),
    ("; @program Act ?y - thing\n;   @level 0\n;   @action act\n", "differ from action"),
    ("; @program All\n;   @level 1\n;   @post (nothing a)\n", "unknown predicate"),
    ("; @program All\n;   @level 1\n;   @post (done ?z)\n", "unbound variable"),
    ("; @program All\n;   @level 1\n;   @calls Other\n", "unknown program family"),
    ("; @program Act ?x - thing\n;   @level 0\n;   @action act\n; @program Up\n;   @level 0\n;   @calls Act\n",
     "needs @action"),
    ("; @program Act ?x - thing\n;   @level 1\n; @program Up\n;   @level 1\n;   @calls Act\n", "may not call"),
    ("; @program All\n;   @level 1\n;   @frobnicate\n", "unknown directive"),
])
def test_bad_declarations_name_the_line(tmp_path, directives, message):
    with pytest.raises(ProgramError, match=message) as err:
        _compile(tmp_path, directives)
    assert "lib.pddl:" in str(err.value)


# -- landmark graphs of the non-atomic programs ---------------------------------------------------
def test_reach_task_of_a_program_is_solved_by_its_atomic_programs(lib):
    from asg.planning import find_plan

    task = lib.program_task("Clean_And_Stack")
    result = find_plan(task)
    assert task.goal_reached(task.replay(result.plan)[-1])
    steps = [op.name for op in result.plan]
    assert steps[-1].startswith("(reach_") and len(steps) == 5  # 4 atomic programs + the goal action
    assert all(lib.get(_program_name(lib, s)).atomic for s in steps[:-1])


def _program_name(lib, action: str) -> str:
    return next(p.name for p in lib.atomic if p.action == action)


def test_landmark_graphs_of_non_atomic_programs(lib):
    import networkx as nx

    in_zone = {Atom("in-zone", (b, z)) for b, z in (("b0", "orange"), ("b1", "orange"), ("b2", "blue"),
                                                    ("b3", "blue"))}
    for program in lib.non_atomic:
        graph = lib.landmarks(program.name)
        assert nx.is_directed_acyclic_graph(graph.graph), program.name
        assert any(lm.goal for lm in graph.landmarks)
    assert set(lib.subgoals("Clean_Table")) == in_zone
    assert set(lib.subgoals("Move_All_To_Zone_BLUE")) == {Atom("in-zone", ("b2", "blue")),
                                                          Atom("in-zone", ("b3", "blue"))}
    # "in any order": no single stacking order or zone atom is forced, so no fact landmark
    assert lib.subgoals("Stack_All_To_Zone_ORANGE") == []
    assert lib.subgoals("Stack_All_Blocks") == []


def test_landmarks_from_a_labelled_state(lib):
    """From a state with b0 already in its zone, only the blue moves and b1 remain subgoals."""
    init = TABLE_ON | atoms("(in-zone b0 orange)", "(holding b2)")  # holding: not in the model, dropped
    assert set(lib.subgoals("Clean_Table", init)) == {
        Atom("in-zone", ("b1", "orange")), Atom("in-zone", ("b2", "blue")), Atom("in-zone", ("b3", "blue"))}
