"""The one grid runner: cells (a world, a method, a seed, a preset, overrides, a step budget), each
trained in its own run folder ``out/<method>/seed<N>/``, one after another in this process (the
default, and all there is without Ray) or as Ray tasks (``jobs`` CPUs of a local Ray, or the
cluster at ``ray_address``). Either way a cell runs :func:`train_cell`, writes the files
``asg train`` writes and gives the metrics it gives: the same cell, the same numbers.

- Reuse: with ``reuse``, a folder holding a finished run of the cell's resolved config is read back
  and one holding an interrupted run is resumed from its checkpoint; a folder holding a run of
  another config is refused (``ConfigError``) before any cell starts.
- Failures: a cell whose config cannot be resolved, or whose training raises, is a
  :class:`CellFailure` with its one-line error (``on_failed``; without it the error propagates,
  as it always did); the other cells go on.
- On Ray (plain tasks: see :func:`_run_on_ray` for why not Tune): one CPU per cell (``cpus``); Ray
  sets a worker's ``OMP_NUM_THREADS`` (the BLAS threads) to it and the cell sets torch's threads.
  A worker process or node lost mid-cell is Ray's to re-run (``max_retries=retries``); the cell
  then resumes from its last checkpoint where it can see it. A cell's own error is not retried.
- Files on a cluster: a cell whose node sees the driver's ``out`` (one machine, or a shared file
  system: the driver leaves a token file there) writes in place; elsewhere it trains in a
  temporary folder and returns its files, which the driver writes under ``out``.
- Ctrl-C or SIGTERM on the driver: ``ray.cancel`` on every cell; a running one checkpoints at its
  next episode boundary (Ray delivers the cancel as a SIGINT, which ``train`` turns into a stop)
  and comes back ``interrupted``; queued ones do not start; ``reuse`` continues the grid.
- A learner from outside asg (a baseline such as stable-baselines3's PPO) has no config or run
  folder: its cells are :class:`Job` s, a function and its arguments, run by :func:`run_jobs` in
  the same two ways, with the same CPUs, retries, failures and progress.
"""
from __future__ import annotations

import secrets
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from asg.learning.asgrl.config import TrainConfig, config_to_dict, merge_overrides
from asg.learning.asgrl.trainer import TrainResult, TrainRun, plugin_domain, run_config, train
from asg.learning.errors import ConfigError
from asg.learning.registry import DomainBinding, bind_domain
from asg.learning.results import Status
from asg.learning.run_dir import CHECKPOINT, CONFIG, RESULT, RunDir, StageProgress, StopOnSignal, atomic_write
from asg.learning.torch_state import torch_threads
from asg.planning.errors import AsgError

GRID_STAGE = "grid"  # the progress stage of a grid on Ray: cells done of all, running and queued in the note
TOKEN = ".asg-grid"  # left in ``out`` while a grid runs on Ray: a node that reads it shares the driver's files


@dataclass(frozen=True)
class Cell:
    """One run of a grid: ``domain`` (or a world of the user's own: ``plugin``, the parts
    ``trainer.own_world`` returns), ``method``, ``seed``, ``preset``, ``overrides`` (nested like
    ``config_to_dict``), ``steps`` (the env-step budget; None: the preset's), ``skills`` (the
    skill learner, as ``asg train --skills`` takes it; None: the method's) and ``group`` (a folder
    of the grid's ``out`` holding cells of one setting, e.g. a world or a model)."""

    domain: str
    method: str
    seed: int
    preset: str = "asg"
    steps: int | None = None
    overrides: dict[str, Any] | None = None
    model: str | None = None
    plugin: dict[str, str] | None = None
    group: str = ""
    skills: str | None = None

    @property
    def folder(self) -> str:
        """The cell's run folder under the grid's ``out``: ``[<group>/]<method>/seed<N>``."""
        return f"{self.group}/{self.method}/seed{self.seed}" if self.group else f"{self.method}/seed{self.seed}"

    def bind(self) -> DomainBinding:
        """The cell's world resolved once: its domain bound with its model (``registry.bind_domain``)."""
        return bind_domain(self.domain, self.model)

    def config(self, binding: DomainBinding | None = None) -> TrainConfig:
        """The cell's resolved config, built from its ``binding`` (``bind`` when not given)."""
        return grid_config(binding or self.bind(), self.method, self.seed, self.steps, self.overrides, self.model,
                           self.preset, plugin=self.plugin is not None, skills=self.skills)


@dataclass(frozen=True)
class GridRun:
    """One finished run of a grid with its evaluation curve."""

    method: str
    seed: int
    result: TrainResult
    rows: tuple[dict[str, Any], ...]
    group: str = ""  # the cell's group (``Cell.group``)


@dataclass(frozen=True)
class CellFailure:
    """A cell that failed for its own reason, with its one-line error."""

    method: str
    seed: int
    error: str

    def line(self) -> str:
        return f"{self.method} seed {self.seed}: {self.error}"


def grid_config(binding: DomainBinding, method: str, seed: int, steps: int | None = None,
                overrides: dict[str, Any] | None = None, model: str | None = None,
                preset: str = "asg", *, plugin: bool = False, skills: str | None = None) -> TrainConfig:
    """The resolved config of one grid cell, built from its world's ``binding``: a new run's config
    (``trainer.run_config``: ``plugin``, a world of the user's own with its own step budgets;
    ``skills``, the skill learner), then ``overrides`` and the ``steps`` budget."""
    cfg = run_config(binding, method, preset, seed=seed, model=model, plugin=plugin, skills=skills)
    if overrides:
        cfg = merge_overrides(cfg, overrides)
    if steps is not None:
        cfg = merge_overrides(cfg, {"total_steps": steps})
    return cfg


def finished_run(path: str | Path, cfg: TrainConfig) -> TrainResult | None:
    """The result of a finished run of ``cfg`` in ``path``; None when there is none yet (or it was
    interrupted). ``ConfigError`` when the folder holds a run of another config."""
    folder = Path(path)
    if not (folder / CONFIG).is_file():
        return None
    saved = RunDir.open(folder).config()
    if config_to_dict(saved) != config_to_dict(cfg):
        raise ConfigError(f"{folder}: holds a run of another config; choose another folder or remove it")
    if not (folder / RESULT).is_file():
        return None
    result = TrainResult.from_json(RunDir.open(folder).read_result())
    return None if result.status == "interrupted" else result


def read_back(cell: Cell, path: Path, result: TrainResult) -> GridRun:
    """A finished cell as a ``GridRun``, its curve read from ``path``."""
    return GridRun(cell.method, cell.seed, result, tuple(RunDir.open(path).read_metrics()), cell.group)


def train_cell(cell: Cell, cfg: TrainConfig, path: Path | None, binding: DomainBinding | None = None, *,
               progress: StageProgress | None = None,
               should_stop: Callable[[], bool] | None = None) -> tuple[GridRun, bool]:
    """Run one cell in ``path`` and say whether it was read back: a finished run of ``cfg`` there is
    read back, one with a checkpoint resumed, else a new run is created (``TrainRun.create``)."""
    if path is None:
        result = train(cfg, binding, progress=progress, should_stop=should_stop)
        return GridRun(cell.method, cell.seed, result, (), cell.group), False
    done = finished_run(path, cfg)
    if done is not None:
        return read_back(cell, path, done), True
    subgoals = None
    if (path / CHECKPOINT).is_file():
        run_dir = RunDir.open(path)
    else:  # a new folder keeps config.json, subgoals.json and landmarks.json
        created = TrainRun.create(path, cfg, binding, plugin=cell.plugin)
        run_dir, subgoals, binding = created.run_dir, created.subgoals, created.binding
    result = train(cfg, binding, run_dir=run_dir, resume=subgoals is None, progress=progress, subgoals=subgoals,
                   should_stop=should_stop)
    return GridRun(cell.method, cell.seed, result, tuple(run_dir.read_metrics()), cell.group), False


def one_line(err: BaseException) -> str:
    """An error as one line: asg's own errors as they read, others with their type."""
    text = (str(err).strip().splitlines() or [""])[0]
    return text if isinstance(err, AsgError) and text else f"{type(err).__name__}: {text}".rstrip(": ")


@dataclass
class _Plan:
    """A cell ready to run: its world's binding, config and folder, or its read-back run, or why it
    cannot run (``failure``, and the ``error`` raised when the grid has no ``on_failed``)."""

    cell: Cell
    binding: DomainBinding | None = None
    cfg: TrainConfig | None = None
    path: Path | None = None
    done: GridRun | None = None
    failure: CellFailure | None = None
    error: BaseException | None = None


Worlds = dict[tuple[str, str | None], DomainBinding]  # the bindings of a grid's worlds, by domain and model


def world_of(cell: Cell, worlds: Worlds) -> DomainBinding:
    """The cell's world binding: the one in ``worlds`` (by domain and model), else resolved now and kept there."""
    key = (cell.domain, cell.model)
    if key not in worlds:
        worlds[key] = cell.bind()
    return worlds[key]


def cell_configs(cells: Sequence[Cell]) -> list[TrainConfig]:
    """Each cell's resolved config, every world of the grid resolved once."""
    worlds: Worlds = {}
    return [cell.config(world_of(cell, worlds)) for cell in cells]


def _plan(cell: Cell, out: Path | None, reuse: bool, worlds: Worlds) -> _Plan:
    """Resolve a cell's world once (``worlds``: those resolved so far) and its config from it (their
    own error: a failure), and check its folder (another config's run there: ``ConfigError`` for
    the whole grid)."""
    try:
        binding = world_of(cell, worlds)
        cfg = cell.config(binding)
    except Exception as err:  # the cell's own failure (an unknown world, a bad model or config)
        return _Plan(cell, failure=CellFailure(cell.method, cell.seed, one_line(err)), error=err)
    path = None if out is None else out / cell.folder
    if path is not None and reuse:
        done = finished_run(path, cfg)
        if done is not None:
            return _Plan(cell, binding, cfg, path, done=read_back(cell, path, done))
    elif path is not None and ((path / CHECKPOINT).exists() or (path / RESULT).exists()):
        raise ConfigError(f"{path}: already holds a run ({CHECKPOINT} or {RESULT}); resume it or choose another "
                          "folder")
    return _Plan(cell, binding, cfg, path)


def run_cells(cells: Sequence[Cell], out: str | Path | None, *, reuse: bool = False,
              binding: DomainBinding | None = None, progress: StageProgress | None = None,
              on_done: Callable[[GridRun, bool], None] | None = None,
              on_failed: Callable[[CellFailure], None] | None = None,
              jobs: int | None = None, ray_address: str | None = None, cpus: int = 1,
              retries: int = 3) -> list[GridRun]:
    """Run every cell (in this process unless ``jobs`` or ``ray_address`` asks for Ray) and return
    the finished and interrupted runs in cell order. ``on_done(run, reused)`` hears each run as it
    ends; ``on_failed(failure)`` each cell that failed for its own reason (without it, the first
    failure raises). Each world (domain and model) is resolved once into its binding, which gives
    its cells' configs and, in this process, trains them (a Ray worker binds its cell's world
    itself); ``binding``: the bound domain of the cells of its name, used as it is."""
    if (jobs is not None or ray_address is not None) and out is None:
        raise ConfigError("a grid on Ray needs a folder for its runs (out)")
    if jobs is not None and jobs < 1:
        raise ConfigError(f"jobs: {jobs}; at least 1")
    folder = None if out is None else Path(out)
    worlds: Worlds = {}
    if binding is not None:
        worlds.update({(cell.domain, cell.model): binding for cell in cells if cell.domain == binding.name})
    plans = [_plan(cell, folder, reuse, worlds) for cell in cells]
    runs: dict[int, GridRun] = {}

    def done(index: int, run: GridRun, reused: bool) -> None:
        runs[index] = run
        if on_done is not None:
            on_done(run, reused)

    def failed(failure: CellFailure, err: BaseException | None = None) -> None:
        if on_failed is None:
            raise err if err is not None else ConfigError(failure.line())
        on_failed(failure)

    todo = []
    for index, plan in enumerate(plans):
        if plan.done is not None:
            done(index, plan.done, True)
        elif plan.failure is not None:
            failed(plan.failure, plan.error)
        else:
            todo.append(index)
    if jobs is None and ray_address is None:
        _run_serial(plans, todo, progress, done, failed)
    elif todo:  # (every cell read back or failed: no Ray to start)
        assert folder is not None
        _run_on_ray(plans, todo, folder, jobs, ray_address, cpus, retries, progress, done, failed)
    return [runs[index] for index in sorted(runs)]


def _run_serial(plans: list[_Plan], todo: list[int], progress: StageProgress | None,
                done: Callable[[int, GridRun, bool], None],
                failed: Callable[[CellFailure, BaseException | None], None]) -> None:
    """One cell after another in this process; an interrupted cell (Ctrl-C) stops the grid."""
    for count, index in enumerate(todo, 1):
        plan = plans[index]
        assert plan.cfg is not None

        def heard(stage: str, steps: int, total: int, note: str, count: int = count) -> None:
            assert progress is not None
            progress(stage, steps, total, f"cell {count} of {len(todo)}" + (f", {note}" if note else ""))

        try:
            run, reused = train_cell(plan.cell, plan.cfg, plan.path, plan.binding,
                                     progress=heard if progress else None)
        except Exception as err:  # the cell's own failure; Ctrl-C and SystemExit go through
            failed(CellFailure(plan.cell.method, plan.cell.seed, one_line(err)), err)
            continue
        done(index, run, reused)
        if run.result.status == Status.INTERRUPTED:  # Ctrl-C / SIGTERM: stop the grid, resumable
            return


# -- on Ray -------------------------------------------------------------------------------------

def import_ray() -> Any:
    """The ``ray`` module, or a ``ConfigError`` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ConfigError("a grid on Ray (jobs, ray_address) needs Ray: pip install 'asg[distributed]'") from None
    return ray


@dataclass(frozen=True)
class _Outcome:
    """What a cell's task returns: its run or failure, and its files when it ran away from ``out``."""

    run: GridRun | None = None
    reused: bool = False
    failure: CellFailure | None = None
    files: dict[str, bytes] | None = None


def _folder_files(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _cell_task(cell: Cell, cfg: TrainConfig, out: str, token: str, shipped: dict[str, bytes] | None,
               threads: int) -> _Outcome:
    """A cell on a Ray worker: in place where the node sees ``out`` (it reads ``token`` there), else
    in a temporary folder (seeded with ``shipped``, the driver's copy of an interrupted run) whose
    files go back with the result. ``ray.cancel`` reaches ``train``'s ``StopOnSignal`` as a SIGINT:
    the cell checkpoints at its next episode boundary and returns ``interrupted``."""
    if cell.plugin is not None:  # a world of the user's own is registered in each process that runs it
        plugin_domain(**{k: v for k, v in cell.plugin.items() if k != "episode_limit"})
    target = Path(out) / cell.folder
    try:
        shared = (Path(out) / TOKEN).read_text() == token
    except OSError:
        shared = False
    scratch = None if shared else Path(tempfile.mkdtemp(prefix="asg-cell-"))
    path = target if scratch is None else scratch / cell.folder
    try:
        for name, data in (shipped or {}).items() if scratch is not None else ():
            (path / name).parent.mkdir(parents=True, exist_ok=True)
            (path / name).write_bytes(data)
        with torch_threads(threads):  # Ray sets OMP_NUM_THREADS (BLAS) to the same share
            run, reused = train_cell(cell, cfg, path)
        if scratch is None:
            return _Outcome(run, reused)
        return _Outcome(run, reused, files=_folder_files(path))
    except Exception as err:  # the cell's own failure: reported, not retried
        return _Outcome(failure=CellFailure(cell.method, cell.seed, one_line(err)))
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _land(outcome: _Outcome, path: Path) -> GridRun:
    """A cell that ran away from ``out``: its files written under ``path`` (``result.json`` naming
    ``path``, as a run made here would), its run returned."""
    assert outcome.run is not None and outcome.files is not None
    result = replace(outcome.run.result, run_dir=str(path))
    for name, data in outcome.files.items():
        if name == RESULT:
            RunDir(path).write_result(result.to_json())
        else:
            atomic_write(path / name, data)
    return replace(outcome.run, result=result)


def _connect(ray: Any, jobs: int | None, address: str | None) -> bool:
    """Start a local Ray of ``jobs`` CPUs or join the cluster at ``address``; whether this call
    started it (and so stops it). A Ray this process already runs is used as it is."""
    if ray.is_initialized():
        return False
    if address is None:  # "local": a new instance, even where `ray start` runs a cluster on this machine
        ray.init(address="local", num_cpus=jobs, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    else:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    return True


def _run_on_ray(plans: list[_Plan], todo: list[int], out: Path, jobs: int | None, address: str | None,
                cpus: int, retries: int, progress: StageProgress | None,
                done: Callable[[int, GridRun, bool], None],
                failed: Callable[[CellFailure, BaseException | None], None]) -> None:
    """The cells as plain Ray tasks, ``max_retries=retries`` for lost workers and nodes, no retry for
    a cell's own error. Not Ray Tune: its trials write their own layout (``result.json``,
    ``params.json``, ``progress.csv`` in trial folders) where the run folders must stay as they are;
    since Ray 2.7 its ``storage_path`` must be a shared or cloud file system, so it brings nothing
    back from a node without one (a task's return value does); and ``ray[tune]`` needs pandas and
    pyarrow beyond the ``distributed`` extra. The run folders' checkpoints already give resume."""
    ray = import_ray()
    owns = _connect(ray, jobs, address)
    token = secrets.token_hex(8)
    task = ray.remote(_cell_task).options(num_cpus=cpus, max_retries=retries, retry_exceptions=False)
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / TOKEN).write_text(token)
        refs = {}
        for index in todo:
            plan = plans[index]
            assert plan.path is not None
            shipped = _folder_files(plan.path) if (plan.path / CHECKPOINT).is_file() else None
            refs[task.remote(plan.cell, plan.cfg, str(out), token, shipped, cpus)] = index
        _collect(ray, refs, plans, cpus, progress, done, failed)
    finally:
        (out / TOKEN).unlink(missing_ok=True)
        if owns:
            ray.shutdown()


def _collect(ray: Any, refs: dict[Any, int], plans: list[_Plan], cpus: int,
             progress: StageProgress | None, done: Callable[[int, GridRun, bool], None],
             failed: Callable[[CellFailure, BaseException | None], None]) -> None:
    """Wait for the cells' tasks; each run (landed under ``out`` when it ran away from it) or failure as it ends."""
    def finish(index: int, outcome: _Outcome) -> None:
        if outcome.failure is not None:
            failed(outcome.failure, None)
        elif outcome.run is not None:
            path = plans[index].path
            assert path is not None
            done(index, _land(outcome, path) if outcome.files is not None else outcome.run, outcome.reused)

    def lost(index: int, err: BaseException) -> None:
        cell = plans[index].cell
        failed(CellFailure(cell.method, cell.seed, one_line(err)), None)
    _gather(ray, refs, cpus, progress, finish, lost)


def _gather(ray: Any, refs: dict[Any, int], cpus: int, progress: StageProgress | None,
            finish: Callable[[int, Any], None], lost: Callable[[int, BaseException], None]) -> None:
    """Wait for the tasks (``refs``: task -> its index); ``finish(index, value)`` each as it ends,
    ``lost(index, error)`` each whose retries are spent; progress as cells done, running, queued.
    Ctrl-C cancels them all: running ones get a SIGINT, queued ones do not start."""
    pending, total, finished, told = list(refs), len(refs), 0, False
    with StopOnSignal() as stop:
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=len(pending), timeout=1.0)
                for ref in ready:
                    finished += 1
                    try:
                        value = ray.get(ref)
                    except ray.exceptions.TaskCancelledError:  # stopped before it began
                        continue
                    except Exception as err:  # retries spent (a node lost each time), or Ray's own error
                        lost(refs[ref], err)
                        continue
                    finish(refs[ref], value)
                if stop() and not told:  # Ctrl-C: running cells checkpoint, queued ones do not start
                    for ref in pending:
                        ray.cancel(ref)
                    told = True
                if progress is not None:
                    slots = max(1, int(ray.cluster_resources().get("CPU", 1) // cpus))
                    running = min(slots, len(pending))
                    note = f"{running} running, {len(pending) - running} queued" + (", stopping" if told else "")
                    progress(GRID_STAGE, finished, total, note)
        except BaseException:  # a failure raised (no on_failed), or a second Ctrl-C: no cell is left running
            for ref in pending:
                ray.cancel(ref)
            raise


# -- cells of a learner from outside asg --------------------------------------------------------

@dataclass(frozen=True)
class Job:
    """A cell of a learner from outside asg's registry (a baseline such as stable-baselines3's PPO):
    ``call(*args)`` runs where the cell runs and returns what the caller keeps of it (picklable).
    It has no run folder: what to read back instead of running it again is the caller's."""

    method: str
    seed: int
    call: Callable[..., Any]
    args: tuple[Any, ...] = ()
    group: str = ""


def _job_task(job: Job, threads: int) -> tuple[Any, CellFailure | None]:
    """A job on a Ray worker, its torch threads set to its CPUs: its value, or its own failure (not retried)."""
    try:
        with torch_threads(threads):
            return job.call(*job.args), None
    except Exception as err:
        return None, CellFailure(job.method, job.seed, one_line(err))


def run_jobs(work: Sequence[Job], *, progress: StageProgress | None = None,
             on_done: Callable[[Job, Any], None] | None = None,
             on_failed: Callable[[CellFailure], None] | None = None,
             jobs: int | None = None, ray_address: str | None = None, cpus: int = 1,
             retries: int = 3) -> list[Any]:
    """Run every job as ``run_cells`` runs cells (in this process unless ``jobs`` or ``ray_address``
    asks for Ray, one CPU each, lost workers retried, Ctrl-C cancelling them) and return the values
    of those that finished, in job order; ``on_done(job, value)`` hears each as it ends,
    ``on_failed(failure)`` each that raised (without it, the first failure raises)."""
    if jobs is not None and jobs < 1:
        raise ConfigError(f"jobs: {jobs}; at least 1")
    values: dict[int, Any] = {}

    def finish(index: int, value: Any) -> None:
        values[index] = value
        if on_done is not None:
            on_done(work[index], value)

    def failed(failure: CellFailure, err: BaseException | None = None) -> None:
        if on_failed is None:
            raise err if err is not None else ConfigError(failure.line())
        on_failed(failure)

    if jobs is None and ray_address is None:
        for index, job in enumerate(work):
            if progress is not None:
                progress(GRID_STAGE, index, len(work), f"1 running, {len(work) - index - 1} queued")
            try:
                value = job.call(*job.args)
            except Exception as err:  # the job's own failure; Ctrl-C and SystemExit go through
                failed(CellFailure(job.method, job.seed, one_line(err)), err)
                continue
            finish(index, value)
        if progress is not None and work:
            progress(GRID_STAGE, len(work), len(work), "0 running, 0 queued")
    elif work:
        ray = import_ray()
        owns = _connect(ray, jobs, ray_address)
        task = ray.remote(_job_task).options(num_cpus=cpus, max_retries=retries, retry_exceptions=False)
        try:
            refs = {task.remote(job, cpus): index for index, job in enumerate(work)}

            def ended(index: int, outcome: tuple[Any, CellFailure | None]) -> None:
                value, failure = outcome
                if failure is not None:
                    failed(failure)
                else:
                    finish(index, value)

            def lost(index: int, err: BaseException) -> None:
                failed(CellFailure(work[index].method, work[index].seed, one_line(err)))
            _gather(ray, refs, cpus, progress, ended, lost)
        finally:
            if owns:
                ray.shutdown()
    return [values[index] for index in sorted(values)]
