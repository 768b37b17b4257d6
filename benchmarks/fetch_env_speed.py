"""Env steps per second: asg's 4-block Fetch env against gymnasium-robotics' FetchPickAndPlace-v4.

Both are built with ``gymnasium.make`` and stepped with the same seeded random actions in
episodes of T = 50 steps, resets included. Trials alternate between the envs so that outside
load hits all alike. Rates are steps per second of this process's CPU time (single-threaded
stepping; robust to other processes on a shared machine), with wall-clock rates alongside;
the table shows medians over trials and the ratio to PickAndPlace.
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


def steps_per_second(env: gym.Env, episodes: int, seed: int) -> tuple[float, float]:
    """(CPU-time, wall-clock) random-action steps per second over ``episodes`` episodes of T steps."""
    rng = np.random.default_rng(seed)
    actions = rng.uniform(-1.0, 1.0, size=(episodes, T, 4)).astype(np.float32)
    env.reset(seed=seed)
    cpu, wall = time.process_time(), time.perf_counter()
    for ep in range(episodes):
        env.reset()
        for t in range(T):
            env.step(actions[ep, t])
    steps = episodes * T
    return steps / (time.process_time() - cpu), steps / (time.perf_counter() - wall)


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
    cpu: dict[str, list[float]] = {name: [] for name in envs}
    wall: dict[str, list[float]] = {name: [] for name in envs}
    for trial in range(args.trials):
        for name, env in envs.items():
            c, w = steps_per_second(env, args.episodes, seed=trial)
            cpu[name].append(c)
            wall[name].append(w)
    base = "FetchPickAndPlace-v4 (1 block)"
    cpu_base, wall_base = statistics.median(cpu[base]), statistics.median(wall[base])
    width = max(map(len, envs))
    print(f"medians of {args.trials} trials x {args.episodes} episodes x {T} steps")
    print(f"{'env':<{width}}  CPU steps/s  ratio   wall steps/s  ratio")
    for name in envs:
        c, w = statistics.median(cpu[name]), statistics.median(wall[name])
        print(f"{name:<{width}}  {c:11.0f}  {c / cpu_base:4.2f}x  {w:12.0f}  {w / wall_base:4.2f}x")
    for env in envs.values():
        env.close()


if __name__ == "__main__":
    main()
