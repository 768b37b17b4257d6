"""Deep skills in N envs at once: ASGRL's training episodes in lockstep (``DeepQConfig.n_envs`` > 1).

``Lockstep`` runs one training episode in each of N copies of the env. Every env has its own
episode: reset seed, meta-controller state (the history of chosen skills, the landmarks
achieved, the meta transitions so far), current skill and its segment. What they share is the
learner: the Q-network, replay and SIL buffers, the skill sets with their diversity counts and
ε, the meta-controller's table. A *tick* steps every env with an episode in flight once:

1. each env's skill draws its ε (``DeepSkill.explore``, env by env); the envs that act greedily
   get their Q-values from one batched forward pass (``DeepQ.q_batch``: the skills are heads of
   one torso, so one pass covers every env whatever its skill). With ``deep.recurrent`` every env
   is in that pass, as each env's memory (``_Episode.memory``) takes in every step's observation;
2. the envs step one after another, and each transition goes to the replay buffer, its env's
   segment and the diversity counts, as in the serial loop;
3. one update for the tick's n env steps (``DeepQ.learn_steps``): the serial loop's n /
   ``train_every`` gradient steps as one step over as many batches, so each transition is
   replayed as often per env step as in the serial loop, with fewer, larger gradient steps
   (``train_every`` 4 and 16 envs: one step on 4 x (64 + 32) samples a tick). With
   ``deep.env_process`` the envs live in a child process (``env_process.py``) as two groups
   stepped in turn: a tick sends one group's steps there, makes the update owed while the child
   steps, and takes in the other group's steps (``_tick_piped``);
4. an env whose skill ended finishes it (SIL segment, ε, curriculum), makes its meta transition
   and picks its next skill, or its episode ends (the episode logic of ``hierarchical.py``,
   twinned here env by env; with one env the two are the same run, ``tests/test_lockstep.py``).

Everything is in env order and draws from the learner's one generator, so a seeded run is
reproducible for a fixed N (and ``torch_threads``); it is not the serial run, and runs with
different N differ.

Our own lockstep over N env copies, not ``gymnasium.vector.SyncVectorEnv``: an ASGRL episode
ends when a skill fails, which the env does not know, so each env is reset by us, with the
trainer's seed for that episode, at its own time (SyncVectorEnv resets an env itself when *it*
ends); the labeler reads each env between its steps and ``SubgoalWrapper`` scores the step for
that env's own skill; and a failure of the world's code must stop at the failing env's step
(``episode.Learner``), where SyncVectorEnv would raise from inside a step of all envs.
SyncVectorEnv steps its envs one after another in Python as well, so it would save nothing.

``train`` is the trainer's loop for it (``trainer._train`` hands over when ``n_envs`` > 1):
env steps are counted per tick, evaluation points fall on the first tick at or past them (the
other envs' episodes wait in flight; evaluation changes no learner), and the loop is consistent
(checkpoint, stop, the end of the budget) only with no episode in flight. It gets there by
cutting every episode in flight short at its last step, as a spent step budget does in the
serial loop, at the periodic checkpoints (deterministic, so a run is the same with and without
them), at the budget, on a stop request (Ctrl-C, SIGTERM: the next tick) and when the world's
code fails. A run stopped by a signal and resumed is therefore the uninterrupted run up to the
stop and, after it, the run whose in-flight episodes were cut there; resumed twice, it is the
same run twice. The skill running in a cut episode ends with no verdict: no meta transition, as
the trainer stopped it, not the world (before, each cut taught the meta-controller a failure, N
at every checkpoint, and the policy saved could differ from the one just evaluated).
"""
from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from asg.envs.user_code import GuardedEnv, UserCodeError
from asg.learning.asgrl.config import HierarchicalConfig, TrainConfig
from asg.learning.asgrl.env_process import EnvProcess, remote_labels
from asg.learning.asgrl.episode import EpisodeStats
from asg.learning.asgrl.failures import FailureSite
from asg.learning.asgrl.meta_controller import MetaAction, MetaTransition
from asg.learning.asgrl.subgoals import Labeler, SubgoalWrapper
from asg.learning.results import Status
from asg.learning.run_dir import StageProgress
from asg.learning.torch_state import torch_threads


def n_envs(cfg: TrainConfig) -> int:
    """How many envs the run's training episodes use at once (``DeepQConfig.n_envs``; 1: the serial loop)."""
    learner = cfg.learner
    return learner.deep.n_envs if isinstance(learner, HierarchicalConfig) and learner.skills == "deep" else 1


@dataclass
class _Episode:
    """One env's episode in flight: the serial loop's locals of ``_run_episode`` and ``_run_skill``."""

    number: int  # the run's episode count when it started, plus one (what failure messages name)
    s: np.ndarray  # the encoded observation (n_in,) uint8
    actions: tuple[MetaAction, ...]  # the meta-controller's choices for the next skill
    achieved: list[int] = field(default_factory=list)
    paid: set[int] = field(default_factory=set)  # subgoals whose reward the episode has had
    history: list[MetaAction] = field(default_factory=list)
    trace: list[MetaTransition] = field(default_factory=list)
    segments: list[tuple[int, frozenset, frozenset | None]] = field(default_factory=list)
    steps: int = 0
    score: float = 0.0
    success: bool = False
    # the running skill: subgoal, skill, meta-state it was chosen in, labels at its start, whether
    # it has a replay-time bonus, its SIL segment, and how its last step ended it (reached, env over)
    g: int = -1
    z: int = -1
    meta_state: Hashable = None
    start: frozenset = frozenset()
    bonus: bool = False
    segment: list = field(default_factory=list)
    memory: Any = None  # the recurrent memory of the episode or of the running skill (deep.recurrent_scope)
    ended: tuple[bool, bool] | None = None


class LockstepFailure(Exception):
    """The world's code failed in env ``env`` (its episode ``episode`` at ``step``; 0: the reset);
    every episode in flight has been closed, ``closed`` their stats."""

    def __init__(self, error: UserCodeError, env: int, episode: int, step: int, closed: list[EpisodeStats]) -> None:
        super().__init__(str(error))
        self.error, self.env, self.episode, self.step, self.closed = error, env, episode, step, closed


class Lockstep:
    """Training episodes of one ``HierarchicalLearner`` with deep skills in N envs at once."""

    def __init__(self, learner: Any, envs: list[gym.Env], labeler: Labeler, process: EnvProcess | None = None) -> None:
        cfg = learner.cfg
        self.learner = learner
        self.process = process  # ``deep.env_process``: ``envs`` are its stand-ins, stepped a tick at a time
        self.wrappers = [SubgoalWrapper(env, labeler, learner.subgoals, max_steps=cfg.skill_max_steps,
                                        strict=cfg.strict_ordering, protect=cfg.protect_landmarks,
                                        together=cfg.reach_together)
                         for env in envs]
        self.running: list[_Episode | None] = [None] * len(envs)
        self.started = learner.episodes  # episodes started; all in flight are closed before a checkpoint
        self.owed = 0  # env steps whose update is not made yet (``env_process``: it runs beside the next steps)
        half = (len(envs) + 1) // 2  # the env process's two groups, stepped in turn (``_tick_piped``)
        self.groups = [list(range(half)), list(range(half, len(envs)))]
        self.turn = 0
        self.flying: dict[int, int] = {}  # the actions of the group whose steps are in flight

    # ------------------------------------------------------------------ slots
    def free(self) -> list[int]:
        """The envs with no episode in flight, in order."""
        return [i for i, ep in enumerate(self.running) if ep is None]

    def idle(self) -> bool:
        """No episode in flight (the learner is consistent, as between serial episodes)."""
        return all(ep is None for ep in self.running)

    def start(self, i: int, seed: int) -> None:
        """Reset env ``i`` with ``seed`` and choose its first skill; a ``UserCodeError`` at the reset
        leaves nothing of the episode behind."""
        obs, _ = self.wrappers[i].reset(seed=seed)
        self.started += 1
        ep = _Episode(self.started, self.learner._sid(obs, True), self.learner._actions([]))
        self.running[i] = ep
        running = self._next_skill(i)
        assert running, "no subgoal holds at a reset (SubgoalWrapper.reset), so the first skill has steps to run"

    # ------------------------------------------------------------------ one tick
    def tick(self, limit: int) -> list[EpisodeStats]:
        """Step every env with an episode in flight once (at most ``limit`` of them: the step budget
        left; the others are cut short); returns the episodes that ended. ``LockstepFailure`` when
        the world's code failed, after closing every episode in flight. With the env process, a
        tick is half of that (``_tick_piped``)."""
        if self.process is not None:
            return self._tick_piped(limit)
        active = [i for i, ep in enumerate(self.running) if ep is not None]
        done = [self._close(i) for i in active[max(limit, 0):]]  # the budget ran out (serial: env over)
        active = active[:max(limit, 0)]
        acts = self._act(active)  # 1. ε per env, then one forward pass for the greedy ones
        return done + self._absorb(active, acts, done)  # 2.-4.

    def _tick_piped(self, limit: int) -> list[EpisodeStats]:
        """With the env process the envs are two groups, stepped in turn, so that the child steps one
        while this process makes the update owed and takes in the other's steps: a tick acts for one
        group and sends its steps, makes the update owed, then takes in the steps of the group sent
        the tick before (``_absorb``), which acts again next tick. Steps in flight count against the
        budget (``limit``) before they are taken in."""
        group = self.groups[self.turn]
        self.turn = 1 - self.turn
        flying, self.flying = self.flying, {}
        active = [i for i in group if self.running[i] is not None]
        keep = max(limit - len(flying), 0)
        done = [self._close(i) for i in active[keep:]]
        active = active[:keep]
        acts = self._act(active)
        if active:
            self.process.send_steps([(i, acts[i]) for i in active])
        self.flying = acts
        self.settle()  # while the child steps
        if flying:
            self.process.take_steps()
            done += self._absorb(list(flying), flying, done)
        return done

    def _act(self, active: list[int]) -> dict[int, int]:
        """Each env's action: its skill's ε draw, env by env, then one forward pass for the greedy ones."""
        learner = self.learner
        deep, rng = learner.deep, learner.rng
        acts: dict[int, int] = {}
        for i in active:
            a = self._skill(i).explore(rng, learner._allowed(self.wrappers[i]))
            if a is not None:
                acts[i] = a
        # a recurrent skill takes every step's observation into its run's memory, whichever way it acts
        batch = active if deep.cfg.recurrent else [i for i in active if i not in acts]
        if batch:
            q = deep.q_batch(np.stack([self._ep(i).s for i in batch]), np.array([self._skill(i).head for i in batch]),
                             [self._ep(i).memory for i in batch] if deep.cfg.recurrent else None)
            acts.update((i, int(row.argmax())) for i, row in zip(batch, q) if i not in acts)
        return {i: acts[i] for i in active}

    def _absorb(self, active: list[int], acts: dict[int, int], done: list[EpisodeStats]) -> list[EpisodeStats]:
        """The envs ``active`` step with ``acts`` (in process; with the env process, their results
        taken), the learner takes each transition in, the update for them (now, or owed), then the
        skills that ended; the episodes that ended. ``done``: those closed already this tick."""
        learner = self.learner
        stepped, failure = [], None
        for i in active:  # 2. the envs step, in order; the world's code failing stops the tick there
            try:
                stepped.append((i, self.wrappers[i].step(acts[i])))
            except UserCodeError as exc:
                failure = (i, exc)
                break
        failure_bonus = learner.cfg.diversity.bonus_on_failure
        for i, (obs, reward, terminated, truncated, info) in stepped:
            ep, skills = self._ep(i), learner.skill_sets[self._ep(i).g]
            ep.steps += 1
            s2 = learner._sid(obs, True)
            reached = info["subgoal"] == "reached"
            learner._record_step(self.wrappers[i], acts[i], info)
            reward += learner._novelty(ep.g, info["labels"], s2)
            scored = reached or (terminated and failure_bonus)
            skill = skills.skills[ep.z]
            skill.use_segment(ep.segment)
            skill.observe(ep.s, acts[i], s2, reward, terminated, bonus=scored and ep.bonus, memory=ep.memory)
            if scored:
                skills.on_success(ep.z, s2, obs, reached=reached)
            ep.s = s2
            if terminated or truncated:
                ep.ended = (reached, bool(info.get("env_over")))
        learner.env_steps += len(stepped)
        self.owed += len(stepped)  # 3. the tick's update: now, or with env_process beside the next steps
        if self.process is None:
            self.settle()
        if failure is not None:
            i, error = failure
            episode, step = self._ep(i).number, self._ep(i).steps + 1
            raise LockstepFailure(error, i, episode, step, done + self.cut_all())
        ended = []
        for i in active:  # 4. skills that ended: the next skill, or the episode's end
            ep = self._ep(i)
            if ep.ended is not None:
                reached, env_over = ep.ended
                self._end_skill(i, reached, env_over)
                if not self._next_skill(i):
                    ended.append(self._finish(i))
        return ended

    def cut_all(self) -> list[EpisodeStats]:
        """Close every episode in flight at its last step, as a spent step budget does, and make the
        update owed (the learner is then whole, as between serial episodes); their stats."""
        if self.process is not None:  # steps in flight are forgotten: their episodes end before them
            self.process.drop_steps()
            self.flying = {}
        closed = [self._close(i) for i, ep in enumerate(self.running) if ep is not None]
        self.settle()
        return closed

    def settle(self) -> None:
        """Make the update owed for the env steps so far (``DeepQ.learn_steps``)."""
        if self.owed:
            owed, self.owed = self.owed, 0
            self.learner.deep.learn_steps(owed, self.learner.rng)

    # ------------------------------------------------------------------ the episode logic (hierarchical.py's)
    def _ep(self, i: int) -> _Episode:
        ep = self.running[i]
        assert ep is not None
        return ep

    def _skill(self, i: int) -> Any:
        ep = self._ep(i)
        return self.learner.skill_sets[ep.g].skills[ep.z]

    def _next_skill(self, i: int) -> bool:
        """Choose skills until one has steps to run (True) or the episode is over (False)."""
        learner, ep, wrapper = self.learner, self._ep(i), self.wrappers[i]
        while ep.actions:
            ep.meta_state = learner._meta_state(ep.history, ep.achieved, ep.s)
            ep.g, ep.z = learner.meta.choose(ep.meta_state, ep.actions, learner.rng)
            ep.start, ep.ended = wrapper.labels, None
            if wrapper.begin(ep.g, ep.achieved, learner._horizon(ep.g)):  # its landmark holds: reached in no step
                self._after_skill(i, True, False)
                continue
            skills = learner.skill_sets[ep.g]
            ep.bonus = skills.bonus_fn(ep.z) is not None
            ep.memory = learner.deep.run_memory(ep.memory)
            skills.on_rollout(ep.z)
            return True
        return False

    def _end_skill(self, i: int, reached: bool, env_over: bool, cut: bool = False) -> None:
        """The running skill ended: its segment closes (SIL, ε, curriculum), then the meta transition
        (none when ``cut``: the trainer stopped the skill, not the world)."""
        ep = self._ep(i)
        skills = self.learner.skill_sets[ep.g]
        skills.skills[ep.z].use_segment(ep.segment)
        skills.on_segment_end(ep.z, reached)
        self.learner._record_run(ep.g, self.wrappers[i].steps, reached)
        ep.segment = []
        self._after_skill(i, reached, env_over, cut)

    def _after_skill(self, i: int, reached: bool, env_over: bool, cut: bool = False) -> None:
        learner, ep, wrapper = self.learner, self._ep(i), self.wrappers[i]
        labels = wrapper.labels
        ep.segments.append((ep.g, ep.start, labels if reached else None))
        ep.history.append((ep.g, ep.z))
        if cut:
            return
        reward = learner._reached(ep.achieved, ep.g, wrapper, ep.paid) if reached else 0.0
        ep.score += reward
        ep.success = learner.subgoals.goal_reached(labels)
        ep.actions = learner._next_actions(ep.achieved, reached, ep.success, env_over, wrapper)
        t = MetaTransition(ep.meta_state, (ep.g, ep.z), reward, learner._meta_state(ep.history, ep.achieved, ep.s),
                           ep.actions, terminal=not ep.actions)
        ep.trace.append(t)
        learner.meta.update(t, learner.rng)

    def _close(self, i: int) -> EpisodeStats:
        """End env ``i``'s episode now: a skill that ended on its last step ends as it did; a running
        one is cut, its segment closed with no verdict (no meta transition: the trainer stopped it,
        not the world, as the serial loop's spent budget); either way the episode is over."""
        ended = self._ep(i).ended
        self._end_skill(i, ended is not None and ended[0], True, cut=ended is None)
        return self._finish(i)

    def _finish(self, i: int) -> EpisodeStats:
        learner, ep = self.learner, self._ep(i)
        learner.meta.end_episode(ep.trace, ep.score, ep.success)
        learner.episodes += 1
        self.running[i] = None
        names = learner.subgoals.names()
        return EpisodeStats(ep.steps, ep.success, tuple(names[g] for g in ep.achieved),
                            tuple((names[g], z) for g, z in ep.history), (),
                            tuple((names[g], start, end) for g, start, end in ep.segments))


# ---------------------------------------------------------------------------------- the trainer's loop
@dataclass
class Loop:
    """What ``trainer._train`` hands the lockstep loop: the run, its state and its closures."""

    cfg: TrainConfig
    learner: Any
    labeler: Labeler
    env: GuardedEnv  # the run's training env, the first of the N
    make_env: Callable[[], GuardedEnv]  # another copy of it
    state: Any  # trainer.TrainerState
    site: FailureSite
    record_eval: Callable[[], float]
    checkpoint: Callable[[], None]
    progress: StageProgress | None
    should_stop: Callable[[], bool]
    stage: str  # the progress stage's name
    after_episode: Callable[[EpisodeStats], None] | None = None


def train(loop: Loop) -> None:
    """Train until the budget is spent, the run is solved or a stop is requested; sets
    ``loop.state.status`` and leaves no episode in flight (module docstring)."""
    cfg, learner, state = loop.cfg, loop.learner, loop.state
    process = None
    if cfg.learner.deep.env_process:  # the N envs in a child process (env_process.py)
        process = EnvProcess(loop.make_env, loop.labeler, n_envs(cfg),
                             (loop.env.observation_space, loop.env.action_space))
        lock = Lockstep(learner, list(process.envs), remote_labels, process)
    else:
        envs = [loop.env] + [loop.make_env() for _ in range(n_envs(cfg) - 1)]
        lock = Lockstep(learner, envs, loop.labeler)

    def count(stats: list[EpisodeStats]) -> None:
        for one in stats:
            state.recent = (state.recent + [one.success])[-20:]
            if loop.after_episode is not None:
                loop.after_episode(one)

    with torch_threads(cfg.learner.deep.torch_threads):
        try:
            while True:
                if state.status == Status.RUNNING:
                    if learner.env_steps >= cfg.total_steps:
                        state.status = Status.FINISHED.value
                    elif loop.should_stop():
                        state.status = Status.INTERRUPTED.value
                if state.status != Status.RUNNING:
                    count(lock.cut_all())
                    break
                if learner.env_steps - state.last_checkpoint >= cfg.checkpoint_interval:
                    count(lock.cut_all())
                    loop.checkpoint()
                _start_free(lock, loop)
                finished = lock.tick(cfg.total_steps - learner.env_steps)
                count(finished)
                if finished and loop.progress is not None:
                    loop.progress(loop.stage, learner.env_steps, cfg.total_steps,
                                  f"success {state.rows[-1]['success_rate']:.2f}" if state.rows else "")
                if learner.env_steps >= state.next_eval:
                    _evaluate(lock, loop, count)
        except LockstepFailure as failed:
            count(failed.closed)
            raise _report(failed, loop, len(lock.wrappers)) from failed.error
        except KeyboardInterrupt:  # a second signal: consistent only between episodes
            if lock.idle():  # (no steps in flight either)
                lock.settle()
                state.status = Status.INTERRUPTED.value
                loop.checkpoint()
            raise
        finally:
            learner.deep.sync()  # a step in flight (``deep.update_thread``) ends on the run's torch threads
            if process is not None:
                process.close()
    loop.site.before_episode()  # the final evaluations' failures count their episodes from here


def _start_free(lock: Lockstep, loop: Loop) -> None:
    """A new episode in every free env, each with the next seed of the trainer's generator."""
    for i in lock.free():
        before = loop.state.rng.bit_generator.state
        seed = int(loop.state.rng.integers(2**31 - 1))
        try:
            lock.start(i, seed)
        except UserCodeError as exc:  # the reset failed: its seed is drawn again on resume
            number = lock.started + 1
            closed = lock.cut_all()
            loop.state.rng.bit_generator.state = before
            raise LockstepFailure(exc, i, number, 0, closed) from exc


def _evaluate(lock: Lockstep, loop: Loop, count: Callable[[list[EpisodeStats]], None]) -> None:
    """The evaluation point now due; on success 1.0 often enough in a row, the run is solved."""
    loop.site.before_episode()  # an evaluation failure counts its episodes from here (failures.py)
    lock.settle()  # the policy evaluated is the one after every env step so far
    try:
        loop.record_eval()
    except UserCodeError as exc:  # evaluations change no learner: close the episodes, then as serial
        count(lock.cut_all())
        raise loop.site.failed(exc) from exc
    cfg = loop.cfg
    if cfg.early_stop_evals and loop.state.streak >= cfg.early_stop_evals:
        loop.state.status = Status.SOLVED.value


def _report(failed: LockstepFailure, loop: Loop, n: int) -> Exception:
    """The one line of a failure in a training episode (``FailureSite.report``), checkpoint written."""
    learner = loop.learner
    where = "reset" if failed.step == 0 else f"step {failed.step}"
    at = f"episode {failed.episode} (env {failed.env + 1} of {n}), {where}"
    others = len(failed.closed) - (failed.step > 0)
    if failed.step == 0:
        saved = (f"after episode {learner.episodes}, the {others} in flight cut short at their last step "
                 f"(episode {failed.episode}'s seed is drawn again)")
    else:
        cut = f"after step {failed.step - 1}" if failed.step > 1 else "before its first step"
        saved = (f"after episode {learner.episodes}, episode {failed.episode} cut short {cut} and the {others} "
                 "others in flight at their last step")
    return loop.site.report(failed.error, at, saved)
