"""Pixel-Mario's camera render: one grid state, many images; same seed, same images; and a table
keyed on image bytes meets almost only new observations there."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import asg.envs  # noqa: F401
from asg.envs.domains import DOMAINS
from asg.envs.mario import MARIO_LABELER, MarioState, render_rgb


def _walk(env, actions, seed):
    obs, _ = env.reset(seed=seed)
    frames, states = [obs], [env.unwrapped.hashable_state()]
    for a in actions:
        obs, _, terminated, truncated, _ = env.step(a)
        frames.append(obs)
        states.append(env.unwrapped.hashable_state())
        if terminated or truncated:
            break
    return frames, states


def test_camera_is_the_default_and_passes_the_env_checker():
    env = gym.make("asg/PixelMario-v0")
    assert env.unwrapped.render_noise == "camera"
    check_env(gym.make("asg/PixelMario-v0").unwrapped)
    check_env(gym.make("asg/PixelMario-v0", render_noise="none").unwrapped)
    with pytest.raises(ValueError, match="render_noise"):
        gym.make("asg/PixelMario-v0", render_noise="blurry")
    assert DOMAINS["pixel-mario"].make_env().unwrapped.render_noise == "camera"


def test_one_grid_state_gives_many_images_and_the_same_seed_the_same_ones():
    env = gym.make("asg/PixelMario-v0")
    start = [env.reset(seed=s)[0] for s in range(30)]
    assert all(env.unwrapped.hashable_state() == MarioState() for _ in [0])
    assert len({o.tobytes() for o in start}) == 30  # 30 episodes, one state, 30 images
    env.reset(seed=0)
    bumps = [env.step(0)[0] for _ in range(30)]  # up into the wall: the state never changes
    assert env.unwrapped.hashable_state() == MarioState()
    assert len({o.tobytes() for o in bumps}) == 30  # within an episode too
    actions = np.random.default_rng(1).integers(4, size=300).tolist()
    a, sa = _walk(gym.make("asg/PixelMario-v0"), actions, seed=7)
    b, sb = _walk(gym.make("asg/PixelMario-v0"), actions, seed=7)
    assert sa == sb and all(np.array_equal(x, y) for x, y in zip(a, b))
    c, _ = _walk(gym.make("asg/PixelMario-v0"), actions, seed=8)
    assert not np.array_equal(a[0], c[0])


def test_camera_noise_keeps_the_dynamics_and_the_labeler_reads_the_true_state():
    actions = np.random.default_rng(2).integers(4, size=400).tolist()
    mario, pixel = gym.make("asg/Mario-v0"), gym.make("asg/PixelMario-v0")
    mario.reset(seed=0), pixel.reset(seed=0)
    for a in actions:
        ra, rb = mario.step(a), pixel.step(a)
        assert ra[1:4] == rb[1:4] and mario.unwrapped.hashable_state() == pixel.unwrapped.hashable_state()
        assert MARIO_LABELER(mario) == MARIO_LABELER(pixel)
        if ra[2] or ra[3]:
            mario.reset(), pixel.reset()


def test_the_deterministic_render_is_the_noise_free_one_to_one_image():
    env = gym.make("asg/PixelMario-v0", render_noise="none")
    frames, states = _walk(env, np.random.default_rng(3).integers(4, size=200).tolist(), seed=0)
    for frame, state in zip(frames, states):
        assert np.array_equal(frame, render_rgb(state, 8))
    by_state = {}
    for frame, state in zip(frames, states):
        by_state.setdefault(state, set()).add(frame.tobytes())
    assert all(len(images) == 1 for images in by_state.values())


def test_pooled_camera_images_are_nearest_to_their_own_grid_state():
    """Noise moves pixels, not the scene: pooled to a value per cell and standardised (what the deep
    skills and k-means see), a camera frame is nearest to its own state's noise-free image."""
    from asg.learning.asgrl.deep_skills import pool_image, standardize

    actions = np.random.default_rng(6).integers(4, size=400).tolist()
    frames, states = _walk(gym.make("asg/PixelMario-v0"), actions, seed=9)
    clean = {s: standardize(pool_image(render_rgb(s, 8), 8)[None])[0] for s in states}
    keys = list(clean)
    table = np.stack([clean[k] for k in keys])
    hits = [keys[int(((table - standardize(pool_image(f, 8)[None])[0]) ** 2).sum(1).argmin())] == s
            for f, s in zip(frames, states)]
    assert len(keys) > 5 and np.mean(hits) > 0.95


def test_a_table_keyed_on_image_bytes_sees_almost_only_new_observations():
    env = gym.make("asg/PixelMario-v0")
    actions = np.random.default_rng(5).integers(4, size=3000).tolist()
    frames, states = [], []
    obs, _ = env.reset(seed=0)
    for a in actions:
        obs, _, terminated, truncated, _ = env.step(a)
        frames.append(obs.tobytes())
        states.append(env.unwrapped.hashable_state())
        if terminated or truncated:
            env.reset()
    assert len(set(states)) < 200  # the grid has a few hundred states at most
    assert len(set(frames)) / len(frames) > 0.99  # but nearly every image is new
