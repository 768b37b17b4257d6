"""The effect of the dataset size N on the self-behavioural model (AlphaNPI-X Figure 10).

Reads a dataset collected by ``asg train --domain fetch-programs --stage behaviour-model``
(``dataset.npz`` in its run folder), keeps the same held-out episodes for every size, fits Ω_w on
the first N training episodes for each requested N, and prints the post-condition agreement per
program family (ψ on the predicted state vs ψ on the true final state) and the block-position
error. The paper's Figure 10 uses 10k/50k/100k episodes; two cores collect about 10k in the
time budget, so the sizes here are fractions of that.

    python benchmarks/behaviour_model_size.py runs/fetch-behaviour-model-fast-seed0 --sizes 1000,2500,5000,all \\
        --json benchmarks/results/behaviour_model_size.json
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
from provenance import command_line, stamp, write_json

from asg.envs.fetch import FetchTask
from asg.learning.world_models.behaviour_model import (
    BEHAVIOUR_PRESETS,
    DATASET_FILE,
    BehaviourDataset,
    LearnedBehaviourModel,
    agreement,
    fit_behaviour_model,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="a behaviour-model run folder holding dataset.npz")
    parser.add_argument("--sizes", default="1000,2500,5000,all", help="training episodes per fit ('all' = every one)")
    parser.add_argument("--epochs", type=int, default=None, help="epochs per fit (default: the fast preset's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    config = BEHAVIOUR_PRESETS["fast"]
    if args.epochs:
        config = replace(config, epochs=args.epochs)
    data = BehaviourDataset.load(args.run_dir / DATASET_FILE)
    perm = np.random.default_rng([args.seed, 7]).permutation(len(data))  # the split train_behaviour_model uses
    n_test = max(1, int(round(config.held_out * len(data))))
    test, train = data.subset(perm[:n_test]), data.subset(perm[n_test:])
    programs = FetchTask().programs
    rows = []
    print(f"# python benchmarks/behaviour_model_size.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    print(f"# {len(data)} episodes in {args.run_dir}, {len(test)} held out; {config.epochs} epochs per fit")
    print(f"{'N train':>8} {'Move_To_Zone':>13} {'Stack':>7} {'block err (m)':>14} {'fit s':>7}")
    for size in args.sizes.split(","):
        n = len(train) if size == "all" else min(int(size), len(train))
        start = time.perf_counter()
        net, s_norm, d_norm, _ = fit_behaviour_model(train.subset(np.arange(n)), test, len(programs), config, args.seed,
                                                     programs=programs)
        result = agreement(LearnedBehaviourModel(net, s_norm, d_norm, programs, config.anchor), test)
        row = {"train_episodes": n, "families": result["families"], "block_error_mean": result["block_error_mean"],
               "fit_seconds": round(time.perf_counter() - start, 1)}
        rows.append(row)
        fam = result["families"]
        print(f"{n:>8} {fam.get('Move_To_Zone', float('nan')):>13.3f} {fam.get('Stack', float('nan')):>7.3f} "
              f"{row['block_error_mean']:>14.4f} {row['fit_seconds']:>7.1f}", flush=True)
    if args.json:
        write_json(args.json, stamp({"run_dir": str(args.run_dir), "held_out": len(test), "rows": rows},
                                    command_line(__file__, argv), {"epochs_per_fit": config.epochs}, [args.seed]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
