"""Issue 40, part 3: ASGRL's deep skills against PPO in env steps per second, one world, one run.

    python benchmarks/deep_skills_speed.py                      # DoorKey-8x8, 50k env steps each
    python benchmarks/deep_skills_speed.py --world unlockpickup --envs 1,16 --threads 1,4
    python benchmarks/deep_skills_speed.py --steps 3000 --out /tmp/speed.json   # a check that it runs
    python benchmarks/deep_skills_speed.py --world unlockpickup --envs 32 --train-every 2,8,16   # replay ratio

One after another in this process, each on a fixed number of env steps (``--steps``) from
scratch, seed ``--seed``:

* ASGRL with deep skills on the world of ``examples/`` as ``benchmarks/own_worlds.py`` trains it
  (the user's route, ``asg train --env ID --labeler labels:NAME --model FILE --skills deep``),
  for every ``--envs`` N (``deep.n_envs``: 1 is the serial loop, N > 1 the lockstep of
  ``learning/asgrl/lockstep.py``) and, for N > 1, every ``--threads`` T (``deep.torch_threads``;
  the serial loop always runs torch on one thread), and every ``--train-every`` K
  (``deep.train_every``: env steps per gradient step of ``deep.batch_size`` + ``deep.sil_batch_size``
  samples; the config's 2 by default). K changes the algorithm, not only its speed: each row
  records the replayed samples per env step it stands for (``samples_per_env_step``);
  and every ``--env-process`` P (``deep.env_process``, N > 1: the envs and the labeler in a
  process of their own, stepping while the learner makes its update, ``learning/asgrl/env_process.py``);
  ``--deep`` sets other ``learner.deep`` fields for every ASGRL row (e.g. ``encoding``, ``hidden``);
* PPO (stable-baselines3) with own_worlds' settings (``PPO_SETTINGS``: 16 envs, its default MLP
  on the flattened egocentric view, ``own_worlds.view_env``), with torch on each T, for every
  ``--ppo-vec``: its envs in SB3's ``DummyVecEnv`` (``dummy``, as own_worlds runs it) or one
  process each in ``SubprocVecEnv`` (``subproc``), so that PPO may use a second core as ASGRL's
  env process does.

Each ASGRL row also splits its time (``seconds_in``): the learner's updates (``DeepQ.learn_steps``:
replay sampling, the batch's tensors, the gradient step), the env steps as the skills see them
(``SubgoalWrapper.step``: the env, the labeler, the subgoal test; with the env process only the
subgoal test, the rest runs in the child), the wait for the env process after the update
(``env_wait``, ``EnvProcess.take_steps``) and the rest (acting, buffers, the episode logic,
evaluation), measured by wrapping those methods with a clock for the run.

Before any timed run, one untimed warm-up of each learner (``WARM_UP_STEPS`` env steps) pays the
process's one-time costs: the first ``torch.optim.Adam`` alone takes about 1 s (lazy imports), and
before 2026-12-06 PPO, timed first, paid it inside its run, which understated its speed by about
8 % on 50k steps and overstated every ``ratio_to_ppo`` as much.

A run's time is the wall time from building its envs to the end of training; for ASGRL that
includes its evaluations, kept to the least (one episode at 0 steps, one greedy and one ε = 0.05
episode at the end). PPO trains in whole rollouts (16 x 128 = 2,048 env steps), so its count is
the multiple of that at or past ``--steps``. Steps per second are env steps over that time, and
``ratio_to_ppo`` divides each ASGRL row's by the fastest PPO row's at the same T. Other work skews the figures:
the machine's load average before and after and the other benchmarks or training runs found
running (``grid_speed.busy``) are recorded, and ``timing_contaminated`` is set when any ran.
Writes ``benchmarks/results/deep_skills_speed.json`` (command, commit, budget, seeds first).
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import itertools
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from grid_speed import busy
from own_worlds import PPO_SETTINGS, WORLDS, asgrl_config, view_env
from provenance import command_line, write_result

from asg.learning.asgrl.deep_skills import DeepQ
from asg.learning.asgrl.env_process import EnvProcess
from asg.learning.asgrl.subgoals import SubgoalWrapper
from asg.learning.asgrl.trainer import train
from asg.learning.torch_state import torch_threads

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "deep_skills_speed.json"
WARM_UP_STEPS = 2_048  # one PPO rollout; an ASGRL run as long


def asgrl_row(world: str, seed: int, steps: int, n_envs: int, threads: int,
              train_every: int | None = None, update_thread: bool = False,
              deep_fields: dict[str, Any] | None = None, env_process: bool = False) -> dict[str, Any]:
    """Train ASGRL's deep skills for ``steps`` env steps with ``n_envs`` envs, ``threads`` torch threads,
    a gradient step every ``train_every`` env steps (None: the config's), with ``update_thread``
    each step in a thread beside the next tick's env steps, and with ``env_process`` the envs in a
    process of their own, stepping while the learner makes its update."""
    overrides = {"eval_interval": steps, "eval_episodes": 1, "final_eval_episodes": 1, "early_stop_evals": 0,
                 "curve_eval": "epsilon", "learner": {"deep": {"n_envs": n_envs, "torch_threads": threads}}}
    if train_every is not None:
        overrides["learner"]["deep"]["train_every"] = train_every
    overrides["learner"]["deep"].update({**(deep_fields or {}), "update_thread": update_thread,
                                         "env_process": env_process})
    cfg, binding = asgrl_config(world, seed, steps, overrides)
    deep = cfg.learner.deep
    clocks = {"updates": 0.0, "env_steps": 0.0, "env_wait": 0.0}
    start = time.perf_counter()
    with clocked(DeepQ, "learn_steps", clocks, "updates"), clocked(SubgoalWrapper, "step", clocks, "env_steps"), \
            clocked(EnvProcess, "take_steps", clocks, "env_wait"):
        result = train(cfg, binding)
    wall = time.perf_counter() - start
    seconds_in = {**{k: round(v, 2) for k, v in clocks.items()}, "rest": round(wall - sum(clocks.values()), 2)}
    return {"method": "asgrl", "n_envs": n_envs, "torch_threads": threads, "train_every": deep.train_every,
            "update_thread": deep.update_thread, "env_process": deep.env_process, "encoding": deep.encoding,
            "hidden": list(deep.hidden),
            "samples_per_env_step": (deep.batch_size + deep.sil_batch_size) / deep.train_every,
            "env_steps": result.env_steps, "episodes": result.episodes, "wall_seconds": round(wall, 2),
            "steps_per_second": round(result.env_steps / wall, 1), "seconds_in": seconds_in}


@contextlib.contextmanager
def clocked(cls: type, name: str, clocks: dict[str, float], key: str) -> Iterator[None]:
    """``cls.name`` adds its wall time to ``clocks[key]`` inside the block (the method is restored after)."""
    method = getattr(cls, name)

    @functools.wraps(method)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            clocks[key] += time.perf_counter() - start

    setattr(cls, name, timed)
    try:
        yield
    finally:
        setattr(cls, name, method)


def ppo_row(world: str, seed: int, steps: int, threads: int, vec: str = "dummy") -> dict[str, Any]:
    """Train own_worlds' PPO for at least ``steps`` env steps on ``threads`` torch threads, its envs in
    SB3's ``DummyVecEnv`` (``vec`` "dummy": one after another in this process, as own_worlds runs it)
    or ``SubprocVecEnv`` ("subproc": a process each)."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    env_id = WORLDS[world][0]
    settings = dict(PPO_SETTINGS)
    n_envs = settings.pop("n_envs")
    settings.pop("normalize")
    with torch_threads(threads):
        start = time.perf_counter()
        venv = make_vec_env(lambda: view_env(env_id), n_envs=n_envs, seed=seed,
                            vec_env_cls=SubprocVecEnv if vec == "subproc" else DummyVecEnv,
                            vec_env_kwargs={"start_method": "fork"} if vec == "subproc" else None)
        model = PPO("MlpPolicy", venv, seed=seed, device="cpu", verbose=0, **settings)
        model.learn(total_timesteps=steps)
        wall = time.perf_counter() - start
        venv.close()
    return {"method": "ppo", "n_envs": n_envs, "vec_env": vec, "torch_threads": threads,
            "env_steps": int(model.num_timesteps),
            "wall_seconds": round(wall, 2), "steps_per_second": round(model.num_timesteps / wall, 1)}


def numbers(text: str) -> list[int]:
    """``"1,16"`` -> [1, 16]."""
    return [int(part) for part in text.split(",") if part]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--world", default="doorkey-8x8", choices=sorted(WORLDS))
    parser.add_argument("--steps", type=int, default=50_000, help="env steps of every run")
    parser.add_argument("--envs", default="1,16", help="ASGRL's deep.n_envs values, comma-separated")
    parser.add_argument("--threads", default="1", help="torch threads, comma-separated (ASGRL N > 1 and PPO)")
    parser.add_argument("--train-every", default="",
                        help="ASGRL's deep.train_every values, comma-separated (default: the config's)")
    parser.add_argument("--update-thread", default="0",
                        help="ASGRL's deep.update_thread values, comma-separated 0 (off) and 1 (on)")
    parser.add_argument("--env-process", default="0",
                        help="ASGRL's deep.env_process values, comma-separated 0 (off) and 1 (on)")
    parser.add_argument("--ppo-vec", default="dummy",
                        help="PPO's vector envs, comma-separated: dummy (SB3's DummyVecEnv), subproc (SubprocVecEnv)")
    parser.add_argument("--deep", type=json.loads, default={}, metavar="JSON",
                        help="ASGRL: other fields of learner.deep, "
                             "e.g. '{\"encoding\": \"codes\", \"hidden\": [64, 64]}'")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    try:
        envs, threads, given = numbers(args.envs), numbers(args.threads), numbers(args.train_every)
        overlap, apart = numbers(args.update_thread), numbers(args.env_process)
    except ValueError:
        envs = threads = given = overlap = apart = []
    if not envs or not threads or min(envs + threads + given) < 1:
        parser.error("--envs, --threads and --train-every take positive integers, comma-separated")
    if not overlap or not set(overlap) <= {0, 1}:
        parser.error("--update-thread takes 0 and 1, comma-separated")
    if not apart or not set(apart) <= {0, 1}:
        parser.error("--env-process takes 0 and 1, comma-separated")
    if apart != [0] and max(envs) < 2:
        parser.error("--env-process 1 needs --envs above 1 (the lockstep loop)")
    vecs = [v for v in args.ppo_vec.split(",") if v]
    if not vecs or not set(vecs) <= {"dummy", "subproc"}:
        parser.error("--ppo-vec takes dummy and subproc, comma-separated")
    if not isinstance(args.deep, dict):
        parser.error("--deep: expected a JSON object of learner.deep fields")
    if {"update_thread", "env_process"} & set(args.deep):
        parser.error("--deep: set update_thread and env_process with --update-thread and --env-process")
    every: list[int | None] = list(given) or [None]
    found, load = {"before": busy()}, {"before": os.getloadavg()}
    ppo_row(args.world, args.seed, WARM_UP_STEPS, threads[0])  # untimed: the process's one-time costs
    asgrl_row(args.world, args.seed, WARM_UP_STEPS, max(envs), threads[0], every[0], False, args.deep)
    rows = []
    for t, vec in itertools.product(threads, vecs):
        rows.append(ppo_row(args.world, args.seed, args.steps, t, vec))
        print(f"ppo, {t} thread(s), {vec}: {rows[-1]['steps_per_second']:.0f} env steps/s", file=sys.stderr,
              flush=True)
    for n in envs:
        for t in threads if n > 1 else threads[:1]:
            for k, u, p in itertools.product(every, overlap, apart if n > 1 else [0]):
                rows.append(asgrl_row(args.world, args.seed, args.steps, n, t if n > 1 else 1, k, bool(u), args.deep,
                                      bool(p)))
                print(f"asgrl, {n} env(s), {rows[-1]['torch_threads']} thread(s), train_every "
                      f"{rows[-1]['train_every']}, update thread {u}, env process {p}: "
                      f"{rows[-1]['steps_per_second']:.0f} env steps/s; seconds in {rows[-1]['seconds_in']}",
                      file=sys.stderr, flush=True)
    found["after"], load["after"] = busy(), os.getloadavg()
    ppo: dict[int, float] = {}  # the fastest PPO at each thread count
    for row in rows:
        if row["method"] == "ppo":
            ppo[row["torch_threads"]] = max(ppo.get(row["torch_threads"], 0.0), row["steps_per_second"])
    for row in rows:
        if row["method"] == "asgrl" and row["torch_threads"] in ppo:
            row["ratio_to_ppo"] = round(row["steps_per_second"] / ppo[row["torch_threads"]], 3)
    payload = {"world": args.world, "env_id": WORLDS[args.world][0], "rows": rows, "ppo_settings": PPO_SETTINGS,
               "cpus": os.cpu_count(), "load_average": load, "busy": found,
               "timing_contaminated": any(found.values())}
    write_result(args.out, payload, command_line(__file__, argv), {"env_steps": args.steps}, [args.seed])
    print(json.dumps(rows, indent=2))
    if payload["timing_contaminated"]:
        print("TIMING CONTAMINATED: other work ran beside it (see busy)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
