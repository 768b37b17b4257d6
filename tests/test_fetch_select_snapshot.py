"""benchmarks/fetch_select_snapshot.py: a goal-policy snapshot chosen on held-out atomic starts, by its
worst family and setting; bad arguments are one line each."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, benchmark_script

from asg.learning.goal_policy.evaluate import average_policies, load_policy, save_policy

POLICY = REPO / "learning" / "pretrained" / "fetch_goal_policy.npz"


def test_the_snapshot_that_acts_is_chosen_over_one_that_stands_still(tmp_path):
    """Epoch 10 is a trained policy, epoch 20 the same with its last layer zeroed (it never moves): the
    later epoch loses, so the choice is the score's, not the order's."""
    run = tmp_path / "run"
    (run / "snapshots").mkdir(parents=True)
    good = load_policy(POLICY)
    save_policy(good, run / "snapshots" / "policy_e0010.npz")
    w, b = good.layers[-1]
    still = replace(good, layers=good.layers[:-1] + ((np.zeros_like(w), np.zeros_like(b)),))
    save_policy(still, run / "snapshots" / "policy_e0020.npz")
    out = tmp_path / "chosen.json"
    benchmark_script("fetch_select_snapshot").main(["--runs", str(run), "--episodes", "2", "--every", "10",
                                                     "--average-from", "10", "--out", str(out)])
    data = json.loads(out.read_text())
    assert data["command"].startswith("python benchmarks/fetch_select_snapshot.py") and data["seeds"] == [7919]
    rows = {r["epoch"]: r for r in data["rows"] if r["kind"] == "snapshot"}
    assert set(rows) == {10, 20}
    average = [r for r in data["rows"] if r["kind"] == "average"]
    written = tmp_path / "chosen_averages" / "run_average_e0010-e0020.npz"  # beside --out, not in the run
    assert [(r["epoch"], Path(r["policy"])) for r in average] == [(20, written)]
    assert sorted(p.name for p in (run / "snapshots").iterdir()) == ["policy_e0010.npz", "policy_e0020.npz"]
    w_avg = load_policy(written).layers[-1][0]
    assert np.allclose(w_avg, w / 2)  # the mean of the trained layer and the zeroed one
    settings, families = ("table", "chained", "other_zone"), ("Move_To_Zone", "Stack")
    assert set(rows[10]["rates"]) == {f"{s}/{f}" for s in settings for f in families}
    assert rows[20]["score"] == 0.0 < rows[10]["score"] == min(rows[10]["rates"].values())
    assert data["chosen"]["epoch"] == 10


@pytest.mark.parametrize("args, message", [
    (["--seed", "0"], "--seed: 0 is the atomic evaluation's seed"),
    ([], "no snapshots/policy_eNNNN.npz"),
])
def test_bad_arguments_are_one_line(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as stop:
        benchmark_script("fetch_select_snapshot").main(["--runs", str(tmp_path), *args])
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_policies_of_different_shapes_are_not_averaged():
    good = load_policy(POLICY)
    w, b = good.layers[-1]
    smaller = replace(good, layers=good.layers[:-1] + ((w[:2], b[:2]),))
    with pytest.raises(ValueError, match="different shapes"):
        average_policies([good, smaller])
    assert all(np.array_equal(a, c) for (a, _), (c, _) in zip(average_policies([good, good]).layers, good.layers))
