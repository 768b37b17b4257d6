"""Image prototypes as table keys (``HierarchicalConfig.state_key = "prototypes"``, ours): under Pixel-Mario's
camera the images of one grid state share an id and different states get different ids, where the image
bytes give nearly every frame a new one; the index round-trips through a checkpoint, and the config reader
refuses the switch where it cannot apply."""
from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

import asg.envs  # noqa: F401  (registers the ids)
from asg.learning.asgrl.clustering import PrototypeIndex, cluster_feature
from asg.learning.asgrl.config import make_config, merge_overrides
from asg.learning.asgrl.hierarchical import HierarchicalLearner
from asg.learning.asgrl.trainer import train
from asg.learning.errors import ConfigError
from asg.learning.registry import bind_domain, make_subgoals

PROTOTYPES = {"learner": {"skills": "tabular", "state_key": "prototypes"}}


def _random_walk(steps: int, seed: int) -> tuple[list[np.ndarray], list[object]]:
    env = gym.make("asg/PixelMario-v0")
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    images, states = [obs], [env.unwrapped.hashable_state()]
    for _ in range(steps):
        obs, _, terminated, truncated, _ = env.step(int(rng.integers(4)))
        if terminated or truncated:
            obs, _ = env.reset()
        images.append(obs)
        states.append(env.unwrapped.hashable_state())
    return images, states


def test_camera_images_of_one_grid_state_share_a_prototype_and_states_do_not():
    images, states = _random_walk(3000, seed=3)
    index = PrototypeIndex(radius=2.0, mean_cap=50)
    ids = [index.intern(cluster_feature(image, 8)) for image in images]
    distinct_states = len(set(states))
    assert len({image.tobytes() for image in images}) > 0.99 * len(images)  # bytes: nearly all new
    assert len(index) <= 2 * distinct_states  # prototypes: about one per grid state
    by_id: dict[int, list[object]] = {}
    for i, state in zip(ids, states):
        by_id.setdefault(i, []).append(state)
    majority = sum(max(members.count(s) for s in set(members)) for members in by_id.values())
    assert majority / len(ids) >= 0.98  # a prototype is one grid state


def test_lookup_finds_the_nearest_prototype_and_changes_nothing():
    index = PrototypeIndex(radius=1.0, mean_cap=10)
    assert index.lookup(np.zeros(3)) == -1  # nothing yet
    assert index.intern(np.zeros(3)) == 0
    assert index.intern(np.array([5.0, 0.0, 0.0])) == 1  # beyond the radius: a new prototype
    assert index.intern(np.array([0.5, 0.0, 0.0])) == 0  # within it: the first, moved halfway
    np.testing.assert_allclose(index.centroids[0], [0.25, 0.0, 0.0])
    before = index.state_dict()
    assert index.lookup(np.array([3.0, 0.0, 0.0])) == 1  # nearest at any distance
    assert index.lookup(np.array([-9.0, 0.0, 0.0])) == 0
    after = index.state_dict()
    np.testing.assert_array_equal(before["centroids"], after["centroids"])
    for call in (index.intern, index.lookup):
        with pytest.raises(ValueError, match="4 values, the prototypes have 3"):
            call(np.zeros(4))


def test_the_prototype_index_round_trips_and_refuses_an_exact_index():
    cfg = merge_overrides(make_config("pixel-mario", "asgrl", seed=0), PROTOTYPES)
    binding = bind_domain("pixel-mario")
    env = binding.make_env()
    subgoals_cfg = cfg.learner
    subgoals = make_subgoals(cfg, binding.task)
    learner = HierarchicalLearner(subgoals_cfg, subgoals, 4, seed=0)
    learner.train_episode(env, binding.labeler, seed=0, budget=3000)
    assert len(learner.index) > 0
    data = learner.state_dict()
    fresh = HierarchicalLearner(subgoals_cfg, subgoals, 4, seed=0)
    fresh.load_state_dict(data)
    np.testing.assert_array_equal(fresh.index.state_dict()["centroids"], data["index"]["centroids"])
    exact = HierarchicalLearner(dataclasses.replace(subgoals_cfg, state_key="exact"), subgoals, 4, seed=0)
    with pytest.raises(ValueError, match="image prototypes"):
        exact.load_state_dict(data)
    with pytest.raises(ValueError, match="exact observation index"):
        fresh.load_state_dict(exact.state_dict())


def test_the_config_reader_refuses_prototypes_for_deep_skills_and_a_bad_radius():
    cfg = make_config("pixel-mario", "asgrl")
    with pytest.raises(ConfigError, match=r"learner\.state_key: .*tabular"):
        merge_overrides(cfg, {"learner": {"skills": "deep", "state_key": "prototypes", "dead_end_after": 0}})
    with pytest.raises(ConfigError, match=r"learner\.prototype_radius"):
        merge_overrides(cfg, {"learner": {"skills": "tabular", "state_key": "prototypes", "prototype_radius": 0}})
    assert make_config("pixel-mario", "asgrl", "paper").learner.state_key == "exact"  # ours: off in the paper's


@pytest.mark.slow
def test_asgrl_with_its_pixel_mario_defaults_solves_the_camera_render():
    """Issue 17's target on one seed: asg's Pixel-Mario defaults (prototype tables, App. D k-means on
    channel-standardized images), the benchmark's schedule (benchmarks/results/pixel_mario/: 10/10 seeds)."""
    cfg = make_config("pixel-mario", "asgrl", seed=0, eval_interval=10_000, eval_episodes=5)
    assert cfg.learner.state_key == "prototypes"
    assert train(cfg).success_rate >= 0.9


@pytest.mark.parametrize("method", ["goal-q", "landmark-shaping"])
def test_the_flat_baselines_key_their_table_as_the_skills_do(method):
    from asg.learning.asgrl.baselines import FlatLearner

    assert make_config("pixel-mario", method, "paper").learner.state_key == "exact"
    assert make_config("mario", method).learner.state_key == "exact"
    cfg = make_config("pixel-mario", method, seed=0)
    assert cfg.learner.state_key == "prototypes"
    binding = bind_domain("pixel-mario")
    learner = FlatLearner(cfg.learner, make_subgoals(cfg, binding.task), 4, seed=0)
    env = binding.make_env()
    steps = sum(learner.train_episode(env, binding.labeler, seed=episode, budget=2000).steps
                for episode in range(5))
    states = 160  # running grid states of Mario (benchmarks/pixel_mario.py --prototype-episodes)
    assert steps > 1000 and 0 < len(learner.index) <= 2 * states  # the bytes: ~one id per step


def test_skills_deep_on_pixel_mario_gives_the_deep_skills_as_measured():
    """``asg train --domain pixel-mario --skills deep``: a network, no prototypes, App. D's pixel distance
    (the setting of benchmarks/results/pixel_mario/'s deep runs); without it, the prototype tables."""
    from asg.learning.asgrl.trainer import run_config

    pixels = bind_domain("pixel-mario")
    deep = run_config(pixels, skills="deep").learner
    assert (deep.skills, deep.state_key, deep.diversity.cluster_features) == ("deep", "exact", "pixels")
    tables = run_config(pixels).learner
    assert (tables.skills, tables.state_key, tables.diversity.cluster_features) == (
        "tabular", "prototypes", "channel-standardized")
