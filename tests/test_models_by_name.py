"""Bundled models by name: one resolver (``asg.pddl_models.resolve``) behind every PDDL argument."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_line

from asg import pddl_models
from asg.cli.main import main
from asg.planning.errors import AsgError

EXPECTED = {"fetch-programs", "household-v1", "household-v2", "mario", "minecraft"}


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_bundled_names_are_the_file_stems_with_dashes():
    models = pddl_models.bundled()
    assert set(models) == EXPECTED
    for name, path in models.items():
        assert path.is_file() and path.name == name.replace("-", "_") + ".pddl"


@pytest.mark.parametrize("spec", ["household-v1", "household_v1", "household_v1.pddl", "Household-V1"])
def test_resolve_accepts_both_spellings(spec):
    assert pddl_models.resolve(spec) == pddl_models.path("household_v1")


def test_an_existing_path_wins_over_a_bundled_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("mario").write_text("(define (domain mine))")
    assert pddl_models.resolve("mario") == Path("mario")


def test_unknown_names_are_one_asg_error():
    with pytest.raises(AsgError, match=r"^nope: no such file or bundled model \(asg models lists them\)$"):
        pddl_models.resolve("nope")
    with pytest.raises(AsgError):
        pddl_models.resolve("../mario")  # a name never walks out of the package


def test_asg_models_lists_names_and_paths():
    text = run("models")
    assert text.exit_code == 0, text.output
    rows = [line.split() for line in text.output.splitlines()]
    assert [row[0] for row in rows] == sorted(EXPECTED)
    assert all(Path(row[1]).is_file() for row in rows)
    data = json.loads(run("models", "--json").output)
    assert {entry["name"] for entry in data} == EXPECTED
    assert all(Path(entry["path"]).is_file() and entry["file"].endswith(".pddl") for entry in data)


@pytest.mark.parametrize("args", [
    ["landmarks", "household-v1", "--format", "json"],
    ["landmarks", "household_v1", "--format", "json"],
    ["check", "mario"],
])
def test_planning_commands_take_names(args):
    result = run(*args)
    assert result.exit_code == 0, result.output


def test_landmarks_by_name_equals_by_path():
    by_name = json.loads(run("landmarks", "mario", "--format", "json").stdout)
    by_path = json.loads(run("landmarks", pddl_models.path("mario"), "--format", "json").stdout)
    by_name["stats"].pop("seconds"), by_path["stats"].pop("seconds")
    assert by_name == by_path


@pytest.mark.parametrize("args", [
    ["landmarks", "nope"],
    ["check", "nope"],
    ["plan", "nope"],
    ["mvtr", "--domain", "mario", "--model", "nope"],
    ["train", "--domain", "mario", "--model", "nope"],
])
def test_unknown_model_names_are_one_line(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = one_line(run(*args))
    assert line == "error: nope: no such file or bundled model (asg models lists them)"
    assert not (tmp_path / "runs").exists()


def test_mvtr_takes_a_bundled_model_name():
    result = run("mvtr", "--domain", "mario", "--model", "mario", "--episodes", "1", "--max-steps", "20",
                 "--branch-steps", "2", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["holds"]
