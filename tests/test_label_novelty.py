"""Count-based exploration over the labeler's atoms (``learner.label_novelty``, ours; issue 40).

The bonus is β/√n per (subgoal, true atoms); it is off in every preset; its counts go through a
checkpoint; a run with it differs from one without and still learns the tests' key-door corridor.
The lockstep twin and resume checks are in tests/test_lockstep.py.
"""
from __future__ import annotations

import math

import pytest
from toy_domains import KEYDOOR_LABELS, KEYDOOR_PDDL, KeyDoorCorridor

from asg.envs import plugins
from asg.learning import checkpoint as ckpt
from asg.learning.asgrl.config import PRESETS, make_config, merge_overrides
from asg.learning.asgrl.novelty import LabelNovelty
from asg.learning.asgrl.trainer import train
from asg.learning.errors import ConfigError
from asg.learning.registry import bind_spec, build_learner, make_subgoals
from asg.planning.task import Atom

KEY, DOOR = Atom.parse("(has-key)"), Atom.parse("(door-open)")


@pytest.fixture
def binding(tmp_path):
    (tmp_path / "keydoor.pddl").write_text(KEYDOOR_PDDL)
    spec = plugins.make_domain("keydoor-novelty", env=KeyDoorCorridor, labeler=KEYDOOR_LABELS,
                               model=tmp_path / "keydoor.pddl", max_episode_steps=200)
    return bind_spec(spec)


def config(novelty: float, steps: int = 3000, seed: int = 0):
    cfg = make_config("keydoor-novelty", "asgrl", seed=seed, total_steps=steps, eval_interval=1000, eval_episodes=5,
                      final_eval_episodes=5, early_stop_evals=0)
    return merge_overrides(cfg, {"learner": {"label_novelty": novelty}})


def test_the_bonus_falls_as_one_over_the_root_of_the_visits():
    novelty = LabelNovelty(0.1)
    assert novelty.bonus(0, frozenset()) == pytest.approx(0.1)
    assert [novelty.bonus(0, frozenset({KEY})) for _ in range(4)] == pytest.approx([0.1 / math.sqrt(n)
                                                                                    for n in (1, 2, 3, 4)])
    assert novelty.bonus(1, frozenset({KEY})) == pytest.approx(0.1)  # another subgoal counts apart
    assert novelty.bonus(0, frozenset({KEY, DOOR})) == pytest.approx(0.1)  # another set of atoms too
    assert novelty.counts[(0, frozenset({KEY}))] == 4


def test_it_is_off_everywhere_unless_asked(binding):
    for preset in PRESETS:
        for method in ("asgrl", "landmark-hrl", "plan-hrl"):
            learner = make_config("keydoor-novelty", method, preset=preset).learner
            assert learner.label_novelty == 0.0, (preset, method)
    with pytest.raises(ConfigError, match=r"config\.learner\.label_novelty"):
        config(-0.1)


def test_its_counts_go_through_a_checkpoint(binding, tmp_path):
    cfg = config(0.05)
    learner = build_learner(cfg, make_subgoals(cfg, binding.task), 4)
    env = binding.make_env(max_steps=200)
    for seed in range(20):
        learner.train_episode(env, binding.labeler, seed, 10**6)
    assert sum(learner.novelty.counts.values()) == learner.env_steps > 0
    ckpt.save(tmp_path / "c.npz", "test", learner.state_dict())
    again = build_learner(cfg, make_subgoals(cfg, binding.task), 4)
    again.load_state_dict(ckpt.load(tmp_path / "c.npz", "test").tree)
    assert again.novelty.counts == learner.novelty.counts
    off = build_learner(config(0.0), make_subgoals(cfg, binding.task), 4)
    with pytest.raises(ValueError, match="label_novelty on in the checkpoint"):
        off.load_state_dict(learner.state_dict())


def test_it_changes_the_run_and_the_corridor_is_still_learned(binding):
    without, with_bonus = train(config(0.0, seed=1), binding), train(config(0.05, seed=1), binding)
    assert without.to_json()["success_rate"] >= 0.8
    assert with_bonus.to_json()["success_rate"] >= 0.8, with_bonus.to_json()
    assert without.to_json()["episodes"] != with_bonus.to_json()["episodes"] or \
        without.to_json()["greedy_success_rate"] != with_bonus.to_json()["greedy_success_rate"] or \
        without.to_json()["epsilon_success_rate"] != with_bonus.to_json()["epsilon_success_rate"]
