"""ASGRL: diverse skills per subgoal chained by a meta-controller (Guan et al., ICML 2022).

``HierarchicalLearner`` implements Algorithm 1 of the paper with the official schedules
(reference_code.md §1.5–1.7): each training episode the meta-controller picks, subgoal after
subgoal, one of the k skills of the next subgoal (and the subgoal itself where linearizations
branch); the skill runs on the ``SubgoalWrapper`` from where the previous one stopped, learning
online with the diversity reward; a failed skill ends the episode. The same class, with k = 1
and α = 0, is the Landmark-HRL baseline, and with plan subgoals, Plan-HRL (``baselines.py``).

``cfg.state_key = "prototypes"`` keys the tables on image prototypes (``clustering.PrototypeIndex``)
instead of the exact observation. ``cfg.skills = "deep"`` swaps the Q tables for heads of one small
Q-network over pooled images (``deep_skills.py``, imported only then, so tabular runs never import
torch); the episode loop, diversity reward and meta-controller are the same code.
"""
from __future__ import annotations

import contextlib
from collections.abc import Hashable
from contextlib import AbstractContextManager as ContextManager
from typing import Any

import gymnasium as gym
import numpy as np

from asg.envs.user_code import UserCodeError
from asg.learning.asgrl.clustering import KMeansAbstraction
from asg.learning.asgrl.config import HierarchicalConfig
from asg.learning.asgrl.diversity import SkillSet
from asg.learning.asgrl.elimination import UndoElimination
from asg.learning.asgrl.episode import EpisodeStats
from asg.learning.asgrl.horizon import SkillHorizons
from asg.learning.asgrl.meta_controller import (
    MetaAction,
    MetaController,
    MetaTransition,
    history_state,
    landmark_state,
    low_level_state,
)
from asg.learning.asgrl.novelty import LabelNovelty, StateNovelty
from asg.learning.asgrl.subgoals import Labeler, SubgoalSet, SubgoalWrapper
from asg.learning.asgrl.tabular_q import TableKeys
from asg.learning.torch_state import torch_threads  # imports torch only when called

RETRY_STREAM = 0x2E7  # the second key of a frozen episode's ``retry_epsilon`` generator, after its seed


class HierarchicalLearner:
    """Skills per subgoal (tabular Q, diversity reward) plus a tabular meta-controller."""

    def __init__(self, cfg: HierarchicalConfig, subgoals: SubgoalSet, n_actions: int, seed: int) -> None:
        self.cfg = cfg
        self.subgoals = subgoals
        self.n_actions = n_actions
        seeds = np.random.SeedSequence(seed).spawn(len(subgoals) + 1)
        self.rng = np.random.default_rng(seeds[0])
        self.index = TableKeys(cfg)  # tabular skills' ids: exact observations or image prototypes
        rngs = [np.random.default_rng(seeds[i + 1]) for i in range(len(subgoals))]
        self.deep: Any = None  # the shared network of deep skills (deep_skills.DeepQ)
        self._encode: Any = None  # deep skills: observation -> stored (n_in,) uint8 (deep_skills.encode)
        if cfg.skills == "deep":
            from asg.learning.asgrl import deep_skills

            self._encode = deep_skills.encode
            torch_seed = int(np.random.SeedSequence([seed, 0xD0]).generate_state(1)[0])
            self.deep, self.skill_sets = deep_skills.build_skill_sets(cfg, subgoals, n_actions, torch_seed, rngs)
        else:
            self.skill_sets = [SkillSet(sg.name, cfg.diversity.k_for(sg.name), cfg.q, cfg.diversity, n_actions, rng,
                                        dead_end_after=cfg.dead_end_after)
                               for sg, rng in zip(subgoals.subgoals, rngs)]
        self.meta = MetaController(cfg.meta)
        # count-based exploration over the labeler's atoms (``cfg.label_novelty``, ours; None when off)
        self.novelty = LabelNovelty(cfg.label_novelty) if cfg.label_novelty else None
        # and over the skills' own state (``cfg.state_novelty``, ours; None when off)
        self.state_novelty = (StateNovelty(cfg.state_novelty, cfg.state_novelty_bits)
                              if cfg.state_novelty else None)
        # random steps that undo a kept landmark, left out once learned (``cfg.eliminate_undoing``, ours)
        self.elimination = UndoElimination(n_actions) if cfg.eliminate_undoing else None
        # each landmark's skill horizon, from its successful runs (``cfg.skill_horizon``, ours)
        self.horizons = (SkillHorizons(len(subgoals), cfg.skill_horizon, cfg.skill_max_steps)
                         if cfg.skill_horizon else None)
        self.env_steps = 0
        self.episodes = 0
        self._failure: UserCodeError | None = None  # what ended the running episode, raised at its end
        self._memory: Any = None  # the running episode's recurrent memory (deep.recurrent; deep_skills.RunMemory)

    # ------------------------------------------------------------------ helpers
    def _sid(self, obs: Any, learn: bool) -> Any:
        """The skills' state: a table id, or (deep skills) the encoded observation (n_in,) uint8."""
        if self._encode is not None:
            return self._encode(obs, self.cfg.deep)
        return self.index(obs, learn)

    def _meta_state(self, history: list[MetaAction], achieved: list[int], s: int) -> Hashable:
        if self.cfg.meta.state == "history":
            return history_state(history)
        if self.cfg.meta.state == "landmarks":
            return landmark_state(achieved)
        return low_level_state(achieved, s)

    def _novelty(self, g: int, labels: frozenset, s2: Any) -> float:
        """The exploration bonus of a training step of g's skills that ended in ``labels`` and the
        skills' state ``s2`` (0 when both counts are off)."""
        bonus = self.novelty.bonus(g, labels) if self.novelty is not None else 0.0
        if self.state_novelty is not None:
            bonus += self.state_novelty.bonus(g, s2)
        return bonus

    def _allowed(self, wrapper: SubgoalWrapper) -> np.ndarray | None:
        """The actions a random step of the running skill may draw (None: all; ``eliminate_undoing``)."""
        return self.elimination.allowed(wrapper.kept) if self.elimination is not None else None

    def _record_step(self, wrapper: SubgoalWrapper, action: int, info: dict[str, Any]) -> None:
        """Count a training step for ``eliminate_undoing``: did it make a kept landmark false?"""
        if self.elimination is not None:
            self.elimination.record(wrapper.kept, action, info["subgoal"] == "undone")

    def _horizon(self, g: int) -> int | None:
        """The step budget of a run of g's skills (None: the fixed ``skill_max_steps``; ``skill_horizon``)."""
        return self.horizons.horizon(g) if self.horizons is not None else None

    def _record_run(self, g: int, steps: int, reached: bool) -> None:
        """A training run of g's skills ended after ``steps`` steps: a success sets g's horizon."""
        if reached and self.horizons is not None:
            self.horizons.record(g, steps)

    def _actions(self, achieved: list[int]) -> tuple[MetaAction, ...]:
        return tuple((g, z) for g in self.subgoals.next_subgoals(achieved)
                     for z in range(self.skill_sets[g].active))

    def _reached(self, achieved: list[int], g: int, wrapper: SubgoalWrapper, paid: set[int]) -> float:
        """Subgoal ``g`` was reached: it joins ``achieved`` (in place), with the later ones reached in
        the same step (``reach_together``); the meta-controller's reward, R for each not reached before
        in the episode (``paid``, in place). Only ``retake_undone`` reaches a subgoal twice; paid again,
        a loop that drops the key and takes it again scored more than the goal (docs/asgrl.md)."""
        new = [j for j in (g, *wrapper.together) if j not in paid]
        achieved.append(g)
        achieved.extend(wrapper.together)
        paid.update(new)
        return self.cfg.meta.subgoal_reward * len(new)

    def _next_actions(self, achieved: list[int], reached: bool, success: bool, env_over: bool,
                      wrapper: SubgoalWrapper) -> tuple[MetaAction, ...]:
        """The choices for the next skill once one has ended in ``wrapper``; none when the episode is
        over. With ``retake_undone``, a run that made needed landmarks false (``wrapper.undone``) goes
        on, to take them again (``_retake``); with ``retry_timed_out``, a run cut at its step cap lets
        the meta-controller choose again."""
        if success or env_over:
            return ()
        if reached or (wrapper.status is None and self.cfg.retry_timed_out):
            return self._actions(achieved)
        if wrapper.undone and self.cfg.retake_undone:
            self._retake(achieved, wrapper.undone)
            return self._actions(achieved)
        return ()

    def _retry_choices(self, actions: tuple[MetaAction, ...], cut_runs: set[MetaAction],
                       learn: bool) -> tuple[MetaAction, ...]:
        """The frozen meta-controller's choices after cut runs of one landmark (``retry_other_skill``):
        ``actions`` less the skills already cut, where another remains; all of them again once every
        skill of it was cut. Training chooses among all, ε-greedy."""
        if learn or not cut_runs or not self.cfg.retry_other_skill:
            return actions
        return tuple(a for a in actions if a not in cut_runs) or actions

    def _retake(self, achieved: list[int], undone: tuple[int, ...]) -> None:
        """Cut ``achieved`` (in place) at the first landmark ``undone``: it and every landmark achieved
        after it are taken again. The achieved landmarks stay a prefix of a linearization, so the
        meta-controller has a next subgoal (a door closed on the way to the next key is opened again,
        then the hand emptied again), where taking the door alone out left no linearization to
        follow, and the episode ended. Landmarks before it stay achieved even where they no longer
        hold: the model's needs are first achievers' (MiniGrid's door, once unlocked, opens without
        its key, so a retake from the key fails out of order)."""
        del achieved[min(achieved.index(j) for j in undone):]  # undone: kept landmarks, all achieved

    def state_dict(self) -> dict[str, Any]:
        """Everything learned and every counter, as data (``asg.learning.checkpoint``); the config,
        subgoals and action count are rebuilt from the run's config and checked on load."""
        data = {"n_actions": self.n_actions, "subgoals": self.subgoals.names(), "rng": self.rng,
                "index": self.index.state_dict(), "skill_sets": [_skill_set_state(sk) for sk in self.skill_sets],
                "meta": self.meta.state_dict(), "env_steps": self.env_steps, "episodes": self.episodes}
        if self.deep is not None:
            data["deep"] = self.deep.state_dict()
        for key, _, counts in self._counts():
            if counts is not None:
                data[key] = counts.state_dict()
        return data

    def _counts(self) -> tuple[tuple[str, str, Any], ...]:
        """The exploration counts a checkpoint may hold: (checkpoint key, config field, counts or None)."""
        return (("novelty", "label_novelty", self.novelty), ("state_novelty", "state_novelty", self.state_novelty),
                ("elimination", "eliminate_undoing", self.elimination), ("horizons", "skill_horizon", self.horizons))

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict` output; ``ValueError`` when it does not fit this learner."""
        check_fits(data, self.n_actions, self.subgoals.names())
        if len(data["skill_sets"]) != len(self.skill_sets):
            raise ValueError(f"{len(data['skill_sets'])} skill sets, expected {len(self.skill_sets)}")
        if ("deep" in data) != (self.deep is not None):
            raise ValueError(f"skills {'deep' if 'deep' in data else 'tabular'} in the checkpoint, "
                             f"{self.cfg.skills} in the config")
        self.rng.bit_generator.state = data["rng"].bit_generator.state
        self.index.load_state_dict(data["index"])
        if self.deep is not None:
            self.deep.load_state_dict(data["deep"])
        for skills, state in zip(self.skill_sets, data["skill_sets"]):
            _load_skill_set(skills, state)
        self.meta.load_state_dict(data["meta"])
        for key, field, counts in self._counts():
            if (key in data) != (counts is not None):
                raise ValueError(f"{field} {'on' if key in data else 'off'} in the checkpoint, "
                                 f"{getattr(self.cfg, field)} in the config")
            if counts is not None:
                counts.load_state_dict(data[key])
        self.env_steps, self.episodes = int(data["env_steps"]), int(data["episodes"])

    def skill_counts(self) -> dict[str, int]:
        """Skills available per subgoal (grows in the curriculum variant)."""
        return {sk.name: sk.active for sk in self.skill_sets}

    # ------------------------------------------------------------------ one skill
    def _run_skill(self, wrapper: SubgoalWrapper, g: int, z: int, s: int, achieved: list[int],
                   learn: bool, budget: int,
                   noise: np.random.Generator | None = None) -> tuple[bool, int, int, bool, bool]:
        """Run skill z of subgoal g; returns (reached, last state id, steps, env over, cut): ``cut``
        when the trainer's step budget ran out before the skill ended (the env over too). ``noise``: a
        frozen run's generator of ``retry_epsilon``'s random actions (None: greedy)."""
        skills = self.skill_sets[g]
        skill = skills.skills[z]
        if wrapper.begin(g, achieved, self._horizon(g)):
            return True, s, 0, False, False
        if self.deep is not None:
            self._memory = self.deep.run_memory(self._memory)
        skill.begin_run(self._memory)
        bonus = skills.bonus_fn(z) if learn else None
        if learn:
            skills.on_rollout(z)
        rng = self.rng
        failure_bonus = self.cfg.diversity.bonus_on_failure
        steps, reached, env_over, cut = 0, False, False, False
        while steps < budget:
            if learn:
                a = skill.act(s, rng, self._allowed(wrapper))
            elif noise is not None and noise.random() < self.cfg.retry_epsilon:
                a = int(noise.integers(self.n_actions))
            else:
                a = skill.greedy(s)
            try:
                obs, reward, terminated, truncated, info = wrapper.step(a)
            except UserCodeError as exc:  # the world's own code failed: the episode is cut at the step before
                self._failure, env_over, cut = exc, True, True
                break
            steps += 1
            s2 = self._sid(obs, learn)
            reached = info["subgoal"] == "reached"
            if learn:
                self._record_step(wrapper, a, info)
                reward += self._novelty(g, info["labels"], s2)
                scored = reached or (terminated and failure_bonus)
                skill.observe(s, a, s2, reward, terminated, bonus=scored and bonus is not None)
                if scored:
                    skills.on_success(z, s2, obs, reached=reached)
                skill.learn(rng, bonus)
            s = s2
            if terminated or truncated:
                env_over = bool(info.get("env_over"))
                break
        else:
            env_over = cut = True  # the step budget ran out
        if learn:
            skills.on_segment_end(z, reached)
            self._record_run(g, steps, reached)
            self.env_steps += steps
        return reached, s, steps, env_over, cut

    # ------------------------------------------------------------------ one episode
    def _torch_block(self) -> ContextManager[Any]:
        """Deep skills run torch on one thread, restored after the episode (``torch_state``)."""
        if self.deep is None:
            return contextlib.nullcontext()
        return torch_threads(1)

    def _episode(self, env: gym.Env, labeler: Labeler, seed: int, learn: bool, budget: int) -> EpisodeStats:
        self._failure = None
        with self._torch_block():
            stats = self._run_episode(env, labeler, seed, learn, budget)
        failure, self._failure = self._failure, None
        if failure is not None:  # raised once the episode is closed (``Learner``)
            raise failure
        return stats

    def _run_episode(self, env: gym.Env, labeler: Labeler, seed: int, learn: bool, budget: int) -> EpisodeStats:
        # lockstep.py runs these training episodes N envs at a time (deep.n_envs > 1), the logic of this
        # method and _run_skill twinned there; tests/test_lockstep.py keeps a lockstep of one env equal to it
        wrapper = SubgoalWrapper(env, labeler, self.subgoals, max_steps=self.cfg.skill_max_steps,
                                 strict=self.cfg.strict_ordering, track=not learn,
                                 protect=self.cfg.protect_landmarks, together=self.cfg.reach_together)
        self._memory = None  # the deep skills' recurrent memory of this episode (DeepQ.run_memory)
        obs, _ = wrapper.reset(seed=seed)
        s = self._sid(obs, learn)
        achieved: list[int] = []
        paid: set[int] = set()  # subgoals whose reward the episode has had
        history: list[MetaAction] = []
        trace: list[MetaTransition] = []
        steps, score, success = 0, 0.0, False
        actions = self._actions(achieved)
        came_from: tuple[int, int] | None = None  # (subgoal, state id) where the last skill reached its landmark
        # a frozen episode's random actions in the runs after a cut run of the same landmark (``retry_epsilon``)
        noise = np.random.default_rng([seed, RETRY_STREAM]) if self.cfg.retry_epsilon and not learn else None
        cut_g = -1  # the landmark whose run was last cut at its step cap
        cut_runs: set[MetaAction] = set()  # its skills cut since it was last reached (``retry_other_skill``)
        segments: list[tuple[int, frozenset, frozenset | None]] = []  # (subgoal, labels at start, at success)
        while actions:
            state = self._meta_state(history, achieved, s)
            g, z = self.meta.choose(state, self._retry_choices(actions, cut_runs, learn), self.rng, greedy=not learn)
            start = wrapper.labels
            reached, s, n, env_over, cut = self._run_skill(wrapper, g, z, s, achieved, learn, budget - steps,
                                                           noise if g == cut_g else None)
            cut_g = g if not reached and wrapper.status is None else -1
            cut_runs = cut_runs | {(g, z)} if cut_g == g else set()
            segments.append((g, start, wrapper.labels if reached else None))
            steps += n
            history.append((g, z))
            if cut and learn:  # the trainer stopped the skill, not the world: no verdict to learn from
                break
            if learn and self.cfg.dead_end_after:
                if came_from is not None:
                    self.skill_sets[came_from[0]].on_continued(came_from[1], reached)
                came_from = (g, s) if reached else None
            reward = self._reached(achieved, g, wrapper, paid) if reached else 0.0
            score += reward
            success = self.subgoals.goal_reached(wrapper.labels)
            actions = self._next_actions(achieved, reached, success, env_over, wrapper)
            if learn:
                t = MetaTransition(state, (g, z), reward, self._meta_state(history, achieved, s),
                                   actions, terminal=not actions)
                trace.append(t)
                self.meta.update(t, self.rng)
        if learn:
            self.meta.end_episode(trace, score, success)
            self.episodes += 1
        names = self.subgoals.names()
        return EpisodeStats(steps, success, tuple(names[g] for g in achieved),
                            tuple((names[g], z) for g, z in history),
                            tuple(sorted(str(a) for a in wrapper.seen)),
                            tuple((names[g], start, end) for g, start, end in segments))

    def train_episode(self, env: gym.Env, labeler: Labeler, seed: int, budget: int) -> EpisodeStats:
        """One meta episode that acts, learns online and spends at most ``budget`` env steps."""
        return self._episode(env, labeler, seed, True, budget)

    def greedy_episode(self, env: gym.Env, labeler: Labeler, seed: int) -> EpisodeStats:
        """The frozen greedy meta-controller and skills (no learning, no counting)."""
        cap = self.cfg.skill_max_steps * len(self.subgoals) + 1
        return self._episode(env, labeler, seed, False, cap)


def check_fits(data: dict[str, Any], n_actions: int, subgoals: list[str]) -> None:
    """``ValueError`` unless a learner state fits this learner: same action count and subgoals (the
    model may have changed)."""
    if int(data["n_actions"]) != n_actions:
        raise ValueError(f"{data['n_actions']} actions, the environment has {n_actions}")
    if list(data["subgoals"]) != subgoals:
        raise ValueError(f"subgoals {list(data['subgoals'])}, the model gives {subgoals}")


def _skill_set_state(skills: SkillSet) -> dict[str, Any]:
    est = skills.estimator
    km = est.kmeans
    kmeans = None
    if km is not None:
        ids = list(km.features)
        kmeans = {"records": list(km.records), "feature_ids": ids,
                  "features": np.stack([km.features[i] for i in ids]) if ids else np.zeros((0, 0)),
                  "centroids": km.centroids, "cluster_of": km.cluster_of, "refits": km.refits, "rng": km._rng}
    return {"name": skills.name, "active": skills.active, "stopped": skills.stopped,
            "recent": [list(r) for r in skills.recent], "skills": [q.state_dict() for q in skills.skills],
            "downstream": skills.downstream,
            "counts": est.counts, "rollouts": est.rollouts, "dirty": est._dirty, "kmeans": kmeans,
            "next_id": est.next_id}


def _load_skill_set(skills: SkillSet, data: dict[str, Any]) -> None:
    if data["name"] != skills.name or len(data["skills"]) != len(skills.skills):
        raise ValueError(f"skill set {data['name']!r} with {len(data['skills'])} skills, expected "
                         f"{skills.name!r} with {len(skills.skills)}")
    if not 1 <= int(data["active"]) <= len(skills.skills):
        raise ValueError("active skill count out of range")
    skills.active = int(data["active"])
    skills.stopped = bool(data.get("stopped", False))  # absent in checkpoints before the curriculum stop
    if "downstream" in data:  # absent in checkpoints before the dead-end switch
        downstream = np.asarray(data["downstream"], np.int64)
        if downstream.ndim != 2 or downstream.shape[1] != 2:
            raise ValueError("dead-end counts of the wrong shape")
        skills.downstream = downstream
    for recent, saved in zip(skills.recent, data.get("recent", [[] for _ in skills.skills])):
        recent.clear()
        recent.extend(int(s) for s in saved)
    for q, state in zip(skills.skills, data["skills"]):
        q.load_state_dict(state)
    est = skills.estimator
    counts, rollouts = np.asarray(data["counts"], np.float64), np.asarray(data["rollouts"], np.float64)
    if counts.ndim != 2 or counts.shape[1] != est.k or rollouts.shape != (est.k,):
        raise ValueError("diversity counts of the wrong shape")
    est.counts, est.rollouts, est._dirty = counts, rollouts, bool(data["dirty"])
    est.next_id = int(data.get("next_id", 0))  # absent in checkpoints before deep skills
    km, saved = est.kmeans, data["kmeans"]
    if (km is None) != (saved is None):
        raise ValueError("state abstraction (exact or kmeans) differs from the config")
    if isinstance(km, KMeansAbstraction):
        km.records = type(km.records)((tuple(r) for r in saved["records"]), maxlen=km.records.maxlen)
        km.features = {int(i): np.array(f) for i, f in zip(saved["feature_ids"], saved["features"])}
        km.centroids = saved["centroids"]
        km.cluster_of = {int(k): int(v) for k, v in saved["cluster_of"].items()}
        km.refits = int(saved["refits"])
        km._rng.bit_generator.state = saved["rng"].bit_generator.state
