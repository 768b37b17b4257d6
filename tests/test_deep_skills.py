"""Deep skills (``skills="deep"``): the Q-network update, numpy acting, k-means diversity over
images, checkpoints through ``asg.learning.checkpoint``, seeded training and the torch state."""
from __future__ import annotations

import contextlib
import subprocess
import sys

import numpy as np
import pytest

from asg.learning import checkpoint as ckpt
from asg.learning.asgrl.config import (
    DeepQConfig,
    HierarchicalConfig,
    config_from_dict,
    config_to_dict,
    make_config,
    merge_overrides,
)
from asg.learning.errors import ConfigError
from asg.learning.registry import bind_domain, build_learner, env_max_steps, make_subgoals

torch = pytest.importorskip("torch")

from asg.learning.asgrl import deep_skills  # noqa: E402
from asg.learning.asgrl.deep_skills import QNetwork, numpy_q, pool_image, standardize, td_loss, td_update  # noqa: E402
from asg.learning.asgrl.trainer import train  # noqa: E402

SMALL = {"learner": {"deep": {"hidden": [32], "learning_starts": 50, "batch_size": 16, "sil_batch_size": 8,
                              "replay_capacity": 4000, "sil_capacity": 2000, "target_update": 50},
                     "skill_max_steps": 120},
         "total_steps": 1000, "eval_interval": 500, "eval_episodes": 1, "final_eval_episodes": 1}


# Deep skills on Pixel-Mario (its default is tables keyed on image prototypes), App. D's pixel distance.
DEEP = {"learner": {"skills": "deep", "state_key": "exact", "dead_end_after": 0,
                    "diversity": {"cluster_features": "pixels"}}}


def _pixel_deep(seed=0):
    return merge_overrides(make_config("pixel-mario", "asgrl", seed=seed), DEEP)


def _small_cfg(seed=0, **extra):
    return merge_overrides(_pixel_deep(seed), {**SMALL, **extra})


# ----------------------------------------------------------------------------- config
def test_pixel_mario_defaults_to_prototype_tables_and_the_paper_preset_to_byte_tables():
    learner = make_config("pixel-mario", "asgrl").learner
    assert (learner.skills, learner.state_key, learner.diversity.abstraction) == ("tabular", "prototypes", "kmeans")
    assert make_config("pixel-mario", "landmark-hrl").learner.diversity.abstraction == "kmeans"
    paper = make_config("pixel-mario", "asgrl", "paper").learner
    assert (paper.skills, paper.state_key, paper.diversity.cluster_features) == ("tabular", "exact", "pixels")
    for domain in ("mario", "household-v1", "minecraft"):
        assert make_config(domain, "asgrl").learner.skills == "tabular"
        assert make_config(domain, "asgrl").learner.state_key == "exact"
    cfg = _pixel_deep()
    assert cfg.learner.skills == "deep"
    assert config_from_dict(config_to_dict(cfg)) == cfg


@pytest.mark.parametrize("override, where, message", [
    ({"skills": "lstm"}, "config.learner.skills", "tabular"),
    ({"deep": {"lr": 0}}, "config.learner.deep.lr", r"\(0, 1\]"),
    ({"deep": {"hidden": []}}, "config.learner.deep.hidden", "widths"),
    ({"deep": {"pool": 0}}, "config.learner.deep.pool", ">= 1"),
    ({"deep": {"target_update": 0}}, "config.learner.deep.target_update", ">= 1"),
    ({"meta": {"state": "low-level"}}, "config.learner.skills", "history"),
    ({"diversity": {"abstraction": "exact"}}, "config.learner.skills", "kmeans"),
    ({"deep": {"epsilon_success_decay": True}}, "config.learner.deep.epsilon_success_decay", "anneal_steps > 0"),
    ({"deep": {"epsilon_success_window": 20}}, "config.learner.deep.epsilon_success_window", "anneal_steps > 0"),
    ({"deep": {"epsilon_anneal_steps": 10, "epsilon_success_window": -1}}, "config.learner.deep.epsilon_success_window",
     r"in \[0, 10000\]"),
    ({"deep": {"frame_stack": 0}}, "config.learner.deep.frame_stack", r"in \[1, 16\]"),
    ({"deep": {"frame_stack": 4}}, "config.learner.deep.frame_stack", "categorical"),
    ({"deep": {"recurrent": -1}}, "config.learner.deep.recurrent", r"in \[0, 4096\]"),
    ({"deep": {"recurrent": 8, "encoding": "codes", "frame_stack": 2}}, "config.learner.deep.recurrent",
     "frame_stack 1"),
    ({"deep": {"sequence_length": 0}}, "config.learner.deep.sequence_length", r"in \[1, 256\]"),
    ({"deep": {"recurrent_scope": "skill"}}, "config.learner.deep.recurrent_scope", "episode"),
])
def test_deep_config_errors_name_the_field(override, where, message):
    with pytest.raises(ConfigError, match=message) as err:
        merge_overrides(_pixel_deep(), {"learner": override})
    assert where in str(err.value)


def test_deep_config_defaults_are_in_range():
    cfg = DeepQConfig()
    assert cfg.pool == 8 and cfg.batch_size == 64 and cfg.train_every >= 1
    assert HierarchicalConfig().skills == "tabular"


# ----------------------------------------------------------------------------- pieces
@pytest.mark.parametrize("success_decay", [False, True])
def test_the_linear_schedule_anneals_over_steps_and_with_the_switch_over_successes_too(success_decay):
    """ε falls linearly over a skill's own training steps (``epsilon_anneal_steps``); with
    ``epsilon_success_decay`` it is also at most App. G's start x 0.95^successes: a skill that
    succeeds in one step every run anneals by its successes, one that seldom succeeds by its steps."""
    deep_cfg = DeepQConfig(epsilon_anneal_steps=100, epsilon_success_decay=success_decay)
    cfg = HierarchicalConfig().q
    quick, slow = (deep_skills.DeepSkill(deep_skills.DeepQ(deep_cfg, 0.95, 2, 3, seed=0), 0, cfg) for _ in range(2))
    s = np.zeros(4, np.uint8)
    for _ in range(20):  # a landmark one step away: a step and a success a run
        quick.observe(s, 0, s, 1.0, True)
        quick.successes += 1
        quick.decay_epsilon()
    for _ in range(50):  # a landmark far away: 50 steps, no success
        slow.observe(s, 0, s, 0.0, False)
    linear_20 = 1.0 - 0.95 * 20 / 100
    assert slow.epsilon == pytest.approx(1.0 - 0.95 * 50 / 100)  # the step clock alone either way
    assert quick.epsilon == pytest.approx(min(linear_20, 0.95 ** 20) if success_decay else linear_20)
    for _ in range(200):
        quick.successes += 1
        quick.decay_epsilon()
    assert quick.epsilon == pytest.approx(0.05 if success_decay else linear_20)  # floored at ε_min


def test_the_success_window_caps_epsilon_by_the_recent_success_rate_and_lets_it_rise_again():
    """With ``epsilon_success_window`` N, ε is at most 1 - the success rate of the skill's last N
    runs once it has N: a one-step landmark that a skill reaches every run is acted on greedily
    long before its steps anneal it, and failures after that raise ε again."""
    deep_cfg = DeepQConfig(epsilon_anneal_steps=1000, epsilon_success_window=4)
    skill = deep_skills.DeepSkill(deep_skills.DeepQ(deep_cfg, 0.95, 1, 3, seed=0), 0, HierarchicalConfig().q)
    s = np.zeros(4, np.uint8)

    def run(reached: bool) -> float:
        skill.observe(s, 0, s, float(reached), reached)
        skill.record_run(reached)
        return skill.epsilon

    linear = [1.0 - 0.95 * n / 1000 for n in range(1, 9)]
    assert [run(True) for _ in range(3)] == pytest.approx(linear[:3])  # fewer than 4 runs: the step clock
    assert run(True) == pytest.approx(0.05)  # 4 of 4 succeeded: ε_min
    assert run(False) == pytest.approx(0.25)  # 3 of the last 4
    assert run(False) == pytest.approx(0.5)
    assert run(False) == pytest.approx(0.75)
    assert run(False) == pytest.approx(linear[7])  # none of the last 4 succeeded: the step clock again
    twin = deep_skills.DeepSkill(deep_skills.DeepQ(deep_cfg, 0.95, 1, 3, seed=0), 0, HierarchicalConfig().q)
    twin.load_state_dict(skill.state_dict())  # the window travels with a checkpoint
    assert list(twin.recent_runs) == [False] * 4 and twin.steps == skill.steps == 8
    twin.observe(s, 0, s, 1.0, True)
    twin.record_run(True)
    assert run(True) == twin.epsilon == pytest.approx(0.75)  # 1 of the last 4


def test_pooling_is_the_cell_mean_and_standardising_cancels_a_global_gain():
    img = np.random.default_rng(0).integers(0, 256, (64, 88, 3), dtype=np.uint8)
    pooled = pool_image(img, 8)
    ref = img.astype(float).reshape(8, 8, 11, 8, 3).mean(axis=(1, 3)).reshape(-1)
    assert pooled.shape == (264,) and pooled.dtype == np.uint8 and np.abs(pooled - ref).max() <= 0.5 + 1e-9
    x = np.linspace(0, 100, 264)[None]
    assert np.allclose(standardize(x * 1.2 + 30), standardize(x), atol=0.02)


def test_numpy_acting_matches_the_network():
    net = QNetwork(264, (32, 16), 5, 4)
    x = standardize(np.random.default_rng(1).integers(0, 256, (3, 264)))
    out = net(torch.from_numpy(x), torch.tensor([0, 2, 4])).detach().numpy()
    for row, head in enumerate((0, 2, 4)):
        assert np.allclose(numpy_q(net.numpy_views(), x[row], head, 4), out[row], atol=1e-5)


@pytest.mark.parametrize("action_gap", [0.0, 0.9])
def test_q_network_update_reduces_td_error_on_a_tiny_fixed_batch(action_gap):
    with torch.random.fork_rng():
        torch.manual_seed(0)
        net = QNetwork(12, (16,), 2, 3)
        target = QNetwork(12, (16,), 2, 3)
    target.load_state_dict(net.state_dict())
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    batch = {"s": torch.from_numpy(standardize(rng.integers(0, 256, (8, 12)))),
             "s2": torch.from_numpy(standardize(rng.integers(0, 256, (8, 12)))),
             "a": torch.from_numpy(rng.integers(0, 3, 8)), "head": torch.from_numpy(rng.integers(0, 2, 8)),
             "r": torch.from_numpy(rng.random(8).astype(np.float32)),
             "done": torch.from_numpy((rng.random(8) < 0.5).astype(np.float32))}
    before = td_loss(net, target, batch, 0.9, True, action_gap).item()
    for _ in range(100):
        td_update(net, target, opt, batch, 0.9, True, 10.0, action_gap)
    after = td_loss(net, target, batch, 0.9, True, action_gap).item()
    assert after < 0.1 * before


def test_advantage_learning_lowers_only_the_targets_of_non_greedy_actions():
    with torch.random.fork_rng():
        torch.manual_seed(1)
        net = QNetwork(6, (8,), 1, 3)
    x = torch.from_numpy(standardize(np.arange(12).reshape(2, 6)))
    q = net(x[:1], torch.tensor([0]))[0].detach()
    greedy, other = int(q.argmax()), int(q.argmin())
    t = {"s": x[:1].repeat(2, 1), "s2": x[1:].repeat(2, 1), "head": torch.tensor([0, 0]),
         "a": torch.tensor([greedy, other]), "r": torch.zeros(2), "done": torch.ones(2)}
    # terminal rows, r = 0: y = -gap * (max_b Q(s, b) - Q(s, a)), which is 0 for the greedy action
    huber = torch.nn.functional.smooth_l1_loss
    y = torch.tensor([0.0, -0.5 * float(q[greedy] - q[other])])
    expected = huber(q[[greedy, other]], y).item()
    assert td_loss(net, net, t, 0.9, True, 0.5).item() == pytest.approx(expected, rel=1e-5)
    unbounded = huber(q[[greedy, other]], torch.zeros(2)).item()
    assert td_loss(net, net, t, 0.9, True, 0.0).item() == pytest.approx(unbounded)


def test_landmark_images_are_counted_by_cluster_and_memory_stays_at_m():
    cfg = merge_overrides(_pixel_deep(),
                          {"learner": {"diversity": {"kmeans_buffer": 20}}}).learner
    binding = bind_domain("pixel-mario")
    subgoals = make_subgoals(_pixel_deep(), binding.task)
    rngs = [np.random.default_rng(i) for i in range(len(subgoals))]
    deep, sets = deep_skills.build_skill_sets(cfg, subgoals, 4, 0, rngs)
    skills = sets[0]
    rng = np.random.default_rng(0)
    left, right = np.zeros(264, np.uint8), np.zeros(264, np.uint8)
    left[:10], right[-10:] = 200, 200
    for _ in range(60):  # skill 0 ends "left", skill 1 "right", with pixel noise
        noisy = lambda img: np.clip(img + rng.integers(0, 5, 264), 0, 255).astype(np.uint8)  # noqa: E731
        skills.on_success(0, noisy(left))
        skills.on_success(1, noisy(right))
    km = skills.estimator.kmeans
    assert len(km.records) == 20 and len(km.features) <= 21  # the buffer of M records, no more
    p_left = skills.estimator.posterior_features(standardize(left[None]), 0, skills.active)
    p_right = skills.estimator.posterior_features(standardize(right[None]), 0, skills.active)
    assert p_left[0] > 0.99 and p_right[0] < 0.01
    bonus = deep.bonus_fns[0](np.stack([left, right]))  # replay-time α·clip(log p(z|s))
    assert bonus[0] == pytest.approx(0.0, abs=1e-3) and bonus[1] == pytest.approx(-1.0)


# ----------------------------------------------------------------------------- learner
def _learner(cfg):
    binding = bind_domain(cfg.domain)
    subgoals = make_subgoals(cfg, binding.task)
    env = binding.make_env(max_steps=env_max_steps(cfg, subgoals))
    return build_learner(cfg, subgoals, 4), env, binding


def test_checkpoint_round_trip_continues_exactly(tmp_path):
    cfg = _small_cfg()
    a, env, binding = _learner(cfg)
    for seed in range(3):
        a.train_episode(env, binding.labeler, seed, 400)
    assert a.deep.updates > 0
    ckpt.save(tmp_path / "c.npz", "test", {"learner": a.state_dict()})
    b, _, _ = _learner(cfg)
    b.load_state_dict(ckpt.load(tmp_path / "c.npz", "test").tree["learner"])
    for name, value in a.deep.net.state_dict().items():
        assert torch.equal(value, b.deep.net.state_dict()[name])
    sa = a.train_episode(env, binding.labeler, 11, 400)
    sb = b.train_episode(env, binding.labeler, 11, 400)
    assert sa == sb and a.env_steps == b.env_steps
    for name, value in a.deep.net.state_dict().items():
        assert torch.equal(value, b.deep.net.state_dict()[name])
    tabular, _, _ = _learner(merge_overrides(cfg, {"learner": {"skills": "tabular"}}))
    with pytest.raises(ValueError, match="skills"):
        tabular.load_state_dict(a.state_dict())


def test_seeded_training_smoke_is_reproducible_and_leaves_torch_state_alone():
    threads, rng_state = torch.get_num_threads(), torch.random.get_rng_state()
    first = train(_small_cfg(seed=3))
    assert torch.get_num_threads() == threads and torch.equal(torch.random.get_rng_state(), rng_state)
    second = train(_small_cfg(seed=3))
    assert first.env_steps == second.env_steps == 1000 and first.episodes == second.episodes
    assert first.final_episode == second.final_episode and first.success_rate == second.success_rate


def test_resume_through_the_run_folder_repeats_the_uninterrupted_run(tmp_path):
    from asg.learning.run_dir import RunDir

    cfg = _small_cfg(seed=1, checkpoint_interval=500)
    whole = train(cfg, run_dir=RunDir.create(tmp_path / "whole", cfg))
    calls = {"n": 0}

    def stop():
        calls["n"] += 1
        return calls["n"] > 2
    part = train(cfg, run_dir=RunDir.create(tmp_path / "part", cfg), should_stop=stop)
    assert part.status == "interrupted"
    resumed = train(cfg, run_dir=RunDir.open(tmp_path / "part"), resume=True)
    assert resumed.env_steps == whole.env_steps and resumed.episodes == whole.episodes
    def rows(name):
        return [{k: v for k, v in row.items() if k != "wall_seconds"}
                for row in RunDir.open(tmp_path / name).read_metrics()]
    assert rows("part") == rows("whole") and resumed.final_episode == whole.final_episode


def test_tabular_mario_does_not_import_torch():
    code = ("import sys; from asg.learning.asgrl.config import make_config; "
            "from asg.learning.asgrl.trainer import train; "
            "train(make_config('mario', 'asgrl', total_steps=300, eval_interval=300, eval_episodes=1, "
            "final_eval_episodes=1)); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ----------------------------------------------------------------------------- the target
SCHEDULE = {"eval_interval": 10_000, "eval_episodes": 5}  # benchmarks/pixel_mario.py's


@pytest.mark.slow
def test_deep_skills_learn_the_first_landmarks_from_camera_images(tmp_path):
    """Stated and measured (seed 0, benchmarks/results/pixel_mario/): by 60k steps the greedy chain
    reaches (at-bottom) in every evaluation episode and (has-key) in most (mean 1.6 subgoals)."""
    from asg.learning.run_dir import RunDir

    cfg = merge_overrides(_pixel_deep(0), {"total_steps": 60_000, **SCHEDULE})
    train(cfg, run_dir=RunDir.create(tmp_path / "run", cfg))
    rows = RunDir.open(tmp_path / "run").read_metrics()
    assert float(rows[-1]["mean_reached"]) >= 1.2


@pytest.mark.slow
@pytest.mark.xfail(strict=False, reason="the deep skills do not reach it (the prototype tables do, "
                   "tests/test_prototypes.py): deep seed 0 0.00 at 300k steps "
                   "(at gamma 0.95 no skill keeps the tube; at 0.98 none takes the hidden key; "
                   "benchmarks/results/pixel_mario/NOTES.md)")
def test_deep_asgrl_solves_camera_pixel_mario():
    """Issue 17's target for the deep skills: greedy success >= 0.9 on camera Pixel-Mario, seed 0."""
    cfg = merge_overrides(_pixel_deep(0), {"total_steps": 300_000, **SCHEDULE})
    assert train(cfg).success_rate >= 0.9


# ----------------------------------------------------------------------------- category codes (MiniGrid's view)
def test_categorical_input_is_one_hot_per_channel_and_numpy_acting_matches_the_network():
    one_hot = deep_skills.OneHot((4, 2), 3)  # positions of 4, 2 and 4 codes
    codes = np.array([[0, 1, 3], [3, 0, 0]], np.uint8)
    x = deep_skills.network_input(codes, one_hot)
    assert one_hot.width == 10 and x.shape == (2, 10) and x.sum(axis=1).tolist() == [3.0, 3.0]
    assert x[0].nonzero()[0].tolist() == [0, 5, 9] and x[1].nonzero()[0].tolist() == [3, 4, 6]
    net = QNetwork(10, (16,), 3, 5)
    out = net(torch.from_numpy(x), torch.tensor([1, 2])).detach().numpy()
    for row, head in enumerate((1, 2)):
        assert np.allclose(numpy_q(net.numpy_views(), x[row], head, 5), out[row], atol=1e-5)



def test_hot_columns_give_the_one_hot_network_its_values_and_gradients():
    """The update feeds one-hot codes as their hot columns (``OneHot.hot``, ``one_hot_linear``): the
    same Q-values, TD loss and weight gradients as the dense layer on the one-hot rows."""
    one_hot = deep_skills.OneHot((11, 6, 3), 12)
    rng = np.random.default_rng(3)
    counts = deep_skills.code_counts((11, 6, 3), 12)
    codes = (rng.random((40, 12)) * counts).astype(np.uint8)
    hot, dense = torch.from_numpy(one_hot.hot(codes)), torch.from_numpy(one_hot(codes))
    assert hot.dtype == torch.long and hot.shape == (40, 12)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        net, target = QNetwork(one_hot.width, (16, 8), 3, 4), QNetwork(one_hot.width, (16, 8), 3, 4)
    heads = torch.from_numpy(rng.integers(0, 3, 40))
    assert torch.allclose(net(hot, heads), net(dense, heads), atol=1e-5)
    batch = {"a": torch.from_numpy(rng.integers(0, 4, 20)), "head": heads[:20],
             "r": torch.from_numpy(rng.random(20).astype(np.float32)), "done": torch.zeros(20),
             "ret": torch.full((20,), -np.inf)}
    grads = []
    for x in (hot, dense):
        net.zero_grad()
        loss = td_loss(net, target, {**batch, "s": x[:20], "s2": x[20:], "both": x}, 0.9, True, 0.5)
        loss.backward()
        grads.append((loss.item(), [p.grad.clone() for p in net.parameters()]))
    assert grads[0][0] == pytest.approx(grads[1][0], rel=1e-5)
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(grads[0][1], grads[1][1]))
    assert grads[0][1][0].abs().sum() > 0  # the first layer learns through the hot columns
    before = net(hot, heads).detach()
    optimizer = torch.optim.Adam(net.parameters(), lr=0.01)
    td_update(net, target, optimizer, {**batch, "s": hot[:20], "s2": hot[20:], "both": hot}, 0.9, True, 10.0, 0.5)
    after = net(hot, heads).detach()  # the weight's transposed copy follows the step
    assert not torch.allclose(after, before) and torch.allclose(after, net(dense, heads), atol=1e-5)

def test_codes_input_is_one_scaled_value_per_position_and_learns_with_acting_matching_the_network():
    scaled = deep_skills.ScaledCodes((4, 2), 3)  # positions of 4, 2 and 4 codes
    codes = np.array([[0, 1, 3], [3, 0, 2]], np.uint8)
    x = deep_skills.network_input(codes, scaled)
    assert scaled.width == 3 and x.dtype == np.float32
    assert np.allclose(x, [[0.0, 0.5, 0.75], [0.75, 0.0, 0.5]])
    deep = deep_skills.DeepQ(DeepQConfig(encoding="codes", categories=(4, 2), hidden=(8,)), 0.9, 2, 3, seed=0)
    deep.ensure(3)
    assert isinstance(deep.one_hot, deep_skills.ScaledCodes) and deep.net.torso[0].in_features == 3
    out = deep.net(torch.from_numpy(x), torch.tensor([1, 0])).detach().numpy()
    assert np.allclose(deep.q_batch(codes, np.array([1, 0])), out, atol=1e-5)


def test_categorical_encoding_keeps_the_codes_and_refuses_values_out_of_range():
    cfg = DeepQConfig(encoding="categorical", categories=(11, 6, 3))
    rng = np.random.default_rng(0)
    view = np.stack([rng.integers(0, n, (7, 7)) for n in (11, 6, 3)], axis=-1).astype(np.uint8)
    assert np.array_equal(deep_skills.encode(view, cfg), view.reshape(-1))
    view[2, 3, 2] = 3  # a state code past the third channel's 3
    with pytest.raises(ValueError, match=r"value 3 at position 53 .* below 3 \(deep.categories"):
        deep_skills.encode(view, cfg)
    for bad, message in (({"encoding": "bytes"}, "encoding"), ({"categories": [1]}, "categories"),
                         ({"categories": []}, "categories")):
        with pytest.raises(ConfigError, match=f"config.learner.deep.{message}"):
            merge_overrides(_pixel_deep(), {"learner": {"deep": bad}})


def test_a_minigrid_world_gives_deep_skills_its_egocentric_view(tmp_path):
    pytest.importorskip("minigrid")
    from pathlib import Path

    from asg.envs import plugins
    from asg.learning.asgrl.trainer import deep_input, learner_observation, run_config

    examples = Path(__file__).resolve().parent.parent / "examples" / "doorkey"
    assert learner_observation("MiniGrid-DoorKey-5x5-v0", "tabular") == "state"
    assert learner_observation("MiniGrid-DoorKey-5x5-v0", "deep") == "view"
    spec = plugins.domain_from_parts("MiniGrid-DoorKey-5x5-v0", "labels:DOORKEY", examples / "doorkey.pddl",
                                     name="doorkey-view-test", observation="view", folder=examples)
    plugins.add_domain(spec, replace=True)
    try:
        obs, _ = spec.make_env(max_steps=20).reset(seed=3)
        assert obs.shape == (7, 7, 3) and obs.dtype == np.uint8
        assert (obs < np.array(plugins.MINIGRID_CATEGORIES)).all()
        view = bind_domain("doorkey-view-test")
        assert deep_input(view)["categories"] == [11, 6, 3]
        cfg = run_config(view, plugin=True, skills="deep")
        assert cfg.learner.deep.encoding == "categorical" and cfg.learner.diversity.abstraction == "kmeans"
        assert run_config(view, plugin=True).learner.skills == "tabular"
        mine = tmp_path / "mine.json"  # a user's config file wins over the deep skills' defaults
        mine.write_text('{"learner": {"deep": {"train_every": 2}}}')
        assert cfg.learner.deep.train_every == 4
        mixed = run_config(view, plugin=True, skills="deep", config_file=mine)
        assert mixed.learner.deep.train_every == 2 and mixed.learner.deep.encoding == "categorical"
    finally:
        plugins.unregister_domain("doorkey-view-test")
    assert deep_input(bind_domain("pixel-mario")) == {}


@contextlib.contextmanager
def doorkey_view(name: str):
    """The user's DoorKey-5x5 example read through its egocentric view, registered as ``name`` while
    the block runs: its binding."""
    pytest.importorskip("minigrid")
    from pathlib import Path

    from asg.envs import plugins

    examples = Path(__file__).resolve().parent.parent / "examples" / "doorkey"
    spec = plugins.domain_from_parts("MiniGrid-DoorKey-5x5-v0", "labels:DOORKEY", examples / "doorkey.pddl",
                                     name=name, observation="view", folder=examples)
    plugins.add_domain(spec, replace=True)
    try:
        yield bind_domain(name)
    finally:
        plugins.unregister_domain(name)


def small_deep(view, **deep):
    """``SMALL`` on the view's deep defaults, with ``deep`` fields of ``learner.deep`` besides."""
    from asg.learning.asgrl.trainer import run_config

    base = run_config(view, plugin=True, skills="deep", seed=2)
    learner = {**SMALL["learner"], "deep": {**SMALL["learner"]["deep"], **deep}}
    return merge_overrides(base, {**SMALL, "learner": learner, "checkpoint_interval": 500})


def trains_evaluates_and_resumes(cfg, view, tmp_path):
    """A run of ``cfg`` trains; ``asg eval`` of its folder replays its budget; a run stopped after two
    checks and resumed ends as the uninterrupted one. The whole run's loaded learner."""
    from asg.learning.asgrl.trainer import evaluate_run
    from asg.learning.run_dir import RunDir

    whole = train(cfg, run_dir=RunDir.create(tmp_path / "whole", cfg), binding=view)
    assert evaluate_run(tmp_path / "whole", episodes=2).env_steps == whole.env_steps
    calls = {"n": 0}

    def stop():
        calls["n"] += 1
        return calls["n"] > 2
    part = train(cfg, run_dir=RunDir.create(tmp_path / "part", cfg), binding=view, should_stop=stop)
    assert part.status == "interrupted"
    resumed = train(cfg, run_dir=RunDir.open(tmp_path / "part"), binding=view, resume=True)
    assert resumed.env_steps == whole.env_steps and resumed.episodes == whole.episodes
    return RunDir.open(tmp_path / "whole").load_checkpoint(cfg, view, make_subgoals(cfg, view.task))["learner"]


def test_frame_stack_gives_the_skills_the_last_views_and_trains_evaluates_and_resumes(tmp_path):
    """``deep.frame_stack`` 3: the env the learner acts in returns the last 3 views, the reset's
    repeated at first; the first layer is 3 times wider, while k-means sees an end state's last view
    alone; a run trains, is evaluated from its folder and resumes to the uninterrupted run's metrics."""
    from asg.envs import plugins
    from asg.learning.asgrl.trainer import run_config
    from asg.learning.registry import learner_env

    with doorkey_view("doorkey-stack-test") as view:
        cfg = small_deep(view, frame_stack=3)
        env = learner_env(cfg, view, 50)
        first, _ = env.reset(seed=5)
        assert first.shape == (3, 7, 7, 3) and (first == first[0]).all()
        plain_env = learner_env(run_config(view, plugin=True, skills="deep", seed=2), view, 50)
        plain = plain_env.reset(seed=5)[0]
        assert plain.shape == (7, 7, 3) and np.array_equal(first[-1], plain)
        for action in (0, 0, 2):  # left, left, forward: each step shifts the stack by one view
            before, (after, *_) = first, env.step(action)
            assert np.array_equal(after[:2], before[1:]) and np.array_equal(after[2], plain_env.step(action)[0])
            first = after

        learner = trains_evaluates_and_resumes(cfg, view, tmp_path)
        assert next(learner.deep.net.parameters()).shape[1] == 3 * 49 * sum(plugins.MINIGRID_CATEGORIES)
        ends = np.stack([first, after]).reshape(2, -1).astype(np.uint8)  # end states cluster by their last view
        features = learner.skill_sets[0].featurize(ends)
        assert features.shape == (2, 49 * sum(plugins.MINIGRID_CATEGORIES))
        assert np.array_equal(features, learner.deep.one_hot(ends)[:, -features.shape[1]:])


@pytest.mark.slow
def test_deep_asgrl_solves_doorkey_8x8_with_layouts_drawn_anew(tmp_path, monkeypatch):
    """Measured (seed 0, benchmarks/results/own_worlds/, the env's own 640-step episodes): ε = 0.05
    success 1.0 at 225k env steps through the user's route, 1.00 over 100 fresh layouts after 400k;
    here 100 fresh layouts after at most 300k steps."""
    import json
    from pathlib import Path

    from click.testing import CliRunner

    from asg.cli.main import main

    monkeypatch.chdir(Path(__file__).resolve().parent.parent / "examples" / "doorkey")
    out = tmp_path / "run"
    over = tmp_path / "over.json"
    over.write_text(json.dumps({"eval_interval": 25_000, "curve_eval": "epsilon"}))
    trained = CliRunner().invoke(main, ["train", "--env", "MiniGrid-DoorKey-8x8-v0", "--labeler", "labels:DOORKEY",
                                        "--model", "doorkey.pddl", "--skills", "deep", "--steps", "300000",
                                        "--config", str(over), "--out", str(out), "--quiet", "--json"])
    assert trained.exit_code == 0, trained.output
    evaluated = CliRunner().invoke(main, ["eval", str(out), "--episodes", "100", "--json"])
    assert json.loads(evaluated.stdout)["epsilon_success_rate"] >= 0.9
