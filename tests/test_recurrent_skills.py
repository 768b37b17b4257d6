"""Deep skills with a memory (``deep.recurrent``, ours, off in every preset): a GRU cell between the
torso and the heads, carried over an episode's skill runs (``recurrent_scope`` "episode") or over one
run ("run"), replayed in windows of one run from the memory the skill acted with (R2D2's stored
state). MultiRoom's skills cannot tell the door they came through from the one ahead in one view."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces
from test_deep_skills import doorkey_view, small_deep, trains_evaluates_and_resumes
from test_lockstep import DEEP, binding, serial_and_lockstep  # noqa: F401  (binding: the fixture)

from asg.envs import plugins
from asg.learning.asgrl.config import DeepQConfig, make_config, merge_overrides
from asg.learning.asgrl.deep_skills import DeepQ, ImageReplay, RunMemory
from asg.learning.asgrl.evaluation import evaluate
from asg.learning.registry import bind_spec, build_learner, make_subgoals


# ----------------------------------------------------------------------------- pieces
def test_acting_in_numpy_reads_the_network_the_update_unrolls():
    """A run's Q-values from the acting path (numpy, one step at a time, ``DeepQ.q_batch``) equal the
    training path's (torch, ``QNetwork.unroll`` over the window from an empty memory)."""
    deep = DeepQ(DeepQConfig(encoding="categorical", categories=(5, 3), hidden=(16,), recurrent=8), 0.95, 3, 4, seed=1)
    rng = np.random.default_rng(0)
    states = rng.integers(0, 3, (6, 2)).astype(np.uint8)
    deep.ensure(2)
    memory = deep.run_memory(None)
    acted = np.stack([deep.q_batch(s[None], np.array([2]), [memory])[0] for s in states])
    with torch.no_grad():
        x = torch.from_numpy(deep.one_hot.hot(states))
        memories = deep.net.unroll(x, torch.zeros(1, 8), torch.ones(1, 6, dtype=torch.bool))[0]
        unrolled = deep.net.head_values(memories, torch.full((6,), 2)).numpy()
    np.testing.assert_allclose(acted, unrolled, rtol=1e-5, atol=1e-5)
    assert not np.allclose(acted[0], acted[1])  # the memory moved
    assert np.allclose(memory.h, memories[-1].numpy(), atol=1e-5)


def test_replayed_windows_follow_one_run_back_and_stop_at_its_start():
    """Rows of two runs written in turn (the lockstep's envs), in a ring that wraps: every window is
    consecutive steps of one run, right-aligned, cut at the run's start and at a row written over."""
    buf = ImageReplay(10, 1, initial=4, recurrent=2)
    runs = {run: RunMemory(np.zeros(2, np.float32), np.zeros(2, np.float32)) for run in (1, 2)}
    step = {1: 0, 2: 0}
    for i in range(14):  # the ring grows from 4 rows to 10; rows 0-3 are written over by 10-13
        run = 1 if i % 2 == 0 else 2
        memory = runs[run]
        memory.advance(np.full(2, step[run] + 1, np.float32))  # acting takes the step in: h_prev is its number
        buf.add(np.array([run], np.uint8), step[run], 0.0, np.array([run], np.uint8), False, False, 0, memory=memory)
        step[run] += 1
    assert buf.written() == 14 and len(buf) == 10
    rows = buf.windows(np.random.default_rng(0), 400, 4)
    for window in rows:
        kept = window[window >= 0]
        assert (window[:len(window) - len(kept)] == -1).all()  # right-aligned
        assert len(set(buf.data["s"][kept, 0].tolist())) == 1  # one run
        assert np.array_equal(np.diff(buf.data["a"][kept]), np.ones(len(kept) - 1))  # its consecutive steps
        assert len(kept) == 4 or buf.data["a"][kept[0]] == 2  # cut short only where step 1 was written over
        assert np.array_equal(buf.data["h"][kept, 0], buf.data["a"][kept])  # the memory each step acted with
    assert {len(w[w >= 0]) for w in rows} == {1, 2, 3, 4}


# ----------------------------------------------------------------------------- a cue to remember
END = 2


class CueCorridor(gym.Env):
    """Cells 0..END; the cue (up or down: the reset seed's parity) shows in the first observation only.
    At cell END, action 2 (up) or 3 (down) ends the episode, at the goal when it matches the cue."""

    metadata = {"render_modes": []}

    def __init__(self, max_steps: int = 20) -> None:
        self.max_steps = max_steps
        self.action_space = spaces.Discrete(4)
        self.observation_space = spaces.Box(0, END, (2,), np.int8)
        self.pos = self.t = self.cue = 0
        self.done = self.goal = False

    def _obs(self) -> np.ndarray:
        return np.array([self.pos, 1 + self.cue if self.t == 0 else 0], dtype=np.int8)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.t, self.cue, self.done, self.goal = 0, 0, int(seed or 0) % 2, False, False
        return self._obs(), {}

    def step(self, action):
        self.t += 1
        if action in (0, 1):
            self.pos = min(END, max(0, self.pos + (1 if action == 1 else -1)))
        elif self.pos == END:
            self.done, self.goal = True, action - 2 == self.cue
        return self._obs(), float(self.goal), self.done, self.t >= self.max_steps and not self.done, {}


CUE_PDDL = """
(define (domain cue)
  (:requirements :strips)
  (:predicates (at-end) (at-goal))
  (:action walk :parameters () :precondition (and) :effect (and (at-end)))
  (:action take :parameters () :precondition (and (at-end)) :effect (and (at-goal))))
(define (problem cue1) (:domain cue) (:init) (:goal (and (at-goal))))
"""
CUE_LABELS = {"(at-end)": lambda env: env.pos == END, "(at-goal)": lambda env: env.goal}
CUE_DEEP = {"encoding": "categorical", "categories": [END + 1, 3], "hidden": [32], "learning_starts": 200,
            "batch_size": 32, "sil_batch_size": 16, "replay_capacity": 20_000, "sil_capacity": 5000,
            "target_update": 100, "epsilon_anneal_steps": 2000, "train_every": 1}


@pytest.fixture
def cue(tmp_path):
    (tmp_path / "cue.pddl").write_text(CUE_PDDL)
    return bind_spec(plugins.make_domain("cue-corridor", env=CueCorridor, labeler=CUE_LABELS,
                                         model=tmp_path / "cue.pddl", max_episode_steps=20))


def cue_learner(cue, deep: dict, seed: int = 0):
    cfg = make_config("cue-corridor", "asgrl", seed=seed, total_steps=10**6)
    cfg = merge_overrides(cfg, {"learner": {
        "skills": "deep", "skill_max_steps": 20, "dead_end_after": 0, "meta": {"state": "history"},
        "diversity": {"abstraction": "kmeans", "k": 2}, "deep": {**CUE_DEEP, **deep}}})
    return build_learner(cfg, make_subgoals(cfg, cue.task), 4)


def test_a_skill_with_a_memory_takes_the_cue_another_skill_saw(cue):
    """The cue shows while the (at-end) skills walk; the (at-goal) skills must act on it. Greedy on 40
    layouts, half of each cue, after 600 training episodes with the memory (seed 0). The feed-forward
    skills see the same view at the end either way, and so does a memory emptied at each skill run:
    right on half of the layouts at most however long they train (200 episodes here, for time)."""
    env = CueCorridor()
    scores = {}
    for name, deep, episodes in (("episode", {"recurrent": 16}, 600),
                                 ("run", {"recurrent": 16, "recurrent_scope": "run"}, 200), ("feed-forward", {}, 200)):
        learner = cue_learner(cue, deep)
        for episode in range(episodes):
            learner.train_episode(env, cue.labeler, 10_000 + episode, 10**6)
        scores[name] = evaluate(learner, env, cue.labeler, range(100, 140)).success_rate
    assert scores["episode"] == 1.0 and scores["run"] <= 0.5 and scores["feed-forward"] <= 0.5, scores


# ----------------------------------------------------------------------------- the loops
@pytest.mark.parametrize("scope", ["episode", "run"])
def test_a_lockstep_of_one_env_is_the_serial_loop_with_a_memory(binding, scope):  # noqa: F811
    """The same episodes through ``train_episode`` and a lockstep of one env: the same stats, weights
    and replay rows (stored memories and links included)."""
    cfg = make_config("keydoor-lockstep", "asgrl", seed=3, total_steps=10_000)
    cfg = merge_overrides(cfg, {"learner": {**DEEP, "deep": {**DEEP["deep"], "recurrent": 8, "sequence_length": 4,
                                                             "recurrent_scope": scope}}})
    subgoals = make_subgoals(cfg, binding.task)
    serial, twin = build_learner(cfg, subgoals, 4), build_learner(cfg, subgoals, 4)
    want, got = serial_and_lockstep(serial, twin, binding, range(100, 140))
    assert got == want and serial.deep.updates > 100
    for name, value in serial.deep.net.state_dict().items():
        assert torch.equal(value, twin.deep.net.state_dict()[name])
    for name, rows in serial.deep.replay.data.items():
        assert np.array_equal(rows, twin.deep.replay.data[name]), name
    rows = serial.deep.replay.data
    starts = rows["prev"][:len(serial.deep.replay)] == -1
    assert (rows["h"][:len(serial.deep.replay)] != 0).any()
    assert starts.sum() == (len(want) if scope == "episode" else sum(len(stats.skills) for stats in want))


def test_a_recurrent_run_trains_evaluates_and_resumes_from_its_folder(tmp_path):
    """DoorKey-5x5's view with ``deep.recurrent`` 16: a run trains, is evaluated from its folder, and a
    run stopped and resumed ends as the uninterrupted one; its learner's state does not load into a
    feed-forward learner (one clear error)."""
    with doorkey_view("doorkey-gru-test") as view:
        learner = trains_evaluates_and_resumes(small_deep(view, recurrent=16, sequence_length=4), view, tmp_path)
        assert learner.deep.net.gru is not None and learner.deep.replay.written() == len(learner.deep.replay) > 0
        plain = small_deep(view)
        feed_forward = build_learner(plain, make_subgoals(plain, view.task), learner.n_actions)
        with pytest.raises(ValueError, match="does not fit"):
            feed_forward.load_state_dict(learner.state_dict())
