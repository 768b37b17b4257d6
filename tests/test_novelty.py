"""Count-based exploration for skills (ours; issues 39, 40): over the labeler's atoms
(``learner.label_novelty``) and over the skills' own state (``learner.state_novelty``).

The bonus is β/√n per (subgoal, true atoms), or per (subgoal, code of the state): the state itself,
a hash of an encoded observation, or its SimHash. Both are off in every preset; their counts go
through a checkpoint; a run with either differs from one without and still learns the tests'
key-door corridor, and a state bonus worth more than a landmark stops it. The lockstep twin and
resume checks are in tests/test_lockstep.py.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from toy_domains import KEYDOOR_LABELS, KEYDOOR_PDDL, KeyDoorCorridor

from asg.envs import plugins
from asg.learning import checkpoint as ckpt
from asg.learning.asgrl.config import PRESETS, make_config, merge_overrides
from asg.learning.asgrl.novelty import LabelNovelty, StateNovelty
from asg.learning.asgrl.trainer import train
from asg.learning.errors import ConfigError
from asg.learning.registry import bind_spec, build_learner, make_subgoals
from asg.planning.task import Atom

KEY, DOOR = Atom.parse("(has-key)"), Atom.parse("(door-open)")
SWITCHES = [("label_novelty", "novelty"), ("state_novelty", "state_novelty")]  # config field, learner attribute


@pytest.fixture
def binding(tmp_path):
    (tmp_path / "keydoor.pddl").write_text(KEYDOOR_PDDL)
    spec = plugins.make_domain("keydoor-novelty", env=KeyDoorCorridor, labeler=KEYDOOR_LABELS,
                               model=tmp_path / "keydoor.pddl", max_episode_steps=200)
    return bind_spec(spec)


def config(novelty: float, steps: int = 3000, seed: int = 0, switch: str = "label_novelty", **learner):
    cfg = make_config("keydoor-novelty", "asgrl", seed=seed, total_steps=steps, eval_interval=1000, eval_episodes=5,
                      final_eval_episodes=5, early_stop_evals=0)
    return merge_overrides(cfg, {"learner": {switch: novelty, **learner}})


def test_the_label_bonus_falls_as_one_over_the_root_of_the_visits():
    novelty = LabelNovelty(0.1)
    assert novelty.bonus(0, frozenset()) == pytest.approx(0.1)
    assert [novelty.bonus(0, frozenset({KEY})) for _ in range(4)] == pytest.approx([0.1 / math.sqrt(n)
                                                                                    for n in (1, 2, 3, 4)])
    assert novelty.bonus(1, frozenset({KEY})) == pytest.approx(0.1)  # another subgoal counts apart
    assert novelty.bonus(0, frozenset({KEY, DOOR})) == pytest.approx(0.1)  # another set of atoms too
    assert novelty.counts[(0, frozenset({KEY}))] == 4


def test_the_state_bonus_falls_as_one_over_the_root_of_the_visits_of_a_state():
    novelty = StateNovelty(0.1)
    view = np.array([3, 1, 0, 2], dtype=np.uint8)
    assert [novelty.bonus(0, view) for _ in range(4)] == pytest.approx([0.1 / math.sqrt(n) for n in (1, 2, 3, 4)])
    assert novelty.bonus(0, view.copy()) == pytest.approx(0.1 / math.sqrt(5))  # the same bytes, the same code
    assert novelty.bonus(1, view) == pytest.approx(0.1)  # another subgoal counts apart
    assert novelty.bonus(0, np.array([3, 1, 0, 1], dtype=np.uint8)) == pytest.approx(0.1)  # another state too
    assert novelty.bonus(0, 7) == novelty.bonus(0, 8) == pytest.approx(0.1)  # a Q table's ids are their own codes
    assert novelty.code(7) == 7 and len(novelty.counts) == 5


def test_simhash_codes_are_fixed_and_of_the_asked_width():
    a, b = StateNovelty(0.1, bits=16), StateNovelty(0.1, bits=16)
    rng = np.random.default_rng(0)
    views = [rng.integers(0, 11, 147).astype(np.uint8) for _ in range(200)]
    codes = [a.code(v) for v in views]
    assert codes == [b.code(v) for v in views]  # the projections are the same in every run and resume
    assert all(0 <= c < 2 ** 16 for c in codes) and len(set(codes)) > 150  # 16 bits tell 200 random views apart
    assert a.code(views[0]) == a.code(views[0].copy())
    wide = StateNovelty(0.1, bits=64)
    assert all(-(2 ** 63) <= wide.code(v) < 2 ** 63 for v in views)  # fits the checkpoint's int64


def test_they_are_off_everywhere_unless_asked(binding):
    for preset in PRESETS:
        for method in ("asgrl", "landmark-hrl", "plan-hrl"):
            learner = make_config("keydoor-novelty", method, preset=preset).learner
            assert learner.label_novelty == learner.state_novelty == 0.0, (preset, method)
            assert learner.state_novelty_bits == 0, (preset, method)
    for switch, _ in SWITCHES:
        with pytest.raises(ConfigError, match=rf"config\.learner\.{switch}"):
            config(-0.1, switch=switch)
    with pytest.raises(ConfigError, match=r"config\.learner\.state_novelty_bits: SimHash"):
        config(0.05, switch="state_novelty", state_novelty_bits=16)  # tabular skills key on table ids
    with pytest.raises(ConfigError, match=r"config\.learner\.state_novelty_bits"):
        config(0.05, switch="state_novelty", state_novelty_bits=65)


@pytest.mark.parametrize("switch, attribute", SWITCHES)
def test_its_counts_go_through_a_checkpoint(binding, tmp_path, switch, attribute):
    cfg = config(0.05, switch=switch)
    learner = build_learner(cfg, make_subgoals(cfg, binding.task), 4)
    env = binding.make_env(max_steps=200)
    for seed in range(20):
        learner.train_episode(env, binding.labeler, seed, 10**6)
    counts = getattr(learner, attribute).counts
    assert sum(counts.values()) == learner.env_steps > 0 and len(counts) >= 3
    ckpt.save(tmp_path / "c.npz", "test", learner.state_dict())
    again = build_learner(cfg, make_subgoals(cfg, binding.task), 4)
    again.load_state_dict(ckpt.load(tmp_path / "c.npz", "test").tree)
    assert getattr(again, attribute).counts == counts
    off = build_learner(config(0.0, switch=switch), make_subgoals(cfg, binding.task), 4)
    with pytest.raises(ValueError, match=f"{switch} on in the checkpoint"):
        off.load_state_dict(learner.state_dict())
    if switch == "state_novelty":
        with pytest.raises(ValueError, match="state_novelty_bits 0 in the checkpoint, 8 in the config"):
            StateNovelty(0.05, bits=8).load_state_dict(learner.state_novelty.state_dict())


@pytest.mark.parametrize("switch, beta", [("label_novelty", 0.05), ("state_novelty", 0.01)])
def test_it_changes_the_run_and_the_corridor_is_still_learned(binding, switch, beta):
    without, with_bonus = train(config(0.0, seed=1), binding), train(config(beta, seed=1, switch=switch), binding)
    assert without.to_json()["success_rate"] >= 0.8
    assert with_bonus.to_json()["success_rate"] >= 0.8, with_bonus.to_json()
    def same(result) -> dict:
        return {k: v for k, v in result.to_json().items() if k not in ("wall_seconds", "run_dir")}
    assert same(without) != same(with_bonus)


def test_a_state_bonus_worth_more_than_the_landmark_stops_the_skills(binding):
    """β/(1 - γ) is what a stream of unseen states pays: at β 0.05 and the tabular skills' γ 0.99 that
    is 5 times a landmark's R_L of 1, and the skills wander for it (the limit ``HierarchicalConfig``
    states): the metric can fail."""
    assert train(config(0.05, seed=1, switch="state_novelty"), binding).to_json()["success_rate"] == 0.0
