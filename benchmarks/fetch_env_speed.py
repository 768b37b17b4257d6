"""Env steps per second: asg's 4-block Fetch env against gymnasium-robotics' FetchPickAndPlace-v4.

Both are built with ``gymnasium.make`` and stepped with the same seeded random actions in
episodes of T = 50 steps, resets included. Trials alternate between the two envs so that
outside load hits both alike; the table shows the median of the trials and the ratio.
The issue's goal: asg's env at >= 0.8x PickAndPlace's rate.

    python benchmarks/fetch_env_speed.py [--episodes 40] [--trials 5]
"""
from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np

T = 50


def steps_per_second(env: gym.Env, episodes: int, seed: int) -> float:
    """Random-action steps per second over ``episodes`` episodes of T steps (resets counted)."""
    rng = np.random.default_rng(seed)
    actions = rng.uniform(-1.0, 1.0, size=(episodes, T, 4)).astype(np.float32)
    env.reset(seed=seed)
    start = time.perf_counter()
    for ep in range(episodes):
        env.reset()
        for t in range(T):
            env.step(actions[ep, t])
    return episodes * T / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=40, help="episodes per trial")
    parser.add_argument("--trials", type=int, default=5, help="alternating trials per env")
    args = parser.parse_args()

    import gymnasium_robotics

    import asg.envs  # noqa: F401  (registers asg/ ids)

    gym.register_envs(gymnasium_robotics)
    envs = {
        "FetchPickAndPlace-v4 (1 block)": gym.make("FetchPickAndPlace-v4"),
        "asg/FetchBlocks-v0 (4 blocks, D.1 starts)": gym.make("asg/FetchBlocks-v0"),
        "asg/FetchBlocksTable-v0 (4 blocks, table starts)": gym.make("asg/FetchBlocksTable-v0"),
    }
    rates: dict[str, list[float]] = {name: [] for name in envs}
    for trial in range(args.trials):
        for name, env in envs.items():
            rates[name].append(steps_per_second(env, args.episodes, seed=trial))
    base = statistics.median(rates["FetchPickAndPlace-v4 (1 block)"])
    width = max(map(len, envs))
    print(f"{'env':<{width}}  steps/s (median of {args.trials})  min..max      ratio")
    for name, values in rates.items():
        med = statistics.median(values)
        print(f"{name:<{width}}  {med:8.0f}                 {min(values):5.0f}..{max(values):<5.0f}  "
              f"{med / base:5.2f}x")
    for env in envs.values():
        env.close()


if __name__ == "__main__":
    main()
