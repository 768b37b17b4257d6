"""benchmarks/fetch_select_snapshot.py: a goal-policy snapshot chosen on held-out atomic starts, by its
worst family and setting; bad arguments are one line each."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, benchmark_script

from asg.learning.goal_policy.evaluate import average_policies, load_policy, renormalized, save_policy
from asg.learning.goal_policy.normalizer import NormStats

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
    (["--xy-tolerance", "0"], "--z-tolerance and --xy-tolerance must be > 0"),
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


def test_a_policy_averaged_with_itself_under_another_normaliser_acts_as_before():
    """The normaliser is folded into the first layer before averaging: one function written twice,
    with different input statistics, averages to that function (without the fold it would not)."""
    good = load_policy(POLICY)
    rng = np.random.default_rng(0)
    o_stats = NormStats(good.o_stats.mean + 0.3 * good.o_stats.std, good.o_stats.std * 1.5, good.o_stats.clip)
    g_stats = NormStats(good.g_stats.mean - 0.2 * good.g_stats.std, good.g_stats.std * 0.7, good.g_stats.clip)
    other = renormalized(good, o_stats, g_stats)
    o = good.o_stats.mean + rng.normal(size=(64, len(good.o_stats.mean))) * good.o_stats.std
    g = good.g_stats.mean + rng.normal(size=(64, len(good.g_stats.mean))) * good.g_stats.std
    assert np.allclose(other.act(o, g), good.act(o, g), atol=1e-4)
    assert not np.allclose(other.layers[0][0], good.layers[0][0])
    assert np.allclose(average_policies([other, good]).act(o, g), good.act(o, g), atol=1e-4)
    unfolded = replace(good, layers=tuple((np.mean([a[0], b[0]], axis=0), np.mean([a[1], b[1]], axis=0))
                                          for a, b in zip(other.layers, good.layers)))
    assert not np.allclose(unfolded.act(o, g), good.act(o, g), atol=1e-2)


def test_the_greedy_soup_leaves_out_an_ingredient_that_cancels_the_best(tmp_path):
    """A trained policy and its negation (last layer times -1): the negation scores lower, and the
    average of the two never moves, so the greedy soup keeps the trained policy alone (scoring what it
    scored) while the uniform soup of both scores 0."""
    good = load_policy(POLICY)
    w, b = good.layers[-1]
    paths = [save_policy(good, tmp_path / "good" / "policy.npz"),
             save_policy(replace(good, layers=good.layers[:-1] + ((-w, -b),)), tmp_path / "neg" / "policy.npz")]
    out = tmp_path / "soup.json"
    benchmark_script("fetch_select_snapshot").main(["--policies", *map(str, paths), "--soup", "--episodes", "2",
                                                     "--out", str(out)])
    rows = json.loads(out.read_text())["rows"]
    scored = {Path(r["policy"]).parent.name: r for r in rows if r["kind"] == "policy"}
    assert scored["good"]["score"] > scored["neg"]["score"]
    trial, = (r for r in rows if r["kind"] == "soup-trial")
    assert not trial["kept"] and trial["score"] == 0.0
    soups = {r["name"]: r for r in rows if r["kind"] == "soup"}
    assert soups["greedy"]["ingredients"] == [str(paths[0])]
    assert soups["greedy"]["rates"] == scored["good"]["rates"]
    assert soups["uniform"]["score"] == 0.0 and len(soups["uniform"]["ingredients"]) == 2
    assert (tmp_path / "soup_soups" / "greedy_soup.npz").is_file()


@pytest.mark.parametrize("args, message", [
    ([], "expected --runs, --policies or both"),
    (["--policies", "missing.npz"], "--policies: missing.npz"),
    (["--policies", str(POLICY), "--soup"], "--soup: expected 2 or more candidates"),
])
def test_bad_soup_arguments_are_one_line(capsys, args, message):
    with pytest.raises(SystemExit) as stop:
        benchmark_script("fetch_select_snapshot").main(args)
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_a_tolerant_score_is_the_stricter_test_of_the_same_episodes(tmp_path):
    """``--z-tolerance`` / ``--xy-tolerance`` score each snapshot with the goal test that also wants the
    blocks that close to their targets: the same episodes, never scored higher than the 5 cm ball."""
    run = tmp_path / "run"
    (run / "snapshots").mkdir(parents=True)
    save_policy(load_policy(POLICY), run / "snapshots" / "policy_e0010.npz")
    rows = {}
    for name, extra in (("plain", []), ("tight", ["--z-tolerance", "0.02", "--xy-tolerance", "0.005"])):
        out = tmp_path / f"{name}.json"
        benchmark_script("fetch_select_snapshot").main(["--runs", str(run), "--episodes", "2", "--every", "10",
                                                         "--out", str(out), *extra])
        data = json.loads(out.read_text())
        rows[name] = data["rows"][0]["rates"]
        assert data["goal_test"]["xy_tolerance"] == (0.005 if extra else None)
    assert all(rows["tight"][cell] <= rows["plain"][cell] for cell in rows["plain"])
    assert sum(rows["tight"].values()) < sum(rows["plain"].values())  # 5 mm: few placements pass it
