"""A run directory: resolved config, metrics CSV, learning curve, checkpoint, result, lock.

Layout of ``runs/<domain>-<method>-seed<N>/``::

    config.json          the resolved TrainConfig (config_to_dict)
    subgoals.json        the subgoals the learner was built from (``SubgoalSet.to_json``); eval reads it
    landmarks.json       the model's landmark graph (``LandmarkGraph.to_json``; not for Plan-HRL)
    metrics.csv          one row per evaluation point (rewritten atomically at each point): success,
                         and reached_<landmark>, the share of the point's episodes reaching each landmark
    learning_curve.png   success rate (the curve's protocol: greedy or ε-greedy) and the landmarks reached,
                         against env steps
    model_hints.json     what the skills saw, as ranked PDDL edits (``asgrl.model_hints``; hierarchical
                         learners only)
    checkpoint.npz       learner + trainer state in asg's one checkpoint format
                         (``asg.learning.checkpoint``: JSON tree + arrays, SHA-256 sealed, no pickle)
    checkpoint.json      a description of the checkpoint (format, version, env steps, SHA-256)
    result.json          {"domain", "method", "seed", "success_rate", "eval_episodes",
                          "env_steps", "wall_seconds", ...}
    .lock                held (``fcntl.flock``) by the one process writing the run; it names that
                         process (pid, host, start time). The OS drops the lock when it exits.

Loading a checkpoint runs no code, checks its seal, and checks that ``config.json`` names the
domain, method, seed, model and learner the checkpoint was trained with.
"""
from __future__ import annotations

import csv
import io
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from asg.learning import checkpoint as ckpt
from asg.learning.asgrl import model_hints
from asg.learning.asgrl.config import TrainConfig, config_from_dict, config_to_dict
from asg.learning.asgrl.evaluation import REACHED
from asg.learning.asgrl.subgoals import SubgoalSet
from asg.learning.atomic import atomic_write
from asg.learning.errors import CheckpointError, ConfigError, DomainError
from asg.learning.registry import bind_domain, build_learner, make_subgoals
from asg.planning.hints import HintReport

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: runs are not locked
    fcntl = None  # type: ignore[assignment]

CHECKPOINT_VERSION = ckpt.VERSION
CHECKPOINT_KIND = "asgrl-trainer"
CONFIG, METRICS, CURVE = "config.json", "metrics.csv", "learning_curve.png"
CHECKPOINT, CHECKPOINT_META, RESULT, LOCK = "checkpoint.npz", "checkpoint.json", "result.json", ".lock"
SUBGOALS, LANDMARKS, MODEL_HINTS = "subgoals.json", "landmarks.json", "model_hints.json"
IDENTITY = ("domain", "method", "seed", "model", "learner")  # what config.json and a checkpoint share


def atomic_write_json(path: Path, obj: Any) -> None:
    """JSON with sorted keys, written atomically."""
    atomic_write(path, (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode())


def write_metrics(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Rewrite the CSV ``path`` from all rows so far, atomically (columns: the union, in first-seen order)."""
    if not rows:
        return
    fields: list[str] = []
    for row in rows:
        fields.extend(k for k in row if k not in fields)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n", restval="")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(Path(path), buf.getvalue().encode())


def read_metrics(path: Path) -> list[dict[str, str]]:
    """The rows of a metrics CSV (strings); [] when absent."""
    path = Path(path)
    if not path.is_file():
        return []
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def default_run_path(root: str | Path, domain: str, method: str, seed: int) -> Path:
    """``root/<domain>-<method>-seed<N>``, suffixed ``-2``, ``-3`` … when taken."""
    base = Path(root) / f"{domain}-{method}-seed{seed}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def describe_files(folder: str | Path) -> str:
    """``folder: a, b, c`` for the files a run or stage wrote there (sorted; folders end in /)."""
    try:
        names = [p.name + ("/" if p.is_dir() else "") for p in sorted(Path(folder).iterdir())
                 if not p.name.startswith(".")]
    except OSError:
        return str(folder)
    return f"{folder}: {', '.join(names)}" if names else str(folder)


class RunLock:
    """The writer's lock on a run folder: ``fcntl.flock`` on ``<folder>/.lock``.

    ``acquire`` refuses (``CheckpointError`` naming the holder's pid, host and start time) while
    another process, or another ``RunLock`` of this one, holds the folder. A lock left by a process
    that died does not block: the OS released it with the process. Re-entrant per object.
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self._fd: int | None = None
        self._made_folder = False

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def acquire(self) -> RunLock:
        """Take the lock (a no-op when already held by this object)."""
        if self._fd is not None or fcntl is None:
            return self
        self._made_folder = not self.folder.exists()
        self.folder.mkdir(parents=True, exist_ok=True)
        file = self.folder / LOCK
        fd = os.open(file, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read_holder(fd)
            os.close(fd)
            raise CheckpointError(f"{self.folder}: in use by another run ({holder}, see {file}); wait for it "
                                  "to finish or choose another folder") from None
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        """Drop the lock (a no-op when not held)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)  # nobody holds it now: a reader sees no stale holder
            if self._made_folder:  # a run that failed before writing anything leaves no folder behind
                try:  # still under the lock, so no other writer is between these two steps
                    if [p.name for p in self.folder.iterdir()] == [LOCK]:
                        (self.folder / LOCK).unlink()
                        self.folder.rmdir()
                except OSError:
                    pass
        finally:
            os.close(fd)  # closing the descriptor releases the flock

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def __del__(self) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
        return f"pid {info['pid']} on {info['host']}, started {info['started']}"
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return "holder unknown"


StageProgress = Callable[[str, int, int, str], None]
"""``progress(stage, count, total, note)``: how far a long stage is (the CLI draws it; the library
never prints). ``stage`` names the loop (e.g. "goal policy"), ``count`` of ``total`` units are done."""


class StopOnSignal:
    """Within the block, SIGINT (Ctrl-C) and SIGTERM become a request to stop at the loop's next safe
    point (an episode, cycle, batch or iteration boundary) instead of an exception in the middle of
    an update, so the checkpoint written there resumes exactly. A second signal raises
    ``KeyboardInterrupt`` at once. Outside the main thread it changes nothing (``requested`` stays
    False). Calling the object returns ``requested``, so it serves as a ``should_stop``.
    """

    SIGNALS = ("SIGINT", "SIGTERM")

    def __init__(self) -> None:
        self.requested = False
        self._old: dict[int, Any] = {}

    def _handler(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __enter__(self) -> StopOnSignal:
        if threading.current_thread() is threading.main_thread():
            for name in self.SIGNALS:
                sig = getattr(signal, name)
                self._old[sig] = signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old = {}

    def __call__(self) -> bool:
        return self.requested


def identity(cfg: TrainConfig) -> dict[str, Any]:
    """What a checkpoint must share with the config it is resumed or evaluated under."""
    data = config_to_dict(cfg)
    return {key: json.loads(json.dumps(data[key])) for key in IDENTITY}  # tuples as lists, as in JSON


def recorded_identity(meta: dict[str, Any], cfg: TrainConfig) -> dict[str, Any]:
    """A checkpoint's ``IDENTITY`` values read through today's typed config: a field added to the
    config after the checkpoint was written takes its default, which is the behaviour the
    checkpoint's run had (every addition is a switch whose default keeps what was there). A
    recorded value today's config refuses is returned as it is, to be reported as a mismatch."""
    data = config_to_dict(cfg)
    data.update({key: meta[key] for key in IDENTITY if key in meta})
    try:
        return identity(config_from_dict(data))
    except ConfigError:
        return meta


class RunDir:
    """One run's folder (see the module docstring for its files)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = RunLock(self.path)

    @classmethod
    def create(cls, path: str | Path, cfg: TrainConfig, extra: dict[str, Any] | None = None) -> RunDir:
        """A new run folder holding ``config.json``, locked for this process; refuses a folder that
        already holds a run or that another process is writing."""
        run = cls(path)
        run.lock()
        try:
            if (run.path / CHECKPOINT).exists() or (run.path / RESULT).exists():
                raise ConfigError(f"{run.path}: already holds a run ({CHECKPOINT} or {RESULT}); resume it "
                                  "or choose another folder")
            payload = {"config": config_to_dict(cfg), **(extra or {})}
            atomic_write_json(run.path / CONFIG, payload)
        except BaseException:
            run.unlock()
            raise
        return run

    @classmethod
    def open(cls, path: str | Path) -> RunDir:
        """An existing run folder (not locked: reading needs no lock); ``CheckpointError`` when it
        is not one."""
        run = cls(path)
        if not (run.path / CONFIG).is_file():
            raise CheckpointError(f"{run.path}: not a run directory (no {CONFIG})")
        return run

    # -- what every stage's folder has (ASGRL runs and the Fetch stages alike) --------------------
    def write_config(self, payload: dict[str, Any]) -> None:
        """``config.json``: the resolved config of the stage and the identity fields of its checkpoint."""
        atomic_write_json(self.path / CONFIG, payload)

    def read_config(self, what: str = "a run config") -> dict[str, Any]:
        """``config.json`` as a dict (``CheckpointError`` naming the file when missing or not JSON)."""
        data = ckpt.read_json(self.path / CONFIG, what)
        if not isinstance(data, dict):
            raise CheckpointError(f"{self.path / CONFIG}: not {what}")
        return data

    def save_state(self, kind: str, tree: Any, meta: dict[str, Any], describe: dict[str, Any] | None = None,
                   name: str = CHECKPOINT) -> str:
        """A checkpoint in asg's one format (``checkpoint.npz``), then its description (``checkpoint.json``:
        format, version, kind, SHA-256 and ``describe``), each written atomically; the SHA-256."""
        sha = ckpt.save(self.path / name, kind, tree, meta)
        atomic_write_json(self.path / CHECKPOINT_META, {"format": ckpt.FORMAT, "version": CHECKPOINT_VERSION,
                                                        "kind": kind, **(describe or {}), "sha256": sha})
        return sha

    def load_state(self, kind: str, identity: Sequence[str], expected: dict[str, Any] | None = None,
                   defaults: dict[str, Any] | None = None, name: str = CHECKPOINT,
                   recorded: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> ckpt.Checkpoint:
        """The checkpoint of ``kind`` after every check: present, of this version, sealed, and agreeing on
        the ``identity`` fields with ``expected`` (default: ``config.json``'s top level, ``defaults``
        filling fields an older config.json lacks); ``recorded`` maps the checkpoint's own meta to the
        values compared (e.g. fields added since it was written, at their defaults)."""
        file = self.path / name
        if not file.is_file():
            raise CheckpointError(f"{file}: missing (nothing to resume or evaluate)")
        if (self.path / CHECKPOINT_META).is_file():
            desc = self._read_json(CHECKPOINT_META)
            if not isinstance(desc, dict) or desc.get("version") != CHECKPOINT_VERSION:
                raise CheckpointError(f"{self.path / CHECKPOINT_META}: unsupported checkpoint version "
                                      f"(expected {CHECKPOINT_VERSION})")
        loaded = ckpt.load(file, kind)
        saved = expected if expected is not None else {**(defaults or {}), **self.read_config()}
        meta = recorded(loaded.meta) if recorded is not None else loaded.meta
        ckpt.check_agrees(self.path / CONFIG, saved, file, meta, tuple(identity))
        return loaded

    def lock(self) -> None:
        """Hold the folder's writer lock (``CheckpointError`` naming the holder when taken)."""
        self._lock.acquire()

    def unlock(self) -> None:
        """Release the writer lock (a no-op when not held)."""
        self._lock.release()

    def __enter__(self) -> RunDir:
        self.lock()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.unlock()

    def _read_json(self, name: str) -> Any:
        return ckpt.read_json(self.path / name)

    def config(self) -> TrainConfig:
        """The saved, resolved config."""
        data = self._read_json(CONFIG)
        try:
            return config_from_dict(data.get("config") if isinstance(data, dict) else None,
                                    str(self.path / CONFIG))
        except ConfigError as err:
            raise CheckpointError(str(err)) from None

    def write_metrics(self, rows: Sequence[dict[str, Any]]) -> None:
        """Rewrite ``metrics.csv`` from all rows so far."""
        write_metrics(self.path / METRICS, rows)

    def read_metrics(self) -> list[dict[str, str]]:
        """The rows of ``metrics.csv`` (strings), [] when absent."""
        return read_metrics(self.path / METRICS)

    def save_checkpoint(self, cfg: TrainConfig, learner: Any, state: dict[str, Any]) -> None:
        """An ASGRL run's learner and loop state (``state``, plain data)."""
        steps = int(learner.env_steps)
        self.save_state(CHECKPOINT_KIND, {"learner": learner.state_dict(), "state": state},
                        {**identity(cfg), "env_steps": steps}, {"env_steps": steps})

    def load_checkpoint(self, cfg: TrainConfig | None = None, binding: Any = None,
                        subgoals: SubgoalSet | None = None) -> dict[str, Any]:
        """``{"learner", "state", "meta"}``: the learner rebuilt from the run's config and its saved
        state, the loop's state (plain data) and the checkpoint's meta. ``CheckpointError`` when the
        checkpoint is missing, corrupt or foreign, or disagrees with ``config.json`` (or ``cfg``)."""
        file = self.path / CHECKPOINT
        saved = self.config()
        loaded = self.load_state(CHECKPOINT_KIND, IDENTITY, identity(saved),
                                 recorded=lambda meta: recorded_identity(meta, saved))
        tree = loaded.tree
        ckpt.require(isinstance(tree, dict) and isinstance(tree.get("learner"), dict)
                     and isinstance(tree.get("state"), dict), file, "unexpected content")
        if subgoals is None:
            subgoals = self.subgoals(saved, binding)
        try:
            learner = build_learner(saved, subgoals, int(tree["learner"]["n_actions"]))
            learner.load_state_dict(tree["learner"])
        except (KeyError, ValueError, TypeError, AttributeError, IndexError) as err:
            raise CheckpointError(f"{file}: does not fit the run's config and model ({err})") from None
        return {"learner": learner, "state": tree["state"], "meta": loaded.meta}

    def write_subgoals(self, subgoals: SubgoalSet, landmarks: dict[str, Any] | None = None) -> None:
        """``subgoals.json`` (what the learner is built from) and, for landmark subgoals, ``landmarks.json``
        (the landmark graph of the model, ``LandmarkGraph.to_json``)."""
        atomic_write_json(self.path / SUBGOALS, subgoals.to_json())
        if landmarks is not None:
            atomic_write_json(self.path / LANDMARKS, landmarks)

    def subgoals(self, cfg: TrainConfig | None = None, binding: Any = None) -> SubgoalSet:
        """The subgoals the run trained on: ``subgoals.json``, or (a run folder older than that file)
        computed again from the run's model."""
        if (self.path / SUBGOALS).is_file():
            try:
                return SubgoalSet.from_json(self._read_json(SUBGOALS), str(self.path / SUBGOALS))
            except DomainError as err:
                raise CheckpointError(str(err)) from None
        cfg = cfg or self.config()
        binding = binding or bind_domain(cfg.domain, cfg.model)
        return make_subgoals(cfg, binding.task)

    def write_result(self, result: dict[str, Any]) -> None:
        """Write ``result.json``."""
        atomic_write_json(self.path / RESULT, result)

    def read_result(self) -> dict[str, Any]:
        """Read ``result.json``."""
        return self._read_json(RESULT)

    def write_model_hints(self, report: HintReport, run: dict[str, Any]) -> None:
        """Write ``model_hints.json`` (``model_hints.to_file``: schema, version, the run, the report)."""
        atomic_write_json(self.path / MODEL_HINTS, model_hints.to_file(report, run))

    def has_model_hints(self) -> bool:
        """Whether the run left ``model_hints.json``."""
        return (self.path / MODEL_HINTS).is_file()

    def read_model_hints(self) -> model_hints.RunHints:
        """``model_hints.json``, checked (schema, version, content); ``CheckpointError`` when absent or
        not one."""
        path = self.path / MODEL_HINTS
        if not path.is_file():
            raise CheckpointError(f"{self.path}: no {MODEL_HINTS} (a run of a hierarchical learner writes it at its "
                                  "end; runs older than it have none)")
        data = self._read_json(MODEL_HINTS)
        return model_hints.RunHints(str(self.path), data, model_hints.from_file(data, str(path)))

    def plot_curve(self, rows: Sequence[dict[str, Any]], title: str, protocol: str = "greedy") -> Path:
        """Draw ``learning_curve.png``: success against env steps, and beside it the share of episodes
        reaching each landmark (the ``reached_<landmark>`` columns); ``protocol`` names the evaluation."""
        from asg.learning.plots import Panel, plot_curves

        panels = [Panel("env_steps", ("success_rate",), "environment steps", f"{protocol} success rate",
                        ylim=(-0.05, 1.05), step=True, markers=True)]
        reached = tuple(dict.fromkeys(k for row in rows for k in row if k.startswith(REACHED)))
        if reached:
            panels.append(Panel("env_steps", reached, "environment steps", "share of episodes reaching",
                                styles=tuple(("-", "--", ":", "-.")[i % 4] for i in range(len(reached))),
                                ylim=(-0.05, 1.05), step=True, labels=tuple(k[len(REACHED):] for k in reached)))
        return plot_curves(self.path / CURVE, rows, panels, title, panel_size=(6.0, 3.5))
