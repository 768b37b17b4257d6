"""Actor and critic MLPs of the goal-conditioned policy (Table 5: 256/256 each).

Both take normalised, clipped inputs (see ``normalizer.py``): the actor maps [o, g] to an
action in [-1, 1]^A (tanh), the critic maps [o, g, a] to Q. :func:`actor_arrays` exports the
actor's weights as numpy arrays for the rollout workers (``rollout.PolicySnapshot``), which
act without torch.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn


def mlp(sizes: list[int], out_act: nn.Module | None = None) -> nn.Sequential:
    """Linear layers with ReLU between them (and ``out_act`` after the last)."""
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    if out_act is not None:
        layers.append(out_act)
    return nn.Sequential(*layers)


class Actor(nn.Module):
    """π(o, g) -> a in [-1, 1]^act_dim."""

    def __init__(self, obs_dim: int, goal_dim: int, act_dim: int, hidden: tuple[int, ...]) -> None:
        super().__init__()
        self.net = mlp([obs_dim + goal_dim, *hidden, act_dim], nn.Tanh())

    def forward(self, o: torch.Tensor, g: torch.Tensor) -> torch.Tensor:  # (B, od), (B, gd) -> (B, ad)
        return self.net(torch.cat([o, g], dim=-1))


class Critic(nn.Module):
    """Q(o, g, a) -> (B,)."""

    def __init__(self, obs_dim: int, goal_dim: int, act_dim: int, hidden: tuple[int, ...]) -> None:
        super().__init__()
        self.net = mlp([obs_dim + goal_dim + act_dim, *hidden, 1])

    def forward(self, o: torch.Tensor, g: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([o, g, a], dim=-1)).squeeze(-1)


def actor_arrays(actor: Actor) -> list[tuple[np.ndarray, np.ndarray]]:
    """The actor's (weight (out, in), bias (out,)) pairs as float32 numpy copies."""
    return [(m.weight.detach().cpu().numpy().astype(np.float32).copy(),
             m.bias.detach().cpu().numpy().astype(np.float32).copy())
            for m in actor.net if isinstance(m, nn.Linear)]
