"""``asg mvtr`` through click's CliRunner: reports, exit codes, and every error path."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from asg.cli.main import main

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
    ([], "Missing option '--domain'"),
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
