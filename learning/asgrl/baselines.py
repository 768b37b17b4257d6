"""The four baselines of ASGRL Sec. 5.1, on the same step budget as ASGRL.

* Landmark-HRL: ``HierarchicalLearner`` with one skill per landmark and no diversity reward
  (``config.default_learner("landmark-hrl")``).
* Plan-HRL: ``HierarchicalLearner`` over one subgoal per operator of a plan of the symbolic model
  (``subgoals.plan_subgoals``): the skill of an operator must make its add effects true.
* Landmark-Shaping: ``FlatLearner`` whose reward is the change of the potential
  Φ = number of landmarks reached so far this episode (each landmark pays once, §1.8), plus the
  goal reward.
* Goal-Q-Learning: ``FlatLearner`` on the sparse goal reward alone.

Flat learners use 2000-step episodes, ε × 0.995 after every episode (App. G) and a fixed
learning rate of 0.1 (§1.8), with the same replay and SIL schedule as the skills (the official
code's, §1.8; App. G is silent on it for the flat baselines; ``QConfig.replay="online"`` measures
plain one-step Q-learning instead, docs/asgrl_paper_setting.md).
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from asg.envs.user_code import UserCodeError
from asg.learning.asgrl.config import FlatConfig
from asg.learning.asgrl.episode import EpisodeStats
from asg.learning.asgrl.hierarchical import check_fits
from asg.learning.asgrl.subgoals import Labeler, SubgoalSet
from asg.learning.asgrl.tabular_q import TableKeys, TabularQ


class FlatLearner:
    """One tabular Q agent on the whole task (Goal-Q-Learning, Landmark-Shaping)."""

    def __init__(self, cfg: FlatConfig, subgoals: SubgoalSet, n_actions: int, seed: int) -> None:
        self.cfg = cfg
        self.subgoals = subgoals
        self.n_actions = n_actions
        self.rng = np.random.default_rng(np.random.SeedSequence(seed))
        self.index = TableKeys(cfg)  # exact observations, or image prototypes (cfg.state_key)
        self.agent = TabularQ(cfg.q, n_actions)
        self.best_score = 0.0
        self.env_steps = 0
        self.episodes = 0
        # Landmarks that pay a shaping reward: every subgoal except the goal ones (the goal pays
        # goal_reward, so reaching it is never paid twice).
        self._shaping = tuple(sg.atoms for sg in subgoals.subgoals if not sg.goal)

    def _sid(self, obs: Any, learn: bool) -> int:
        return self.index(obs, learn)

    def _episode(self, env: gym.Env, labeler: Labeler, seed: int, learn: bool, budget: int) -> EpisodeStats:
        cfg = self.cfg
        obs, _ = env.reset(seed=seed)
        s = self._sid(obs, learn)
        seen: set = set() if learn else set(labeler(env))
        shaping = cfg.reward == "landmark-shaping"
        pending = list(range(len(self._shaping)))
        names = [sg.name for sg in self.subgoals.subgoals if not sg.goal]
        reached: list[str] = []
        score, steps, success = 0.0, 0, False
        agent, rng = self.agent, self.rng
        limit = min(cfg.episode_max_steps, budget)
        failure: UserCodeError | None = None
        while steps < limit:
            a = agent.act(s, rng) if learn else agent.greedy(s)
            try:
                obs, _, terminated, truncated, _ = env.step(a)
                labels = labeler(env)
            except UserCodeError as exc:  # the world's own code failed: the episode ends at the step before
                failure = exc
                break
            steps += 1
            if not learn:
                seen |= labels
            success = self.subgoals.goal_reached(labels)
            reward = cfg.goal_reward if success else 0.0
            new = [i for i in pending if self._shaping[i] <= labels]
            if new:
                pending = [i for i in pending if i not in new]
                reached.extend(names[i] for i in new)
                if shaping:
                    reward += float(len(new))
            s2 = self._sid(obs, learn)
            done = success or terminated
            if learn:
                agent.observe(s, a, s2, reward, done)
                agent.learn(rng)
            score += reward
            s = s2
            if done or truncated:
                break
        if success:
            reached.append(" & ".join(sg.name for sg in self.subgoals.subgoals if sg.goal))
        if learn:
            keep = success if cfg.sil_rule == "success" else (score > 0 and score >= self.best_score)
            if keep:
                self.best_score = max(self.best_score, score)
            agent.end_segment(keep)
            if success:
                agent.successes += 1
            if agent.cfg.decay_on == "episode" or success:
                agent.decay_epsilon()
            self.env_steps += steps
            self.episodes += 1
        if failure is not None:  # raised once the episode is closed (``Learner``)
            raise failure
        return EpisodeStats(steps, success, tuple(reached), (), tuple(sorted(str(a) for a in seen)))

    def state_dict(self) -> dict[str, Any]:
        """Everything learned and every counter, as data (``asg.learning.checkpoint``)."""
        return {"n_actions": self.n_actions, "subgoals": self.subgoals.names(), "rng": self.rng,
                "index": self.index.state_dict(), "agent": self.agent.state_dict(),
                "best_score": self.best_score, "env_steps": self.env_steps, "episodes": self.episodes}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict` output; ``ValueError`` when it does not fit this learner."""
        check_fits(data, self.n_actions, self.subgoals.names())
        self.rng.bit_generator.state = data["rng"].bit_generator.state
        self.index.load_state_dict(data["index"])
        self.agent.load_state_dict(data["agent"])
        self.best_score = float(data["best_score"])
        self.env_steps, self.episodes = int(data["env_steps"]), int(data["episodes"])

    def train_episode(self, env: gym.Env, labeler: Labeler, seed: int, budget: int) -> EpisodeStats:
        """One flat episode of at most ``episode_max_steps`` (and ``budget``) steps."""
        return self._episode(env, labeler, seed, True, budget)

    def greedy_episode(self, env: gym.Env, labeler: Labeler, seed: int) -> EpisodeStats:
        """The frozen greedy policy for one episode."""
        return self._episode(env, labeler, seed, False, self.cfg.episode_max_steps)
