"""The DDPG learner of the goal-conditioned policy: networks, normalisers and one update step.

Update (openai/baselines' HER flavour of DDPG, plus Nair et al.'s demo loss):

- critic: TD target y = r + γ Q'(o2, g, π'(o2, g)), clipped to the sparse return range
  [−1/(1 − γ), 0] (rewards are −1/0), loss = mean (Q(o, g, u) − y)²;
- actor: q_weight · (−mean Q(o, g, π(o, g)) + action_l2 · mean π(o, g)²) + bc_weight ·
  BC-with-Q-filter on the demo rows of the batch (``demos.bc_loss``; q_weight = 1 without demos);
- targets: Polyak averaging, ``update_targets`` (called once per cycle, as baselines does).

Inputs are clipped to ±clip_obs, normalised by running statistics and clipped to ±norm_clip,
with exactly the numpy code the rollout workers use (``PolicySnapshot``).
"""
from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch
from torch import nn

from asg.learning.goal_policy.config import AgentConfig
from asg.learning.goal_policy.demos import bc_loss
from asg.learning.goal_policy.her import Transitions, concat
from asg.learning.goal_policy.networks import Actor, Critic, actor_arrays
from asg.learning.goal_policy.normalizer import Normalizer
from asg.learning.goal_policy.rollout import PolicySnapshot


class DDPGAgent:
    """Actor, critic, their targets and optimisers, and the observation / goal normalisers."""

    def __init__(self, obs_dim: int, goal_dim: int, act_dim: int, config: AgentConfig, seed: int = 0) -> None:
        self.config, self.dims = config, (obs_dim, goal_dim, act_dim)
        with torch.random.fork_rng(devices=[]):  # seeded initialisation, global torch RNG untouched
            torch.manual_seed(seed)
            self.actor = Actor(obs_dim, goal_dim, act_dim, config.hidden)
            self.critic = Critic(obs_dim, goal_dim, act_dim, config.hidden)
        self.actor_target = copy.deepcopy(self.actor)
        self.critic_target = copy.deepcopy(self.critic)
        for p in (*self.actor_target.parameters(), *self.critic_target.parameters()):
            p.requires_grad_(False)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=config.lr_actor)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=config.lr_critic)
        self.o_norm = Normalizer(obs_dim, config.norm_eps, config.norm_clip)
        self.g_norm = Normalizer(goal_dim, config.norm_eps, config.norm_clip)
        self.updates = 0

    # -- inputs ------------------------------------------------------------------------------
    def _inputs(self, o: np.ndarray, g: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        c = self.config.clip_obs
        o_n = self.o_norm.stats().normalize(np.clip(o, -c, c))
        g_n = self.g_norm.stats().normalize(np.clip(g, -c, c))
        return torch.from_numpy(np.ascontiguousarray(o_n)), torch.from_numpy(np.ascontiguousarray(g_n))

    def update_normalizers(self, batch: Transitions) -> None:
        """Add a batch's (clipped) observations and goals to the running statistics."""
        c = self.config.clip_obs
        self.o_norm.update(np.clip(batch.o, -c, c))
        self.g_norm.update(np.clip(batch.g, -c, c))

    # -- the update --------------------------------------------------------------------------
    def update(self, batch: Transitions, demo: Transitions | None = None, bc_weight: float = 0.0,
               q_filter: bool = True, q_weight: float = 1.0,
               expert: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
               expert_weight: float = 0.0) -> dict[str, float]:
        """One critic and one actor step on ``batch`` (plus ``demo`` rows); the losses.

        Actor loss = q_weight · (−mean Q + action_l2 · mean π²) + bc_weight · BC (demo rows only)
        + expert_weight · mean ||π(o, g) − u||² over ``expert`` = (o, g, u) rows (DAgger labels).
        """
        cfg = self.config
        n_demo = 0 if demo is None else len(demo)
        if demo is not None:
            batch = concat(batch, demo)
        o, g = self._inputs(batch.o, batch.g)
        o2, _ = self._inputs(batch.o2, batch.g)
        u, r = torch.from_numpy(batch.u), torch.from_numpy(batch.r)
        with torch.no_grad():
            y = r + cfg.gamma * self.critic_target(o2, g, self.actor_target(o2, g))
            if cfg.clip_target:
                y = y.clamp(-1.0 / (1.0 - cfg.gamma), 0.0)
        q = self.critic(o, g, u)
        critic_loss = torch.mean((q - y) ** 2)
        self.critic_opt.zero_grad(set_to_none=True)
        critic_loss.backward()
        self.critic_opt.step()

        pi = self.actor(o, g)
        q_pi = self.critic(o, g, pi)
        actor_loss = q_weight * (-q_pi.mean() + cfg.action_l2 * torch.mean(pi ** 2))
        bc, kept = torch.zeros(()), 0.0
        if n_demo and bc_weight > 0:
            with torch.no_grad():
                q_demo = self.critic(o[-n_demo:], g[-n_demo:], u[-n_demo:]) if q_filter else None
            q_pol = q_pi[-n_demo:].detach() if q_filter else None
            bc, kept = bc_loss(pi[-n_demo:], u[-n_demo:], q_pol, q_demo)
            actor_loss = actor_loss + bc_weight * bc
        dagger = torch.zeros(())
        if expert is not None and expert_weight > 0:
            o_e, g_e = self._inputs(expert[0], expert[1])
            dagger, _ = bc_loss(self.actor(o_e, g_e), torch.from_numpy(expert[2]))
            actor_loss = actor_loss + expert_weight * dagger
        self.actor_opt.zero_grad(set_to_none=True)
        actor_loss.backward()
        self.actor_opt.step()
        self.updates += 1
        return {"critic_loss": float(critic_loss.detach()), "actor_loss": float(actor_loss.detach()),
                "q_mean": float(q.detach().mean()), "bc_loss": float(bc.detach()), "q_filter_kept": kept,
                "dagger_loss": float(dagger.detach())}

    def bc_step(self, demo: Transitions) -> float:
        """One actor step of plain behaviour cloning on demo transitions (pre-training); the loss."""
        o, g = self._inputs(demo.o, demo.g)
        loss, _ = bc_loss(self.actor(o, g), torch.from_numpy(demo.u))
        self.actor_opt.zero_grad(set_to_none=True)
        loss.backward()
        self.actor_opt.step()
        with torch.no_grad():  # the target actor starts from the pre-trained one
            for p, tp in zip(self.actor.parameters(), self.actor_target.parameters()):
                tp.copy_(p)
        return float(loss.detach())

    def update_targets(self) -> None:
        """target ← polyak · target + (1 − polyak) · online."""
        rho = self.config.polyak
        with torch.no_grad():
            for net, target in ((self.actor, self.actor_target), (self.critic, self.critic_target)):
                for p, tp in zip(net.parameters(), target.parameters()):
                    tp.mul_(rho).add_(p, alpha=1.0 - rho)

    def critic_loss(self, batch: Transitions) -> float:
        """The critic's TD loss on ``batch`` without updating anything."""
        cfg = self.config
        with torch.no_grad():
            o, g = self._inputs(batch.o, batch.g)
            o2, _ = self._inputs(batch.o2, batch.g)
            y = torch.from_numpy(batch.r) + cfg.gamma * self.critic_target(o2, g, self.actor_target(o2, g))
            if cfg.clip_target:
                y = y.clamp(-1.0 / (1.0 - cfg.gamma), 0.0)
            return float(torch.mean((self.critic(o, g, torch.from_numpy(batch.u)) - y) ** 2))

    # -- export and checkpoints --------------------------------------------------------------
    def snapshot(self) -> PolicySnapshot:
        """The greedy policy as numpy arrays (for rollout workers and the shipped policy file)."""
        return PolicySnapshot(tuple(actor_arrays(self.actor)), self.o_norm.stats(), self.g_norm.stats(),
                              self.config.clip_obs)

    def state_dict(self) -> dict[str, Any]:
        nets = {"actor": self.actor, "critic": self.critic, "actor_target": self.actor_target,
                "critic_target": self.critic_target, "actor_opt": self.actor_opt, "critic_opt": self.critic_opt}
        out: dict[str, Any] = {k: v.state_dict() for k, v in nets.items()}
        out.update(o_norm=self.o_norm.state_dict(), g_norm=self.g_norm.state_dict(), updates=self.updates,
                   dims=self.dims)
        return out

    def load_state_dict(self, data: dict[str, Any]) -> None:
        if tuple(data["dims"]) != self.dims:
            raise ValueError(f"checkpoint dims {tuple(data['dims'])} differ from the agent's {self.dims}")
        modules: dict[str, nn.Module | torch.optim.Optimizer] = {
            "actor": self.actor, "critic": self.critic, "actor_target": self.actor_target,
            "critic_target": self.critic_target, "actor_opt": self.actor_opt, "critic_opt": self.critic_opt}
        for key, module in modules.items():
            module.load_state_dict(data[key])
        # the step size is the config's, not the saved one: a carried run may fine-tune at a lower rate
        # (carry.FINETUNE_FIELDS); the same value on any other resume
        for opt, lr in ((self.actor_opt, self.config.lr_actor), (self.critic_opt, self.config.lr_critic)):
            for group in opt.param_groups:
                group["lr"] = lr
        self.o_norm = Normalizer.from_state_dict(data["o_norm"])
        self.g_norm = Normalizer.from_state_dict(data["g_norm"])
        self.updates = int(data["updates"])
