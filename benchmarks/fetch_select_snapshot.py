"""Choose a goal-policy snapshot on a held-out suite of atomic starts (issue 36; ours, not the paper's).

A goal-policy run with ``schedule.snapshot_every`` N keeps ``snapshots/policy_eNNNN.npz`` every N
epochs. DDPG+HER's success moves between program families and start settings from one stretch of
training to the next (benchmarks/results/fetch_programs/expert_free/README.txt), so the last
epoch's weights need not be the best ones. This scores every snapshot of the given run folders
on a validation suite that no evaluation of the results uses (its own seed, ``--seed``): the goal
test of every atomic program from table starts, from chained starts (a Stack onto a tower, a Move
into a half-full zone; ``initial_states.py``) and from chained starts whose unused blocks were first
put into the other zone (``other_zone``, as Clean_And_Stack and Clean_Table leave them), ``--episodes``
per program and setting. A snapshot's score is its worst family-and-setting rate (Move_To_Zone and
Stack, in each setting): the row of Table 2 needs every family in every setting. Ties go to the
later epoch. ``--z-tolerance`` / ``--xy-tolerance`` score the goal test that also wants each block
within that height / horizontal distance of its target (``evaluate_atomic``'s tolerant test).
With ``--average-from E`` each run also offers the weight average of its snapshots from epoch E on
(stochastic weight averaging, ``evaluate.average_policies``), written beside ``--out`` as
``<out>_averages/<run>_average_eE-eL.npz`` (a training run's folder has one writer, its trainer).

``--policies`` adds policy files as candidates (the committed stages of a run, say). With ``--soup``
the candidates become the ingredients of a greedy model soup (Wortsman et al., ICML 2022, Recipe 1):
in order of their scores, each is added to the soup of the better ones if the weight average with it
scores at least as high as without it. Their common parent's fine-tunes are what it is for: DDPG's
continuations of one policy that each trade one family or setting for another. The uniform soup of
every candidate is scored too. Both are written to ``<out>_soups/`` (weights averaged under the best
ingredient's normaliser, ``evaluate.average_policies``), scored as rows of kind ``soup``.

    python benchmarks/fetch_select_snapshot.py --runs runs/ef-gp-q runs/ef-gp-r [--episodes 8]
        [--every 10] [--average-from 960] [--jobs 2] [--out FILE]
    python benchmarks/fetch_select_snapshot.py --policies A/policy.npz B/policy.npz ... --soup [--out FILE]

It prints one line per snapshot and writes the rows and the choice to ``--out`` (stamped with its
command, commit, budget and seeds). Model selection on held-out data: the atomic evaluation
(seed 0) and Table 2 that follow use other starts.
"""
from __future__ import annotations

import argparse
import re
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from provenance import command_line, write_result

from asg.learning.errors import CheckpointError
from asg.learning.goal_policy.evaluate import average_policies, evaluate_atomic, load_policy, save_policy

SETTINGS = ("table", "chained", "other_zone")
SNAPSHOT = re.compile(r"policy_e(\d{4,})\.npz$")


def snapshots(run: Path, every: int) -> list[tuple[int, Path]]:
    """The run folder's snapshots whose epoch is a multiple of ``every``, by epoch."""
    found = sorted((int(m.group(1)), p) for p in (run / "snapshots").glob("policy_e*.npz")
                   if (m := SNAPSHOT.search(p.name)))
    return [(epoch, path) for epoch, path in found if epoch % every == 0]


def averaged(run: Path, every: int, first: int, folder: Path) -> tuple[int, Path] | None:
    """The weight average of the run's snapshots from epoch ``first`` on, written to ``folder``:
    (last epoch, path); None when fewer than two snapshots qualify."""
    picked = [(epoch, path) for epoch, path in snapshots(run, every) if epoch >= first]
    if len(picked) < 2:
        return None
    last = picked[-1][0]
    path = folder / f"{run.name}_average_e{picked[0][0]:04d}-e{last:04d}.npz"
    save_policy(average_policies([p for _, p in picked]), path)
    return last, path


Tolerance = tuple[float | None, float | None]  # (z, xy) of the goal test scored; (None, None): the paper's


def score(path: Path, episodes: int, seed: int, tol: Tolerance = (None, None)) -> dict:
    """The snapshot's family rates per setting (goal test) and its score, the worst of them."""
    return _scored(score_setting(path, episodes, seed, setting, tol) for setting in SETTINGS)


def _scored(parts: Iterable[dict[str, float]]) -> dict:
    """The rates of every setting together, and the score: the worst of them."""
    rates = {name: rate for part in parts for name, rate in part.items()}
    return {"rates": rates, "score": min(rates.values())}


def score_setting(path: Path, episodes: int, seed: int, setting: str,
                  tol: Tolerance = (None, None)) -> dict[str, float]:
    """The policy's family rates (goal test; with ``tol``, the test with those tolerances) from one
    setting's starts."""
    result = evaluate_atomic(path, episodes=episodes, seed=seed, starts=setting, z_tolerance=tol[0],
                             xy_tolerance=tol[1])
    rates = result["families"] if tol == (None, None) else result["tolerant_families"]
    return {f"{setting}/{fam}": rate for fam, rate in rates.items()}


def score_spread(pool: Any, path: Path, episodes: int, seed: int, tol: Tolerance = (None, None)) -> dict:
    """``score`` with the settings spread over the pool's processes."""
    n = len(SETTINGS)
    return _scored(pool.map(score_setting, [path] * n, [episodes] * n, [seed] * n, SETTINGS, [tol] * n))


def soups(pool: Any, scored: list[dict], folder: Path, episodes: int, seed: int,
          tol: Tolerance = (None, None)) -> list[dict]:
    """The greedy soup of the scored candidates (Recipe 1 of Wortsman et al. 2022: by score, each kept
    if the average with it scores at least as high) and the uniform soup of all; their rows."""
    ranked = sorted(scored, key=lambda r: -r["score"])
    folder.mkdir(parents=True, exist_ok=True)

    def averaged(name: str, rows: list[dict]) -> Path:
        path = folder / f"{name}.npz"  # the best ingredient last: its normaliser is the soup's
        save_policy(average_policies([r["policy"] for r in reversed(rows)]), path)
        return path

    def mixed(name: str, rows: list[dict]) -> tuple[Path, dict]:
        path = averaged(name, rows)
        return path, score_spread(pool, path, episodes, seed, tol)

    kept, greedy, out = [ranked[0]], {"rates": ranked[0]["rates"], "score": ranked[0]["score"]}, []
    for k, row in enumerate(ranked[1:], 2):
        path, trial = mixed(f"greedy_trial_{k}", [*kept, row])
        best = greedy["score"]
        added = trial["score"] >= best - 1e-9  # rates are sums of fractions: an equal score may differ in the last bit
        print(f"soup of {len(kept) + 1}, + {row['policy']}: score {trial['score']:.3f} "
              f"({'kept' if added else 'left out'}; {best:.3f} without)", flush=True)
        out.append({"kind": "soup-trial", "policy": str(path), "ingredients": [r["policy"] for r in [*kept, row]],
                    "kept": added, **trial})
        if added:
            kept, greedy = [*kept, row], trial
    path = averaged("greedy_soup", kept)  # the last kept trial's weights (or the best alone): scored already
    out.append({"kind": "soup", "name": "greedy", "policy": str(path), "ingredients": [r["policy"] for r in kept],
                **greedy})
    path, uniform = mixed("uniform_soup", ranked)
    out.append({"kind": "soup", "name": "uniform", "policy": str(path),
                "ingredients": [r["policy"] for r in ranked], **uniform})
    for row in out[-2:]:
        print(f"{row['name']} soup of {len(row['ingredients'])}: score {row['score']:.3f}", flush=True)
    return out


class _Serial:
    """``--jobs 1``: the pool's ``map`` in this process."""

    def __enter__(self) -> _Serial:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    map = staticmethod(map)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, nargs="+", default=[], help="goal-policy run folders")
    parser.add_argument("--policies", type=Path, nargs="+", default=[], help="policy files, scored as candidates")
    parser.add_argument("--soup", action="store_true",
                        help="also build and score the greedy and the uniform model soup of the candidates")
    parser.add_argument("--episodes", type=int, default=8, help="episodes per program and setting")
    parser.add_argument("--every", type=int, default=5, help="score snapshots of epochs that are multiples of this")
    parser.add_argument("--seed", type=int, default=7919, help="the validation suite's seed (not 0, the evaluation's)")
    parser.add_argument("--average-from", type=int, default=None, metavar="EPOCH",
                        help="also score each run's weight average of its snapshots from this epoch on")
    parser.add_argument("--averages-only", action="store_true",
                        help="with --average-from: score the averages alone (the snapshots scored before)")
    parser.add_argument("--jobs", type=int, default=1, help="snapshots scored at once (processes)")
    parser.add_argument("--z-tolerance", type=float, help="score the goal test that also wants each block within "
                        "this height (m) of its target (schedule.goal_z_tolerance)")
    parser.add_argument("--xy-tolerance", type=float, help="... and within this horizontal distance (m) of it "
                        "(schedule.goal_xy_tolerance): a Move that leaves the zone's other slot free")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/fetch_select_snapshot.json"))
    args = parser.parse_args(argv)
    if min(args.episodes, args.every, args.jobs) < 1:
        parser.error("--episodes, --every and --jobs must be >= 1")
    if any(t is not None and not t > 0 for t in (args.z_tolerance, args.xy_tolerance)):
        parser.error("--z-tolerance and --xy-tolerance must be > 0")
    tol = (args.z_tolerance, args.xy_tolerance)
    if args.seed == 0:
        parser.error("--seed: 0 is the atomic evaluation's seed; the validation suite needs its own")
    if not args.runs and not args.policies:
        parser.error("expected --runs, --policies or both")
    candidates = [(run, epoch, path) for run in args.runs for epoch, path in snapshots(run, args.every)]
    missing = [str(run) for run in args.runs if not any(c[0] == run for c in candidates)]
    if missing:
        parser.error(f"--runs: no snapshots/policy_eNNNN.npz in {', '.join(missing)} (schedule.snapshot_every)")
    for path in args.policies:
        try:
            load_policy(path)
        except CheckpointError as exc:
            parser.error(f"--policies: {exc}")
    if args.soup and len(candidates) + len(args.policies) < 2:
        parser.error("--soup: expected 2 or more candidates")
    candidates += [(path.parent, 0, path) for path in args.policies]
    if args.averages_only and args.average_from is None:
        parser.error("--averages-only needs --average-from")
    if args.averages_only:
        candidates = []
    if args.average_from is not None:
        folder = args.out.parent / f"{args.out.stem}_averages"
        candidates += [(run, *found) for run in args.runs
                       if (found := averaged(run, args.every, args.average_from, folder)) is not None]
    t0, rows = time.perf_counter(), []
    paths, n = [c[2] for c in candidates], len(candidates)
    with ProcessPoolExecutor(args.jobs) if args.jobs > 1 else _Serial() as pool:
        scores = pool.map(score, paths, [args.episodes] * n, [args.seed] * n, [tol] * n)
        for k, ((run, epoch, path), scored) in enumerate(zip(candidates, scores), 1):
            kind = "average" if "_average_e" in path.name else "policy" if path in args.policies else "snapshot"
            row = {"run": str(run), "epoch": epoch, "kind": kind, "policy": str(path), **scored}
            rows.append(row)
            cells = " ".join(f"{name} {rate:.3f}" for name, rate in row["rates"].items())
            print(f"[{k}/{len(candidates)}] {run.name} {path.stem}: score {row['score']:.3f} ({cells})", flush=True)
        if args.soup:
            rows += soups(pool, rows, args.out.parent / f"{args.out.stem}_soups", args.episodes, args.seed, tol)
    best = max((r for r in rows if r["kind"] != "soup-trial"),
               key=lambda r: (r["score"], r.get("epoch", 0), r["kind"] == "snapshot"))
    seconds = round(time.perf_counter() - t0, 1)
    test = {"z_tolerance": args.z_tolerance, "xy_tolerance": args.xy_tolerance}
    write_result(args.out, {"chosen": best, "rows": rows, "settings": list(SETTINGS), "goal_test": test,
                            "seconds": seconds},
                 command_line(__file__, argv), {"episodes_per_program_and_setting": args.episodes}, [args.seed])
    print(f"chosen: {best['policy']} (score {best['score']:.3f}); wrote {args.out} ({seconds:.0f} s)")


if __name__ == "__main__":
    main()
