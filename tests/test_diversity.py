"""The diversity reward (Eq. 2–4), the Bayes estimate (Eq. 5–6), k-means (App. D), configs."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from asg.learning.asgrl.clustering import KMeansAbstraction, kmeans
from asg.learning.asgrl.config import (
    DiversityConfig,
    QConfig,
    config_from_dict,
    config_to_dict,
    make_config,
    merge_overrides,
)
from asg.learning.asgrl.diversity import (
    DiversityEstimator,
    SkillSet,
    bayes_posterior,
    count_posterior,
    diversity_reward,
)
from asg.learning.errors import ConfigError


def test_count_posterior_is_eq4_with_smoothing():
    counts = np.array([[3.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    p = count_posterior(counts, 0, 1e-6)
    assert p[0] == pytest.approx((3 + 1e-6) / (4 + 3e-6))
    assert p[1] == pytest.approx(1 / 3)  # unseen state: uniform


def test_diversity_reward_is_alpha_log_p_clipped():
    p = np.array([1.0, 0.5, 1e-12, 0.0])
    r = diversity_reward(p, alpha=0.2, log_p_min=-5.0)
    assert r[0] == 0.0
    assert r[1] == pytest.approx(0.2 * math.log(0.5))
    assert r[2] == pytest.approx(-1.0) and r[3] == pytest.approx(-1.0)
    assert np.all(1.0 + r >= 0.0)  # R_L + α·R_d never goes negative (Eq. 2)


def test_bayes_posterior_matches_eq5_eq6_by_hand():
    counts = np.array([[2.0, 1.0]])  # n(s, z1) = 2, n(s, z2) = 1
    totals = np.array([4.0, 1.0])  # Σ_s' n(s', z)
    rollouts = np.array([9.0, 1.0])
    laplace = 1e-3
    p_s_z = np.array([2 / 4, 1 / 1])
    prior = (rollouts + 1) / (rollouts.sum() + 2)
    expected = (p_s_z[1] * prior[1] + laplace) / ((p_s_z * prior).sum() + 2 * laplace)
    assert bayes_posterior(counts, totals, rollouts, 1, laplace)[0] == pytest.approx(expected)


def test_bayes_posterior_sums_to_one_over_skills():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 5, (6, 3)).astype(float)
    totals = counts.sum(axis=0)
    rollouts = rng.integers(0, 10, 3).astype(float)
    total = sum(bayes_posterior(counts, totals, rollouts, z, 1e-3) for z in range(3))
    assert np.allclose(total, 1.0)


def test_estimator_counts_success_states_per_skill():
    est = DiversityEstimator(2, DiversityConfig(k=2), np.random.default_rng(0))
    for _ in range(3):
        est.record_success(7, 0)
    est.record_success(7, 1)
    est.record_success(200, 1)  # grows the table
    p0 = est.posterior(np.array([7, 200, 999]), 0, 2)
    assert p0[0] == pytest.approx(0.75, abs=1e-5)
    assert p0[1] == pytest.approx(0.0, abs=1e-5)
    assert p0[2] == pytest.approx(0.5)


def test_a_uniform_skill_prior_weighs_each_skill_by_its_own_end_states():
    # Skill 0 ran 9 times and ended 5 times in state 7, 4 in state 8; skill 1 ran twice, both in 7.
    # Raw counts (Eq. 4 as the paper and the official code apply it): skill 0 owns state 7, 5 : 2.
    # Per-skill distributions (Eq. 4 with its uniform-z premise): 5/9 against 2/2, so 7 is skill 1's.
    def posterior(uniform: bool) -> np.ndarray:
        est = DiversityEstimator(2, DiversityConfig(k=2, uniform_skill_prior=uniform), np.random.default_rng(0))
        for state, z, n in ((7, 0, 5), (8, 0, 4), (7, 1, 2)):
            for _ in range(n):
                est.record_success(state, z)
        return est.posterior(np.array([7, 8, 999]), 0, 2)

    raw, uniform = posterior(False), posterior(True)
    assert raw[0] == pytest.approx(5 / 7, abs=1e-5) and uniform[0] == pytest.approx((5 / 9) / (5 / 9 + 1), abs=1e-5)
    assert raw[1] == pytest.approx(1.0, abs=1e-5) and uniform[1] == pytest.approx(1.0, abs=1e-5)
    assert raw[2] == uniform[2] == pytest.approx(0.5)  # a state no skill reached: uniform either way
    assert not DiversityConfig().uniform_skill_prior  # off by default (the paper's raw counts)
    assert not make_config("household-v2", "asgrl", preset="paper").learner.diversity.uniform_skill_prior


def test_skills_sharing_a_state_earn_less_than_a_skill_owning_one():
    skills = SkillSet("(x)", 2, QConfig(), DiversityConfig(k=2), 4, np.random.default_rng(0))
    for _ in range(5):
        skills.on_success(0, 1)
        skills.on_success(1, 1)
    skills.on_success(1, 2)
    shared = skills.bonus_fn(0)(np.array([1]))[0]
    owned = skills.bonus_fn(1)(np.array([2]))[0]
    foreign = skills.bonus_fn(0)(np.array([2]))[0]
    assert owned == pytest.approx(0.0, abs=1e-6)
    assert foreign < shared < owned
    assert shared == pytest.approx(0.2 * math.log(0.5), abs=1e-4)


def test_no_bonus_without_diversity():
    skills = SkillSet("(x)", 1, QConfig(), DiversityConfig(k=1, alpha=0.0), 4, np.random.default_rng(0))
    assert skills.bonus_fn(0) is None


def test_curriculum_adds_a_skill_when_the_newest_is_confident():
    cfg = DiversityConfig(k=3, curriculum=True)
    skills = SkillSet("(x)", 3, QConfig(), cfg, 4, np.random.default_rng(0))
    assert skills.active == 1
    skills.on_rollout(0)
    successes = 0
    while skills.active == 1:
        skills.on_segment_end(0, reached=True)
        successes += 1
    assert skills.skills[0].epsilon < 0.3 and successes == math.ceil(math.log(0.3) / math.log(0.95))
    assert skills.active == 2 and not skills.estimator.rollouts.any()  # prior reset
    skills.on_segment_end(1, reached=False)
    assert skills.active == 2


def test_kmeans_separates_blobs_and_respects_weights():
    rng = np.random.default_rng(0)
    points = np.concatenate([rng.normal(0, 0.1, (20, 5)), rng.normal(10, 0.1, (20, 5))])
    centroids, labels = kmeans(points, np.ones(40), 2, rng)
    assert len(set(labels[:20])) == 1 and len(set(labels[20:])) == 1 and labels[0] != labels[-1]
    assert sorted(np.round(centroids.mean(axis=1)).tolist()) == [0.0, 10.0]
    _, few = kmeans(points[:1], np.ones(1), 3, rng)
    assert few.tolist() == [0]


def test_kmeans_abstraction_refits_only_for_outlying_new_states():
    abst = KMeansAbstraction(2, buffer_size=50, rng=np.random.default_rng(0))
    image = lambda v: np.full((4, 4, 3), v, dtype=np.uint8)  # noqa: E731
    assert abst.add(0, 0, image(0))  # first state: fit
    assert abst.add(1, 1, image(200))  # fewer clusters than wanted: refit
    assert abst.cluster(0) != abst.cluster(1)
    assert not abst.add(0, 0, image(0))  # a known state never refits
    assert abst.add(2, 1, image(100))  # far from its centroid: refit
    abst.add(3, 0, image(1))  # a near neighbour of state 0 joins its cluster
    assert abst.cluster(3) == abst.cluster(0) != abst.cluster(1)


def test_estimator_with_kmeans_counts_clusters():
    cfg = DiversityConfig(k=2, abstraction="kmeans")
    est = DiversityEstimator(2, cfg, np.random.default_rng(0))
    dark, light = np.zeros((4, 4, 3), np.uint8), np.full((4, 4, 3), 255, np.uint8)
    for _ in range(4):
        est.record_success(0, 0, dark)
        est.record_success(1, 1, light)
    p = est.posterior(np.array([0, 1, 42]), 0, 2)
    assert p[0] == pytest.approx(1.0, abs=1e-5) and p[1] == pytest.approx(0.0, abs=1e-5)
    assert p[2] == pytest.approx(0.5)  # never recorded: uniform


def test_config_checks_alpha_bound_and_k_overrides():
    with pytest.raises(ConfigError, match="alpha"):
        DiversityConfig(alpha=0.5, log_p_min=-5.0)
    cfg = DiversityConfig(k=3, k_overrides=(("(has-key)", 4),))
    assert cfg.k_for("(has-key)") == 4 and cfg.k_for("(door-open)") == 3
    assert make_config("mario", "asgrl").learner.diversity.k_for("(has-key)") == 4
    assert make_config("mario", "landmark-hrl").learner.diversity.k_for("(has-key)") == 1


def test_config_round_trips_and_rejects_unknown_fields():
    cfg = make_config("mario", "asgrl-curriculum", seed=3, total_steps=1234)
    again = config_from_dict(config_to_dict(cfg))
    assert again == cfg
    changed = merge_overrides(cfg, {"learner": {"diversity": {"k": 5}}})
    assert changed.learner.diversity.k == 5 and changed.learner.diversity.curriculum
    with pytest.raises(ConfigError, match="unknown field 'nope'"):
        merge_overrides(cfg, {"learner": {"nope": 1}})
    with pytest.raises(ConfigError):
        merge_overrides(cfg, {"total_steps": 0})
    flat = make_config("mario", "goal-q")
    assert flat.learner.q.decay_on == "episode" and flat.learner.q.epsilon_decay == 0.995
    assert dataclasses.replace(flat, seed=1).learner == flat.learner
