"""Tabular Q pieces: state index, Q table, replay ring, the batched update, the schedules."""
from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest

from asg.learning.asgrl.config import QConfig
from asg.learning.asgrl.tabular_q import QTable, StateIndex, TabularQ, TransitionBuffer, obs_key, q_update


def batch(s, a, s2, r, done, bonus=None):
    n = len(s)
    return {"s": np.array(s), "a": np.array(a), "s2": np.array(s2), "r": np.array(r, dtype=np.float32),
            "done": np.array(done, dtype=bool), "bonus": np.array(bonus or [False] * n, dtype=bool)}


def test_no_torch_in_tabular_code():
    code = ("import sys, asg.learning.asgrl.hierarchical, asg.learning.asgrl.baselines, asg.learning.asgrl.trainer, "
            "asg.learning.asgrl.experiments, asg.learning.asgrl.clustering; "
            "sys.exit('torch' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_state_index_interns_in_first_visit_order_and_lookup_does_not_add():
    index = StateIndex()
    assert index.lookup(b"x") == -1 and len(index) == 0
    assert [index.intern(k) for k in (b"a", b"b", b"a")] == [0, 1, 0]
    assert index.lookup(b"b") == 1 and len(index) == 2


def test_obs_key_is_exact_for_arrays_and_dicts():
    a = np.array([1, 2, 3], dtype=np.int16)
    assert obs_key(a) == obs_key(a.copy()) != obs_key(np.array([1, 2, 4], dtype=np.int16))
    assert obs_key({"b": a, "a": 1}) == obs_key({"a": 1, "b": a.copy()})
    assert obs_key(np.int64(3)) == 3


def test_q_table_grows_and_is_zero_for_unknown_states():
    q = QTable(3, capacity=2)
    q.ensure(5)
    assert q.values.shape[0] >= 5 and not q.values.any()
    q.values[4] = [0.0, 2.0, 2.0]
    assert q.greedy(4) == 1  # first of the tied maxima
    assert q.greedy(-1) == 0 and q.greedy(10_000) == 0 and q.value(10_000) == 0.0


def test_transition_buffer_grows_then_overwrites_oldest():
    buf = TransitionBuffer(capacity=5, initial=2)
    for i in range(7):
        buf.add(i, 0, i + 1, 0.0, False, False)
    assert len(buf) == 5
    assert sorted(buf.data["s"].tolist()) == [2, 3, 4, 5, 6]
    sample = buf.sample(np.random.default_rng(0), 100)
    assert set(sample["s"].tolist()) <= {2, 3, 4, 5, 6}


def test_q_update_matches_the_q_learning_target():
    values = np.zeros((4, 2))
    values[1] = [0.5, 2.0]
    q_update(values, batch([0], [1], [1], [1.0], [False]), lr=0.5, gamma=0.9)
    assert values[0, 1] == pytest.approx(0.5 * (1.0 + 0.9 * 2.0))
    q_update(values, batch([2], [0], [1], [1.0], [True]), lr=1.0, gamma=0.9)
    assert values[2, 0] == pytest.approx(1.0)  # terminal: no bootstrap


def test_q_update_writes_a_duplicated_pair_once_and_adds_bonus_only_where_flagged():
    values = np.zeros((3, 2))
    q_update(values, batch([0, 0], [0, 0], [2, 2], [1.0, 1.0], [True, True]), lr=0.5, gamma=0.9)
    assert values[0, 0] == pytest.approx(0.5)  # not 1.0: Jacobi update, written once
    values[:] = 0
    bonus = lambda s2: np.full(len(s2), -0.25)  # noqa: E731
    q_update(values, batch([0, 1], [0, 0], [2, 2], [1.0, 1.0], [True, True], [True, False]), 1.0, 0.9, bonus)
    assert values[0, 0] == pytest.approx(0.75) and values[1, 0] == pytest.approx(1.0)


def test_epsilon_is_one_until_learning_starts_and_lr_follows_epsilon():
    cfg = QConfig(learning_starts=3)
    agent = TabularQ(cfg, 2)
    agent.epsilon = 0.0
    rng = np.random.default_rng(0)
    agent.q.ensure(1)
    agent.q.values[0] = [0.0, 1.0]
    acts = {agent.act(0, rng) for _ in range(50)}
    assert acts == {0, 1}  # random before learning starts
    for _ in range(3):
        agent.observe(0, 1, 0, 0.0, False)
    assert {agent.act(0, rng) for _ in range(20)} == {1}
    agent.epsilon = 0.5
    assert agent.lr == 0.5
    agent.epsilon = 0.01
    assert agent.lr == cfg.lr_min
    fixed = TabularQ(dataclasses.replace(cfg, lr_follows_epsilon=False, lr_min=0.1), 2)
    assert fixed.lr == 0.1


def test_epsilon_decays_multiplicatively_to_its_floor():
    agent = TabularQ(QConfig(), 2)
    agent.decay_epsilon()
    assert agent.epsilon == pytest.approx(0.95)
    for _ in range(200):
        agent.decay_epsilon()
    assert agent.epsilon == pytest.approx(0.05)


def test_only_kept_segments_reach_the_sil_buffer():
    agent = TabularQ(QConfig(), 2)
    agent.observe(0, 0, 1, 0.0, False)
    agent.end_segment(keep=False)
    assert len(agent.sil) == 0 and len(agent.replay) == 1
    agent.observe(1, 1, 2, 1.0, True)
    agent.observe(2, 1, 3, 1.0, True)
    agent.end_segment(keep=True)
    assert len(agent.sil) == 2 and len(agent.replay) == 3


def test_replay_learning_converges_on_a_chain():
    """Chain 0 -> 1 -> 2 -> 3 (goal, reward 1): Q(s, right) -> γ^(2 - s)."""
    cfg = QConfig(batch_size=16, learning_starts=1, sil_batch_size=0)
    agent = TabularQ(cfg, 2)
    agent.epsilon = 0.5
    rng = np.random.default_rng(1)
    for _ in range(300):
        s = 0
        for _ in range(20):
            a = agent.act(s, rng)
            s2 = min(3, s + 1) if a == 1 else max(0, s - 1)
            done = s2 == 3
            agent.observe(s, a, s2, float(done), done)
            agent.learn(rng)
            s = s2
            if done:
                break
    for s in range(3):
        assert agent.q.values[s, 1] == pytest.approx(cfg.gamma ** (2 - s), abs=1e-3)
        assert agent.greedy(s) == 1


def test_update_every_thins_the_schedule():
    cfg = QConfig(learning_starts=1, update_every=4)
    agent = TabularQ(cfg, 2)
    rng = np.random.default_rng(0)
    for _ in range(8):
        agent.observe(0, 0, 1, 0.0, False)
        agent.learn(rng)
    assert agent.updates == 2


def test_act_in_a_state_the_table_has_no_row_for():
    agent = TabularQ(QConfig(learning_starts=0), 3)
    agent.epsilon = 0.0
    rng = np.random.default_rng(0)
    assert {agent.act(10_000, rng) for _ in range(60)} == {0, 1, 2}  # unknown: random
    no_ties = TabularQ(QConfig(learning_starts=0, random_ties=False), 3)
    no_ties.epsilon = 0.0
    assert {no_ties.act(10_000, rng) for _ in range(20)} == {0}


def _chain_goal_reached(cfg: QConfig, episodes: int = 60, length: int = 8) -> int:
    """Episodes that reach the end of a chain (right = 1 step on, left = back to 0) acting greedily
    on the learned values alone (ε = 0)."""
    agent = TabularQ(cfg, 2)
    agent.epsilon = 0.0
    rng = np.random.default_rng(0)
    reached = 0
    for _ in range(episodes):
        s = 0
        for _ in range(3 * length):
            a = agent.act(s, rng)
            s2 = s + 1 if a == 1 else 0
            done = s2 == length
            agent.observe(s, a, s2, float(done), done)
            agent.learn(rng)
            s = s2
            if done:
                reached += 1
                break
    return reached


def test_optimistic_initial_values_explore_where_epsilon_greedy_without_exploration_never_does():
    cfg = QConfig(batch_size=16, learning_starts=0, sil_batch_size=0, random_ties=False, epsilon_min=0.0)
    assert _chain_goal_reached(cfg) == 0  # from 0, first-index ties: always left, never the goal
    assert _chain_goal_reached(dataclasses.replace(cfg, q_init=1.0)) >= 50
    with pytest.raises(Exception, match="q_init"):
        QConfig(q_init=2.0)


def test_unseen_states_start_at_the_initial_value():
    agent = TabularQ(QConfig(q_init=0.5), 2)
    assert agent.q.value(10_000) == 0.5
    agent.observe(0, 0, 700, 0.0, False)  # grows the table past its first 256 rows
    assert agent.q.values.shape[0] > 700 and np.all(agent.q.values == 0.5)
    assert TabularQ(QConfig(), 2).q.value(10_000) == 0.0
