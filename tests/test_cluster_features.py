"""k-means features of terminal images (``DiversityConfig.cluster_features``, ours): camera Pixel-Mario's
per-episode lighting splits a landmark's states by pixels, and standardising every colour channel per
image keeps them apart; the config reader's checks of the switch."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import asg.envs  # noqa: F401  (registers the ids)
from asg.envs.mario import MarioState
from asg.learning.asgrl.clustering import channel_standardize, cluster_feature, pool_image
from asg.learning.asgrl.config import DiversityConfig, make_config, merge_overrides
from asg.learning.asgrl.diversity import DiversityEstimator
from asg.learning.errors import ConfigError

# Two (has-key) terminal states that differ only by the hidden key (a 6 x 6 sprite): the one that
# the door needs and the one that strands the agent.
WITHOUT_HIDDEN = MarioState(pos=(5, 1), has_key=True)
WITH_HIDDEN = MarioState(pos=(5, 1), has_key=True, has_hidden_key=True)
CHANNEL = {"learner": {"diversity": {"cluster_features": "channel-standardized"}}}


def _deep():
    """Pixel-Mario with deep skills and App. D's pixel distance (its default: prototype tables, channel features)."""
    return merge_overrides(make_config("pixel-mario", "asgrl"), {"learner": {
        "skills": "deep", "state_key": "exact", "dead_end_after": 0, "diversity": {"cluster_features": "pixels"}}})


def _camera_images(episodes: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Both states seen through ``episodes`` camera episodes (lighting, tint, texture, noise)."""
    env = gym.make("asg/PixelMario-v0").unwrapped
    images, truth = [], []
    for episode in range(episodes):
        env.reset(seed=episode)
        for label, state in enumerate((WITHOUT_HIDDEN, WITH_HIDDEN)):
            images.append(env.set_state(state))
            truth.append(label)
    return images, np.array(truth)


def _purity(keys: np.ndarray, truth: np.ndarray) -> float:
    """Share of records in the majority grid state of their cluster."""
    return sum(int(np.bincount(truth[keys == c]).max()) for c in np.unique(keys)) / len(truth)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_channel_standardized_clusters_follow_the_grid_state_and_pixels_follow_the_lighting(seed):
    images, truth = _camera_images(30)
    purity = {}
    for features in ("pixels", "channel-standardized"):
        cfg = DiversityConfig(k=2, abstraction="kmeans", cluster_features=features)
        estimator = DiversityEstimator(2, cfg, np.random.default_rng(seed))
        for state_id, image in enumerate(images):  # App. D's incremental refits, records in order
            estimator.record_success(state_id, state_id % 2, image)
        purity[features] = _purity(estimator.keys_of(np.arange(len(images))), truth)
    assert purity["channel-standardized"] == 1.0
    assert purity["pixels"] <= 0.75  # measured 0.5: clusters of lighting, both states in each


def test_channel_standardization_cancels_gain_offset_and_tint():
    rng = np.random.default_rng(0)
    image = rng.integers(20, 200, (8, 11, 3)).astype(np.float32)
    lit = image * np.float32(1.15) * np.array([0.92, 1.0, 1.08], np.float32) + np.float32(12.0)
    same, other = channel_standardize(np.stack([image, lit]))
    assert np.abs(same - other).max() < 0.02  # only the +1 of the denominator differs
    flat = channel_standardize(np.stack([image.reshape(-1), lit.reshape(-1)]))
    assert np.allclose(flat[0], same) and np.allclose(flat[1], other)  # flat images read channels last


def test_cluster_feature_pools_then_standardizes_and_refuses_non_images():
    image = np.random.default_rng(1).integers(0, 256, (64, 88, 3), dtype=np.uint8)
    assert cluster_feature(image, 8).shape == (8 * 11 * 3,)
    assert np.allclose(cluster_feature(image, 8), channel_standardize(pool_image(image, 8)[None])[0])
    with pytest.raises(ValueError, match="H, W, 3"):
        cluster_feature(np.zeros(88, np.int16), 8)  # tabular Mario's grid codes
    with pytest.raises(ValueError, match="RGB"):
        channel_standardize(np.zeros((2, 10)))


def test_deep_skills_cluster_on_channel_standardized_pooled_images():
    torch = pytest.importorskip("torch")  # noqa: F841
    from asg.learning.asgrl import deep_skills
    from asg.learning.registry import bind_domain, make_subgoals
    base = _deep()
    subgoals = make_subgoals(base, bind_domain("pixel-mario").task)
    stored = np.random.default_rng(2).integers(30, 200, (1, 264)).astype(np.float32)
    tinted = np.clip(stored.reshape(1, 88, 3) * np.array([0.9, 1.0, 1.1]), 0, 255).reshape(1, 264)
    gaps = {}
    for name, cfg in (("pixels", base), ("channel-standardized", merge_overrides(base, CHANNEL))):
        rngs = [np.random.default_rng(i) for i in range(len(subgoals))]
        _, sets = deep_skills.build_skill_sets(cfg.learner, subgoals, 4, 0, rngs)
        featurize = sets[0].featurize
        gaps[name] = float(np.abs(featurize(stored.astype(np.uint8)) - featurize(tinted.astype(np.uint8))).max())
    assert gaps["channel-standardized"] < 0.05 < gaps["pixels"]


# ----------------------------------------------------------------------------- config
def test_the_switch_is_off_by_default_and_in_the_paper_preset_and_on_for_camera_pixel_mario():
    assert DiversityConfig().cluster_features == "pixels"
    assert make_config("mario", "asgrl").learner.diversity.cluster_features == "pixels"
    assert make_config("pixel-mario", "asgrl").learner.diversity.cluster_features == "channel-standardized"
    assert _deep().learner.diversity.cluster_features == "pixels"
    on = merge_overrides(_deep(), CHANNEL)
    assert on.learner.diversity.cluster_features == "channel-standardized"
    assert make_config("pixel-mario", "asgrl", preset="paper").learner.diversity.cluster_features == "pixels"


@pytest.mark.parametrize(("extra", "path", "reason"), [
    ({"learner": {"diversity": {"cluster_features": "pooled"}}}, "config.learner.diversity.cluster_features",
     "channel-standardized"),
    ({"learner": {"diversity": {"cluster_features": 1}}}, "config.learner.diversity.cluster_features", "got 1"),
    ({"learner": {"diversity": {"cluster_pool": 0}}}, "config.learner.diversity.cluster_pool", ">= 1"),
    ({"learner": {"diversity": {"cluster_features": "channel-standardized", "cluster_pool": 4}}},
     "config.learner.diversity", "deep.pool"),
    ({"learner": {"diversity": {"cluster_features": "channel-standardized"}, "deep": {"encoding": "categorical"}}},
     "config.learner.diversity", "deep.encoding"),
])
def test_bad_cluster_feature_values_name_their_key_path(extra, path, reason):
    with pytest.raises(ConfigError) as err:
        merge_overrides(_deep(), extra)
    message = str(err.value)
    assert message.startswith(f"{path}: ") and reason in message


def test_tabular_skills_take_the_switch_with_their_own_pool():
    cfg = merge_overrides(make_config("pixel-mario", "asgrl"),
                          {"learner": {"skills": "tabular", "diversity": {"cluster_features": "channel-standardized",
                                                                          "cluster_pool": 4}}})
    assert cfg.learner.diversity.cluster_pool == 4  # tabular skills pool the raw observation themselves
