"""Deep skills in N envs at once (``deep.n_envs``, ``asgrl.lockstep``), on the tests' key-door
corridor (``toy_domains.KeyDoorCorridor``: key at cell 0, door at 5, goal at 6, start at 3).

One env is today's loop bit for bit; a lockstep of one env is the same run as the serial loop
(the episode logic is twinned); N = 4 gives the same metrics for the same seed, learns the
corridor, stops and resumes, and closes its episodes when the world's code fails.
"""
from __future__ import annotations

import copy
import dataclasses
import multiprocessing
import re
import shutil

import numpy as np
import pytest
from toy_domains import KEYDOOR_LABELS, KEYDOOR_PDDL, KeyDoorCorridor

from asg.envs import plugins
from asg.learning.asgrl.config import make_config, merge_overrides
from asg.learning.asgrl.evaluation import eval_seeds
from asg.learning.errors import ConfigError, RunFailedError
from asg.learning.registry import bind_spec, build_learner, make_subgoals
from asg.learning.run_dir import RunDir

torch = pytest.importorskip("torch")

from asg.learning.asgrl.env_process import EnvProcess, remote_labels  # noqa: E402
from asg.learning.asgrl.lockstep import Lockstep  # noqa: E402
from asg.learning.asgrl.trainer import train  # noqa: E402
from asg.learning.torch_state import torch_threads  # noqa: E402

# Deep skills reading the corridor's (cell, has-key, door-open) as category codes, small enough for seconds.
DEEP = {"skills": "deep", "dead_end_after": 0, "skill_max_steps": 50, "meta": {"state": "history"},
        "diversity": {"abstraction": "kmeans", "k": 2},
        "deep": {"encoding": "categorical", "categories": [7, 2, 2], "hidden": [32], "learning_starts": 100,
                 "batch_size": 16, "sil_batch_size": 8, "replay_capacity": 5000, "sil_capacity": 2000,
                 "target_update": 50, "epsilon_anneal_steps": 1000}}
BROKEN = {"what": None, "after": 0}  # what the world's code breaks on (None: it works), after how many calls
CALLS = {"labeler": 0, "step": 0, "reset": 0}  # training resets only: evaluations use eval_seeds
EVAL_SEEDS = set(eval_seeds(0, 3))


def broken(what: str) -> bool:
    CALLS[what] += 1
    return BROKEN["what"] == what and CALLS[what] >= BROKEN["after"]


def door_open(env) -> bool:
    if broken("labeler"):
        raise ValueError("door sensor offline")
    return env.door_open


class FlakyCorridor(KeyDoorCorridor):
    """The corridor whose ``reset`` or ``step`` raises once ``BROKEN`` says so."""

    def reset(self, *, seed=None, options=None):
        if seed not in EVAL_SEEDS and broken("reset"):
            raise RuntimeError("map file missing")
        return super().reset(seed=seed, options=options)

    def step(self, action):
        if broken("step"):
            raise ValueError("motor jammed")
        return super().step(action)


@pytest.fixture
def binding(tmp_path):
    (tmp_path / "keydoor.pddl").write_text(KEYDOOR_PDDL)
    BROKEN.update(what=None, after=0)
    CALLS.update(labeler=0, step=0, reset=0)
    labels = {**KEYDOOR_LABELS, "(door-open)": door_open}
    spec = plugins.make_domain("keydoor-lockstep", env=FlakyCorridor, labeler=labels, model=tmp_path / "keydoor.pddl",
                               max_episode_steps=200)
    yield bind_spec(spec)
    BROKEN.update(what=None, after=0)


def config(n_envs: int | None, steps: int, seed: int = 0, **top):
    deep = DEEP if n_envs is None else {**DEEP, "deep": {**DEEP["deep"], "n_envs": n_envs}}
    cfg = make_config("keydoor-lockstep", "asgrl", seed=seed, total_steps=steps, eval_interval=500, eval_episodes=3,
                      final_eval_episodes=3, early_stop_evals=0)
    return merge_overrides(cfg, {"learner": deep, **top})


def same(result) -> dict:
    """A result less what two runs of one config may differ in (the clock, the folder)."""
    return {k: v for k, v in result.to_json().items() if k not in ("wall_seconds", "run_dir")}


def metrics(path) -> list[dict]:
    return [{k: v for k, v in row.items() if k != "wall_seconds"} for row in RunDir.open(path).read_metrics()]


def serial_and_lockstep(serial, twin, binding, seeds) -> tuple[list, list]:
    """The training episodes of ``seeds``: ``serial``'s through ``train_episode``, ``twin``'s through a
    lockstep of one env, each in an env of its own."""
    env = binding.make_env(max_steps=200)
    want = [serial.train_episode(env, binding.labeler, seed, 10**6) for seed in seeds]
    lock, got = Lockstep(twin, [binding.make_env(max_steps=200)], binding.labeler), []
    with torch_threads(1):
        for seed in seeds:
            lock.start(0, seed)
            while not lock.idle():
                got.extend(lock.tick(10**6))
    return want, got


# ----------------------------------------------------------------------------- one env
def test_n_envs_1_is_todays_loop_bit_for_bit(binding):
    absent = train(config(None, 1500, seed=4), binding)
    one = train(config(1, 1500, seed=4), binding)
    assert same(absent) == same(one) and absent.episodes > 10


@pytest.mark.parametrize("novelty", [0.0, 0.05])
def test_a_lockstep_of_one_env_is_the_serial_loop(binding, novelty):
    """The same episodes, seeds and budget through ``train_episode`` and through a lockstep of one
    env: the same stats, counters, network weights and meta-controller (and, with ``label_novelty``
    and ``state_novelty``, the same visit counts of the labeler's atoms and of SimHash codes; with
    ``epsilon_success_window`` too, the same ε of every skill)."""
    cfg = merge_overrides(config(None, 10_000, seed=2), {"learner": {
        "label_novelty": novelty, "state_novelty": novelty, "state_novelty_bits": 16 if novelty else 0,
        "protect_landmarks": bool(novelty), "retake_undone": bool(novelty),
        "deep": {"epsilon_success_window": 10 if novelty else 0}}})
    subgoals = make_subgoals(cfg, binding.task)
    serial, twin = build_learner(cfg, subgoals, 4), build_learner(cfg, subgoals, 4)
    want, got = serial_and_lockstep(serial, twin, binding, range(100, 150))
    assert got == want and serial.deep.updates > 100
    counters = [(learner.env_steps, learner.episodes, learner.deep.updates) for learner in (serial, twin)]
    assert counters[0] == counters[1]
    for name, value in serial.deep.net.state_dict().items():
        assert torch.equal(value, twin.deep.net.state_dict()[name])
    assert serial.meta.q == twin.meta.q and serial.rng.random() == twin.rng.random()
    epsilons = [[skill.epsilon for ss in learner.skill_sets for skill in ss.skills] for learner in (serial, twin)]
    assert epsilons[0] == epsilons[1]
    if novelty:
        assert min(epsilons[0]) < 0.9 and any(len(skill.recent_runs) == 10 for ss in serial.skill_sets
                                              for skill in ss.skills)
        assert serial.novelty.counts == twin.novelty.counts and len(serial.novelty.counts) >= 3
        assert sum(serial.novelty.counts.values()) == serial.env_steps
        assert serial.state_novelty.counts == twin.state_novelty.counts and len(serial.state_novelty.counts) >= 10
        assert sum(serial.state_novelty.counts.values()) == serial.env_steps
    else:
        assert serial.novelty is None and serial.state_novelty is None


def test_an_episode_the_trainer_cuts_teaches_the_meta_controller_nothing(binding):
    """The trainer cuts episodes in flight (the budget's end; in lockstep every checkpoint and stop
    too): the running skill ends with no verdict, so no meta transition and no meta replay, in the
    serial loop as in the lockstep. Before, each cut episode taught a failure: 16 or 32 of them at
    every checkpoint, which changed the meta-controller's greedy choices between an evaluation and
    the checkpoint saved after it."""
    cfg = config(None, 10_000, seed=2)
    subgoals = make_subgoals(cfg, binding.task)
    serial, twin = build_learner(cfg, subgoals, 4), build_learner(cfg, subgoals, 4)
    env = binding.make_env(max_steps=200)
    for seed in range(100, 120):
        serial.train_episode(env, binding.labeler, seed, 10**6)
    updates, q, memory = serial.meta.updates, copy.deepcopy(serial.meta.q), len(serial.meta.memory)
    stats = serial.train_episode(env, binding.labeler, 999, 1)  # cut after one step of its first skill
    assert stats.steps == 1 and not stats.success and len(stats.skills) == 1
    assert (serial.meta.updates, serial.meta.q, len(serial.meta.memory)) == (updates, q, memory)
    lock = Lockstep(twin, [binding.make_env(max_steps=200) for _ in range(4)], binding.labeler)
    with torch_threads(1):
        for i in range(4):
            lock.start(i, 200 + i)
        lock.tick(10**6)
        updates, episodes = twin.meta.updates, twin.episodes
        cut = lock.cut_all()
    assert len(cut) == 4 and all(stats.steps == 1 and len(stats.skills) == 1 for stats in cut)
    assert twin.meta.updates == updates and twin.episodes == episodes + 4 and lock.idle()


# ----------------------------------------------------------------------------- four envs
def test_n_envs_4_same_seed_same_metrics(binding, tmp_path):
    cfg = config(4, 2000, seed=1)
    first = train(cfg, binding, run_dir=RunDir.create(tmp_path / "a", cfg))
    second = train(cfg, binding, run_dir=RunDir.create(tmp_path / "b", cfg))
    assert metrics(tmp_path / "a") == metrics(tmp_path / "b") and same(first) == same(second)
    assert first.env_steps == 2000 and len(metrics(tmp_path / "a")) == 5  # points at 0, 500, ... in env steps
    assert [int(row["env_steps"]) for row in metrics(tmp_path / "a")][1:] == [500, 1000, 1500, 2000]
    serial = train(config(1, 2000, seed=1), binding)
    assert same(serial) != same(first)  # another run: N envs share one network, not one env's


def test_n_envs_4_learns_the_key_door_corridor(binding):
    result = train(config(4, 4000, seed=0), binding)
    assert result.greedy_success_rate >= 0.8 and result.epsilon_success_rate >= 0.6, result.to_json()


class DropCorridor(KeyDoorCorridor):
    """The corridor whose action 2, with the key in hand, puts it down where the agent stands, as
    MiniGrid's drop does; picked up again where it lies."""

    def reset(self, *, seed=None, options=None):
        self.key_at = self.KEY
        return super().reset(seed=seed, options=options)

    def step(self, action):
        if action == 2 and self.has_key:
            self.has_key, self.key_at, action = False, self.pos, -1
        elif action == 2:
            self.has_key, action = self.pos == self.key_at, -1
        return super().step(action)


@pytest.mark.parametrize("retake", [False, True])
def test_retake_undone_takes_a_dropped_key_again_and_the_lockstep_twins_it(tmp_path, retake):
    """``protect_landmarks``: a door run that puts the key down fails ("undone"). Alone, the episode
    ends there; with ``retake_undone`` it goes on, (has-key) leaves the achieved landmarks and its
    skills run again, later in the same episode. A lockstep of one env is the same run."""
    (tmp_path / "keydoor.pddl").write_text(KEYDOOR_PDDL)
    spec = plugins.make_domain("keydoor-drop", env=DropCorridor, labeler=KEYDOOR_LABELS,
                               model=tmp_path / "keydoor.pddl", max_episode_steps=200)
    drop = bind_spec(spec)
    cfg = make_config("keydoor-drop", "asgrl", seed=5, total_steps=6000, eval_interval=1000, eval_episodes=3,
                      final_eval_episodes=3, early_stop_evals=0)
    cfg = merge_overrides(cfg, {"learner": {**DEEP, "protect_landmarks": True, "retake_undone": retake}})
    subgoals = make_subgoals(cfg, drop.task)
    serial, twin = build_learner(cfg, subgoals, 4), build_learner(cfg, subgoals, 4)
    want, got = serial_and_lockstep(serial, twin, drop, range(300, 360))
    assert got == want
    retaken = [ep for ep in want if [g for g, _ in ep.skills].count("(has-key)") > 1]
    if retake:  # the key taken again in the episode it was dropped in, and the door opened after
        assert len(retaken) >= 5 and any("(door-open)" in ep.reached for ep in retaken)
        # a landmark taken again is not paid again: no episode scores more than all its subgoals (paid
        # per retake, the best episode here scored 19 by taking the key again and again; meta-SIL kept it)
        assert serial.meta.best_score == len(subgoals.subgoals) == 3
        with pytest.raises(ConfigError, match="protect_landmarks true"):
            merge_overrides(cfg, {"learner": {"protect_landmarks": False}})
    else:
        assert not retaken


def test_retake_cuts_the_achieved_landmarks_at_the_first_undone_one(binding):
    """``retake_undone``: the achieved landmarks stay a prefix of a linearization. A door closed by a later
    skill is taken again from the door, whether the key is still in hand or not (an unlocked door opens
    without it); the key put down, from the key, and the door after it too. Before, the undone landmark
    alone left the achieved list, which no linearization then continued when it was not the last one, and
    the episode ended (13 of 24 failures of a UnlockToUnlock run, benchmarks/eval_trace.py)."""
    cfg = merge_overrides(config(None, 1000), {"learner": {"protect_landmarks": True, "retake_undone": True}})
    learner = build_learner(cfg, make_subgoals(cfg, binding.task), 4)
    key, door, goal = (learner.subgoals.names().index(n) for n in ("(has-key)", "(door-open)", "(at-goal)"))
    for undone, want, first in (((door,), [key], door), ((key,), [], key), ((door, key), [], key)):
        achieved = [key, door]
        learner._retake(achieved, undone)
        assert achieved == want and learner.subgoals.next_subgoals(achieved) == (first,)


@pytest.mark.parametrize("retry", [False, True])
def test_skill_horizons_and_retries_and_the_lockstep_twins_them(binding, retry):
    """``skill_horizon``: once a landmark's skills have succeeded 20 times, a run is cut at twice the 90th
    percentile of their step counts (the corridor's landmarks take a few steps; the fixed cap is 50).
    Alone, a cut run ends the episode; with ``retry_timed_out`` the meta-controller chooses again in the
    same episode. A lockstep of one env is the same run, horizons included."""
    cfg = merge_overrides(config(None, 10_000, seed=3), {"learner": {"skill_horizon": 2.0, "retry_timed_out": retry}})
    subgoals = make_subgoals(cfg, binding.task)
    serial, twin = build_learner(cfg, subgoals, 4), build_learner(cfg, subgoals, 4)
    want, got = serial_and_lockstep(serial, twin, binding, range(400, 520))
    assert got == want
    assert [list(d) for d in serial.horizons.lengths] == [list(d) for d in twin.horizons.lengths]
    horizons = [serial.horizons.horizon(g) for g in range(len(subgoals.subgoals))]
    assert min(horizons) < 50, horizons  # set from the successes, below the fixed cap
    again = [ep for ep in want if len({g for g, _ in ep.skills}) < len(ep.skills)]  # a landmark's skills ran twice
    if retry:  # seed 3: 6 episodes go on after a cut run, and every one of them reaches the goal
        assert len(again) >= 3 and all(ep.success for ep in again)
    else:
        assert not again


def test_retry_epsilon_acts_only_in_frozen_retries_drawn_from_the_episode_seed(binding):
    """``retry_epsilon``: a frozen run after a cut run of the same landmark acts randomly with that
    probability, from a generator of the episode's seed: the same seed gives the same episode, the
    learner's own generator is not drawn from (evaluation changes no learner), and the first run of an
    episode, before any cut, is the greedy one."""
    cfg = merge_overrides(config(None, 1000), {"learner": {"skill_max_steps": 10, "retry_timed_out": True}})
    learner = build_learner(cfg, make_subgoals(cfg, binding.task), 4)  # untrained: its greedy runs are cut
    env = binding.make_env(max_steps=60)
    plain = [learner.greedy_episode(env, binding.labeler, seed) for seed in range(10)]
    before = learner.rng.bit_generator.state
    learner.cfg = dataclasses.replace(learner.cfg, retry_epsilon=1.0)
    noisy = [learner.greedy_episode(env, binding.labeler, seed) for seed in range(10)]
    assert noisy == [learner.greedy_episode(env, binding.labeler, seed) for seed in range(10)]
    assert learner.rng.bit_generator.state == before and noisy != plain
    assert all(len(ep.skills) > 1 for ep in plain)  # every episode retried after its first cut run
    assert [ep.segments[0] for ep in noisy] == [ep.segments[0] for ep in plain]
    with pytest.raises(ConfigError, match="retry_timed_out true"):
        merge_overrides(cfg, {"learner": {"retry_timed_out": False, "retry_epsilon": 0.5}})


def test_retry_other_skill_tries_the_landmarks_other_skills_in_frozen_retries(binding):
    """``retry_other_skill``: after a cut run, the frozen meta-controller leaves out the landmark's skills
    already cut while another remains, so the k = 2 skills of the first landmark each run once before
    either runs again; without it the greedy choice runs the same skill again. Evaluation changes no
    learner, and the switch needs ``retry_timed_out``."""
    cfg = merge_overrides(config(None, 1000), {"learner": {"skill_max_steps": 10, "retry_timed_out": True}})
    learner = build_learner(cfg, make_subgoals(cfg, binding.task), 4)  # untrained: its greedy runs are cut
    env = binding.make_env(max_steps=60)
    plain = [learner.greedy_episode(env, binding.labeler, seed) for seed in range(5)]
    before = learner.rng.bit_generator.state
    learner.cfg = dataclasses.replace(learner.cfg, retry_other_skill=True)
    other = [learner.greedy_episode(env, binding.labeler, seed) for seed in range(5)]
    assert learner.rng.bit_generator.state == before
    for ep in plain:
        assert ep.skills[0] == ep.skills[1]  # the same skill again from where it stopped
    for ep in other:
        assert ep.skills[0][0] == ep.skills[1][0] and ep.skills[0][1] != ep.skills[1][1], ep.skills
    with pytest.raises(ConfigError, match="retry_timed_out true"):
        merge_overrides(cfg, {"learner": {"retry_timed_out": False, "retry_other_skill": True}})


@pytest.mark.parametrize("novelty", [0.0, 0.05])
def test_n_envs_4_stops_and_resumes(binding, tmp_path, novelty):
    """Stopped mid-run (a signal), it checkpoints with its episodes in flight cut short; resumed, it
    finishes the budget, and two resumes of one checkpoint are the same run (with ``label_novelty``,
    ``state_novelty`` and ``epsilon_success_window`` too: their counts are in the checkpoint; and with
    ``frame_stack``, whose stacks start anew with the episodes after the resume)."""
    cfg = merge_overrides(config(4, 2500, seed=3, checkpoint_interval=1000),
                          {"learner": {"label_novelty": novelty, "state_novelty": novelty,
                                       "protect_landmarks": bool(novelty),
                                       "deep": {"epsilon_success_window": 10 if novelty else 0,
                                                "frame_stack": 2 if novelty else 1}}})
    train(cfg, binding, run_dir=RunDir.create(tmp_path / "whole", cfg))
    calls = {"n": 0}

    def stop() -> bool:  # the loop asks once a tick
        calls["n"] += 1
        return calls["n"] > 300
    part = train(cfg, binding, run_dir=RunDir.create(tmp_path / "part", cfg), should_stop=stop)
    assert part.status == "interrupted" and 1200 <= part.env_steps <= 1204
    shutil.copytree(tmp_path / "part", tmp_path / "again")
    done = [train(cfg, binding, run_dir=RunDir.open(tmp_path / name), resume=True) for name in ("part", "again")]
    assert done[0].status == "finished" and done[0].env_steps == 2500
    assert same(done[0]) == same(done[1]) and metrics(tmp_path / "part") == metrics(tmp_path / "again")
    before = metrics(tmp_path / "part")[:3]  # the points at 0, 500, 1000 env steps, before the stop
    assert before == metrics(tmp_path / "whole")[:3]


@pytest.mark.parametrize("what, call, where", [
    ("labeler", r"labeler atom \(door-open\) raised ValueError\('door sensor offline'\)", r"step (\d+)"),
    ("step", r"env\.step raised ValueError\('motor jammed'\)", r"step (\d+)"),
    ("reset", r"env\.reset raised RuntimeError\('map file missing'\)", "reset"),
])
@pytest.mark.parametrize("env_process", [False, True])
def test_n_envs_4_closes_its_episodes_when_the_worlds_code_fails(binding, tmp_path, what, call, where, env_process):
    """The same one line (the call, the episode and step, the user's file:line) and checkpoint with
    the envs in process and in the env process (where the child finds the file:line), and the run
    resumes once the code is fixed."""
    cfg = merge_overrides(config(4, 3000, seed=0), {"learner": {"deep": {"env_process": env_process}}})
    BROKEN.update(what=what, after=1500 if what != "reset" else 30)
    with pytest.raises(RunFailedError) as failed:
        train(cfg, binding, run_dir=RunDir.create(tmp_path / "run", cfg))
    line = str(failed.value)
    found = re.fullmatch(rf"{call} at episode (\d+) \(env \d of 4\), {where} \((tests/)?test_lockstep\.py:\d+\); "
                         r"checkpoint written after episode \d+, (.*) cut short (.*), (\d+) env steps", line)
    assert found and failed.value.saved, line
    assert (tmp_path / "run" / "checkpoint.npz").is_file() and not multiprocessing.active_children()
    BROKEN.update(what=None)  # the code fixed: the run continues from its checkpoint
    resumed = train(cfg, binding, run_dir=RunDir.open(tmp_path / "run"), resume=True)
    assert resumed.status == "finished" and resumed.env_steps == 3000


def test_n_envs_above_1_needs_deep_skills(binding):
    with pytest.raises(ConfigError, match=r"config\.learner\.deep: n_envs > 1 .* expected skills \"deep\""):
        merge_overrides(make_config("keydoor-lockstep", "asgrl"), {"learner": {"deep": {"n_envs": 4}}})
    with pytest.raises(ConfigError, match=r"config\.learner\.deep\.n_envs"):
        config(0, 100)


# ----------------------------------------------------------------------------- the update thread
def test_the_update_thread_makes_the_same_gradient_steps_and_acts_one_update_behind(binding):
    """``deep.update_thread``: fed the same transitions and generator, the network takes the very
    steps it takes without the thread (the batch is drawn before the step leaves), and acting reads
    the weights from before the step in flight until ``sync``."""
    plain = merge_overrides(config(4, 1000, seed=0), {"learner": {"deep": {"learning_starts": 20}}})
    threaded = merge_overrides(plain, {"learner": {"deep": {"update_thread": True}}})
    subgoals = make_subgoals(plain, binding.task)
    a, b = build_learner(plain, subgoals, 4).deep, build_learner(threaded, subgoals, 4).deep
    rng = np.random.default_rng(0)
    states = rng.integers(0, 2, size=(200, 3)).astype("uint8")
    for deep in (a, b):
        for i in range(199):
            deep.ensure(3)
            deep.replay.add(states[i], i % 3, float(i % 7 == 0), states[i + 1], False, False, i % deep.n_heads)
    ra, rb = np.random.default_rng(1), np.random.default_rng(1)
    heads = np.zeros(4, dtype=int)
    with torch_threads(1):
        seen = [a.q_batch(states[:4], heads)]  # what acting reads without the thread, update by update
        for _ in range(30):
            a.learn_steps(4, ra)
            seen.append(a.q_batch(states[:4], heads))
            b.learn_steps(4, rb)
            assert (b.q_batch(states[:4], heads) == seen[-2]).all()  # one update behind: the step is in flight
        b.sync()
    assert not (seen[-1] == seen[-2]).all()  # the weights did move
    assert a.updates == b.updates > 0 and a.last_loss == b.last_loss
    for name, value in a.net.state_dict().items():
        assert torch.equal(value, b.net.state_dict()[name]), name
    assert (a.q_batch(states[:4], heads) == b.q_batch(states[:4], heads)).all()


def test_codes_encoding_learns_the_key_door_corridor(binding):
    """One input per position (the corridor's cell, key, door codes scaled): slower to learn than
    one-hot here (ε = 0.05 at 4,000 steps: 0.0, one-hot 1.0), learnt by 8,000."""
    cfg = merge_overrides(config(4, 8000, seed=0), {"learner": {"deep": {"encoding": "codes"}}})
    result = train(cfg, binding)
    assert result.greedy_success_rate >= 0.8, result.to_json()


def test_the_update_thread_learns_reproducibly_and_resumes(binding, tmp_path):
    cfg = merge_overrides(config(4, 4000, seed=0), {"learner": {"deep": {"update_thread": True}}})
    first = train(cfg, binding, run_dir=RunDir.create(tmp_path / "a", cfg))
    second = train(cfg, binding, run_dir=RunDir.create(tmp_path / "b", cfg))
    assert same(first) == same(second) and metrics(tmp_path / "a") == metrics(tmp_path / "b")
    assert first.greedy_success_rate >= 0.8 and first.epsilon_success_rate >= 0.6, first.to_json()
    assert make_config("keydoor-lockstep", "asgrl").learner.deep.update_thread is False
    with pytest.raises(ConfigError, match="update_thread"):
        merge_overrides(cfg, {"learner": {"deep": {"update_thread": "yes"}}})


# ----------------------------------------------------------------------------- the env process
def test_the_env_process_steps_the_envs_as_they_step_in_process(binding):
    """``deep.env_process``: the envs and the labeler in a child process give the learner the very
    run that the same schedule gives with the envs answered in this process (``fork=False``): the
    same episodes, counters, network weights and meta-controller, with gradient steps on the way."""
    cfg = config(4, 10_000, seed=2)
    subgoals = make_subgoals(cfg, binding.task)
    learners, runs = [build_learner(cfg, subgoals, 4), build_learner(cfg, subgoals, 4)], [[], []]
    spaces = (binding.make_env().observation_space, binding.make_env().action_space)
    processes = [EnvProcess(lambda: binding.make_env(max_steps=200), binding.labeler, 4, spaces, fork=fork)
                 for fork in (False, True)]
    try:
        with torch_threads(1):
            for learner, process, got in zip(learners, processes, runs):
                lock, seeds = Lockstep(learner, list(process.envs), remote_labels, process), iter(range(100, 200))
                for _ in range(800):
                    for i in lock.free():
                        lock.start(i, next(seeds))
                    got.extend(lock.tick(10**6))
                got.extend(lock.cut_all())
    finally:
        for process in processes:
            process.close()
    here, there = learners
    assert runs[0] == runs[1] and len(runs[0]) >= 20 and here.deep.updates > 50
    assert (here.env_steps, here.episodes, here.deep.updates) == (there.env_steps, there.episodes, there.deep.updates)
    for name, value in here.deep.net.state_dict().items():
        assert torch.equal(value, there.deep.net.state_dict()[name]), name
    assert here.meta.q == there.meta.q and here.rng.random() == there.rng.random()
    assert not multiprocessing.active_children()


def test_the_env_process_learns_reproducibly_stops_and_resumes(binding, tmp_path):
    """With the envs in a child process the lockstep learns the corridor, a seed gives one run, a
    stopped run resumes to the budget, and no child outlives its run."""
    cfg = merge_overrides(config(4, 4000, seed=0, checkpoint_interval=1000),
                          {"learner": {"deep": {"env_process": True}}})
    first = train(cfg, binding, run_dir=RunDir.create(tmp_path / "a", cfg))
    second = train(cfg, binding, run_dir=RunDir.create(tmp_path / "b", cfg))
    assert same(first) == same(second) and metrics(tmp_path / "a") == metrics(tmp_path / "b")
    assert first.greedy_success_rate >= 0.8 and first.epsilon_success_rate >= 0.6, first.to_json()
    plain = train(merge_overrides(cfg, {"learner": {"deep": {"env_process": False}}}), binding)
    assert same(plain) != same(first)  # the skills act one update behind: another run
    calls = {"n": 0}

    def stop() -> bool:
        calls["n"] += 1
        return calls["n"] > 600
    part = train(cfg, binding, run_dir=RunDir.create(tmp_path / "part", cfg), should_stop=stop)
    assert part.status == "interrupted" and 1150 <= part.env_steps <= 1204  # a tick: one group of 2 envs
    done = train(cfg, binding, run_dir=RunDir.open(tmp_path / "part"), resume=True)
    assert done.status == "finished" and done.env_steps == 4000
    assert metrics(tmp_path / "part")[:3] == metrics(tmp_path / "a")[:3]  # the points before the stop
    assert not multiprocessing.active_children()


def test_the_env_process_needs_the_lockstep(binding):
    assert make_config("keydoor-lockstep", "asgrl").learner.deep.env_process is False
    with pytest.raises(ConfigError, match=r"config\.learner\.deep\.env_process: needs n_envs > 1"):
        merge_overrides(config(1, 100), {"learner": {"deep": {"env_process": True}}})
    with pytest.raises(ConfigError, match="env_process"):
        merge_overrides(config(4, 100), {"learner": {"deep": {"env_process": "yes"}}})
