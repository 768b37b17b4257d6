"""benchmarks/figure3.py: the reducer writes JSON/MD/PNG; a second invocation reuses finished runs."""
from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import benchmark_script

from asg.learning.asgrl.config import make_config
from asg.learning.asgrl.experiments import finished_run, run_grid
from asg.learning.asgrl.trainer import train
from asg.learning.errors import ConfigError
from asg.learning.run_dir import RunDir


def _figure3():
    return benchmark_script("figure3")


ARGS = ["--preset", "paper", "--seeds", "2", "--steps", "1500", "--domains", "mario",
        "--methods", "goal-q", "--eval-episodes", "1"]


def test_figure3_reduces_two_tiny_runs_and_resumes(tmp_path, capsys):
    fig = _figure3()
    out, results = tmp_path / "runs", tmp_path / "results"
    assert fig.main([*ARGS, "--out", str(out), "--results", str(results)]) == 0
    payload = json.loads((results / "figure3.json").read_text())
    row = payload["summary"]["mario"][0]
    assert row["method"] == "goal-q" and row["seeds"] == 2 and row["epsilon_seeds"] == 2
    assert payload["curves"]["mario"]["goal-q"]["seeds"] == 2 and payload["meta"]["preset"] == "paper"
    assert payload["command"].startswith("python benchmarks/figure3.py --preset paper --seeds 2 --steps 1500")
    assert payload["budget"] == {"env_steps_per_run": 1500} and payload["seeds"] == [0, 1] and payload["commit"]
    md = (results / "figure3.md").read_text()
    assert "| mario | Goal-Q-Learning | 2 |" in md and "ε = 0.05" in md
    assert (results / "figure3.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    err = capsys.readouterr().err
    assert "[2/2]" in err and "ETA" in err

    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("result.json")}
    assert len(stamps) == 2
    assert fig.main([*ARGS, "--out", str(out), "--results", str(results)]) == 0
    assert {p: p.stat().st_mtime_ns for p in out.rglob("result.json")} == stamps  # nothing retrained
    assert "2 of 2 cells reused from their records" in capsys.readouterr().err

    # the records alone (a fresh checkout: no run folders) give the same reduction and train nothing
    records = sorted((results / "seeds" / "figure3").rglob("seed*.json"))
    assert [p.relative_to(results).as_posix() for p in records] == [
        "seeds/figure3/mario/goal-q/seed0.json", "seeds/figure3/mario/goal-q/seed1.json"]
    before = json.loads((results / "figure3.json").read_text())
    assert fig.main([*ARGS, "--out", str(tmp_path / "elsewhere"), "--results", str(results)]) == 0
    assert not (tmp_path / "elsewhere").exists()
    unlike = {"meta": None, "command": None}  # --out differs
    assert json.loads((results / "figure3.json").read_text()) | unlike == before | unlike
    # a record of another config is not reused: another step budget trains its own cells
    capsys.readouterr()
    short = [*ARGS[:4], "--steps", "1000", *ARGS[6:]]
    assert fig.main([*short, "--out", str(out / "other"), "--results", str(results), "--name", "budget"]) == 0
    assert fig.main([*short, "--out", str(out / "other"), "--results", str(results), "--reduce-only"]) == 0
    assert len(list((out / "other").rglob("result.json"))) == 2
    assert capsys.readouterr().err.count("a record of another config") == 2  # then read from out/other

    # an earlier reduction's runs imported as records: in the table, not in the curves
    assert fig.main([*short, "--results", str(results), "--name", "imported", "--import", str(results / "figure3.json"),
                     "--reduce-only", "--out", str(tmp_path / "none")]) == 0
    imported = json.loads((results / "imported.json").read_text())
    assert imported["summary"]["mario"][0]["seeds"] == 2 and imported["curves"]["mario"] == {}
    assert imported["summary"] == json.loads((results / "figure3.json").read_text())["summary"]

    # two reduced settings side by side
    assert fig.main([*ARGS, "--out", str(out), "--results", str(results), "--reduce-only", "--name", "other"]) == 0
    assert fig.main(["--results", str(results), "--combine", "figure3,other", "--name", "both"]) == 0
    table = (results / "both.md").read_text()
    assert "| mario | Goal-Q-Learning | figure3 (`paper`) |" in table and "| other (`paper`) |" in table


def test_run_grid_reuses_finished_resumes_interrupted_and_refuses_a_foreign_config(tmp_path):
    cfg = make_config("mario", "goal-q", "paper", seed=0, total_steps=3000, eval_interval=1000, eval_episodes=1)
    overrides = {"eval_interval": 1000, "eval_episodes": 1}
    calls = []

    def progress(stage, steps, total, note):
        if stage not in calls:
            calls.append(stage)
    # A finished cell is reused, even through a different call.
    first = run_grid("mario", ["goal-q"], [0], tmp_path, steps=3000, overrides=overrides, preset="paper",
                     reuse=True, progress=progress)
    again = run_grid("mario", ["goal-q"], [0], tmp_path, steps=3000, overrides=overrides, preset="paper",
                     reuse=True, progress=progress)
    assert calls == ["mario/goal-q seed 0"] and again[0].result.to_json() == first[0].result.to_json() | {
        "wall_seconds": round(first[0].result.wall_seconds, 3)}
    assert finished_run(tmp_path / "goal-q" / "seed0", cfg).to_json() == again[0].result.to_json()
    with pytest.raises(ConfigError, match="another config"):
        run_grid("mario", ["goal-q"], [0], tmp_path, steps=3000, overrides=overrides, preset="asg", reuse=True)

    # An interrupted cell is resumed from its checkpoint and ends as the uninterrupted run did.
    other = dataclasses.replace(cfg, seed=1)
    run = RunDir.create(tmp_path / "goal-q" / "seed1", other)
    ticks = iter(range(100))
    assert train(other, run_dir=run, should_stop=lambda: next(ticks) >= 1).status == "interrupted"
    assert finished_run(tmp_path / "goal-q" / "seed1", other) is None
    resumed = run_grid("mario", ["goal-q"], [1], tmp_path, steps=3000, overrides=overrides, preset="paper",
                       reuse=True)[0].result
    assert resumed.status == "finished" and resumed.env_steps == 3000
    assert resumed.success_rate == train(other).success_rate


def test_a_record_from_before_a_switch_was_added_is_reused_a_changed_one_is_not(tmp_path, capsys):
    """Records are compared through the typed config reader: a field missing from an older record
    reads as its default (the behaviour it ran with); a field set to another value is another config."""
    fig = _figure3()
    one = [*ARGS[:2], "--seeds", "1", *ARGS[4:], "--out", str(tmp_path / "runs"), "--results", str(tmp_path)]
    assert fig.main(one) == 0
    record = tmp_path / "seeds" / "figure3" / "mario" / "goal-q" / "seed0.json"
    data = json.loads(record.read_text())
    assert data["config"]["learner"]["q"].pop("q_init") == 0.0  # as if written before the switch existed
    record.write_text(json.dumps(data))
    capsys.readouterr()
    assert fig.main([*one[:-4], "--out", str(tmp_path / "none"), "--results", str(tmp_path)]) == 0
    assert not (tmp_path / "none").exists()  # reused, nothing trained
    assert "1 of 1 cells reused" in capsys.readouterr().err

    data["config"]["learner"]["q"]["q_init"] = 0.5
    record.write_text(json.dumps(data))
    assert fig.main([*one[:-4], "--out", str(tmp_path / "none"), "--results", str(tmp_path), "--reduce-only"]) == 0
    assert "a record of another config" in capsys.readouterr().err
