"""``asg mvtr`` through click's CliRunner: reports, exit codes, and every error path."""
from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_line
from toy_domains import KEYDOOR_LABELS, KeyDoorCorridor

from asg.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

FAST = ["--episodes", "3", "--max-steps", "100", "--branch-steps", "10"]

WRONG_GOAL = """
(define (domain Mario) (:requirements :strips)
  (:predicates (at-upper-platform) (at-bottom) (has-key))
  (:action down :parameters () :precondition (at-upper-platform) :effect (at-bottom))
  (:action key :parameters () :precondition (at-bottom) :effect (has-key)))
(define (problem p) (:domain Mario) (:init (at-upper-platform)) (:goal (has-key)))
"""


def run(*args: str):
    return CliRunner().invoke(main, ["mvtr", *args])


def test_paper_model_holds_text_report():
    result = run("--domain", "household-v1", *FAST)
    assert result.exit_code == 0, result.output
    assert "is an MVTR" in result.output
    assert "instantiates plan [(pickup_key red) (charge_door) (open_door)" in result.output
    assert "(pass_through_door): (at-final-room) and (door-ajar) never held together" in result.output


def test_json_report():
    result = run("--domain", "mario", "--json", "--seed", "3", *FAST)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["holds"] and report["domain"] == "mario" and report["model"] == "mario"
    assert report["condition2"]["plan"] == (
        "(go_down_the_ladder) (pickup_key) (go_up_the_ladder) (unlock_door)")
    assert report["condition1"]["violations"] == []
    assert report["traces"]["random"] == 3


def test_failing_model_exits_1_with_counter_example(tmp_path):
    model = tmp_path / "wrong.pddl"
    model.write_text(WRONG_GOAL)
    result = run("--domain", "mario", "--model", str(model), *FAST)
    assert result.exit_code == 1, result.output
    assert "NOT an MVTR" in result.output
    assert "counter-example:" in result.output and "key=1" in result.output


def test_pixel_mario_uses_the_mario_model():
    result = run("--domain", "pixel-mario", "--json", *FAST)
    assert result.exit_code == 0 and json.loads(result.output)["model"] == "mario"


@pytest.mark.parametrize("args, message", [
    (["--domain", "zelda"], "'zelda' is not one of"),
    (["--domain", "mario", "--model", "/no/such/file.pddl"], "no such file or bundled model"),
    (["--domain", "mario", "--episodes", "-1"], "x>=0"),
    (["--domain", "mario", "--max-steps", "0"], "x>=1"),
])
def test_usage_errors_exit_2(args, message):
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.output


def test_parse_error_names_the_file(tmp_path):
    model = tmp_path / "broken.pddl"
    model.write_text("(define (domain x) (:predicates (a)")
    result = run("--domain", "mario", "--model", str(model))
    assert result.exit_code == 2
    assert str(model) in result.output and "error:" in result.output
    assert "Traceback" not in result.output


def test_unknown_atoms_are_reported(tmp_path):
    model = tmp_path / "sword.pddl"
    model.write_text(WRONG_GOAL.replace("(has-key)", "(has-sword)"))
    result = run("--domain", "mario", "--model", str(model))
    assert result.exit_code == 2
    assert "does not know (has-sword)" in result.output and "(has-key)" in result.output


# ------------------------------------------------------------------------- a world of one's own
Corridor, LABELS = KeyDoorCorridor, KEYDOOR_LABELS  # the names world.py exports below

CORRIDOR_PDDL = """
(define (domain corridor) (:requirements :strips) (:predicates (has-key) (door-open) (at-goal))
  (:action take-key :parameters () :precondition (and) :effect (and (has-key)))
  (:action open-door :parameters () :precondition (and (has-key)) :effect (and (door-open)))
  (:action walk-to-goal :parameters () :precondition (and (door-open)) :effect (and (at-goal))))
(define (problem p) (:domain corridor) (:init) (:goal (and (at-goal))))
"""
# The goal (door-open) holds in every state after the door opens, goal state or not.
DOOR_GOAL_PDDL = CORRIDOR_PDDL.replace("(:goal (and (at-goal)))", "(:goal (and (door-open)))")
# The author believes the door opens first and the key lies behind it: no trace orders them so.
DOOR_FIRST_PDDL = """
(define (domain corridor) (:requirements :strips) (:predicates (has-key) (door-open) (at-goal))
  (:action open-door :parameters () :precondition (and) :effect (and (door-open)))
  (:action take-key :parameters () :precondition (and (door-open)) :effect (and (has-key)))
  (:action walk-to-goal :parameters () :precondition (and (has-key)) :effect (and (at-goal))))
(define (problem p) (:domain corridor) (:init) (:goal (and (at-goal))))
"""
WORLD = ["--env", "world:Corridor", "--labeler", "world:LABELS"]


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A user's folder: ``world.py`` (this module's corridor and labels) and the models beside it."""
    (tmp_path / "world.py").write_text(textwrap.dedent(f"""
        import sys
        test = sys.modules[{__name__!r}]
        Corridor = test.Corridor
        LABELS = test.LABELS
        SHORT = {{"(has-key)": lambda env: env.has_key}}
    """))
    for name, text in (("corridor", CORRIDOR_PDDL), ("door_goal", DOOR_GOAL_PDDL), ("door_first", DOOR_FIRST_PDDL)):
        (tmp_path / f"{name}.pddl").write_text(text)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    sys.modules.pop("world", None)


def test_own_world_correct_model_holds(world):
    result = run(*WORLD, "--model", "corridor.pddl")
    assert result.exit_code == 0, result.output
    assert "MVTR of model corridor.pddl on domain world-Corridor: is an MVTR" in result.output
    assert "no scripted solver: 20 random episodes" in result.output
    assert "instantiates plan [(take-key) (open-door) (walk-to-goal)]" in result.output


def test_own_world_goal_true_in_non_goal_states_fails_condition1(world):
    result = run(*WORLD, "--model", "door_goal.pddl", "--json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    assert report["verdict"] == "fails" and not report["condition1"]["holds"]
    first = report["condition1"]["violations"][0]
    assert "(door-open)" in first["atoms"] and "(at-goal)" not in first["atoms"]
    assert "observation [" in first["state"] and "reset seed" in first["state"]


def test_own_world_plans_no_trace_instantiates_fail_condition2(world):
    result = run(*WORLD, "--model", "door_first.pddl", "--json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    assert report["condition1"]["holds"] and report["condition2"]["verdict"] == "fails"
    assert report["condition2"]["goal_traces"] > 0
    assert "(has-key) first holds at step" in report["condition2"]["reason"]
    assert "(door-open) only from step" in report["condition2"]["reason"]


def test_own_world_without_a_goal_reaching_trace_is_unknown_exit_3(world):
    # Five steps never reach the goal (it is at least 13 actions away).
    result = run(*WORLD, "--model", "corridor.pddl", "--max-steps", "5")
    assert result.exit_code == 3, result.output
    assert "not shown either way (condition 2 unknown)" in result.output
    assert "condition 2 (a goal-reaching trace instantiates a plan): unknown" in result.output
    assert "condition 1 (goal atoms only in goal states): holds" in result.output
    assert "more (--episodes) or longer (--max-steps)" in result.stderr
    # Condition 1 failing wins over condition 2 unknown: one fails, exit 1.
    failing = run(*WORLD, "--model", "door_goal.pddl", "--max-steps", "40")
    assert failing.exit_code == 1 and "NOT an MVTR" in failing.output, failing.output


def test_own_world_is_reproducible(world):
    first = run(*WORLD, "--model", "corridor.pddl", "--json", "--seed", "4")
    again = run(*WORLD, "--model", "corridor.pddl", "--json", "--seed", "4")
    assert first.exit_code == 0 and first.output == again.output


def test_a_registered_plugin_domain_is_a_domain_choice(world, tmp_path):
    from asg.envs import plugins

    plugins.register_domain("corridor-mvtr", env=Corridor, labeler=LABELS, model=tmp_path / "corridor.pddl")
    try:
        result = run("--domain", "corridor-mvtr", *FAST)
        assert result.exit_code == 0, result.output
        assert "on domain corridor-mvtr: is an MVTR" in result.output
        wrong = run("--domain", "corridor-mvtr", "--model", "door_first.pddl", *FAST)
        assert wrong.exit_code == 1 and "NOT an MVTR" in wrong.output
    finally:
        plugins.unregister_domain("corridor-mvtr")
    assert "'corridor-mvtr' is not one of" in run("--domain", "corridor-mvtr").output


@pytest.mark.parametrize("args, message", [
    ([], "--domain is required: one of household-v1"),
    (["--env", "world:Corridor", "--model", "corridor.pddl"], "--labeler: needed with --env"),
    (["--labeler", "world:LABELS", "--model", "corridor.pddl"], "--env: needed with --labeler"),
    ([*WORLD], "--model: needed with --env"),
    ([*WORLD, "--model", "corridor.pddl", "--domain", "mario"], "--env: not with --domain"),
    (["--env", "world:Corridor", "--labeler", "nowhere:LABELS", "--model", "corridor.pddl"],
     "--labeler nowhere:LABELS: no module nowhere"),
    (["--env", "world:Corridor", "--labeler", "world:NOPE", "--model", "corridor.pddl"],
     "--labeler world:NOPE: module world has no attribute NOPE"),
    (["--env", "World-Nope-v0", "--labeler", "world:LABELS", "--model", "corridor.pddl"],
     "--env World-Nope-v0: no Gymnasium id 'World-Nope-v0' is registered"),
    (["--env", "world:Corridor", "--labeler", "world:SHORT", "--model", "corridor.pddl"],
     "does not know (at-goal) (door-open)"),
    ([*WORLD, "--model", "missing.pddl"], "missing.pddl: no such file or bundled model"),
])
def test_own_world_errors_are_one_line_exit_2(world, args, message):
    line = one_line(run(*args))
    assert line.startswith("error: ") and message in line, line


# ------------------------------------------------------------------------- Minigrid, examples/doorkey
def test_doorkey_5x5_example_is_an_mvtr(monkeypatch):
    pytest.importorskip("minigrid")
    monkeypatch.chdir(EXAMPLES / "doorkey")
    monkeypatch.delitem(sys.modules, "labels", raising=False)
    try:
        result = run("--env", "MiniGrid-DoorKey-5x5-v0", "--labeler", "labels:DOORKEY", "--model", "doorkey.pddl",
                     "--json")
    finally:
        sys.modules.pop("labels", None)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["verdict"] == "holds" and report["traces"]["goal_reaching"] >= 1
    assert report["condition2"]["plan"] == "(pick-up-key) (open-door) (walk-to-goal)"
    assert report["incompleteness"]["unobserved_fluents"] == []
