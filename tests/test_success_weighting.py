"""The behaviour model's success head and the search's success weighting (issue 36; both ours, off in every preset)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from toy_domains import bits_world, on

from asg.learning.errors import ConfigError
from asg.learning.npi.config import SearchConfig
from asg.learning.npi.mcts import SearchContext, execute, expand, new_root
from asg.learning.npi.pipeline import check_success_weighting
from asg.learning.world_models.behaviour_model import (
    BehaviourConfig,
    BehaviourDataset,
    LearnedBehaviourModel,
    fit_behaviour_model,
    fit_success_model,
    psi_labels,
    success_report,
)
from asg.learning.world_models.program_models import AtomWorld, exact_fetch_model, learned_fetch_model

torch.set_num_threads(1)
SET_A, SET_B, SET_AB, SET_ALL, STOP = 0, 1, 6, 7, 8


def fetch_episodes(n: int, seed: int) -> BehaviourDataset:
    """Table starts and applicable programs; the program does what the exact model says when block 0
    lies at x < 1.34 (the table's middle), else nothing moves: ψ depends on where a block is."""
    model = exact_fetch_model()
    rng = np.random.default_rng(seed)
    s0, program, sT = [], [], []
    while len(s0) < n:
        state = model.initial_state(rng)
        legal = [i for i in range(20) if model.table.legal(model.table.tasks[0], model.atoms(state), 0, 6)[i]]
        i = int(rng.choice(legal))
        s0.append(state)
        program.append(i)
        sT.append(model.step(state, i) if state[0] < 1.34 else state.copy())
    return BehaviourDataset(np.array(s0), np.array(program), np.array(sT), np.zeros(n, dtype=bool))


@pytest.fixture(scope="module")
def fitted():
    train, test = fetch_episodes(800, 0), fetch_episodes(300, 1)
    cfg = BehaviourConfig(hidden=(64, 64), epochs=40, batch_size=64, lr=2e-3, early_stopping=10, success_head=True)
    programs = exact_fetch_model().table.names[:20]
    net, s_norm, d_norm, _ = fit_behaviour_model(train, test, 20, cfg, seed=0, programs=programs)
    success, rows = fit_success_model(train, test, 20, cfg, s_norm, programs, seed=0)
    return LearnedBehaviourModel(net, s_norm, d_norm, programs, success=success), train, test, rows


def test_the_success_head_learns_what_the_per_program_rate_cannot(fitted):
    model, train, test, rows = fitted
    labels = psi_labels(test, model.programs)
    assert 0.3 < labels.mean() < 0.7  # both outcomes, from the same programs
    report = success_report(model, train, test)
    assert report["all"]["brier"] < 0.5 * report["all"]["brier_per_program_rate"]
    assert abs(report["all"]["predicted_mean"] - report["all"]["true_rate"]) < 0.1
    assert rows[-1]["test_loss"] < rows[0]["test_loss"]


def test_the_head_is_saved_and_loaded_and_is_zero_where_the_precondition_fails(fitted, tmp_path):
    model, _, test, _ = fitted
    loaded = LearnedBehaviourModel.load(model.save(tmp_path / "bm.npz"))
    np.testing.assert_allclose(loaded.success_batch(test.s0[:20], test.program[:20]),
                               model.success_batch(test.s0[:20], test.program[:20]))
    exact = exact_fetch_model()
    stacked = exact.step(test.s0[0], model.programs.index("Stack_1_0"))  # block 1 now covers block 0
    assert not _applicable(stacked, "Stack_2_0") and _applicable(stacked, "Stack_2_1")
    assert loaded.success_probability(stacked, "Stack_2_0") == 0.0
    assert loaded.success_probability(stacked, "Stack_2_1") == pytest.approx(
        model.success_batch(stacked[None], np.array([model.programs.index("Stack_2_1")]))[0])
    plain = LearnedBehaviourModel(model.net, model.s_norm, model.d_norm, model.programs)
    with pytest.raises(ConfigError, match="success head"):
        plain.success_batch(test.s0[:1], test.program[:1])
    assert "success" not in _tree(plain.save(tmp_path / "plain.npz"))


def _applicable(state, name):
    from asg.envs.fetch.goal_setter import applicable

    return applicable(state, name)


def _tree(path):
    from asg.learning import checkpoint as ckpt

    return ckpt.load(path, "behaviour-model").tree


def test_the_search_refuses_weighting_without_a_success_head(fitted):
    model, _, test, _ = fitted
    check_success_weighting(SearchConfig(success_weighting=True), learned_fetch_model(model))
    searched = learned_fetch_model(model)  # what the search reads: the head, for a call its masks allow
    state, i = test.s0[0], int(test.program[0])
    assert searched.success_probability(state, i) == pytest.approx(model.success_probability(state,
                                                                                              model.programs[i]))
    check_success_weighting(SearchConfig(), exact_fetch_model())
    with pytest.raises(ConfigError, match="success head"):
        check_success_weighting(SearchConfig(success_weighting=True), exact_fetch_model())
    plain = LearnedBehaviourModel(model.net, model.s_norm, model.d_norm, model.programs)
    with pytest.raises(ConfigError, match="success head"):
        check_success_weighting(SearchConfig(success_weighting=True), learned_fetch_model(plain))


class Uniform:
    def initial_hidden(self):
        return np.zeros(1), np.zeros(1)

    def evaluate(self, state, task, h, c):
        return np.zeros(9), 0.0, h, c


class RiskyBits(AtomWorld):
    """The bits world where Set_A succeeds 9 times in 10 once bit b is on and once in 10 before."""

    def success_probability(self, state, program):
        if program == SET_A:
            return 0.9 if self.atoms(state) >= on("b") else 0.1
        return 0.9


@pytest.fixture(scope="module")
def risky(tmp_path_factory):
    plain = bits_world(tmp_path_factory.mktemp("bits"))
    world = RiskyBits.__new__(RiskyBits)
    world.__dict__.update(plain.__dict__)
    return world


def context(world, **search):
    return SearchContext(world, Uniform(), SearchConfig(**search), np.random.default_rng(0))


def test_a_successful_stop_is_worth_its_calls_success_probabilities(risky):
    ctx = context(risky, success_weighting=True)
    root = new_root(SET_AB, risky.encode(on()), ctx, explore=False)
    after_a = expand(root, SET_A, ctx, explore=False)
    after_ab = expand(after_a, SET_B, ctx, explore=False)
    assert after_ab.log_p == pytest.approx(np.log(0.1) + np.log(0.9))
    assert expand(after_ab, STOP, ctx, explore=False).terminal_value == pytest.approx(0.97 ** 2 * 0.1 * 0.9)
    plain = context(risky)
    root = new_root(SET_AB, risky.encode(on()), plain, explore=False)
    done = expand(expand(expand(root, SET_A, plain, False), SET_B, plain, False), STOP, plain, False)
    assert done.terminal_value == pytest.approx(0.97 ** 2)  # off: the paper's value


def test_the_weighted_search_picks_the_likelier_order(risky):
    start = risky.encode(on())
    plain = execute(SET_AB, start, context(risky, simulations_exploit=100), explore=False)
    weighted = execute(SET_AB, start, context(risky, simulations_exploit=100, success_weighting=True),
                       explore=False)
    assert plain.success and weighted.success
    assert plain.steps[0].action == SET_A  # equal values: the first legal action
    assert weighted.steps[0].action == SET_B  # b first makes Set_A nine times likelier
    assert weighted.value == pytest.approx(0.97 ** 2 * 0.9 * 0.9) and weighted.log_p == pytest.approx(2 * np.log(0.9))


def test_a_non_atomic_call_carries_its_callees_probabilities(risky):
    ctx = context(risky, simulations_exploit=40, sub_simulations=40, success_weighting=True)
    trace = execute(SET_ALL, risky.encode(on()), ctx, explore=False)
    assert trace.success
    calls = [s.call for s in trace.steps if s.call is not None]
    atomic = [s.action for s in trace.steps if s.call is None and s.action != STOP]
    expected = sum(c.log_p for c in calls) + np.log(0.9) * len(atomic)
    assert trace.log_p == pytest.approx(expected)


def test_the_behaviour_stage_fits_and_reports_the_head(tmp_path):
    from asg.learning.goal_policy.config import AgentConfig
    from asg.learning.goal_policy.ddpg import DDPGAgent
    from asg.learning.goal_policy.evaluate import save_policy
    from asg.learning.world_models.behaviour_model import train_behaviour_model

    save_policy(DDPGAgent(70, 12, 4, AgentConfig(hidden=(16, 16)), seed=0).snapshot(), tmp_path / "policy.npz")
    cfg = BehaviourConfig(hidden=(16,), episodes=10, epochs=2, n_envs=5, held_out=0.3, success_head=True)
    out = train_behaviour_model(tmp_path / "policy.npz", tmp_path / "bm", cfg, seed=0)
    head = out["success_head"]
    assert head["epochs_run"] == 2 and head["all"]["episodes"] == 3
    assert 0.0 <= head["all"]["brier"] <= 1.0 and "brier_per_program_rate" in head["all"]
    assert LearnedBehaviourModel.load(tmp_path / "bm").success is not None
    with pytest.raises(ConfigError, match="success_head"):
        BehaviourConfig(success_head="yes")


def _untrained():
    from asg.learning.goal_policy.config import AgentConfig
    from asg.learning.goal_policy.ddpg import DDPGAgent

    return DDPGAgent(70, 12, 4, AgentConfig(hidden=(16, 16)), seed=0).snapshot()


def test_chained_starts_run_the_setting_calls_with_the_policy_and_keep_each_call():
    from asg.envs.fetch.goal_setter import applicable, atomic_programs
    from asg.learning.world_models.behaviour_model import Interrupted, collect_dataset

    names = atomic_programs()
    cfg = BehaviourConfig(n_envs=3, chained_starts=1.0, state_buffer_size=100)
    data = collect_dataset(_untrained(), episodes=15, seed=0, config=cfg)
    assert len(data) == 15 and data.no_reset[:3].sum() == 0 and data.no_reset.sum() >= 3
    for k in range(len(data)):
        assert applicable(data.s0[k], names[int(data.program[k])])
        if data.no_reset[k]:  # a chain's next call starts where one of its earlier calls ended
            assert np.any(np.all(data.sT[:k, :12] == data.s0[k, :12], axis=1))
    # a stop between batches carries the chains left, and resuming gives the same data
    asked = iter([False, False, True])
    try:
        collect_dataset(_untrained(), episodes=15, seed=0, config=cfg, should_stop=lambda: next(asked, False))
    except Interrupted as stopped:
        state = stopped.state
    assert state["done"] == 6 and state["chains"]["calls"]
    resumed = collect_dataset(_untrained(), episodes=15, seed=0, config=cfg, resume=state)
    np.testing.assert_array_equal(resumed.s0, data.s0)
    np.testing.assert_array_equal(resumed.program, data.program)


def test_without_chained_starts_the_data_is_algorithm_3s():
    from asg.learning.world_models.behaviour_model import collect_dataset

    plain = collect_dataset(_untrained(), episodes=6, seed=1, config=BehaviourConfig(n_envs=3))
    off = collect_dataset(_untrained(), episodes=6, seed=1, config=BehaviourConfig(n_envs=3, chained_starts=0.0))
    np.testing.assert_array_equal(plain.s0, off.s0)
    with pytest.raises(ConfigError, match="chained_starts"):
        BehaviourConfig(chained_starts=1.5)
