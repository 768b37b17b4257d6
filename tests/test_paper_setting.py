"""The ``paper`` preset (ASGRL App. G, every addition of ours off) and the paper's ε = 0.05 final
evaluation (Sec. 5) beside the greedy one."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from asg.learning.asgrl.config import (
    PRESETS,
    FlatConfig,
    HierarchicalConfig,
    QConfig,
    config_from_dict,
    config_to_dict,
    make_config,
)
from asg.learning.asgrl.evaluation import EpsilonActions, epsilon_eval_seeds, eval_seeds, evaluate
from asg.learning.asgrl.tabular_q import TabularQ, q_update, q_update_sequential
from asg.learning.asgrl.trainer import TrainResult, train
from asg.learning.errors import ConfigError
from asg.learning.registry import METHODS, bind_domain, build_learner, env_max_steps, make_subgoals

HIERARCHICAL = ("asgrl", "asgrl-curriculum", "landmark-hrl", "plan-hrl")
FLAT = ("landmark-shaping", "goal-q")

# Our additions: (path into the learner config, value in the paper preset). random_ties is ours
# (not in the paper or the official code); batch_update="jacobi" (one vectorised step per replay
# batch) is ours, the official Q_Learning updates one sample after another (§1.5);
# "buffer" is the official replay schedule (§1.5, §1.8),
# which App. G does not contradict for the flat baselines, so it is the paper value too.
OURS = ((("q", "random_ties"), False), (("q", "batch_update"), "sequential"))


def test_paper_preset_covers_every_method():
    assert set(HIERARCHICAL + FLAT) == set(METHODS) and set(PRESETS) == {"asg", "paper"}


@pytest.mark.parametrize("method", HIERARCHICAL + FLAT)
def test_paper_preset_turns_every_addition_off(method):
    paper = make_config("mario", method, "paper").learner
    for path, value in OURS:
        obj = paper
        for name in path:
            obj = getattr(obj, name)
        assert obj == value, path
    assert paper.q.replay == "buffer"
    # the default preset keeps today's values
    assert make_config("mario", method) == make_config("mario", method, "asg")
    assert make_config("mario", method).learner.q.random_ties is True
    assert make_config("mario", method).learner.q.batch_update == "jacobi"


def test_asgrls_every_seed_settings_are_asgs_and_off_in_the_paper_preset():
    # docs/asgrl.md, "every seed": a 2,000-step skill cap and dead-end landmark states
    asg, paper = make_config("mario", "asgrl").learner, make_config("mario", "asgrl", "paper").learner
    assert (asg.skill_max_steps, asg.dead_end_after) == (2000, 20)
    assert (paper.skill_max_steps, paper.dead_end_after) == (700, 0)
    for method in HIERARCHICAL[1:]:  # the other hierarchical methods keep the official values
        other = make_config("mario", method).learner
        assert (other.skill_max_steps, other.dead_end_after) == (700, 0)
    pixel = make_config("pixel-mario", "asgrl").learner  # measured 10/10 without them
    assert (pixel.skill_max_steps, pixel.dead_end_after) == (700, 0)


@pytest.mark.parametrize("method", HIERARCHICAL)
def test_paper_preset_turns_on_the_curriculum_stop_of_section_4_2(method):
    assert make_config("mario", method, "paper").learner.diversity.stop_on_no_new_terminal is True
    assert make_config("mario", method).learner.diversity.stop_on_no_new_terminal is False


@pytest.mark.parametrize("method", HIERARCHICAL)
def test_paper_preset_skills_and_meta_follow_appendix_g(method):
    learner = make_config("household-v1", method, "paper").learner
    assert isinstance(learner, HierarchicalConfig)
    q, meta = learner.q, learner.meta
    # App. G: "ε1 is annealed from 1.0 to 0.05 by a factor of 0.95 whenever the skill successfully
    # reaches a skill terminal state"
    assert (q.epsilon_start, q.epsilon_min, q.epsilon_decay, q.decay_on) == (1.0, 0.05, 0.95, "success")
    # App. G: "the learning rate of each skill policy is also annealed from 1.0 to 0.1 by a factor of
    # 0.95 every time the skill reaches a landmark state" (lr = max(0.1, ε1): the same schedule)
    assert q.lr_follows_epsilon and q.lr_min == 0.1
    # App. G: "The meta-controller starts with ε2 = 1.0 and decreases it by a factor of 0.9 whenever
    # the low-level skills reach the final goal state(s) until ε2 = 0.05"; "+1 whenever a target
    # subgoal is reached" (the meta shaping reward)
    assert (meta.epsilon_start, meta.epsilon_decay, meta.epsilon_min) == (1.0, 0.9, 0.05)
    assert meta.subgoal_reward == 1.0
    # App. G: SIL, "a separate replay buffer to store recent successful trajectories", sampled at
    # each update (64 + 64 per step, §1.5)
    assert q.sil_batch_size == 64 and q.batch_size == 64 and q.update_every == 1
    if method == "asgrl-curriculum":  # App. G: a new skill "whenever the ε1 of any skill drops below 0.3"
        assert learner.diversity.curriculum and learner.diversity.grow_below_epsilon == 0.3


@pytest.mark.parametrize("method", FLAT)
def test_paper_preset_flat_baselines_follow_appendix_g(method):
    learner = make_config("mario", method, "paper").learner
    assert isinstance(learner, FlatConfig)
    # App. G: "we perform ε annealing at the end of each episode regardless of whether the final goal
    # is reached or not ... a smaller annealing factor 0.995"
    assert (learner.q.epsilon_decay, learner.q.decay_on, learner.q.epsilon_start) == (0.995, "episode", 1.0)
    assert learner.episode_max_steps == 2000  # §1.8
    assert learner.sil_rule == ("best" if method == "landmark-shaping" else "success")  # §1.8


def test_paper_preset_round_trips_and_unknown_preset_is_refused():
    cfg = make_config("minecraft", "goal-q", "paper", seed=3)
    assert config_from_dict(config_to_dict(cfg)) == cfg
    with pytest.raises(ConfigError, match="unknown preset 'x'"):
        make_config("mario", "asgrl", "x")
    with pytest.raises(ConfigError, match="final_eval_epsilon"):
        make_config("mario", "asgrl", final_eval_epsilon=1.5)
    with pytest.raises(ConfigError, match="replay"):
        QConfig(replay="sometimes")  # type: ignore[arg-type]


def test_online_replay_updates_only_the_last_transition():
    agent = TabularQ(QConfig(replay="online", learning_starts=0, lr_follows_epsilon=False, lr_min=0.5), 2)
    rng = np.random.default_rng(0)
    agent.observe(0, 1, 1, 1.0, True)
    agent.learn(rng)
    agent.observe(1, 0, 2, 0.0, False)
    agent.learn(rng)
    assert agent.q.values[0, 1] == 0.5 and agent.q.values[1, 0] == 0.0 and agent.updates == 2


def _batch(s, a, s2, r, done):
    n = len(s)
    return {"s": np.array(s, np.int32), "a": np.array(a, np.int16), "s2": np.array(s2, np.int32),
            "r": np.array(r, np.float32), "done": np.array(done, np.bool_), "bonus": np.zeros(n, np.bool_)}


def test_sequential_updates_see_earlier_writes_and_agree_on_independent_samples():
    rng = np.random.default_rng(0)
    base = rng.random((6, 2))
    independent = _batch([0, 1, 2], [0, 1, 0], [3, 4, 5], [1.0, 0.0, 0.5], [False, True, False])
    jac, seq = base.copy(), base.copy()
    q_update(jac, independent, 0.5, 0.9)
    q_update_sequential(seq, independent, 0.5, 0.9)
    assert np.allclose(jac, seq)
    # a chain 1 -> 0 after a write to (0, 0): the sequential target sees the new Q(0, ·)
    chain = _batch([0, 1], [0, 0], [5, 0], [10.0, 0.0], [True, False])
    jac, seq = np.zeros((6, 2)), np.zeros((6, 2))
    q_update(jac, chain, 1.0, 0.9)
    q_update_sequential(seq, chain, 1.0, 0.9)
    assert jac[1, 0] == 0.0 and seq[1, 0] == pytest.approx(9.0)
    # a pair drawn twice is updated twice
    twice = _batch([0, 0], [1, 1], [5, 5], [1.0, 1.0], [True, True])
    jac, seq = np.zeros((6, 2)), np.zeros((6, 2))
    q_update(jac, twice, 0.5, 0.9)
    q_update_sequential(seq, twice, 0.5, 0.9)
    assert jac[0, 1] == 0.5 and seq[0, 1] == 0.75


def test_epsilon_actions_are_seeded_and_replace_about_epsilon_of_the_actions():
    binding = bind_domain("mario")
    picked = []
    for _ in range(2):
        env = EpsilonActions(binding.make_env(max_steps=400), 0.5)
        env.reset(seed=7)
        rng_state = env._rng.bit_generator.state
        picked.append(rng_state)
    assert picked[0] == picked[1]
    env = EpsilonActions(binding.make_env(max_steps=5000), 0.25)
    env.reset(seed=1)
    draws = [env._rng.random() < 0.25 for _ in range(4000)]
    assert 0.2 < np.mean(draws) < 0.3
    assert epsilon_eval_seeds(0, 5) != eval_seeds(0, 5)


def _trained(method: str, steps: int):
    cfg = make_config("mario", method, "paper", seed=0, total_steps=steps, eval_interval=steps, eval_episodes=2)
    binding = bind_domain("mario")
    subgoals = make_subgoals(cfg, binding.task)
    env = binding.make_env(max_steps=env_max_steps(cfg, subgoals))
    learner = build_learner(cfg, subgoals, int(env.action_space.n))
    for episode in range(10_000):
        if learner.env_steps >= steps:
            break
        learner.train_episode(env, binding.labeler, episode, steps - learner.env_steps)
    return learner, env, binding


@pytest.mark.parametrize("method", ["goal-q", "asgrl"])
def test_epsilon_evaluation_is_reproducible_and_differs_from_greedy(method):
    learner, env, binding = _trained(method, 3000)
    seeds = epsilon_eval_seeds(0, 3)
    greedy = evaluate(learner, env, binding.labeler, seeds)
    eps_a = evaluate(learner, env, binding.labeler, seeds, epsilon=0.05)
    eps_b = evaluate(learner, env, binding.labeler, seeds, epsilon=0.05)
    assert eps_a == eps_b  # same seeds, same episodes (and the learner is untouched)
    # The greedy policy of an untrained-ish agent repeats itself; ε = 0.05 takes random steps, so
    # the episodes differ (steps taken or atoms seen).
    assert [(e.steps, e.seen) for e in greedy.episodes] != [(e.steps, e.seen) for e in eps_a.episodes]
    assert evaluate(learner, env, binding.labeler, seeds, epsilon=0.0) == greedy


def test_result_json_reports_both_protocols_and_keeps_the_old_keys():
    cfg = make_config("mario", "goal-q", "paper", seed=1, total_steps=4000, eval_interval=2000, eval_episodes=2)
    result = train(cfg).to_json()
    old = {"domain", "method", "seed", "success_rate", "eval_episodes", "env_steps", "wall_seconds", "episodes",
           "steps_to_success", "status", "run_dir", "final_episode"}
    assert old <= set(result)
    assert result["epsilon"] == 0.05 and result["epsilon_episodes"] == 10 and result["curve_eval"] == "greedy"
    assert result["greedy_success_rate"] == result["success_rate"]
    assert 0.0 <= result["epsilon_success_rate"] <= 1.0
    assert TrainResult.from_json(result).to_json() == result
    again = train(cfg).to_json()
    assert again["epsilon_success_rate"] == result["epsilon_success_rate"]


def test_curve_points_can_use_the_epsilon_protocol():
    base = make_config("mario", "goal-q", "paper", seed=0, total_steps=4000, eval_interval=2000, eval_episodes=2)
    eps = dataclasses.replace(base, curve_eval="epsilon", final_eval_epsilon=0.5)
    a, b = train(base), train(eps)
    assert a.curve_eval == "greedy" and b.curve_eval == "epsilon" and b.epsilon == 0.5
    assert a.env_steps == b.env_steps  # evaluation never changes training


# ------------------------------------------------------------------ the CLI
def _cli(*args: str):
    from click.testing import CliRunner

    from asg.cli.main import main

    return CliRunner().invoke(main, list(args))


def test_cli_train_and_compare_take_the_paper_preset(tmp_path):
    out = tmp_path / "run"
    result = _cli("train", "--domain", "mario", "--method", "goal-q", "--preset", "paper", "--eval-epsilon", "0.1",
                  "--steps", "2000", "--eval-episodes", "1", "--out", str(out), "--quiet", "--json")
    assert result.exit_code == 0, result.output
    saved = config_from_dict(json.loads((out / "config.json").read_text())["config"])
    assert saved == make_config("mario", "goal-q", "paper", seed=0, total_steps=2000, eval_episodes=1,
                                final_eval_epsilon=0.1)
    assert json.loads(result.stdout)["epsilon"] == 0.1
    cmp = tmp_path / "cmp"
    result = _cli("compare", "--domain", "mario", "--methods", "goal-q", "--seeds", "1", "--steps", "1500",
                  "--eval-episodes", "1", "--preset", "paper", "--out", str(cmp), "--quiet")
    assert result.exit_code == 0, result.output
    saved = json.loads((cmp / "goal-q" / "seed0" / "config.json").read_text())["config"]
    assert saved["learner"]["q"]["random_ties"] is False


@pytest.mark.parametrize("args, message", [
    (["train", "--domain", "mario", "--preset", "fast"], "--preset: unknown preset 'fast' for an ASGRL domain"),
    (["train", "--resume", "somewhere", "--preset", "paper"], "--preset: not with --resume (give only"),
    (["train", "--domain", "fetch-programs", "--stage", "goal-policy", "--eval-epsilon", "0.1"], "--eval-epsilon"),
    (["compare", "--domain", "mario", "--preset", "fast"], "Invalid value for '--preset'"),
])
def test_cli_preset_errors_are_one_line(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "somewhere").mkdir()
    result = _cli(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and message in result.output
