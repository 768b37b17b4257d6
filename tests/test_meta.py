"""Meta-controller updates, subgoals from the landmark graph, the subgoal wrapper, ASGRL on a toy."""
from __future__ import annotations

import numpy as np
import pytest
from toy_domains import Corridor, corridor_binding

from asg import pddl_models
from asg.learning.asgrl.config import MetaConfig, TrainConfig, default_learner, merge_overrides
from asg.learning.asgrl.meta_controller import (
    MetaController,
    MetaTransition,
    history_state,
    landmark_state,
    low_level_state,
)
from asg.learning.asgrl.subgoals import Subgoal, SubgoalSet, SubgoalWrapper, landmark_subgoals
from asg.learning.asgrl.trainer import train
from asg.learning.errors import ConfigError, DomainError
from asg.planning import load_task
from asg.planning.task import Atom


def test_meta_update_is_q_learning_with_max_over_next_actions():
    meta = MetaController(MetaConfig(lr=0.5, gamma=0.9, replay_batches=0))
    rng = np.random.default_rng(0)
    nxt = history_state([(0, 1)])
    meta.q[nxt] = {(1, 0): 2.0, (1, 1): 4.0}
    meta.update(MetaTransition((), (0, 1), 1.0, nxt, ((1, 0), (1, 1)), False), rng)
    assert meta.value((), (0, 1)) == pytest.approx(0.5 * (1.0 + 0.9 * 4.0))
    meta.update(MetaTransition(nxt, (1, 1), 0.0, history_state([(0, 1), (1, 1)]), (), True), rng)
    assert meta.value(nxt, (1, 1)) == pytest.approx(2.0)  # failure: target 0, no bootstrap


def test_meta_replay_repeats_updates_from_memory():
    meta = MetaController(MetaConfig(lr=0.5, replay_batches=5, batch_size=32))
    meta.update(MetaTransition((), (0, 0), 1.0, ((0, 0),), (), True), np.random.default_rng(0))
    assert meta.value((), (0, 0)) == pytest.approx(1 - 0.5 ** 6)  # 1 online + 5 replayed
    assert meta.updates == 6


def test_meta_greedy_breaks_ties_by_order_and_explores_when_epsilon_is_one():
    meta = MetaController(MetaConfig(epsilon_start=1.0))
    rng = np.random.default_rng(0)
    actions = ((0, 0), (0, 1), (0, 2))
    assert meta.choose((), actions, rng, greedy=True) == (0, 0)
    assert {meta.choose((), actions, rng) for _ in range(60)} == set(actions)
    meta.q[()] = {(0, 2): 0.3}
    assert meta.choose((), actions, rng, greedy=True) == (0, 2)


def test_meta_epsilon_anneals_on_success_only_and_sil_keeps_best_episodes():
    meta = MetaController(MetaConfig())
    t = MetaTransition((), (0, 0), 1.0, ((0, 0),), (), True)
    meta.end_episode([t], score=1.0, success=False)
    assert meta.epsilon == 1.0 and len(meta.sil) == 1
    meta.end_episode([t], score=0.0, success=False)
    assert len(meta.sil) == 1
    meta.end_episode([t, t], score=2.0, success=True)
    assert meta.epsilon == pytest.approx(0.9) and len(meta.sil) == 3 and meta.best_score == 2.0
    assert low_level_state([0], 5) == ((0,), 5)


def test_household_v1_subgoals_branch_where_the_landmarks_are_unordered():
    subgoals = landmark_subgoals(load_task(pddl_models.path("household_v1")))
    names = subgoals.names()
    assert set(names) == {"(has-key)", "(door-open)", "(charged)", "(at-final-room)", "(at-destination)"}
    key, door, charged = names.index("(has-key)"), names.index("(door-open)"), names.index("(charged)")
    assert subgoals.next_subgoals([]) == (key,)
    assert set(subgoals.next_subgoals([key])) == {door, charged}
    assert subgoals.next_subgoals([key, door]) == (charged,)
    assert subgoals.next_subgoals([key, door, charged]) == (names.index("(at-final-room)"),)
    assert subgoals.subgoals[names.index("(at-destination)")].goal


def test_mario_subgoals_come_from_the_landmark_graph():
    subgoals = landmark_subgoals(load_task(pddl_models.path("mario")))
    assert subgoals.names() == ["(at-bottom)", "(has-key)", "(at-upper-platform-with-key)", "(door-open)"]
    assert subgoals.linearizations == ((0, 1, 2, 3),)


def _line_subgoals() -> SubgoalSet:
    a, b = Subgoal("(at-side)", frozenset({Atom("at-side")})), Subgoal("(at-goal)", frozenset({Atom("at-goal")}), True)
    return SubgoalSet((a, b), ((0, 1),), frozenset({Atom("at-goal")}))


def test_wrapper_rewards_and_terminates_on_the_target():
    binding = corridor_binding()
    wrapper = SubgoalWrapper(Corridor(), binding.labeler, _line_subgoals(), max_steps=50)
    wrapper.reset(seed=0)
    assert not wrapper.begin(0, [])
    _, r, term, trunc, info = wrapper.step(1)
    assert (r, term, info["subgoal"]) == (0.0, False, None)
    for _ in range(3):
        _, r, term, trunc, info = wrapper.step(1)
    assert (r, term, trunc, info["subgoal"]) == (1.0, True, False, "reached")
    wrapper.begin(1, [0])
    _, r, term, _, info = wrapper.step(2)
    assert (r, term, info["subgoal"], info["env_over"]) == (1.0, True, "reached", True)


def test_wrapper_strict_ordering_and_timeout():
    binding = corridor_binding()
    wrapper = SubgoalWrapper(Corridor(start=5), binding.labeler, _line_subgoals(), max_steps=3)
    wrapper.reset(seed=0)
    wrapper.begin(1, [])  # the goal first: reaching a side is out of turn
    _, r, term, _, info = wrapper.step(1)
    assert (r, term, info["subgoal"]) == (0.0, True, "violated")
    wrapper.reset(seed=0)
    wrapper.begin(0, [])
    outcomes = [wrapper.step(2)[2:4] for _ in range(3)]
    assert outcomes == [(False, False), (False, False), (False, True)]  # timeout: truncated, not done
    lax = SubgoalWrapper(Corridor(start=5), binding.labeler, _line_subgoals(), strict=False)
    lax.reset(seed=0)
    lax.begin(1, [])
    assert lax.step(1)[4]["subgoal"] is None


def test_protected_landmarks_fail_a_run_that_undoes_what_its_landmark_needs():
    """``protect``: climbing needs the side (a greedy-necessary ordering), so stepping off the side
    before climbing ends the run as a failure, "undone", where the plain wrapper runs on; a needed
    landmark already false when the skill begins is not held against it."""
    binding = corridor_binding()
    side, goal = _line_subgoals().subgoals
    subgoals = SubgoalSet((side, goal), ((0, 1),), frozenset({Atom("at-goal")}), needs=((), (0,)))
    for protect, status in ((True, "undone"), (False, None)):
        wrapper = SubgoalWrapper(Corridor(start=5), binding.labeler, subgoals, protect=protect)
        wrapper.reset(seed=0)
        wrapper.begin(0, [])
        assert wrapper.step(1)[4]["subgoal"] == "reached"  # at the side, cell 6
        wrapper.begin(1, [0])
        _, r, term, trunc, info = wrapper.step(0)  # back to cell 5: off the side
        assert (r, term, trunc, info["subgoal"]) == (0.0, status is not None, False, status)
        assert wrapper.undone == ((0,) if protect else ())  # what the run made false, for ``retake_undone``
    wrapper.begin(1, [0])  # begun off the side: nothing to protect
    assert wrapper.step(0)[4]["subgoal"] is None
    wrapper = SubgoalWrapper(Corridor(start=5), binding.labeler, subgoals, protect=True)
    wrapper.reset(seed=0)
    wrapper.begin(0, [])
    wrapper.step(1)
    wrapper.begin(1, [0])
    assert wrapper.step(2)[4]["subgoal"] == "reached"  # climbed with the side kept


@pytest.mark.parametrize("model, needs", [
    ("keyinbox.pddl", {"(door-open)": ["(has-key)"]}),
    ("keyinbox_repaired.pddl", {"(has-key)": ["(box-opened)"], "(door-open)": ["(has-key)"]}),
])
def test_what_a_landmark_needs_comes_from_its_greedy_necessary_orderings(model, needs):
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "keyinbox" / model
    subgoals = landmark_subgoals(load_task(path))
    data = subgoals.to_json()
    assert data["needs"] == needs
    assert SubgoalSet.from_json(data, "subgoals.json") == subgoals
    older = {k: v for k, v in data.items() if k != "needs"}  # a run folder from before the field
    assert SubgoalSet.from_json(older, "subgoals.json").needs == tuple(() for _ in subgoals.subgoals)


def test_wrapper_refuses_a_subgoal_true_at_reset():
    binding = corridor_binding()
    wrapper = SubgoalWrapper(Corridor(start=6), binding.labeler, _line_subgoals())
    with pytest.raises(DomainError, match="true at reset"):
        wrapper.reset(seed=0)


def _toy_config(method: str, seed: int, **learner: object) -> TrainConfig:
    cfg = TrainConfig(domain="corridor", method=method, learner=default_learner(method), seed=seed,
                      total_steps=15_000, eval_interval=1000, eval_episodes=1)
    return merge_overrides(cfg, {"learner": {"skill_max_steps": 30, **learner}})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_asgrl_finds_the_far_side_that_landmark_hrl_misses(seed):
    binding = corridor_binding()
    asgrl = train(_toy_config("asgrl", seed, diversity={"k": 2}), binding)
    assert asgrl.success_rate == 1.0 and asgrl.status == "solved"
    single = train(_toy_config("landmark-hrl", seed), binding)
    assert single.success_rate == 0.0 and single.steps_to_success is None


def test_low_level_meta_state_and_curriculum_also_solve_the_toy():
    binding = corridor_binding()
    low = train(_toy_config("asgrl", 0, diversity={"k": 2}, meta={"state": "low-level"}), binding)
    assert low.success_rate == 1.0
    cur = train(_toy_config("asgrl-curriculum", 0, diversity={"k": 2}), binding)
    assert cur.success_rate == 1.0


def test_landmark_meta_state_is_the_achieved_subgoals_and_solves_the_toy():
    """``meta.state = "landmarks"`` (ours): one state per prefix of achieved subgoals, whichever
    skills achieved them; the toy is solved with it as with the history."""
    assert landmark_state([0, 2]) == (0, 2) and landmark_state([]) == ()
    binding = corridor_binding()
    result = train(_toy_config("asgrl", 0, diversity={"k": 2}, meta={"state": "landmarks"}), binding)
    assert result.success_rate == 1.0
    with pytest.raises(ConfigError, match="meta.state"):
        _toy_config("asgrl", 0, meta={"state": "skills"})
