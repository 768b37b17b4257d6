"""Demonstrations from the scripted controller, the behaviour-cloning loss with a Q-filter, and
resets to states along demonstrations (Nair et al. 2018, "Overcoming exploration in
reinforcement learning with demonstrations").

- :func:`generate_demos` runs ``envs/fetch/scripted.py``'s waypoint controller on uniformly drawn
  atomic programs and keeps the successful episodes, in the policy's rotated frame, together
  with the simulation state at every step.
- :func:`bc_loss` is Nair's auxiliary loss: the squared error between π(s, g) and the demo
  action, counted only where the critic rates the demo action higher than the policy's own
  (the Q-filter), so that the policy may outgrow a sub-optimal demonstrator.
- :func:`demo_start` draws a state along a random demonstration and returns the spec of an
  episode that starts there with the demonstration's goal.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from asg.envs.fetch import (
    FetchBlocksEnv,
    ScriptedController,
    SimState,
    acting_block,
    atomic_programs,
    rotate_goal,
    rotate_observation,
)
from asg.learning.goal_policy.rollout import EpisodeSpec

MAX_ATTEMPTS_PER_DEMO = 4


@dataclass(frozen=True)
class DemoSet:
    """n successful demonstrations; arrays as in ``rollout.Episodes`` (policy frame)."""

    o: np.ndarray  # (n, T+1, 70) float32
    ag: np.ndarray  # (n, T+1, 12)
    g: np.ndarray  # (n, 12)
    u: np.ndarray  # (n, T, 4)
    states: np.ndarray  # (n, T, state size) simulation states before each action, float64
    goals: np.ndarray  # (n, 12) goals in env frame
    focus: np.ndarray  # (n,) focus block
    programs: tuple[str, ...]
    attempts: int  # episodes run to get the n successes

    def __len__(self) -> int:
        return int(self.o.shape[0])

    @property
    def success_rate(self) -> float:
        """Share of scripted episodes that succeeded."""
        return len(self) / max(self.attempts, 1)


def generate_demos(n: int, seed: int, horizon: int = 50, initial_state: str = "training",
                   programs: tuple[str, ...] = ()) -> DemoSet:
    """``n`` successful scripted episodes on uniformly drawn atomic programs (of ``programs``; () = all).

    Start states come from the D.1 distribution at an annealing progress drawn uniformly in
    [0, 1] per episode, so demos cover grasped, stacked and all-on-table starts.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    rng = np.random.default_rng([seed, 3])
    env = FetchBlocksEnv(initial_state=initial_state, max_steps=None)
    controller = ScriptedController()
    names = programs or atomic_programs()
    keep: list[tuple] = []
    attempts = 0
    while len(keep) < n:
        if attempts >= MAX_ATTEMPTS_PER_DEMO * n:
            raise RuntimeError(f"the scripted controller succeeded in only {len(keep)} of {attempts} episodes")
        attempts += 1
        program = names[int(rng.integers(len(names)))]
        env.set_progress(float(rng.uniform()))
        obs, _ = env.reset(seed=int(rng.integers(2**31)), options={"program": program})
        focus = acting_block(program)
        controller.reset(obs["observation"], env.goal, focus)
        raw = [obs["observation"]]
        actions, states = [], []
        for _ in range(horizon):
            states.append(env.sim.get_state().values)
            a = np.clip(controller.act(raw[-1]), -1.0, 1.0)
            obs, _, _, _, info = env.step(a)
            actions.append(a)
            raw.append(obs["observation"])
        if info["is_success"]:
            keep.append((rotate_observation(np.array(raw), focus), rotate_goal(env.goal, focus),
                         np.array(actions), np.array(states), env.goal.copy(), focus, program))
    env.close()
    o = np.stack([k[0] for k in keep]).astype(np.float32)
    return DemoSet(o, o[:, :, :12].copy(), np.stack([k[1] for k in keep]).astype(np.float32),
                   np.stack([k[2] for k in keep]).astype(np.float32), np.stack([k[3] for k in keep]),
                   np.stack([k[4] for k in keep]), np.array([k[5] for k in keep]),
                   tuple(k[6] for k in keep), attempts)


def demo_start(demos: DemoSet, rng: np.random.Generator, seed: int) -> EpisodeSpec:
    """An episode starting at a uniformly drawn step (before the last) of a random demonstration."""
    i = int(rng.integers(len(demos)))
    t = int(rng.integers(demos.states.shape[1]))
    return EpisodeSpec(seed=seed, program=demos.programs[i], focus=int(demos.focus[i]),
                       state=SimState(demos.states[i, t].copy()), goal=demos.goals[i].copy())


def bc_loss(pi: torch.Tensor, u_demo: torch.Tensor, q_pi: torch.Tensor | None = None,
            q_demo: torch.Tensor | None = None) -> tuple[torch.Tensor, float]:
    """Behaviour cloning on demo rows with an optional Q-filter; (loss, share of rows kept).

    pi, u_demo: (N, A); q_pi, q_demo: (N,) critic values of π's and the demo's action (both or
    neither). Loss = mean over rows of mask · ||π − a_demo||², mask = 1[Q(s, a_demo) > Q(s, π)].
    """
    err = torch.sum((pi - u_demo) ** 2, dim=-1)
    if q_pi is None or q_demo is None:
        return err.mean(), 1.0
    mask = (q_demo > q_pi).detach().to(err.dtype)
    return (err * mask).mean(), float(mask.mean())
