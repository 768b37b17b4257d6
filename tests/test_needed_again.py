"""Landmarks needed again as subgoals (``learner.needed_again``, ours, off in every preset;
``subgoals.needed_again_subgoals``), on a corridor with one hand: the key at cell 0, a locked door at 5, the
ball behind it at 6, start at 3. The ball is taken with an empty hand only, so the key must go down between
the door and the ball: ``(hands-empty)`` holds at the start, and the model needs it again after ``(has-key)``."""
from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from asg.envs import plugins
from asg.learning.asgrl.config import make_config, merge_overrides
from asg.learning.asgrl.subgoals import SubgoalSet, SubgoalWrapper, landmark_subgoals
from asg.learning.errors import ConfigError
from asg.learning.registry import bind_spec, build_learner, make_subgoals
from asg.learning.torch_state import torch_threads
from asg.planning import load_task
from asg.planning.task import Atom

LEFT, RIGHT, HAND, OPEN = range(4)


class HandCorridor(gym.Env):
    """Cells 0..6: the key at 0, a locked door at 5, the ball at 6, start at 3. Actions: 0 left, 1 right,
    2 the hand (puts down what it holds where the agent stands, if nothing lies there; else takes what
    lies there), 3 open (next to the door, with the key)."""

    metadata = {"render_modes": []}
    KEY, DOOR, BALL, START = 0, 5, 6, 3

    def __init__(self, max_steps: int = 200) -> None:
        self.max_steps = max_steps
        self.action_space = spaces.Discrete(4)
        self.observation_space = spaces.Box(0, 6, (4,), np.int8)

    def _obs(self) -> np.ndarray:
        held = {None: 0, "key": 1, "ball": 2}[self.held]
        return np.array([self.pos, held, self.door_open, self.key_at if self.key_at is not None else 7], np.int8)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.held, self.door_open, self.t = self.START, None, False, 0
        self.key_at, self.ball_at = self.KEY, self.BALL
        return self._obs(), {}

    def step(self, action):
        self.t += 1
        if action == LEFT:
            self.pos = max(0, self.pos - 1)
        elif action == RIGHT and (self.pos + 1 != self.DOOR or self.door_open):
            self.pos = min(self.BALL, self.pos + 1)
        elif action == HAND and self.held is not None:
            if self.pos not in (self.key_at, self.ball_at):
                setattr(self, f"{self.held}_at", self.pos)
                self.held = None
        elif action == HAND:
            for thing in ("key", "ball"):
                if getattr(self, f"{thing}_at") == self.pos:
                    self.held = thing
                    setattr(self, f"{thing}_at", None)
                    break
        elif action == OPEN and self.pos == self.DOOR - 1 and self.held == "key":
            self.door_open = True
        terminated = self.held == "ball"
        return self._obs(), float(terminated), terminated, self.t >= self.max_steps and not terminated, {}


LABELS = {
    "(has-key)": lambda env: env.held == "key",
    "(door-open)": lambda env: env.door_open,
    "(hands-empty)": lambda env: env.held is None,
    "(has-ball)": lambda env: env.held == "ball",
}
# the model as `asg mvtr --suggest --write` repairs it once the undo is hinted (test_repair_hints.py)
MODEL = """
(define (domain hand)
  (:requirements :strips)
  (:predicates (has-key) (door-open) (hands-empty) (has-ball))
  (:action take-key :parameters () :precondition (and (hands-empty)) :effect (and (has-key) (not (hands-empty))))
  (:action open-door :parameters () :precondition (and (has-key)) :effect (and (door-open)))
  (:action restore_hands_empty :parameters () :precondition (and (has-key)) :effect (and (hands-empty) (not (has-key))))
  (:action take-ball :parameters () :precondition (and (door-open) (hands-empty))
     :effect (and (has-ball) (not (hands-empty)))))
(define (problem hand1) (:domain hand) (:init (hands-empty)) (:goal (and (has-ball))))
"""
AGAIN = "(hands-empty) again after (has-key)"
TABULAR = {"dead_end_after": 0, "skill_max_steps": 30}


@pytest.fixture
def hand(tmp_path):
    (tmp_path / "hand.pddl").write_text(MODEL)
    return bind_spec(plugins.make_domain("hand-again", env=HandCorridor, labeler=LABELS,
                                         model=tmp_path / "hand.pddl", max_episode_steps=200))


def test_the_empty_hand_is_a_subgoal_right_before_the_ball(hand):
    plain = landmark_subgoals(hand.task)
    assert plain.names() == ["(has-key)", "(door-open)", "(has-ball)"]  # the paper's: no atom true at the start
    again = landmark_subgoals(hand.task, again=True)
    assert again.names() == [*plain.names(), AGAIN]
    assert [[again.names()[i] for i in lin] for lin in again.linearizations] == [
        ["(has-key)", "(door-open)", AGAIN, "(has-ball)"]]
    assert again.subgoals[3].after == "(has-key)" and again.subgoals[3].atoms == {Atom("hands-empty")}
    # the ball's skills keep the door, not the hand: taking the ball empties it (tests below)
    assert again.needs == (*plain.needs, ())
    data = again.to_json()
    assert data["again"] == {AGAIN: "(has-key)"}
    assert SubgoalSet.from_json(json.loads(json.dumps(data)), "subgoals.json") == again
    assert SubgoalSet.from_json(plain.to_json(), "subgoals.json") == plain


def test_a_model_that_needs_nothing_again_is_unchanged(tmp_path):
    from toy_domains import KEYDOOR_PDDL

    (tmp_path / "keydoor.pddl").write_text(KEYDOOR_PDDL)
    task = load_task(tmp_path / "keydoor.pddl")
    assert landmark_subgoals(task, again=True) == landmark_subgoals(task)


def scored(wrapper, subgoal: str, achieved: list[str], actions: list[int]) -> list[str | None]:
    names = wrapper.subgoal_set.names()
    assert not wrapper.begin(names.index(subgoal), [names.index(a) for a in achieved])
    return [wrapper.step(a)[4]["subgoal"] for a in actions]


def test_the_again_subgoal_is_reached_as_a_target_and_never_out_of_turn(hand):
    subgoals = landmark_subgoals(hand.task, again=True)
    wrapper = SubgoalWrapper(HandCorridor(), hand.labeler, subgoals, max_steps=30)
    wrapper.reset(seed=0)  # (hands-empty) holds at the reset: not an error for a landmark needed again
    assert scored(wrapper, "(has-key)", [], [LEFT, LEFT, LEFT, HAND]) == [None, None, None, "reached"]
    # the door's skill puts the key down: a reasonable ordering says where the empty hand pays, not
    # where it must come, so the run goes on (the door cannot open without the key either way)
    assert scored(wrapper, "(door-open)", ["(has-key)"], [RIGHT, HAND, HAND]) == [None, None, None]
    wrapper.reset(seed=0)
    scored(wrapper, "(has-key)", [], [LEFT, LEFT, LEFT, HAND])
    assert scored(wrapper, "(door-open)", ["(has-key)"], [RIGHT] * 4 + [OPEN]) == [None] * 4 + ["reached"]
    # its own skill: reached where the key goes down
    assert scored(wrapper, AGAIN, ["(has-key)", "(door-open)"], [HAND]) == ["reached"]
    assert scored(wrapper, "(has-ball)", ["(has-key)", "(door-open)", AGAIN],
                  [RIGHT, RIGHT, HAND]) == [None, None, "reached"]
    # with protect_landmarks the ball's skills keep the door, not the empty hand their own step fills
    kept = SubgoalWrapper(HandCorridor(), hand.labeler, subgoals, max_steps=30, protect=True)
    kept.reset(seed=0)
    scored(kept, "(has-key)", [], [LEFT, LEFT, LEFT, HAND])
    scored(kept, "(door-open)", ["(has-key)"], [RIGHT] * 4 + [OPEN])
    scored(kept, AGAIN, ["(has-key)", "(door-open)"], [HAND])
    names = subgoals.names()
    kept.begin(names.index("(has-ball)"), [0, 1, names.index(AGAIN)])
    assert kept.kept == (1,) and Atom("hands-empty") in kept.labels


def learner(hand, again: bool, seed: int = 3):
    cfg = make_config("hand-again", "asgrl", seed=seed, total_steps=20_000)
    cfg = merge_overrides(cfg, {"learner": {**TABULAR, "needed_again": again}})
    return cfg, build_learner(cfg, make_subgoals(cfg, hand.task), 4)


def test_asgrl_takes_the_ball_with_the_empty_hand_as_a_subgoal(hand):
    """After 150 training episodes, tabular ASGRL with the switch: the greedy policy takes the ball on 10
    of 10 fresh episodes, its path a skill of each subgoal in the model's order, the empty hand among them."""
    _, learn = learner(hand, True)
    env = hand.make_env(max_steps=200)
    with torch_threads(1):
        for seed in range(150):
            learn.train_episode(env, hand.labeler, seed, 10**6)
        greedy = [learn.greedy_episode(env, hand.labeler, 1000 + seed) for seed in range(10)]
    assert sum(ep.success for ep in greedy) == 10
    assert greedy[0].reached == ("(has-key)", "(door-open)", AGAIN, "(has-ball)")


def test_it_needs_landmark_subgoals(hand):
    cfg, _ = learner(hand, True)
    with pytest.raises(ConfigError, match="learner.needed_again.*subgoals \"landmarks\""):
        merge_overrides(cfg, {"learner": {"subgoals": "plan"}})


def test_a_lockstep_of_one_env_is_the_serial_loop_with_it(hand):
    from test_lockstep import DEEP, serial_and_lockstep

    cfg = make_config("hand-again", "asgrl", seed=4, total_steps=20_000)
    cfg = merge_overrides(cfg, {"learner": {**DEEP, "needed_again": True,
                                            "deep": {**DEEP["deep"], "categories": [7, 3, 2, 8]}}})
    subgoals = make_subgoals(cfg, hand.task)
    serial, twin = build_learner(cfg, subgoals, 4), build_learner(cfg, subgoals, 4)
    want, got = serial_and_lockstep(serial, twin, hand, range(300, 340))
    assert got == want and any(AGAIN in ep.reached for ep in want)


def test_it_is_off_in_every_preset():
    for preset in ("asg", "paper"):
        assert make_config("mario", "asgrl", preset).learner.needed_again is False
