"""Worlds of one's own against flat deep RL: ASGRL with deep skills vs PPO on MiniGrid's own envs.

    python benchmarks/own_worlds.py --worlds doorkey-8x8,unlockpickup --methods asgrl,ppo --seeds 5 \
        --out runs/own_worlds

Both learners see the same observation, MiniGrid's egocentric 7 x 7 view (``observation="view"``):
ASGRL through the user's route, the run ``asg train --env ID --labeler labels:NAME --model FILE
--skills deep`` makes in ``examples/<world>/`` (the landmarks of the user's approximate model, k
diverse deep skills per landmark, the tabular meta-controller), its cells trained by the one grid
runner, ``grid.run_cells`` (one after another here, or on Ray with ``--jobs N`` or ``--ray-address
ADDR``, as ``asg compare`` takes them); PPO (stable-baselines3, the well-kept
implementation the issue names) on the env's own reward over the flattened view, with the
defaults of rl-starter-files (torch-ac), the reference PPO code for Minigrid (``PPO_SETTINGS``:
16 envs x 128 steps, 4 epochs, batch 256, lr 1e-3, Adam eps 1e-8, γ 0.99, λ 0.95, clip 0.2,
entropy 0.01, value coefficient 0.5, gradient norm 0.5), its cells ``grid.Job`` s run by
``grid.run_jobs`` in the same two ways (a learner from outside asg: no config or run folder of
asg's). On DoorKey-5x5 (``doorkey-5x5``, PPO
only) they solve seed 0 by 40k steps, against the RL Zoo's published agent (mean reward
0.97 ± 0.01 after 1e5 steps, huggingface.co/sb3/ppo-MiniGrid-DoorKey-5x5-v0). The zoo's own
MiniGrid settings (8 envs, 10 epochs, lr 2.5e-4, no entropy bonus, normalised observations and
rewards) collapsed here: seed 0 on 5x5 ended at mean reward 0 from 40k steps on, and 8x8 stayed
at 0.00 for 1M steps (``ZOO_SETTINGS``; benchmarks/results/own_worlds/zoo_settings/).

Both play the world as MiniGrid ships it, episodes ending at its own time limit (640 steps on
DoorKey-8x8, 288 on UnlockPickup; ``asg.envs.plugins.own_episode_limit``). Each learner gets its
env-step budget (``--steps``, ``--ppo-steps``). Every ``--eval-every`` env
steps the frozen policy is scored on ``--eval-episodes`` layouts it has not trained on, each with
its usual exploration left in: ASGRL ε = 0.05 (the paper's protocol, Sec. 5, ``curve_eval =
"epsilon"``), PPO sampling its own policy; "steps to 0.9" is the first point at or above 0.9. At
the end both are scored on 100 fresh layouts (``--final-episodes``) under both protocols (ASGRL:
``asg eval RUN --episodes 100``, greedy and ε = 0.05; PPO: sampled and deterministic);
``final_success`` is the first of each. Both are scored on the same layouts: PPO's curve points on
ASGRL's curve layouts, its sampled and deterministic finals on ASGRL's ε and greedy final layouts
(``evaluation.eval_seeds``, ``epsilon_eval_seeds``; PPO runs before 2026-12-06 drew layouts of their
own). A run's figures go to ``<out>/<world>/<method>/seed<N>.json``
(an ASGRL run's own folder, as ``asg train`` writes it, is ``seed<N>/`` beside it, and
``seed<N>.config.json`` its evaluation schedule as an ``asg train --config`` file); a run with
figures is not trained again, an interrupted ASGRL run resumes from its checkpoint, so the command
continues where it stopped. At the end (or alone, ``--reduce-only``) it writes ``own_worlds.json`` and
``own_worlds.md`` into ``--results``: by default benchmarks/results/own_worlds/ when ``--out`` is the
default runs/own_worlds, else the ``--out`` folder itself (a trial run leaves the committed table alone).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from own_worlds_omitted import HINTS, REPAIRED
from own_worlds_omitted import WORLDS as OMITTED_WORLDS
from provenance import command_line, stamp

from asg.cli.options import add_grid_arguments, grid_arguments, run_benchmark_grid
from asg.cli.progress import Stages
from asg.learning.asgrl.evaluation import epsilon_eval_seeds, eval_seeds
from asg.learning.asgrl.grid import Cell, GridRun, Job, grid_config, run_jobs
from asg.learning.asgrl.trainer import evaluate_run, own_world
from asg.learning.registry import bind_domain
from asg.learning.run_dir import atomic_write, atomic_write_json

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results" / "own_worlds"
WORLDS = {  # name: (Gymnasium id, example folder, labeler, model)
    "doorkey-5x5": ("MiniGrid-DoorKey-5x5-v0", "doorkey", "labels:DOORKEY", "doorkey.pddl"),  # the zoo's check
    "doorkey-8x8": ("MiniGrid-DoorKey-8x8-v0", "doorkey", "labels:DOORKEY", "doorkey.pddl"),
    "unlockpickup": ("MiniGrid-UnlockPickup-v0", "unlockpickup", "labels:UNLOCKPICKUP", "unlockpickup.pddl"),
}
WORLDS.update(OMITTED_WORLDS)  # issue 40: worlds whose model leaves a mechanism out (own_worlds_omitted.py)
WORLDS.update({f"{name}-repaired": (*OMITTED_WORLDS[name][:3], model)  # issue 39: the same world, the model
               for name, model in REPAIRED.items()})               # the mechanism written back in
WORLDS.update({f"{name}-hints": (*OMITTED_WORLDS[name][:3], model)  # the hints' repair, where the above
               for name, model in HINTS.items()})                  # is written by hand
METHODS = ("asgrl", "ppo")
# rl-starter-files' (torch-ac) PPO defaults, the reference PPO code for Minigrid.
PPO_SETTINGS: dict[str, Any] = {"n_envs": 16, "n_steps": 128, "batch_size": 256, "n_epochs": 4, "learning_rate": 1e-3,
                                "gamma": 0.99, "gae_lambda": 0.95, "clip_range": 0.2, "ent_coef": 0.01, "vf_coef": 0.5,
                                "max_grad_norm": 0.5, "normalize": False,
                                "policy_kwargs": {"optimizer_kwargs": {"eps": 1e-8}}}
# rl-baselines3-zoo, hyperparams/ppo.yml, MiniGrid-DoorKey-5x5-v0 (collapsed here; see the docstring).
ZOO_SETTINGS: dict[str, Any] = {"n_envs": 8, "n_steps": 128, "batch_size": 64, "gae_lambda": 0.95, "gamma": 0.99,
                                "n_epochs": 10, "ent_coef": 0.0, "learning_rate": 2.5e-4, "clip_range": 0.2,
                                "normalize": True}
FINAL_EPISODES = 100
COMMANDS = (  # what made benchmarks/results/own_worlds/ (each resumes where it stopped)
    "python benchmarks/own_worlds.py --worlds doorkey-8x8 --methods asgrl --seeds 5 --steps 400000 "
    "--eval-every 25000 --eval-episodes 10",
    "python benchmarks/own_worlds.py --worlds unlockpickup --methods asgrl --seeds 5 --steps 600000 "
    "--eval-every 25000 --eval-episodes 10",
    "python benchmarks/own_worlds.py --worlds doorkey-8x8 --methods ppo --seeds 5 --ppo-steps 1000000 "
    "--eval-every 50000",
    "python benchmarks/own_worlds.py --worlds unlockpickup --methods ppo --seeds 5 --ppo-steps 1000000 "
    "--eval-every 50000",
    "python benchmarks/own_worlds.py --worlds doorkey-5x5 --methods ppo --seeds 1 --ppo-steps 100000 "
    "--eval-every 25000",
)


# ---------------------------------------------------------------------------------------- ASGRL
def asgrl_cells(worlds: list[str], seeds: range, steps: int, eval_every: int, eval_episodes: int,
                out: Path, n_envs: int = 1, deep: dict[str, Any] | None = None,
                learner: dict[str, Any] | None = None) -> list[Cell]:
    """The ASGRL cells without figures yet, seeds outer: the run ``asg train --env ID --labeler
    labels:NAME --model FILE --skills deep --steps S --eval-episodes E --config seed<N>.config.json``
    makes in ``examples/<world>/`` (the world registered here from that folder). ``deep``: fields of
    ``learner.deep`` to set as well (``--deep``); ``learner``: other fields of ``learner`` (``--learner``)."""
    schedule: dict[str, Any] = {"eval_interval": eval_every, "curve_eval": "epsilon"}  # ε-greedy curve points (Sec. 5)
    fields = dict(deep or {})
    if n_envs > 1:  # deep.n_envs: skill episodes in lock-step (learning/asgrl/lockstep.py); 1 is the serial loop
        fields["n_envs"] = n_envs
    if fields or learner:
        schedule["learner"] = {**(learner or {}), **({"deep": fields} if fields else {})}
    owned = {}
    for world in worlds:
        env_id, folder, labeler, model = WORLDS[world]
        owned[world] = own_world(env_id, labeler, model, skills="deep", folder=ROOT / "examples" / folder)
    cells = []
    for seed in seeds:
        for world in worlds:
            if (out / world / "asgrl" / f"seed{seed}.json").exists():
                continue
            atomic_write_json(out / world / "asgrl" / f"seed{seed}.config.json", schedule)
            domain, parts = owned[world]
            cells.append(Cell(domain, "asgrl", seed, steps=steps,
                              overrides={**schedule, "eval_episodes": eval_episodes}, model=parts["model"],
                              plugin=parts, group=world, skills="deep"))
    return cells


def asgrl_config(world: str, seed: int, steps: int, overrides: dict[str, Any]) -> tuple[Any, Any]:
    """One ASGRL run of a world as ``asgrl_cells`` makes it, for a script that trains it itself:
    its config (``overrides`` on the world's defaults) and the world's domain binding."""
    env_id, folder, labeler, model = WORLDS[world]
    domain, parts = own_world(env_id, labeler, model, skills="deep", folder=ROOT / "examples" / folder)
    binding = bind_domain(domain, parts["model"])
    return grid_config(binding, "asgrl", seed, steps, overrides, parts["model"], plugin=True, skills="deep"), binding


def asgrl_figures(run: GridRun, final_episodes: int) -> dict[str, Any]:
    """A finished ASGRL run's figures: its curve, and ``asg eval RUN --episodes N`` (greedy and ε = 0.05)."""
    trained = run.result
    if trained.status not in ("finished", "solved"):  # solved: stopped early at success 1.0
        raise RuntimeError(f"{trained.run_dir}: training stopped ({trained.status})")
    final = evaluate_run(str(trained.run_dir), episodes=final_episodes)
    curve = [(int(row["env_steps"]), float(row["success_rate"])) for row in run.rows]
    return {"world": run.group, "method": "asgrl", "seed": run.seed, "env_steps": trained.env_steps,
            "wall_seconds": round(trained.wall_seconds, 1),
            "final_success": final.epsilon_success_rate, "final_greedy": final.success_rate,
            "final_episodes": final_episodes, "steps_to_0.9": _first_at(curve, 0.9), "curve": curve}


# ---------------------------------------------------------------------------------------- PPO
def view_env(env_id: str, seed: int | None = None) -> Any:
    """MiniGrid's egocentric view, flattened (the observation the deep skills read, as a vector)."""
    import gymnasium as gym
    import minigrid  # noqa: F401  (registers the MiniGrid ids)
    from gymnasium.wrappers import FlattenObservation
    from minigrid.wrappers import ImgObsWrapper

    return FlattenObservation(ImgObsWrapper(gym.make(env_id)))


def score(policy: Any, env_id: str, seeds: Sequence[int], normalize: Any, deterministic: bool = False) -> float:
    """Success rate of the policy (sampled, or its most likely actions) over the layouts of the reset
    ``seeds``: ASGRL's own evaluation layouts (``evaluation.eval_seeds`` and ``epsilon_eval_seeds``),
    so that both learners are scored on the same layouts."""
    env = view_env(env_id)
    wins = 0
    for layout in seeds:
        obs, _ = env.reset(seed=int(layout))
        done, reward = False, 0.0
        while not done:
            x = normalize.normalize_obs(obs[None]) if normalize is not None else obs[None]
            action, _ = policy.predict(x, deterministic=deterministic)
            obs, reward, terminated, truncated, _ = env.step(int(action[0]))
            done = terminated or truncated
        wins += reward > 0  # MiniGrid pays 1 - 0.9 t / T on success, 0 otherwise
    env.close()
    return wins / len(seeds)


def run_ppo(world: str, seed: int, steps: int, eval_every: int, eval_episodes: int,
            final_episodes: int = FINAL_EPISODES) -> dict[str, Any]:
    """PPO from scratch on the env's own reward; evaluation points on held-out layouts."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize

    env_id = WORLDS[world][0]
    settings = dict(PPO_SETTINGS)
    n_envs, normalize = settings.pop("n_envs"), settings.pop("normalize")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        venv = make_vec_env(lambda: view_env(env_id), n_envs=n_envs, seed=seed)
        if normalize:
            venv = VecNormalize(venv, gamma=settings["gamma"])
        model = PPO("MlpPolicy", venv, seed=seed, device="cpu", verbose=0, **settings)
        curve: list[tuple[int, float]] = []
        start = time.monotonic()

        class Evaluate(BaseCallback):
            def _on_step(self) -> bool:
                if self.num_timesteps // eval_every > len(curve) - 1 or not curve:
                    stats = venv if normalize else None
                    rate = score(self.model.policy, env_id, eval_seeds(seed, eval_episodes), stats)
                    curve.append((int(self.num_timesteps), rate))
                    print(f"  ppo {world} seed {seed}: {self.num_timesteps} steps, success {rate:.2f}, "
                          f"{time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
                return True

        model.learn(total_timesteps=steps, callback=Evaluate())
        wall = time.monotonic() - start
        stats = venv if normalize else None
        final = score(model.policy, env_id, epsilon_eval_seeds(seed, final_episodes), stats)  # ASGRL's ε layouts
        final_det = score(model.policy, env_id, eval_seeds(seed, final_episodes), stats, True)  # its greedy ones
    finally:
        torch.set_num_threads(threads)
    return {"world": world, "method": "ppo", "seed": seed, "env_steps": int(model.num_timesteps),
            "wall_seconds": round(wall, 1), "final_success": final, "final_deterministic": final_det,
            "final_episodes": final_episodes,
            "steps_to_0.9": _first_at(curve, 0.9), "curve": curve, "settings": PPO_SETTINGS}


def _first_at(curve: list[tuple[int, float]], level: float) -> int | None:
    return next((steps for steps, rate in curve if rate >= level), None)


# ---------------------------------------------------------------------------------------- grid
def reduce_runs(out: Path, results: Path, command: str, commands: tuple[str, ...] = COMMANDS) -> dict[str, Any]:
    """Per world and method: seeds, mean final success (± s.e.m.), median steps to 0.9, wall time;
    with ``command``, the commit, each world/method's env-step budget (None where its runs' records
    disagree or predate the field) and the seeds found (``provenance``)."""
    rows, budget, seeds = [], {}, set()
    finals_n: set[int] = set()
    intervals: set[int] = set()
    for world in WORLDS:
        for method in METHODS:
            found = [json.loads(p.read_text()) for p in sorted((out / world / method).glob("seed*.json"))
                     if not p.name.endswith(".config.json")]
            if not found:
                continue
            budget[f"{world}/{method}"] = found[0].get("budget") if len({r.get("budget") for r in found}) == 1 else None
            seeds.update(r["seed"] for r in found)
            finals = [r["final_success"] for r in found]
            finals_n.update(r.get("final_episodes", FINAL_EPISODES) for r in found)
            intervals.update(r["curve"][1][0] - r["curve"][0][0] for r in found if len(r.get("curve", [])) > 1)
            others = [r.get("final_greedy", r.get("final_deterministic")) for r in found]
            solved = [r["steps_to_0.9"] for r in found if r["steps_to_0.9"] is not None]
            sem = statistics.stdev(finals) / np.sqrt(len(finals)) if len(finals) > 1 else 0.0
            rows.append({"world": world, "method": method, "seeds": len(found),
                         "final_success_mean": round(statistics.mean(finals), 3), "final_success_sem": round(sem, 3),
                         "finals": finals, "other_protocol": others, "reached_0.9": f"{len(solved)}/{len(found)}",
                         "median_steps_to_0.9": int(statistics.median(solved)) if solved else None,
                         "mean_env_steps": int(statistics.mean(r["env_steps"] for r in found)),
                         "mean_wall_minutes": round(statistics.mean(r["wall_seconds"] for r in found) / 60, 1)})
    payload = stamp({"commands": list(commands), "rows": rows, "ppo_settings": PPO_SETTINGS}, command,
                    {"env_steps_per_run": budget}, sorted(seeds))
    results.mkdir(parents=True, exist_ok=True)
    atomic_write_json(results / "own_worlds.json", payload)
    lines = ["Written by `python benchmarks/own_worlds.py --reduce-only` from the runs of:", "",
             *(f"    {command}" for command in commands), "",
             "Both learners play the worlds as MiniGrid ships them: episodes end at the env's own time "
             "limit (640 steps on DoorKey-8x8, 288 on UnlockPickup, 250 on DoorKey-5x5). "
             f"Final success over {'/'.join(map(str, sorted(finals_n))) or 'N'} fresh layouts, mean ± s.e.m. over "
             "seeds, with exploration left in (ASGRL ε = 0.05, PPO sampling), per seed, and under the other "
             "protocol (ASGRL greedy, PPO deterministic). Steps to 0.9: the first curve point at or above 0.9 "
             f"(curve points every {'/'.join(f'{round(k, -2) / 1000:g}k' for k in sorted(intervals)) or 'N'} steps; "
             "the layouts per point as each command's --eval-episodes). Wall: one core each, two or three "
             "jobs sharing the machine's two.", "",
             "| world | method | seeds | final success | per seed | other protocol | reached 0.9 | "
             "median steps to 0.9 | env steps | wall (min) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['world']} | {r['method']} | {r['seeds']} | {r['final_success_mean']:.2f} ± "
                     f"{r['final_success_sem']:.2f} | {', '.join(f'{v:.2f}' for v in r['finals'])} | "
                     f"{', '.join(f'{v:.2f}' for v in r['other_protocol'])} | {r['reached_0.9']} | "
                     f"{r['median_steps_to_0.9'] or '-'} | {r['mean_env_steps']} | {r['mean_wall_minutes']} |")
    atomic_write(results / "own_worlds.md", ("\n".join(lines) + "\n").encode())
    return payload


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worlds", default=",".join(WORLDS))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=500_000, help="env-step budget of an ASGRL run")
    parser.add_argument("--ppo-steps", type=int, default=1_000_000, help="env-step budget of a PPO run")
    parser.add_argument("--eval-every", type=int, default=25_000)
    parser.add_argument("--n-envs", type=int, default=1,
                        help="ASGRL's deep.n_envs: envs whose skill episodes run in lock-step (1: the serial loop)")
    parser.add_argument("--deep", type=json.loads, default={}, metavar="JSON",
                        help="ASGRL: fields of learner.deep, e.g. '{\"encoding\": \"codes\", \"hidden\": [64, 64]}'")
    parser.add_argument("--learner", type=json.loads, default={}, metavar="JSON",
                        help="ASGRL: other fields of learner, e.g. '{\"meta\": {\"state\": \"landmarks\"}}'")
    parser.add_argument("--eval-episodes", type=int, default=20)
    parser.add_argument("--out", type=Path, default=Path("runs/own_worlds"))
    parser.add_argument("--results", type=Path, default=None,
                        help="where own_worlds.json and .md go (default: benchmarks/results/own_worlds/ for the "
                             "default --out, else the --out folder, so a trial run never replaces the committed table)")
    parser.add_argument("--final-episodes", type=int, default=FINAL_EPISODES, help="fresh layouts of the final score")
    parser.add_argument("--reduce-only", action="store_true")
    parser.add_argument("--trained-by", action="append", default=[], metavar="COMMAND",
                        help="with --results elsewhere: the command(s) that trained the runs in --out "
                             "(default: the commands of benchmarks/results/own_worlds/)")
    add_grid_arguments(parser)
    args = parser.parse_args(argv)
    where = grid_arguments(parser, args)
    worlds, methods = args.worlds.split(","), args.methods.split(",")
    for name, known, option in ((worlds, WORLDS, "--worlds"), (methods, METHODS, "--methods")):
        unknown = [item for item in name if item not in known]
        if unknown:
            parser.error(f"{option}: unknown {unknown[0]!r}; choose from {', '.join(known)}")
    if not isinstance(args.deep, dict):
        parser.error("--deep: expected a JSON object of learner.deep fields")
    if not isinstance(args.learner, dict) or "deep" in args.learner:
        parser.error("--learner: expected a JSON object of learner fields (learner.deep's go in --deep)")
    if args.results is None:  # a trial run's table goes beside its runs, not over the committed one
        args.results = RESULTS if args.out == parser.get_default("out") else args.out
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    out = args.out.resolve()
    if not args.reduce_only and "asgrl" in methods:
        def done(run: GridRun, reused: bool) -> None:
            if run.result.status == "interrupted":
                return
            figures = {**asgrl_figures(run, args.final_episodes), "budget": args.steps}
            atomic_write_json(out / run.group / "asgrl" / f"seed{run.seed}.json", figures)
            print(f"{run.group}/asgrl/seed{run.seed}: final {figures['final_success']:.2f}, steps to 0.9 "
                  f"{figures['steps_to_0.9']}, {figures['wall_seconds']:.0f} s", file=sys.stderr, flush=True)

        _, interrupted = run_benchmark_grid(
            asgrl_cells(worlds, seeds, args.steps, args.eval_every, args.eval_episodes, out, args.n_envs,
                        args.deep, args.learner), out,
            where, done)
        if interrupted:
            return 130
    if not args.reduce_only and "ppo" in methods:  # a learner from outside asg: its cells are jobs
        work = [Job("ppo", seed, run_ppo, (world, seed, args.ppo_steps, args.eval_every, args.eval_episodes,
                                           args.final_episodes), world)
                for seed in seeds for world in worlds if not (out / world / "ppo" / f"seed{seed}.json").exists()]

        def ppo_done(job: Job, result: dict[str, Any]) -> None:
            atomic_write_json(out / job.group / "ppo" / f"seed{job.seed}.json", {**result, "budget": args.ppo_steps})
            print(f"{job.group}/ppo/seed{job.seed}: final {result['final_success']:.2f}, steps to 0.9 "
                  f"{result['steps_to_0.9']}, {result['wall_seconds']:.0f} s", file=sys.stderr, flush=True)

        stages = Stages()
        try:
            run_jobs(work, progress=stages, on_done=ppo_done, **where)
        finally:
            stages.close()
    command = command_line(__file__, argv)
    # the runs' own commands: --trained-by; this command when it trained a grid of its own (not the
    # default --out of the committed table); else the commands of benchmarks/results/own_worlds/
    own_grid = not args.reduce_only and args.out != parser.get_default("out")
    trained_by = tuple(args.trained_by) or ((command,) if own_grid else COMMANDS)
    payload = reduce_runs(args.out, args.results, command, trained_by)
    print(json.dumps(payload["rows"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
