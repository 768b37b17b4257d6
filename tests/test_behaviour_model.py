"""The self-behavioural model: fitting, Algorithm 3's data with the no-reset rule, agreement, files."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from asg.learning.errors import CheckpointError, ConfigError
from asg.learning.world_models.behaviour_model import (
    BehaviourConfig,
    BehaviourDataset,
    LearnedBehaviourModel,
    agreement,
    collect_dataset,
    compare_with_exact,
    failure_report,
    fit_behaviour_model,
    train_behaviour_model,
)

torch.set_num_threads(1)


def synthetic(rng: np.random.Generator, n: int, n_programs: int = 4) -> BehaviourDataset:
    """Program k moves block 0 to a fixed spot k and leaves everything else; s0 spread like states."""
    s0 = rng.normal(size=(n, 70)) * 0.1 + 1.0
    program = rng.integers(n_programs, size=n)
    spots = np.linspace(-1.0, 1.0, n_programs * 3).reshape(n_programs, 3)
    sT = s0.copy()
    sT[:, :3] = spots[program]
    return BehaviourDataset(s0, program, sT, np.zeros(n, dtype=bool))


def test_the_model_fits_a_small_synthetic_dataset():
    rng = np.random.default_rng(0)
    train, test = synthetic(rng, 1500), synthetic(rng, 300)
    cfg = BehaviourConfig(hidden=(64, 64), epochs=30, batch_size=64, lr=2e-3)
    net, s_norm, d_norm, rows = fit_behaviour_model(train, test, 4, cfg, seed=0)
    assert rows[-1]["test_loss"] < 0.05 * rows[0]["test_loss"] and rows[-1]["test_loss"] < 0.05
    model = LearnedBehaviourModel(net, s_norm, d_norm, programs=("a", "b", "c", "d"))
    pred = model.predict_batch(test.s0, test.program)
    moved = np.abs(pred[:, :3] - test.sT[:, :3]).mean()
    assert moved < 0.15 * np.abs(test.s0[:, :3] - test.sT[:, :3]).mean()  # far better than "nothing moves"
    assert np.abs(pred[:, 3:] - test.sT[:, 3:]).max() < 0.01  # the rest is left as it was


def test_the_l1_fit_predicts_the_likelier_outcome_where_the_mean_would_split_them():
    # One program ends at +1 on 70 % of episodes and at -1 on the rest, from the same starts:
    # MSE predicts their mean (about 0.4, neither outcome), L1 the median (+1).
    rng = np.random.default_rng(2)
    n = 2000
    s0 = rng.normal(size=(n, 4))
    sT = s0.copy()
    sT[:, 0] = np.where(rng.random(n) < 0.7, 1.0, -1.0)
    data = BehaviourDataset(s0, np.zeros(n, dtype=int), sT, np.zeros(n, dtype=bool))
    predicted = {}
    for loss in ("mse", "l1"):
        cfg = BehaviourConfig(hidden=(32,), epochs=20, batch_size=100, lr=3e-3, loss=loss)
        net, s_norm, d_norm, _ = fit_behaviour_model(data, data, 1, cfg, seed=0)
        model = LearnedBehaviourModel(net, s_norm, d_norm, programs=("a",))
        predicted[loss] = float(np.median(model.predict_batch(s0[:200], np.zeros(200, dtype=int))[:, 0]))
    assert abs(predicted["mse"] - 0.4) < 0.2 and abs(predicted["l1"] - 1.0) < 0.2


def test_same_seed_same_model():
    rng = np.random.default_rng(1)
    data = synthetic(rng, 200)
    cfg = BehaviourConfig(hidden=(16,), epochs=2, batch_size=50)
    rows_a = fit_behaviour_model(data, data, 4, cfg, seed=3)[3]
    rows_b = fit_behaviour_model(data, data, 4, cfg, seed=3)[3]
    assert rows_a == rows_b


def untrained_policy():
    from asg.learning.goal_policy.config import AgentConfig
    from asg.learning.goal_policy.ddpg import DDPGAgent

    return DDPGAgent(70, 12, 4, AgentConfig(hidden=(16, 16)), seed=0).snapshot()


def test_algorithm3_data_follows_the_no_reset_rule():
    from asg.envs.fetch.goal_setter import applicable, atomic_programs

    cfg = BehaviourConfig(n_envs=3, p_reset=0.3, state_buffer_size=100)
    data = collect_dataset(untrained_policy(), episodes=12, seed=0, config=cfg)
    names = atomic_programs()
    assert len(data) == 12 and data.s0.shape == (12, 70) and data.sT.shape == (12, 70)
    assert data.no_reset[:3].sum() == 0 and data.no_reset.sum() >= 3  # the first batch has no stored state
    for k in range(len(data)):
        assert applicable(data.s0[k], names[int(data.program[k])])  # φ holds at every start
        if data.no_reset[k]:  # the start is where an earlier episode ended (blocks exactly)
            earlier = data.sT[: (k // 3) * 3, :12]
            assert np.any(np.all(earlier == data.s0[k, :12], axis=1))


def test_train_behaviour_model_end_to_end_and_files(tmp_path):
    from asg.learning.goal_policy.evaluate import save_policy

    save_policy(untrained_policy(), tmp_path / "policy.npz")
    cfg = BehaviourConfig(hidden=(32, 32), episodes=10, epochs=2, n_envs=5, held_out=0.3)
    out = train_behaviour_model(tmp_path / "policy.npz", tmp_path / "bm", cfg, seed=0)
    assert out["episodes"] == 10 and out["held_out"] == 3
    assert set(out["families"]) <= {"Stack", "Move_To_Zone"} and out["families"]
    assert all(0.0 <= v["post_agreement"] <= 1.0 for v in out["programs"].values())
    for name in ("behaviour_model.npz", "dataset.npz", "metrics.csv", "curves.png", "result.json"):
        assert (tmp_path / "bm" / name).is_file()
    model = LearnedBehaviourModel.load(tmp_path / "bm")
    data = BehaviourDataset.load(tmp_path / "bm" / "dataset.npz")
    np.testing.assert_allclose(model.predict(data.s0[0], int(data.program[0]))[0],
                               model.predict_batch(data.s0[:1], data.program[:1])[0])
    again = train_behaviour_model(tmp_path / "policy.npz", tmp_path / "bm", cfg, seed=0)
    assert again["collect_seconds"] < out["collect_seconds"]  # the saved dataset is reused
    assert again["programs"] == out["programs"]


def test_predict_refuses_a_program_whose_precondition_fails():
    from asg.envs.fetch.layout import BLOCK_SIZE, REST_Z

    rng = np.random.default_rng(2)
    net_data = synthetic(rng, 40, n_programs=20)
    cfg = BehaviourConfig(hidden=(8,), epochs=1)
    net, s_norm, d_norm, _ = fit_behaviour_model(net_data, net_data, 20, cfg)
    model = LearnedBehaviourModel(net, s_norm, d_norm)
    obs = np.zeros(70)
    blocks = np.array([[1.25, 0.7, REST_Z], [1.25, 0.7, REST_Z + BLOCK_SIZE], [1.4, 0.7, REST_Z], [1.4, 0.85, REST_Z]])
    obs[:12] = blocks.ravel()
    obs[12:15] = (1.34, 0.75, 0.6)
    same, ok = model.predict(obs, "Stack_2_0")  # block 1 sits on block 0: nothing can be stacked on 0
    assert not ok and np.array_equal(same, obs)
    assert model.predict(obs, "Stack_2_1")[1]


def test_agreement_compares_post_conditions_of_predicted_and_true_states():
    from asg.envs.fetch.behaviour_model import ExactBehaviourModel
    from asg.envs.fetch.goal_setter import atomic_programs
    from asg.envs.fetch.layout import REST_Z

    class Oracle(LearnedBehaviourModel):  # predicts the exact model's state: full agreement
        def __init__(self):
            self.programs = atomic_programs()

        def predict_batch(self, s0, program):
            return np.stack([ExactBehaviourModel().predict(s, int(p))[0] for s, p in zip(s0, program)])

    obs = np.zeros(70)
    obs[:12] = np.array([[1.25, 0.7, REST_Z], [1.4, 0.7, REST_Z], [1.25, 0.85, REST_Z], [1.4, 0.85, REST_Z]]).ravel()
    programs = np.array([0, 12, 5])
    true = np.stack([ExactBehaviourModel().predict(obs, int(p))[0] for p in programs])
    data = BehaviourDataset(np.stack([obs] * 3), programs, true, np.zeros(3, bool))
    out = agreement(Oracle(), data)
    assert out["families"] == {"Move_To_Zone": 1.0, "Stack": 1.0} and out["block_error_mean"] == 0.0
    lazy = BehaviourDataset(data.s0, programs, data.s0, data.no_reset)  # true state: nothing moved
    assert agreement(Oracle(), lazy)["families"] == {"Move_To_Zone": 0.0, "Stack": 0.0}


def test_failure_report_tells_a_model_that_foresees_failures_from_the_goal_setter():
    """On episodes where the policy failed half the time, the exact model Θ (always success) has
    failure recall 0, a model that predicts what happened has recall and precision 1."""
    from asg.envs.fetch.behaviour_model import ExactBehaviourModel
    from asg.envs.fetch.goal_setter import atomic_programs
    from asg.envs.fetch.layout import REST_Z

    obs = np.zeros(70)
    obs[:12] = np.array([[1.25, 0.7, REST_Z], [1.4, 0.7, REST_Z], [1.25, 0.85, REST_Z], [1.4, 0.85, REST_Z]]).ravel()
    programs = np.array([0, 12, 5, 13])
    placed = np.stack([ExactBehaviourModel().predict(obs, int(p))[0] for p in programs])
    true = placed.copy()
    true[1::2] = obs  # programs 12 and 13 did nothing: failures
    data = BehaviourDataset(np.stack([obs] * 4), programs, true, np.zeros(4, bool))

    class Foresight(LearnedBehaviourModel):
        def __init__(self):
            self.programs = atomic_programs()

        def predict_batch(self, s0, program):
            return true

    names = atomic_programs()
    exact = failure_report(placed, data, names)["all"]
    assert exact["true_failures"] == 2 and exact["agreement"] == 0.5
    assert exact["agreement_on_successes"] == 1.0 and exact["agreement_on_failures"] == 0.0
    assert exact["failure_recall"] == 0.0 and exact["failure_precision"] is None
    both = compare_with_exact(Foresight(), data)
    assert both["exact"] == failure_report(placed, data, names)
    assert both["learned"]["all"]["failure_recall"] == 1.0 and both["learned"]["all"]["failure_precision"] == 1.0
    assert set(both["learned"]) == {"Move_To_Zone", "Stack", "all"}


def test_the_goal_anchor_starts_from_the_goal_setters_target(tmp_path):
    """anchor="goal": the residual is taken from s0 with the blocks at Θ(s0, i); a policy that always
    reaches its goal is fitted exactly, and the anchor survives save / load."""
    from asg.envs.fetch.behaviour_model import ExactBehaviourModel
    from asg.envs.fetch.goal_setter import atomic_programs, goal
    from asg.envs.fetch.layout import REST_Z
    from asg.learning.world_models.behaviour_model import anchor_states

    names = atomic_programs()
    rng = np.random.default_rng(3)
    s0 = np.zeros((60, 70))
    spots = np.array([[1.22, 0.68, REST_Z], [1.40, 0.68, REST_Z], [1.22, 0.84, REST_Z], [1.40, 0.84, REST_Z]])
    s0[:, :12] = (spots + rng.uniform(-0.02, 0.02, size=(60, 4, 3)) * [1, 1, 0]).reshape(60, 12)
    s0[:, 12:15] = (1.34, 0.75, 0.6)
    program = rng.integers(len(names), size=60)
    anchored = anchor_states(s0, program, names, "goal")
    assert np.allclose(anchored[:, :12], [goal(s, names[p]) for s, p in zip(s0, program)])
    assert np.array_equal(anchored[:, 12:], s0[:, 12:])
    assert np.array_equal(anchor_states(s0, program, names, "start"), s0)
    sT = np.stack([ExactBehaviourModel().predict(s, int(p))[0] for s, p in zip(s0, program)])
    data = BehaviourDataset(s0, program, sT, np.zeros(60, bool))
    cfg = BehaviourConfig(hidden=(16,), epochs=3, anchor="goal")
    net, s_norm, d_norm, _ = fit_behaviour_model(data, data, len(names), cfg, programs=names)
    model = LearnedBehaviourModel(net, s_norm, d_norm, names, anchor="goal")
    assert agreement(model, data)["families"] == {"Move_To_Zone": 1.0, "Stack": 1.0}
    again = LearnedBehaviourModel.load(model.save(tmp_path / "bm.pt"))
    assert again.anchor == "goal"
    np.testing.assert_allclose(again.predict_batch(s0[:5], program[:5]), model.predict_batch(s0[:5], program[:5]))
    with pytest.raises(ConfigError):
        BehaviourConfig(anchor="end")


def test_errors():
    with pytest.raises(ConfigError):
        BehaviourConfig(held_out=1.0)
    with pytest.raises(ConfigError, match="behaviour.loss"):
        BehaviourConfig(loss="huber")
    with pytest.raises(CheckpointError, match="no behaviour model"):
        LearnedBehaviourModel.load("/nonexistent/behaviour_model.npz")
