"""Diverse skills for one landmark: k Q-learners plus the diversity reward (ASGRL Eq. 2–6).

The reward of skill z on reaching its landmark in state s is R_L + α·R_d with
R_d = clip(log p(z|s), log_p_min, 0) (Eq. 2–3), recomputed at replay time from the current
counts (reference_code.md §1.6). p(z|s) is estimated

* by counts (Eq. 4): p(z|s) = (n(s,z) + c) / Σ_z' (n(s,z') + c), c = 1e-6 (§1.6);
* in the curriculum variant, by Bayes with Laplace smoothing (Eq. 5–6):
  p(z|s) = (p(s|z)p(z) + α_L) / (Σ_z' p(s|z')p(z') + |Z|·α_L), p(s|z) = n(s,z) / Σ_s' n(s',z),
  p(z) = rollouts of z / all rollouts (Laplace-smoothed, reset whenever a skill is added).

Counts cover successful terminal states only, as Eq. 2 pays the bonus only there; the official
non-curriculum code also counted and paid failure terminals (§1.6), which
``DiversityConfig.bonus_on_failure`` restores (it made no difference on Mario seeds 0-4). States
are counted exactly (their id) or by k-means cluster of their pixels (App. D); exact counts are
cumulative, cluster counts cover the ``kmeans_buffer`` most recent terminal records. With
``DiversityConfig.cluster_features = "channel-standardized"`` (ours) k-means reads each image pooled and
standardised per colour channel (``clustering.cluster_feature``) instead of its pixels.

Deep skills (``deep_skills.py``) pass ``SkillSet`` their own skill objects and a ``featurize``
function: states are then images (never repeated), every terminal record gets a fresh id, and
p(z|s) of any image reads the counts of its nearest k-means centroid (App. D).

Dead ends (``HierarchicalConfig.dead_end_after``, ours; on for ASGRL in the asg preset, off in the
paper's). A landmark can hold in
states from which the next one cannot be reached (MineCraft without the processing: a plank made
from the only piece of wood carried to the kiln; Mario: the key taken after the ladder was worn).
Eq. 2 pays R_L there as anywhere, a skill that owns such a state has no reason to leave it, and
when the k skills all own one the run is stuck. ``SkillSet`` counts, per landmark state, how often
the next skill ran from it and how often that skill reached its own landmark; once it ran
``dead_end_after`` times without one success the state is a dead end: the replay-time bonus
subtracts R_L there (the diversity term stays), and an arrival there neither anneals the skill's ε1
nor enters its self-imitation buffer. One success from the state later revives it.

The curriculum's stop (Sec. 4.2: "we propose to gradually increase the value of k until a
specified maximum is reached or no new skill terminal state is discovered"). The maximum is
``len(skills)``; the second condition, behind ``DiversityConfig.stop_on_no_new_terminal``, reads:

* a skill's *terminal state* is the most frequent count key (state id, or k-means cluster)
  among the landmark states its last ``stop_window`` successful runs ended in;
* the newest skill z (z >= 1) is judged when it has converged, i.e. at the moment the
  curriculum would add skill z+1 (its ε1 fell below ``grow_below_epsilon``, App. G);
* z *discovered a new skill terminal state* iff its terminal state is not the terminal state of
  any earlier skill 0..z-1. If it did, skill z+1 is added as before. If not, skill z duplicates
  an earlier one: it is retired (the active count goes back to z, so the meta-controller no
  longer picks it and p(z'|s) sums over the z skills again) and k grows no more.

So on a landmark with exactly j reachable terminal states, skills 0..j-1 settle on distinct
ones, skill j finds none new and the curriculum stops at k = j. A skill whose runs were never
counted (no terminal record) is not judged: the curriculum grows as without the stop.
"""
from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from asg.learning.asgrl.clustering import KMeansAbstraction, cluster_feature
from asg.learning.asgrl.config import DiversityConfig, QConfig
from asg.learning.asgrl.tabular_q import BonusFn, TabularQ

LANDMARK_REWARD = 1.0  # R_L, the reward ``subgoals.SubgoalWrapper`` pays on reaching the landmark


def count_posterior(counts: np.ndarray, z: int, smoothing: float) -> np.ndarray:
    """Eq. 4. counts: (m, k) rows of n(s, ·) over the active skills -> p(z|s) (m,)."""
    smoothed = counts + smoothing
    return smoothed[:, z] / smoothed.sum(axis=1)


def skill_distributions(counts: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """p(s|z) = n(s,z)/n(z) for rows of counts (m, k) and per-skill totals (k,); 0 for a skill with none."""
    return np.divide(counts, totals, out=np.zeros_like(counts, dtype=np.float64), where=totals > 0)


def bayes_posterior(counts: np.ndarray, totals: np.ndarray, rollouts: np.ndarray, z: int,
                    laplace: float) -> np.ndarray:
    """Eq. 5–6. counts: (m, k) n(s, ·); totals: (k,) Σ_s n(s, ·); rollouts: (k,) runs per skill."""
    k = counts.shape[1]
    p_s_given_z = skill_distributions(counts, totals)
    prior = (rollouts + 1.0) / (rollouts.sum() + k)  # Laplace-smoothed p(z)
    joint = p_s_given_z * prior  # (m, k)
    return (joint[:, z] + laplace) / (joint.sum(axis=1) + k * laplace)


def diversity_reward(p: np.ndarray, alpha: float, log_p_min: float) -> np.ndarray:
    """α · clip(log p, log_p_min, 0) (Eq. 2–3)."""
    with np.errstate(divide="ignore"):
        return alpha * np.clip(np.log(p), log_p_min, 0.0)


class DiversityEstimator:
    """Counts of (terminal state, skill) for one landmark and the p(z|s) estimate."""

    def __init__(self, k: int, cfg: DiversityConfig, rng: np.random.Generator, by_features: bool = False) -> None:
        self.k = k
        self.cfg = cfg
        self.counts = np.zeros((64, k))  # (keys, k)
        self.rollouts = np.zeros(k)
        if by_features and cfg.abstraction != "kmeans":
            raise ValueError("image states are counted by k-means cluster only (App. D)")
        self.kmeans = (KMeansAbstraction(k, cfg.kmeans_buffer, rng, forget_evicted=by_features)
                       if cfg.abstraction == "kmeans" else None)
        self.next_id = 0  # the id of the next feature record (by_features)
        # tabular skills pass the raw observation; deep skills (by_features) pass their own features
        self.channel_features = not by_features and cfg.cluster_features == "channel-standardized"
        self._dirty = False

    def _keys(self, state_ids: np.ndarray) -> np.ndarray:
        if self.kmeans is None:
            return state_ids
        return np.array([self.kmeans.cluster(int(s)) for s in state_ids], dtype=np.int64)

    def _recount(self) -> None:
        assert self.kmeans is not None
        self.counts = np.zeros((max(self.k, 1), self.k))
        for sid, z in self.kmeans.records:
            self.counts[self.kmeans.cluster(sid), z] += 1
        self._dirty = False

    def record_success(self, state_id: int, z: int, obs: Any = None) -> None:
        """Skill ``z`` reached the landmark in ``state_id`` (``obs`` feeds k-means)."""
        if self.kmeans is not None:
            feature = cluster_feature(obs, self.cfg.cluster_pool) if self.channel_features else np.asarray(obs)
            self.kmeans.add(state_id, z, feature)
            self._dirty = True
            return
        if state_id >= self.counts.shape[0]:
            grown = np.zeros((max(state_id + 1, 2 * self.counts.shape[0]), self.k))
            grown[: self.counts.shape[0]] = self.counts
            self.counts = grown
        self.counts[state_id, z] += 1

    def record_features(self, z: int, feature: np.ndarray) -> int:
        """Skill ``z`` reached the landmark in an image state with ``feature``; returns its record id."""
        state_id, self.next_id = self.next_id, self.next_id + 1
        self.record_success(state_id, z, feature)
        return state_id

    def posterior_features(self, features: np.ndarray, z: int, active: int) -> np.ndarray:
        """p(z | s) of image states by their nearest cluster; features (m, d) -> (m,)."""
        assert self.kmeans is not None
        if self._dirty:
            self._recount()
        return self._posterior_of_keys(self.kmeans.assign(features), z, active)

    def record_rollout(self, z: int) -> None:
        """Skill ``z`` was run once (the prior of Eq. 5)."""
        self.rollouts[z] += 1

    def reset_prior(self) -> None:
        """Forget the rollout counts (a skill was added, §1.6)."""
        self.rollouts[:] = 0

    def keys_of(self, state_ids: np.ndarray) -> np.ndarray:
        """The count keys of state ids: the ids themselves, or their k-means clusters."""
        if self.kmeans is not None and self._dirty:
            self._recount()
        return self._keys(np.asarray(state_ids, dtype=np.int64))

    def posterior(self, state_ids: np.ndarray, z: int, active: int) -> np.ndarray:
        """p(z | s) for each state id among the first ``active`` skills; (m,)."""
        if self.kmeans is not None and self._dirty:
            self._recount()
        return self._posterior_of_keys(self._keys(np.asarray(state_ids, dtype=np.int64)), z, active)

    def _posterior_of_keys(self, keys: np.ndarray, z: int, active: int) -> np.ndarray:
        rows = np.zeros((len(keys), active))
        known = (keys >= 0) & (keys < self.counts.shape[0])
        rows[known] = self.counts[keys[known], :active]
        if self.cfg.curriculum:
            totals = self.counts[:, :active].sum(axis=0)
            return bayes_posterior(rows, totals, self.rollouts[:active], z, self.cfg.laplace)
        if self.cfg.uniform_skill_prior:  # Eq. 4 as if z were drawn uniformly
            rows = skill_distributions(rows, self.counts[:, :active].sum(axis=0))
        return count_posterior(rows, z, self.cfg.count_smoothing)


class SkillSet:
    """The k skills of one subgoal, their diversity estimator and the curriculum over k."""

    def __init__(self, name: str, k: int, q_cfg: QConfig, cfg: DiversityConfig, n_actions: int,
                 rng: np.random.Generator, skills: Sequence[Any] | None = None,
                 featurize: Callable[[np.ndarray], np.ndarray] | None = None, dead_end_after: int = 0) -> None:
        """``skills``: k premade skill objects with ``TabularQ``'s interface (default: tabular ones);
        ``featurize``: states are images, (m, ...) -> (m, d) features for k-means (deep skills);
        ``dead_end_after``: ``HierarchicalConfig.dead_end_after`` (0: off)."""
        self.name = name
        self.cfg = cfg
        self.dead_end_after = dead_end_after
        self.downstream = np.zeros((64, 2), np.int64)  # per landmark state id: (next skill runs, reached)
        self.skills = list(skills) if skills is not None else [TabularQ(q_cfg, n_actions) for _ in range(k)]
        if len(self.skills) != k:
            raise ValueError(f"{len(self.skills)} skills given for k = {k}")
        self.featurize = featurize
        self.active = 1 if cfg.curriculum else k
        self.stopped = False  # the curriculum stopped before the maximum (no new terminal state)
        self.recent: list[deque[int]] = [deque(maxlen=cfg.stop_window) for _ in range(k)]
        self.estimator = DiversityEstimator(k, cfg, rng, by_features=featurize is not None)
        self._bonus: list[BonusFn | None] = [self._make_bonus(z) for z in range(k)]

    def _make_bonus(self, z: int) -> BonusFn | None:
        diverse = self.cfg.alpha != 0.0 and len(self.skills) > 1
        if not diverse and not self.dead_end_after:
            return None

        featurize = self.featurize

        def bonus(s2: np.ndarray) -> np.ndarray:
            if not diverse:
                term = np.zeros(len(s2))
            elif featurize is None:
                term = diversity_reward(self.estimator.posterior(s2, z, self.active), self.cfg.alpha,
                                        self.cfg.log_p_min)
            else:
                term = diversity_reward(self.estimator.posterior_features(featurize(s2), z, self.active),
                                        self.cfg.alpha, self.cfg.log_p_min)
            if self.dead_end_after:
                term = term - LANDMARK_REWARD * self.dead_ends(s2)
            return term
        return bonus

    # ------------------------------------------------------------------ dead ends (ours)
    def dead_ends(self, state_ids: np.ndarray) -> np.ndarray:
        """Which landmark states are dead ends: the next skill ran from them ``dead_end_after`` times
        or more and never reached its landmark. (m,) bool; always False when the switch is off."""
        ids = np.asarray(state_ids, dtype=np.int64)
        out = np.zeros(ids.shape, bool)
        if not self.dead_end_after:
            return out
        known = (ids >= 0) & (ids < self.downstream.shape[0])
        runs, reached = self.downstream[ids[known], 0], self.downstream[ids[known], 1]
        out[known] = (runs >= self.dead_end_after) & (reached == 0)
        return out

    def on_continued(self, state_id: int, reached: bool) -> None:
        """The next skill ran from landmark state ``state_id`` and did (not) reach its landmark."""
        if state_id >= self.downstream.shape[0]:
            grown = np.zeros((max(state_id + 1, 2 * self.downstream.shape[0]), 2), np.int64)
            grown[: self.downstream.shape[0]] = self.downstream
            self.downstream = grown
        self.downstream[state_id, 0] += 1
        self.downstream[state_id, 1] += int(reached)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_bonus"] = None  # closures are rebuilt on load
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._bonus = [self._make_bonus(z) for z in range(len(self.skills))]

    def bonus_fn(self, z: int) -> BonusFn | None:
        """The replay-time diversity term of skill ``z`` (None without diversity)."""
        return self._bonus[z]

    def on_rollout(self, z: int) -> None:
        """Skill ``z`` starts a training run."""
        self.estimator.record_rollout(z)

    def on_success(self, z: int, state_id: Any, obs: Any = None, reached: bool = True) -> None:
        """Skill ``z`` ended in ``state_id``: count it (``reached`` False: a counted failure terminal).
        With ``featurize``, ``state_id`` is the image state itself and gets a fresh record id."""
        if self.featurize is not None:
            state_id = self.estimator.record_features(z, self.featurize(np.asarray(state_id)[None])[0])
        else:
            self.estimator.record_success(state_id, z, obs)
        if reached:
            self.recent[z].append(state_id)

    def terminal_state(self, z: int) -> int | None:
        """Where skill ``z`` has converged: its most frequent recent landmark state (None: no record)."""
        if not self.recent[z]:
            return None
        keys = self.estimator.keys_of(np.fromiter(self.recent[z], dtype=np.int64))
        counts = Counter(int(key) for key in keys)
        return max(counts, key=lambda key: (counts[key], -key))  # ties: the smaller key

    def discovered_new(self, z: int) -> bool | None:
        """Skill ``z``'s terminal state is none of skills 0..z-1's (None: ``z`` has no record)."""
        mine = self.terminal_state(z)
        if mine is None:
            return None
        return all(self.terminal_state(earlier) != mine for earlier in range(z))

    def on_segment_end(self, z: int, reached: bool) -> None:
        """Close the run of skill ``z``: SIL, ε decay on success, curriculum growth."""
        skill = self.skills[z]
        if reached and self.dead_end_after and self.dead_ends(np.array([self.recent[z][-1]]))[0]:
            reached = False  # a dead end: no self-imitation of the route, no ε decay (ours)
        skill.end_segment(keep=reached)
        skill.record_run(reached)
        if reached:
            skill.successes += 1
            if skill.cfg.decay_on == "success":
                skill.decay_epsilon()
        self.maybe_grow()

    def maybe_grow(self) -> bool:
        """Curriculum: once the newest skill's ε fell below the threshold, add a skill, or stop
        (retiring the newest) when it discovered no new terminal state (module docstring)."""
        if (not self.cfg.curriculum or self.stopped or self.active >= len(self.skills)
                or self.skills[self.active - 1].epsilon >= self.cfg.grow_below_epsilon):
            return False
        newest = self.active - 1
        if self.cfg.stop_on_no_new_terminal and newest >= 1 and self.discovered_new(newest) is False:
            self.active = newest
            self.stopped = True
            return False
        self.active += 1
        self.estimator.reset_prior()
        return True
