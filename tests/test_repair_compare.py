"""benchmarks/repair_compare.py: its tiny version (one model, two seeds, a few hundred steps) writes
the repaired model through ``asg mvtr --suggest --write``'s library calls and a results JSON with
its provenance and the per-model comparison; the censored median and the seed pairs say what they
mean."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import benchmark_script


@pytest.fixture(scope="module")
def compare():
    return benchmark_script("repair_compare")


def test_the_tiny_benchmark_writes_the_repair_and_the_comparison(compare, tmp_path):
    from asg.planning import load_task

    out, results = tmp_path / "runs", tmp_path / "repair_compare.json"
    args = ["--models", "mario_no_key", "--seeds", "2", "--steps", "300", "--out", str(out),
            "--results", str(results), "--overrides", '{"eval_episodes": 1, "final_eval_episodes": 1}',
            "--note", "a tiny run"]
    assert compare.main(args) == 0
    data = json.loads(results.read_text())
    assert data["command"].startswith("python benchmarks/repair_compare.py --models mario_no_key")
    assert data["seeds"] == [0, 1] and data["budget"]["env_steps_per_run"] == 300
    assert data["budget"]["exploration"] == "20:500:50"
    repaired = data["repaired"]["mario_no_key"]
    path = Path(repaired["path"])
    assert path == out / "repaired" / "mario_no_key.pddl" and path.is_file()
    assert repaired["mvtr"] == "holds" and repaired["applied"]
    omitted = load_task(compare.OMITTED / "mario_no_key.pddl")
    fixed = load_task(path)  # a different model, naming atoms the omitted one lacks
    assert set(fixed.facts) - set(omitted.facts) and repaired["new_atoms"]
    assert "(has-key)" in repaired["new_atoms"]
    [model] = data["models"]
    assert model["model"] == "mario_no_key" and model["world"] == "mario"
    for kind in compare.KINDS:
        entry = model[kind]
        assert entry["runs"] == 2 and entry["budget"] == 300
        assert [r["seed"] for r in entry["runs_detail"]] == [0, 1]
        assert all(0 < r["env_steps"] <= 300 for r in entry["runs_detail"])
        for run in entry["runs_detail"]:  # 300 steps solve nothing: where each run stalled is listed
            assert run["steps_to_success"] is None and run["never_reached"]
            assert run["never_reached"][-1] == "(door-open)"  # the goal, last in the landmark order
    for name in ("repaired_vs_omitted", "complete_vs_omitted", "repaired_vs_complete"):
        assert sum(model[name].values()) == 2
    assert [p["seed"] for p in model["seed_pairs"]] == [0, 1]
    assert model["repaired_at_most_omitted"] in (True, False, None)
    assert (out / "mario_no_key" / "omitted" / "asgrl" / "seed1").is_dir()
    assert (out / "complete" / "mario" / "asgrl" / "seed0").is_dir()
    md = results.with_suffix(".md").read_text()
    assert "| mario_no_key |" in md and data["command"] in md and "a tiny run" in md
    assert "| mario_no_key | > 300 | > 300 | > 300 | 0/0/0 of 2 |" in md
    assert compare.main(args) == 0  # resumed: every cell read back, the same repaired file accepted
    assert json.loads(results.read_text())["models"] == data["models"]


def test_another_repair_in_the_folder_is_refused(compare, tmp_path):
    from asg.envs.mvtr_traces import ExplorationConfig

    folder = tmp_path / "repaired"
    folder.mkdir()
    (folder / "mario_no_key.pddl").write_text("(define (domain other))")
    with pytest.raises(SystemExit, match="holds another repair"):
        compare.write_repaired("mario_no_key", folder, ExplorationConfig())
    assert (folder / "mario_no_key.pddl").read_text() == "(define (domain other))"


def test_the_censored_median_and_the_seed_pairs(compare):
    assert compare.censored_median([10, 20, 30], 100)["median"] == 20
    half = compare.censored_median([10, None, 30, None], 100)  # the upper middle run never succeeded
    assert half["median"] is None and half["censored_median"] and half["censored_runs"] == 2
    assert compare.censored_median([10, 20, None], 100)["median"] == 20
    assert [compare.pair(a, b) for a, b in [(10, 5), (5, 10), (5, 5), (None, 5), (5, None), (None, None)]] == \
        ["win", "loss", "tie", "win", "loss", "tie"]
    solved = {"median": 50, "censored_median": False}
    beyond = {"median": None, "censored_median": True}
    assert compare.at_most(solved, beyond) is True and compare.at_most(beyond, solved) is False
    assert compare.at_most(beyond, beyond) is None
    assert compare.at_most(solved, {"median": 40, "censored_median": False}) is False
