"""Random steps that undo a kept landmark, left out once learned (``learner.eliminate_undoing``, ours, off in
every preset; ``asgrl.elimination``), on the tests' drop corridor (key at cell 0, door at 5, start at 3; action 2
puts the key down, as MiniGrid's drop does)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from test_lockstep import DEEP, DropCorridor, serial_and_lockstep
from toy_domains import KEYDOOR_LABELS, KEYDOOR_PDDL

from asg.envs import plugins
from asg.learning.asgrl.config import make_config, merge_overrides
from asg.learning.asgrl.elimination import MIN_TRIES, UndoElimination
from asg.learning.errors import ConfigError
from asg.learning.registry import bind_spec, build_learner, make_subgoals
from asg.learning.torch_state import torch_threads

pytest.importorskip("torch")
HAS_KEY = (0,)  # the context of the door's runs: (has-key), subgoal 0, kept


def test_an_action_is_eliminated_after_enough_tries_that_undid_a_kept_landmark():
    counts = UndoElimination(4)
    for k in range(MIN_TRIES - 1):
        counts.record(HAS_KEY, 2, undone=True)
        counts.record(HAS_KEY, 1, undone=k == 0)
    assert counts.allowed(HAS_KEY) is None  # too few tries to tell
    counts.record(HAS_KEY, 2, undone=True)
    counts.record(HAS_KEY, 1, undone=False)
    np.testing.assert_array_equal(counts.allowed(HAS_KEY), [0, 1, 3])  # 1 undid 1 of its 20 tries: kept
    assert counts.allowed((1,)) is None  # another context knows nothing yet
    counts.record((), 2, undone=True)
    assert counts.allowed(()) is None and () not in counts.tries  # nothing kept, nothing to undo
    again = UndoElimination(4)
    again.load_state_dict(counts.state_dict())
    np.testing.assert_array_equal(again.allowed(HAS_KEY), [0, 1, 3])
    with pytest.raises(ValueError, match="for 4 actions, the env has 5"):
        UndoElimination(5).load_state_dict(counts.state_dict())


def test_the_last_action_is_never_eliminated():
    counts = UndoElimination(2)
    for _ in range(MIN_TRIES):
        counts.record(HAS_KEY, 0, undone=True)
        counts.record(HAS_KEY, 1, undone=True)
    assert counts.allowed(HAS_KEY) is None


@pytest.fixture
def drop(tmp_path):
    (tmp_path / "keydoor.pddl").write_text(KEYDOOR_PDDL)
    return bind_spec(plugins.make_domain("keydoor-elim", env=DropCorridor, labeler=KEYDOOR_LABELS,
                                         model=tmp_path / "keydoor.pddl", max_episode_steps=200))


def learner(drop, eliminate: bool, seed: int = 5):
    cfg = make_config("keydoor-elim", "asgrl", seed=seed, total_steps=6000)
    cfg = merge_overrides(cfg, {"learner": {**DEEP, "protect_landmarks": True, "eliminate_undoing": eliminate}})
    return cfg, build_learner(cfg, make_subgoals(cfg, drop.task), 4)


def test_the_door_runs_stop_dropping_the_key_and_open_the_door(drop):
    """Over the same 120 training episodes: with the switch the drop is eliminated from the door runs'
    random steps once it has undone (has-key) 20 times, and the door opens in most episodes; without
    it, in a few."""
    opened = {}
    for eliminate in (False, True):
        _, learn = learner(drop, eliminate)
        env = drop.make_env(max_steps=200)
        with torch_threads(1):
            episodes = [learn.train_episode(env, drop.labeler, seed, 10**6) for seed in range(300, 420)]
        opened[eliminate] = sum("(door-open)" in ep.reached for ep in episodes)
    assert opened[True] >= 60 and opened[False] <= 20, opened
    counts = learn.elimination
    assert counts.undos[HAS_KEY][2] == MIN_TRIES  # dropped exactly until it was eliminated
    np.testing.assert_array_equal(counts.allowed(HAS_KEY), [0, 1, 3])
    restored = learner(drop, True)[1]
    restored.load_state_dict(learn.state_dict())  # the counts belong to the run's checkpoint
    np.testing.assert_array_equal(restored.elimination.allowed(HAS_KEY), [0, 1, 3])
    with pytest.raises(ValueError, match="eliminate_undoing"):
        learner(drop, False)[1].load_state_dict(learn.state_dict())


def test_a_lockstep_of_one_env_is_the_serial_loop_with_it(drop):
    cfg, serial = learner(drop, True, seed=6)
    twin = build_learner(cfg, make_subgoals(cfg, drop.task), 4)
    want, got = serial_and_lockstep(serial, twin, drop, range(300, 360))
    assert got == want and serial.elimination.state_dict() == twin.elimination.state_dict()
    assert serial.elimination.allowed(HAS_KEY) is not None


def test_it_needs_protect_landmarks(drop):
    cfg, _ = learner(drop, True)
    with pytest.raises(ConfigError, match="learner.eliminate_undoing.*protect_landmarks true"):
        merge_overrides(cfg, {"learner": {"protect_landmarks": False}})


def test_skill_successes_reads_a_runs_checkpoint(drop, tmp_path):
    """benchmarks/skill_successes.py: per landmark its skills' training runs and successes, and the
    elimination's counts by the kept landmarks' names, from the run folder's checkpoint."""
    from conftest import benchmark_script

    from asg.learning.asgrl.trainer import train
    from asg.learning.run_dir import RunDir

    cfg, _ = learner(drop, True)
    cfg = merge_overrides(cfg, {"total_steps": 3000, "eval_interval": 1000, "eval_episodes": 2,
                                "final_eval_episodes": 2, "early_stop_evals": 0})
    train(cfg, drop, run_dir=RunDir.create(tmp_path / "run", cfg))
    out = tmp_path / "skills.json"
    assert benchmark_script("skill_successes").main([f"elim={tmp_path / 'run'}", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["seeds"] == [5] and data["budget"] == {"env_steps": 3000}
    run = data["runs"]["elim"]
    assert list(run["landmarks"]) == ["(has-key)", "(door-open)", "(at-goal)"]
    assert all(0 <= c["successes"] <= c["runs"] for c in run["landmarks"].values())
    assert run["landmarks"]["(has-key)"]["successes"] > 0
    for counts in run["landmarks"].values():  # per skill, adding up to the landmark's
        assert [sum(c[k] for c in counts["per_skill"]) for k in ("runs", "successes")] == [
            counts["runs"], counts["successes"]]
    assert 0 < run["meta_best_score"] <= 3  # protect_landmarks without retakes: each subgoal paid once
    kept = {tuple(e["kept"]): e for e in run["elimination"]}
    assert kept[("(has-key)",)]["undos"][2] >= MIN_TRIES  # the key put down on the way to the door
    assert benchmark_script("skill_successes").main([f"none={tmp_path}", "--out", str(out)]) == 2  # no checkpoint
