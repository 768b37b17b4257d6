"""AlphaNPI-X Figure 11: the meta-controller trained with random program sampling vs the
learning-progress curriculum (Appendix B.3, E.3), validation success of every non-atomic program.

Trains the meta-controller stage (``asg.learning.fetch_programs.train_meta_controller``) once per
curriculum and seed, in the learned behaviour model with the shipped goal policy's model, with
the given preset (``paper`` by default: the paper's masks, learned Stop, T5's buffer), then draws
one panel per program: the mean validation success over seeds against the training iteration,
with the band from the lowest to the highest seed, random beside learning-progress. Validation is
the trainer's own (``validation_episodes`` exploit episodes per program in the model, every
iteration), so, as the paper's Figure 5 and 11, it is the success the behaviour model predicts,
not success in MuJoCo.

    python benchmarks/figure11.py [--seeds 1] [--iterations 200] [--preset paper] [--workers 1]
        [--out runs/figure11] [--results benchmarks/results/fetch_programs/figure11] [--reduce-only]

A finished run folder of the same iterations is reused; an interrupted one (Ctrl-C, SIGTERM) is
resumed by running the same command again. Each finished run's validation curve is also kept in
``--results`` as ``seeds/<preset>/<curriculum>/seed<N>.csv`` (iteration and ``val/<program>`` columns of its
``metrics.csv``; committed): the reducer reads those records, so seeds trained in an earlier
checkout (whose run folders are gone) still count and are not trained again. Writes
``figure11.json``, ``figure11.md`` and ``figure11.png`` into ``--results``.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from asg.learning import fetch_programs as fp
from asg.learning.atomic import atomic_write
from asg.learning.npi.config import CURRICULA
from asg.learning.plots import Band, plot_bands
from asg.learning.run_dir import atomic_write_json, read_metrics, write_metrics

LEVEL = 0.9  # the success a program is counted as learned at, for the table


def run_folder(out: Path, curriculum: str, seed: int) -> Path:
    return out / curriculum / f"seed{seed}"


def record_path(results: Path, preset: str, curriculum: str, seed: int) -> Path:
    """The committed validation curve of one run."""
    return results / "seeds" / preset / curriculum / f"seed{seed}.csv"


def trained_iterations(folder: Path) -> int:
    """Iterations a run folder holds (0 if none)."""
    path = folder / "metrics.csv"
    return len(read_metrics(path)) if path.is_file() else 0


def keep_record(folder: Path, path: Path, iterations: int) -> None:
    """Copy the iteration and validation columns of a finished run's first ``iterations`` rows to ``path``."""
    rows = read_metrics(folder / "metrics.csv")[:iterations]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_metrics(path, [{k: v for k, v in row.items() if k == "iteration" or k.startswith("val/")} for row in rows])


def train(folder: Path, curriculum: str, seed: int, args: argparse.Namespace) -> None:
    """Train (or resume) one run to ``args.iterations`` and keep its record."""
    record = record_path(args.results, args.preset, curriculum, seed)
    if len(read_metrics(record)) >= args.iterations:
        print(f"{curriculum} seed {seed}: reused ({record})", flush=True)
        return
    done = trained_iterations(folder)
    if done >= args.iterations:
        print(f"{curriculum} seed {seed}: reused ({done} iterations)", flush=True)
        keep_record(folder, record, args.iterations)
        return
    start = time.perf_counter()
    resume = (folder / "config.json").is_file()
    config = None if resume else replace(fp.meta_controller_config(args.preset), curriculum=curriculum)
    result = fp.train_meta_controller(folder, world_model_kind="learned", resume=resume, seed=seed, config=config,
                                      iterations=args.iterations, workers=args.workers)
    print(f"{curriculum} seed {seed}: {result.status} at {trained_iterations(folder)} iterations, "
          f"{time.perf_counter() - start:.0f} s", flush=True)
    if result.status == "interrupted":
        raise KeyboardInterrupt
    keep_record(folder, record, args.iterations)


def curves(path: Path, iterations: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Programs, iterations and (program, iteration) validation success of one run's record."""
    rows = read_metrics(path)[:iterations]
    programs = [key[len("val/"):] for key in rows[0] if key.startswith("val/")]
    its = np.array([int(row["iteration"]) for row in rows])
    values = np.array([[float(row[f"val/{p}"]) if row.get(f"val/{p}") not in (None, "") else np.nan for row in rows]
                       for p in programs])
    return programs, its, values


def first_at(its: np.ndarray, values: np.ndarray, level: float) -> int | None:
    """The first iteration the curve reaches ``level`` (None if never)."""
    hit = np.flatnonzero(np.nan_to_num(values, nan=-1.0) >= level)
    return int(its[hit[0]]) if len(hit) else None


def reduce(args: argparse.Namespace) -> dict:
    """Mean curves per curriculum and program over the seeds found; the figure, table and JSON."""
    runs: dict[str, dict] = {}
    programs: list[str] = []
    for curriculum in args.curricula:
        per_seed = {}
        for seed in range(args.seeds):
            record = record_path(args.results, args.preset, curriculum, seed)
            if len(read_metrics(record)) < args.iterations and trained_iterations(
                    run_folder(args.out, curriculum, seed)) >= args.iterations:
                keep_record(run_folder(args.out, curriculum, seed), record, args.iterations)
            if len(read_metrics(record)) >= args.iterations:
                programs, its, values = curves(record, args.iterations)
                per_seed[seed] = (its, values)
        if per_seed:
            runs[curriculum] = per_seed
    if not runs:
        raise SystemExit(f"no finished runs of {args.iterations} iterations under {args.out} or {args.results}")
    summary: dict = {"preset": args.preset, "iterations": args.iterations, "level": LEVEL, "curricula": {}}
    panels: dict[str, list[Band]] = {p: [] for p in programs}
    for curriculum, per_seed in runs.items():
        its = next(iter(per_seed.values()))[0]
        stack = np.stack([v for _, v in per_seed.values()])  # (seeds, programs, iterations)
        mean = np.nanmean(stack, axis=0)
        record = {"seeds": sorted(per_seed), "programs": {}}
        for i, program in enumerate(programs):
            panels[program].append(Band(curriculum, its.tolist(), mean[i].tolist(), np.nanmin(stack[:, i], 0).tolist(),
                                        np.nanmax(stack[:, i], 0).tolist()))
            record["programs"][program] = {
                "final": float(mean[i, -1]), "mean_last_10": float(np.nanmean(mean[i, -10:])),
                "first_at_level": {str(s): first_at(its, v[i], LEVEL) for s, (_, v) in per_seed.items()},
                "mean_curve": [round(float(x), 4) for x in mean[i]],
            }
        summary["curricula"][curriculum] = record
    args.results.mkdir(parents=True, exist_ok=True)
    plot_bands(args.results / "figure11.png", panels, xlabel="training iteration", ylabel="validation success",
               title=f"Figure 11: random vs learning-progress curriculum ({args.preset} preset, learned model; "
                     f"band: lowest to highest seed)", cols=4, panel_size=(4.2, 3.2))
    atomic_write_json(args.results / "figure11.json", summary)
    atomic_write(args.results / "figure11.md", ("\n".join(table(summary, programs)) + "\n").encode())
    return summary


def table(summary: dict, programs: list[str]) -> list[str]:
    """Markdown: per program and curriculum, the first iteration at LEVEL per seed and the last 10's mean."""
    cur = list(summary["curricula"])
    lines = [f"# Figure 11: random vs learning-progress curriculum ({summary['preset']} preset, "
             f"{summary['iterations']} iterations)", "",
             "Validation success in the learned behaviour model (the trainer's exploit episodes), per program: the "
             f"first iteration each seed reached {LEVEL} and the mean over the last 10 iterations.", "",
             "| program | " + " | ".join(f"{c}: first ≥ {LEVEL} (per seed) | {c}: last 10" for c in cur) + " |",
             "|---|" + "---|---|" * len(cur)]
    for program in programs:
        cells = []
        for c in cur:
            rec = summary["curricula"][c]["programs"][program]
            firsts = ", ".join("never" if v is None else str(v) for v in rec["first_at_level"].values())
            cells += [firsts, f"{rec['mean_last_10']:.2f}"]
        lines.append(f"| {program} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1, help="seeds 0..N-1")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--preset", choices=fp.PRESETS, default="paper")
    parser.add_argument("--curricula", nargs="+", choices=CURRICULA, default=list(CURRICULA))
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("runs/figure11"))
    parser.add_argument("--results", type=Path, default=Path("benchmarks/results/fetch_programs/figure11"))
    parser.add_argument("--reduce-only", action="store_true", help="reduce the finished runs, train nothing")
    args = parser.parse_args(argv)
    if not args.reduce_only:
        try:
            for seed in range(args.seeds):
                for curriculum in args.curricula:
                    train(run_folder(args.out, curriculum, seed), curriculum, seed, args)
        except KeyboardInterrupt:
            print("interrupted; run the same command again to continue", file=sys.stderr)
            return 130
    summary = reduce(args)
    for line in table(summary, list(next(iter(summary["curricula"].values()))["programs"])):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
