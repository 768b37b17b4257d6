"""The lockstep's envs in a process of their own (``DeepQConfig.env_process``; ours).

In the lockstep loop (``lockstep.py``) a tick is the envs' steps, each with its labeler call, then
one gradient step. Both are Python-bound work on one core: MiniGrid's step and the labeler are pure
Python, and a gradient step over a few hundred rows is mostly torch's dispatch, which holds the GIL,
so a thread cannot overlap them (``deep.update_thread`` measured no gain, docs/asgrl.md). A second
*process* can. ``EnvProcess`` keeps the N envs and the labeler in a child process. The lockstep
splits them into two groups stepped in turn: while the child steps one group, the learner makes
the update owed and takes in the other group's steps (``Lockstep._tick_piped``). What the learner
sees of each env is what it sees with the envs in process: the observation, reward, ends and info,
and the labeler's atoms after every reset and step; the subgoal test (``SubgoalWrapper``) stays in
the learner's process, reading those atoms.

What changes is the schedule: a tick steps half the envs, and a group acts on the weights before
the update for the steps taken in just before it (as with ``update_thread``, one update behind).
The update owed is made before anything reads the learner whole: an evaluation, a checkpoint, the
end of the run; the steps in flight at a checkpoint or a stop are forgotten, their episodes cut
before them. A seeded run is reproducible for a fixed ``n_envs``; it is not the run with
``env_process`` off. ``EnvProcess(fork=False)`` answers the same requests in this process, the same
schedule without a child: the tests hold the two runs equal, weights and all.

The child is forked, so the world's env factory and labeler (a closure, a user's module) need no
pickling. It ignores SIGINT and SIGTERM (the trainer stops the run, then closes the child) and
exits when its pipe closes. A failure of the world's code in the child (``UserCodeError``) comes
back as a ``RemoteUserCodeError`` with the same call, step, message and user's ``file:line``
(found in the child, where the traceback lives), and the child stops that batch of steps at the
failing env as the lockstep does in process. Any other exception in the child ends the run with
the child's traceback.
"""
from __future__ import annotations

import multiprocessing
import signal
import traceback
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any

import gymnasium as gym

from asg.envs.user_code import UserCodeError
from asg.learning.asgrl.subgoals import Labeler
from asg.planning.task import Atom

Step = tuple[Any, float, bool, bool, dict[str, Any], frozenset[Atom]]  # obs, reward, ends, info, atoms


class RemoteUserCodeError(UserCodeError):
    """A ``UserCodeError`` raised in the env process: its message, call and step, with ``where`` and
    ``what`` as the child found them (the original exception and its traceback stay there)."""

    def __init__(self, message: str, *, call: str, step: int | None, where: str, what: str) -> None:
        super().__init__(message, call=call, step=step)
        self._where, self._what = where, what

    def where(self) -> str:
        return self._where

    def what(self) -> str:
        return self._what


class EnvProcessError(RuntimeError):
    """The env process itself failed (not the world's code): the child's traceback is the message."""


def _portable(exc: UserCodeError) -> tuple[str, str, int | None, str, str]:
    return str(exc), exc.call, exc.step, exc.where(), exc.what()


class _Envs:
    """The envs and the labeler, answering requests: in the child, or in this process (``fork=False``)."""

    def __init__(self, make_env: Callable[[], gym.Env], labeler: Labeler, n: int) -> None:
        self.envs = [make_env() for _ in range(n)]
        self.labeler = labeler

    def _atoms(self, env: gym.Env) -> frozenset[Atom]:
        labels = self.labeler(env)
        return labels if isinstance(labels, frozenset) else frozenset(labels)

    def answer(self, request: tuple) -> tuple[str, Any]:
        """``("reset", env, seed)`` -> the observation, info and atoms; ``("step", [(env, action), ...])``
        -> each env's step in order, stopping at the first failure of the world's code."""
        try:
            if request[0] == "reset":
                _, i, seed = request
                obs, info = self.envs[i].reset(seed=seed)
                return "ok", (obs, info, self._atoms(self.envs[i]))
            done: list[Step] = []
            for i, a in request[1]:
                try:
                    obs, reward, terminated, truncated, info = self.envs[i].step(a)
                    done.append((obs, reward, terminated, truncated, info, self._atoms(self.envs[i])))
                except UserCodeError as exc:
                    return "ok", (done, _portable(exc))
            return "ok", (done, None)
        except UserCodeError as exc:  # at a reset
            return "fail", _portable(exc)


def _serve(conn: Connection, make_env: Callable[[], gym.Env], labeler: Labeler, n: int) -> None:
    """The child: N envs, answering requests until the pipe closes or says ``close``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        envs = _Envs(make_env, labeler, n)
    except Exception:  # noqa: BLE001  (reported to the parent, which raises it)
        conn.send(("crash", traceback.format_exc()))
        return
    conn.send(("ready", None))
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request[0] == "close":
            return
        try:
            conn.send(envs.answer(request))
        except Exception:  # noqa: BLE001  (reported to the parent, which raises it)
            conn.send(("crash", traceback.format_exc()))


def _raise(failure: tuple[str, str, int | None, str, str]) -> None:
    message, call, step, where, what = failure
    raise RemoteUserCodeError(message, call=call, step=step, where=where, what=what)


class EnvProcess:
    """``n`` envs from ``make_env`` and the ``labeler`` in a forked child; ``envs`` are their stand-ins.

    Requests are answered in the order sent. A ``reset`` sent while steps are in flight is answered
    after them, so ``reset`` first hands those steps' results to their envs.
    With ``fork=False`` the same requests are answered in this process when their answer is asked
    for: the same schedule without a child (the tests compare the two)."""

    def __init__(self, make_env: Callable[[], gym.Env], labeler: Labeler, n: int,
                 spaces: tuple[gym.Space, gym.Space], fork: bool = True) -> None:
        self._local: _Envs | None = None
        self._process: Any = None
        self._sent: list[tuple] = []  # requests not answered yet (fork=False: not run yet), in order
        self.in_flight: list[tuple] = []  # the batches of steps sent and not taken, oldest first
        self.envs = [RemoteEnv(self, i, spaces) for i in range(n)]
        if not fork:
            self._local = _Envs(make_env, labeler, n)
            return
        context = multiprocessing.get_context("fork")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child, make_env, labeler, n), daemon=True,
                                        name="asg-envs")
        self._process.start()
        child.close()
        self._sent.append(("ready",))
        self._next()

    def _send(self, request: tuple) -> None:
        if self._local is None:
            self._conn.send(request)
        self._sent.append(request)

    def _next(self) -> Any:
        """The answer to the oldest request; a step batch's results go to their envs."""
        request = self._sent.pop(0)
        if self._local is not None:
            kind, value = self._local.answer(request)
        else:
            try:
                kind, value = self._conn.recv()
            except (EOFError, OSError) as exc:
                raise EnvProcessError(f"the env process ended (exit code {self._process.exitcode})") from exc
        if kind == "crash":
            raise EnvProcessError(f"the env process failed:\n{value}")
        if request[0] == "step":
            done, failure = value
            order = [i for i, _ in request[1]]
            for i, result in zip(order, done):
                self.envs[i].result = result
            if failure is not None:
                self.envs[order[len(done)]].failure = failure
            return None
        if kind == "fail":
            _raise(value)
        return value

    def reset(self, i: int, seed: int | None) -> tuple[Any, dict[str, Any], frozenset[Atom]]:
        """Reset env ``i`` (a ``RemoteUserCodeError`` when the world's code fails)."""
        self._send(("reset", i, seed))
        while self._sent[0][0] != "reset":
            self._next()  # the steps in flight, sent before
        return self._next()

    def send_steps(self, actions: Sequence[tuple[int, int]]) -> None:
        """Start the envs' steps, ``(env, action)`` in order; ``take_steps`` collects them, batch by
        batch in the order sent."""
        request = ("step", [(i, int(a)) for i, a in actions])
        self._send(request)
        self.in_flight.append(request)

    def take_steps(self) -> None:
        """Wait for the oldest batch of steps in flight and hand each env its result; the envs past a
        failure of the world's code get none, and the failing env's ``step`` raises it."""
        request = self.in_flight.pop(0)
        while any(sent is request for sent in self._sent):
            self._next()

    def drop_steps(self) -> None:
        """Take every batch in flight and forget it: their envs' episodes end before those steps
        (the lockstep cuts them there), and each env is reset before it steps again."""
        while self.in_flight:
            order = [i for i, _ in self.in_flight[0][1]]
            self.take_steps()
            for i in order:
                self.envs[i].result = self.envs[i].failure = None

    def close(self) -> None:
        """End the child (it is a daemon as well: it never outlives the run)."""
        if self._process is None:
            return
        if self._process.is_alive():
            try:
                self._conn.send(("close",))
            except (EOFError, OSError):
                pass
            self._process.join(timeout=5)
            if self._process.is_alive():
                self._process.kill()
        self._conn.close()


class RemoteEnv(gym.Env):
    """One of the child's envs, as the lockstep's ``SubgoalWrapper`` sees it: ``reset`` asks the child,
    ``step`` returns the result of ``EnvProcess.send_steps``/``take_steps``; ``labels`` holds the
    labeler's atoms after the last of them (read by ``remote_labels``)."""

    def __init__(self, process: EnvProcess, index: int, spaces: tuple[gym.Space, gym.Space]) -> None:
        self.process, self.index = process, index
        self.observation_space, self.action_space = spaces
        self.labels: frozenset[Atom] = frozenset()
        self.result: Step | None = None
        self.failure: tuple[str, str, int | None, str, str] | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, info, self.labels = self.process.reset(self.index, seed)
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self.failure is not None:
            failure, self.failure = self.failure, None
            _raise(failure)
        assert self.result is not None, "step before EnvProcess.send_steps/take_steps"
        (obs, reward, terminated, truncated, info, self.labels), self.result = self.result, None
        return obs, reward, terminated, truncated, info


def remote_labels(env: gym.Env) -> frozenset[Atom]:
    """The labeler of a ``RemoteEnv``: the atoms the child's labeler found after its last reset or step."""
    assert isinstance(env, RemoteEnv)
    return env.labels
