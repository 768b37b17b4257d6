"""The non-atomic baselines of Table 2: ψ on positions agrees with the labeler, the goal setter's
goals satisfy ψ, goal shapes, rewards are 0 exactly on success, and both baselines train and
evaluate end to end."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from asg.envs.fetch import labeler
from asg.envs.fetch.behaviour_model import state_with_blocks
from asg.envs.fetch.env import FetchBlocksEnv
from asg.envs.fetch.goal_setter import acting_block, goals_reached
from asg.envs.fetch.initial_states import TRAINING, LayoutError, sample_layout
from asg.envs.fetch.layout import EPSILON
from asg.learning.errors import CheckpointError, ConfigError
from asg.learning.fetch_baselines import (
    HORIZON,
    KINDS,
    PAPER_TABLE2_BASELINES,
    TABLE2_ROWS,
    NonAtomicTask,
    evaluate_baseline,
    nonatomic_goal,
    nonatomic_programs,
    one_hot_goal,
    planned_calls,
    post_holds,
    program_index,
    resume_baseline,
    train_baseline,
)
from asg.learning.goal_policy import config as C
from asg.learning.goal_policy.evaluate import load_policy
from asg.learning.goal_policy.rollout import EpisodeSpec
from asg.learning.goal_policy.runlog import read_metrics
from asg.planning.programs import fetch_library

torch.set_num_threads(1)
PROGRAMS = nonatomic_programs()


def psi(name: str, positions: np.ndarray) -> bool:
    """The library's ψ on the labeler's atoms of block positions (the reference)."""
    return fetch_library().get(name).post.holds(labeler.label_positions(np.reshape(positions, (4, 3))).atoms())


@pytest.fixture(scope="module")
def starts() -> list[np.ndarray]:
    """Real start states: four of the all-on-table distribution, four of the training one (D.1)."""
    out = []
    for initial, seeds in (("table", range(4)), ("training", range(10, 14))):
        env = FetchBlocksEnv(initial_state=initial, max_steps=None)
        for seed in seeds:
            out.append(env.reset(seed=seed)[0]["observation"])
        env.close()
    return out


def layouts(n: int, seed: int = 0) -> np.ndarray:
    """Block positions (n, 12) of the training distribution: towers, held blocks, free blocks."""
    rng, out = np.random.default_rng(seed), []
    while len(out) < n:
        try:
            out.append(sample_layout(rng, TRAINING, np.array([1.34, 0.75, 0.53]), int(rng.integers(4))).blocks.ravel())
        except LayoutError:
            continue
    return np.array(out)


def test_the_library_has_the_seven_programs_of_table_3():
    assert len(PROGRAMS) == 7 and "Clean_And_Stack" in PROGRAMS
    assert {fetch_library().get(p).family for p in PROGRAMS} == set(TABLE2_ROWS)
    assert all(v == 0.0 for kind in KINDS for v in PAPER_TABLE2_BASELINES[kind].values())
    assert HORIZON == 200


def test_batched_post_condition_agrees_with_the_labeler(starts):
    goals = [nonatomic_goal(s, p) for s in starts for p in PROGRAMS]
    rng = np.random.default_rng(1)
    jitter = [g + rng.normal(0, 0.02, 12) for g in goals]  # near the ε boundaries
    positions = np.concatenate([np.array(goals), np.array(jitter), layouts(200), np.array(starts)[:, :12]])
    for k, name in enumerate(PROGRAMS):
        ours = post_holds(positions, np.full(len(positions), k))
        reference = np.array([psi(name, p) for p in positions])
        assert np.array_equal(ours, reference), name
        assert reference.any() and not reference.all()


def test_goal_setter_goals_satisfy_the_post_condition(starts):
    for s in starts:
        for name in PROGRAMS:
            goal = nonatomic_goal(s, name)
            assert goal.shape == (12,)
            assert psi(name, goal), (name, planned_calls(s, name))
            moved = np.linalg.norm((goal - s[:12]).reshape(4, 3), axis=1) > 1e-9
            # every block the goal moves is one some planned atomic call moves
            assert set(np.flatnonzero(moved)) <= {acting_block(c) for c in planned_calls(s, name)}
    table = starts[0]
    assert not any(psi(p, table[:12]) for p in PROGRAMS)  # from the table every program has work to do
    assert len(planned_calls(table, "Clean_Table")) == 4 and len(planned_calls(table, "Stack_All_Blocks")) == 3


def test_a_goal_already_reached_is_kept_and_goals_are_physically_reachable(starts):
    env = FetchBlocksEnv(initial_state="table", max_steps=None)
    for name in ("Stack_All_Blocks", "Clean_And_Stack"):
        goal = nonatomic_goal(starts[1], name)
        done = state_with_blocks(starts[1], goal.reshape(4, 3), 0)
        assert planned_calls(done, name) == () and np.allclose(nonatomic_goal(done, name), goal)
        obs = env.reset(seed=0, options={"blocks": goal.reshape(4, 3)})[0]["observation"]  # blocks placed, settled
        assert fetch_library().get(name).post.holds(labeler.atoms(obs))
        assert post_holds(obs[None, :12], [program_index(name)])[0]
        assert NonAtomicTask("goal-setter").compute_reward(obs[:12], goal) == 0.0
    env.close()


def test_goal_shapes_and_episode_starts():
    hot = one_hot_goal("Clean_Table")
    assert hot.shape == (12,) and hot.sum() == 1.0 and hot[program_index("Clean_Table")] == 1.0
    assert np.all(hot[len(PROGRAMS):] == 0.0)
    for goal in ("one-hot", "goal-setter"):
        task = NonAtomicTask(goal, horizon=3)
        assert (task.obs_dim, task.goal_dim, task.act_dim, task.programs) == (70, 12, 4, PROGRAMS)
        batch = task.make_batch(2)
        try:
            specs = [EpisodeSpec(5, program="Clean_Table"), EpisodeSpec(6, program="stack_all_blocks")]
            o, g, programs = batch.start(specs)
            assert o.shape == (2, 70) and g.shape == (2, 12) and programs == ["Clean_Table", "Stack_All_Blocks"]
            raw = batch.raw_obs()
            assert np.array_equal(o, raw)  # unrotated: the achieved goal o[:, :12] is the block positions
            expected = [task.goal_of(raw[i], p) for i, p in enumerate(programs)]
            assert np.allclose(g, expected)
            assert not batch.reached(o[:, :12], g).any()  # ψ is false at a table start
            assert batch.reached(np.array([nonatomic_goal(raw[i], p) for i, p in enumerate(programs)]), g).all()
            o2 = batch.step(np.zeros((2, 4)))
            assert o2.shape == (2, 70)
            with pytest.raises(ConfigError, match="needs a program"):
                batch.start([EpisodeSpec(1)])
        finally:
            batch.close()


def test_rewards_are_zero_exactly_on_success(starts):
    positions = np.concatenate([np.array([nonatomic_goal(s, p) for s in starts for p in PROGRAMS]), layouts(50, 3)])
    one_hot = NonAtomicTask("one-hot")
    for name in PROGRAMS:
        r = one_hot.compute_reward(positions, one_hot_goal(name)[None])
        success = np.array([psi(name, p) for p in positions])
        assert set(np.unique(r)) <= {-1.0, 0.0} and np.array_equal(r == 0.0, success)
    assert np.all(one_hot.compute_reward(positions, np.zeros(12)) == -1.0)  # no program: never met
    her = NonAtomicTask("goal-setter")
    goal = nonatomic_goal(starts[0], "Clean_Table")
    near, far = goal.copy(), goal.copy()
    near[0] += 0.9 * EPSILON
    far[0] += 1.1 * EPSILON
    ag = np.stack([goal, near, far, starts[0][:12]])
    r = her.compute_reward(ag, goal[None])
    assert np.array_equal(r, goals_reached(ag, goal).astype(float) - 1.0) and r.tolist() == [0.0, 0.0, -1.0, -1.0]
    assert her.compute_reward(goal, goal).shape == ()


def tiny(her: bool) -> C.GoalPolicyConfig:
    cfg = C.nonatomic_baseline(her)
    return replace(cfg, agent=C.AgentConfig(hidden=(16,), batch_size=16),
                   replay=replace(cfg.replay, buffer_size=500),
                   schedule=replace(cfg.schedule, epochs_phase1=1, cycles=2, batches=2, horizon=4, eval_episodes=2,
                                    checkpoint_every=1))


def test_the_paper_preset():
    for her in (False, True):
        cfg = C.nonatomic_baseline(her)
        assert cfg.schedule.horizon == HORIZON and cfg.schedule.epochs_phase2 == 0
        assert cfg.schedule.phase1_goals == "programs" and not cfg.demos.enabled
        assert cfg.replay.replay_k == (4 if her else 0) and cfg.agent.hidden == (256, 256)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_baseline_trains_and_evaluates_end_to_end(tmp_path, kind):
    run = tmp_path / kind
    result = train_baseline(kind, run, tiny(kind == "m-ddpg-her"), seed=0)
    assert result["kind"] == kind and result["finished"] and result["episodes"] == 4
    assert result["env_steps"] == 4 * 4
    assert (run / "policy.npz").is_file() and json.loads((run / "baseline.json").read_text())["kind"] == kind
    assert load_policy(run).layers[0][0].shape == (16, 82)
    out = evaluate_baseline(run, kind, episodes=2, seed=3, horizon=3)
    assert set(out["programs"]) == set(PROGRAMS) and set(out["families"]) == set(TABLE2_ROWS)
    for row in out["programs"].values():
        assert row["episodes"] == 2 and 0.0 <= row["success_rate"] <= 1.0
    assert out["mean_success"] == pytest.approx(np.mean([r["success_rate"] for r in out["programs"].values()]))
    assert evaluate_baseline(run, kind, episodes=2, seed=3, horizon=3) == out  # same seed, same numbers
    other = "m-ddpg-her" if kind == "m-ddpg" else "m-ddpg"
    with pytest.raises(ConfigError, match="another baseline"):
        evaluate_baseline(run, other, episodes=1)
    with pytest.raises(ConfigError, match="already holds a run"):
        train_baseline(kind, run, tiny(kind == "m-ddpg-her"))


def test_a_baseline_paused_at_an_epoch_resumes_to_the_uninterrupted_run(tmp_path):
    cfg = tiny(her=True)
    cfg = replace(cfg, schedule=replace(cfg.schedule, epochs_phase1=2, checkpoint_every=1))
    train_baseline("m-ddpg-her", tmp_path / "whole", cfg, seed=1)
    assert not train_baseline("m-ddpg-her", tmp_path / "split", cfg, seed=1, max_epochs=1)["finished"]
    result = resume_baseline(tmp_path / "split")
    assert result["finished"] and result["kind"] == "m-ddpg-her" and result["epochs"] == 2
    drop = {"wall_s"}
    rows = [[{k: v for k, v in r.items() if k not in drop} for r in read_metrics(tmp_path / name / "metrics.csv")]
            for name in ("whole", "split")]
    assert rows[0] == rows[1]
    longer = replace(cfg, schedule=replace(cfg.schedule, epochs_phase1=3))
    assert resume_baseline(tmp_path / "split", longer)["epochs"] == 3  # more epochs: the same run, longer
    (tmp_path / "foreign").mkdir()
    with pytest.raises(CheckpointError, match="baseline.json: missing"):
        resume_baseline(tmp_path / "foreign")


def test_bad_inputs_raise_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="baseline must be one of"):
        train_baseline("ddpg", tmp_path / "a")
    with pytest.raises(ConfigError, match="replay_k = 0"):
        train_baseline("m-ddpg", tmp_path / "b", tiny(her=True))
    bad = tiny(her=False)
    with pytest.raises(ConfigError, match="phase1_goals"):
        train_baseline("m-ddpg", tmp_path / "c", replace(bad, schedule=replace(bad.schedule, phase1_goals="uniform")))
    with pytest.raises(ConfigError, match="episodes must be >= 1"):
        evaluate_baseline(tmp_path, "m-ddpg", episodes=0)
    with pytest.raises(ConfigError, match="goal must be one of"):
        NonAtomicTask("bits")
    with pytest.raises(ConfigError, match="unknown non-atomic program"):
        one_hot_goal("Stack_0_1")
