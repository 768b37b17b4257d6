"""Landmarks reached in one step (``learner.reach_together``, ours, off in every preset): a step that
makes the skill's landmark true together with landmarks ordered after it, as stepping through
MultiRoom's last door onto a goal right behind it makes (in-room-4) and (at-goal) true at once."""
from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from test_lockstep import DEEP, serial_and_lockstep
from toy_domains import Corridor, corridor_binding

from asg import pddl_models
from asg.envs import plugins
from asg.learning.asgrl.config import make_config, merge_overrides
from asg.learning.asgrl.evaluation import evaluate
from asg.learning.asgrl.subgoals import Subgoal, SubgoalSet, SubgoalWrapper, landmark_subgoals
from asg.learning.registry import bind_spec, build_learner, make_subgoals
from asg.planning import load_task
from asg.planning.task import Atom

SIDE, GOAL = Atom("at-side"), Atom("at-goal")


def both_at_six(env) -> frozenset:
    """The corridor's labels where its cell 6 is the side and the goal at once."""
    return frozenset({SIDE, GOAL}) if env.unwrapped.pos == 6 else frozenset()


def subgoals(order: tuple[int, int]) -> SubgoalSet:
    return SubgoalSet((Subgoal("(at-side)", frozenset({SIDE})), Subgoal("(at-goal)", frozenset({GOAL}), True)),
                      (order,), frozenset({GOAL}))


@pytest.mark.parametrize("together, status, reward, later", [(False, "violated", 0.0, ()),
                                                              (True, "reached", 1.0, (1,))])
def test_the_landmark_and_one_after_it_in_one_step(together, status, reward, later):
    wrapper = SubgoalWrapper(Corridor(start=5), both_at_six, subgoals((0, 1)), together=together)
    wrapper.reset(seed=0)
    wrapper.begin(0, [])
    _, r, term, _, info = wrapper.step(1)
    assert (info["subgoal"], r, term, wrapper.together) == (status, reward, True, later)
    wrapper.begin(0, [])  # a new run forgets the last one's
    assert wrapper.together == ()


def test_a_landmark_ordered_before_it_still_fails_the_run():
    wrapper = SubgoalWrapper(Corridor(start=5), both_at_six, subgoals((0, 1)), together=True)
    wrapper.reset(seed=0)
    wrapper.begin(1, [])  # the goal's run, the side still pending and ordered before it
    assert wrapper.step(1)[4]["subgoal"] == "violated" and wrapper.together == ()
    lax = SubgoalWrapper(Corridor(start=5), corridor_binding().labeler, subgoals((0, 1)), together=True)
    lax.reset(seed=0)
    lax.begin(0, [])
    assert lax.step(1)[4]["subgoal"] == "reached" and lax.together == ()  # the side alone


def test_together_means_next_in_a_linearization_that_goes_on_from_the_achieved():
    subgoals = landmark_subgoals(load_task(pddl_models.path("household_v1")))
    names = subgoals.names()
    key, door, charged, final = (names.index(n) for n in ("(has-key)", "(door-open)", "(charged)", "(at-final-room)"))
    assert subgoals.continuing([key], [charged]) == (charged,)  # unordered with the door: either goes first
    assert set(subgoals.continuing([key], [charged, door])) == {door, charged}
    assert subgoals.continuing([key, door], [charged, final]) == (charged, final)
    assert subgoals.continuing([key], [final]) is None  # the door and the charge come before it
    assert subgoals.continuing([door], [charged]) is None  # no linearization begins with the door


class GoalBehindDoor(gym.Env):
    """Cells 0..6, start at 1, a door cell at 4; the goal lies at 5 (right behind the door) in even
    layouts and at 6 in odd ones. Actions 0 left, 1 right; the observation is (cell, goal cell)."""

    metadata = {"render_modes": []}

    def __init__(self, max_steps: int = 30) -> None:
        self.max_steps = max_steps
        self.action_space = spaces.Discrete(2)
        self.observation_space = spaces.Box(0, 6, (2,), np.int8)
        self.pos, self.goal, self.t = 1, 6, 0

    def _obs(self) -> np.ndarray:
        return np.array([self.pos, self.goal], dtype=np.int8)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.goal, self.t = 1, 5 + int(seed or 0) % 2, 0
        return self._obs(), {}

    def step(self, action):
        self.t += 1
        self.pos = min(6, max(0, self.pos + (1 if action == 1 else -1)))
        done = self.pos == self.goal
        return self._obs(), float(done), done, self.t >= self.max_steps and not done, {}


DOOR_PDDL = """
(define (domain behind)
  (:requirements :strips)
  (:predicates (past-door) (at-goal))
  (:action pass-door :parameters () :precondition (and) :effect (and (past-door)))
  (:action walk-to-goal :parameters () :precondition (and (past-door)) :effect (and (at-goal))))
(define (problem behind1) (:domain behind) (:init) (:goal (and (at-goal))))
"""
DOOR_LABELS = {"(past-door)": lambda env: env.pos >= 5, "(at-goal)": lambda env: env.pos == env.goal}


@pytest.fixture
def behind(tmp_path):
    (tmp_path / "behind.pddl").write_text(DOOR_PDDL)
    return bind_spec(plugins.make_domain("goal-behind-door", env=GoalBehindDoor, labeler=DOOR_LABELS,
                                         model=tmp_path / "behind.pddl", max_episode_steps=30))


def trained(behind, together: bool, learner: dict | None = None, seed: int = 0):
    cfg = make_config("goal-behind-door", "asgrl", seed=seed, total_steps=6000)
    cfg = merge_overrides(cfg, {"learner": {**(learner or {}), "skill_max_steps": 30, "reach_together": together}})
    return cfg, build_learner(cfg, make_subgoals(cfg, behind.task), 2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_door_skills_learn_to_step_onto_a_goal_behind_the_door(behind, seed):
    """Tabular ASGRL, 200 training episodes, then the greedy policy on 20 layouts of each kind. Without
    the switch a (past-door) run that lands on the goal fails, so its skills learn to stay before the
    door wherever the goal lies right behind it; with it those runs reach both landmarks."""
    scores = {}
    for together in (False, True):
        _, learn = trained(behind, together, seed=seed)
        env = behind.make_env(max_steps=30)
        for layout in range(1000, 1200):
            learn.train_episode(env, behind.labeler, layout, 10**6)
        for kind in (0, 1):  # the goal behind the door, one cell further
            seeds = [2000 + 2 * i + kind for i in range(20)]
            scores[together, kind] = evaluate(learn, env, behind.labeler, seeds).success_rate
    assert scores[True, 0] == 1.0 and scores[True, 1] == 1.0, scores
    assert scores[False, 0] <= 0.2 and scores[False, 1] == 1.0, scores


def test_the_meta_controller_credits_both_and_the_lockstep_twins_it(behind):
    deep = {**DEEP, "deep": {**DEEP["deep"], "categories": [7, 7]}}  # (cell, goal cell)
    cfg, serial = trained(behind, True, deep, seed=3)
    twin = build_learner(cfg, make_subgoals(cfg, behind.task), 2)
    want, got = serial_and_lockstep(serial, twin, behind, range(300, 340))
    assert got == want
    together = [ep for ep in want if ep.success and len(ep.skills) == 1]
    assert together and all(ep.reached == ("(past-door)", "(at-goal)") for ep in together)
    assert serial.meta.best_score == 2.0  # R for each landmark, as an episode of two runs scores


def test_goal_behind_door_splits_a_multiroom_runs_successes(tmp_path):
    """benchmarks/goal_behind_door.py: the share of MultiRoom layouts whose goal lies right behind the
    last door, a run's greedy and ε successes split by that, and where its failed episodes ended."""
    pytest.importorskip("minigrid")
    from conftest import benchmark_script

    from asg.learning.asgrl.trainer import train
    from asg.learning.run_dir import RunDir

    cfg, binding = benchmark_script("own_worlds").asgrl_config("multiroom", 0, 1500, {
        "eval_interval": 1500, "eval_episodes": 1, "final_eval_episodes": 1, "early_stop_evals": 0,
        "learner": {"reach_together": True}})
    train(cfg, binding, run_dir=RunDir.create(tmp_path / "run", cfg))
    script, out = benchmark_script("goal_behind_door"), tmp_path / "split.json"
    assert script.main([f"rt={tmp_path / 'run'}", "--episodes", "6", "--layouts", "200", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["layouts"] == {"reset_seeds": "0..199", "goal_behind_door": 36, "layouts": 200}
    run = data["runs"]["rt"]
    assert run["seed"] == 0 and run["learner"]["reach_together"] is True
    for protocol in ("greedy", "epsilon"):
        cells = run[protocol]["goal_behind_door"], run[protocol]["other"]
        assert sum(c["episodes"] for c in cells) == 6
        assert all(0 <= c["successes"] <= c["episodes"] - c["failed_at_limit"] for c in cells)
        assert run[protocol]["success"] == pytest.approx(sum(c["successes"] for c in cells) / 6)
        failures = run[protocol]["failures"]
        assert sum(f["episodes"] for f in failures) == 6 - sum(c["successes"] for c in cells)
        assert all(f["facing_door"] in (None, 1, 2, 3) and f["room"] in (None, 1, 2, 3, 4) for f in failures)
    assert script.main([f"none={tmp_path}", "--out", str(out)]) == 2  # not a run folder
    with pytest.raises(SystemExit) as stop:
        script.main(["--episodes", "0", "--out", str(out)])
    assert stop.value.code == 2
