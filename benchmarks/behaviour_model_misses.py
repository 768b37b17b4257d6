"""Where does a learned behaviour model put the moved block when it misses a real success?

For the held-out episodes of a behaviour-model run folder's dataset (the split the stage itself
holds out, ``split_held_out``), each model's prediction is scored as in
``failure_report`` (ψ_i of the predicted s_T against ψ_i of the real one). For the real successes
it predicts as failures, the block that moved most is located on the segment from its start to
its real end: ``t`` = 0 at the start, 1 at the real end (0.5 would be the mean of success and
no-move, a blur), and its distance from the real end (what ψ's tolerances see).

    python benchmarks/behaviour_model_misses.py --run runs/pp-e30/behaviour-model MODEL.npz [MODEL.npz ...]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from asg.learning.world_models.behaviour_model import (
    DATASET_FILE,
    BehaviourDataset,
    LearnedBehaviourModel,
    library_program,
    split_held_out,
    state_atoms,
)


def held_out(run: Path) -> BehaviourDataset:
    """The episodes the behaviour-model stage in ``run`` held out (its own split)."""
    saved = json.loads((run / "config.json").read_text())
    return split_held_out(BehaviourDataset.load(run / DATASET_FILE), saved["seed"], saved["config"]["held_out"])[0]


def misses(model: LearnedBehaviourModel, test: BehaviourDataset) -> dict:
    """Counts of (real outcome, predicted outcome) and where the missed successes' moved block lands."""
    pred = model.predict_batch(test.s0, test.program)  # (N, 70); blocks at [:12] as 4 x (x, y, z)
    counts = {"success_predicted": 0, "success_missed": 0, "failure_predicted": 0, "failure_missed": 0}
    along, error, moved = [], [], []
    for k in range(len(test)):
        post = library_program(model.programs[int(test.program[k])]).post
        truth, guess = post.holds(state_atoms(test.sT[k])), post.holds(state_atoms(pred[k]))
        counts[f"{'success' if truth else 'failure'}_{'predicted' if truth == guess else 'missed'}"] += 1
        if truth and not guess:
            start, end, guessed = (x[k, :12].reshape(4, 3) for x in (test.s0, test.sT, pred))
            j = int(np.argmax(np.linalg.norm(end - start, axis=1)))
            move = end[j] - start[j]
            along.append(float(np.dot(guessed[j] - start[j], move) / np.dot(move, move)))
            error.append(float(np.linalg.norm(guessed[j] - end[j])))
            moved.append(float(np.linalg.norm(move)))
    quantiles = {"q25": float(np.quantile(along, 0.25)), "median": float(np.median(along)),
                 "q75": float(np.quantile(along, 0.75))} if along else {}
    return {**counts, "t_along_move": quantiles, "median_error_m": float(np.median(error)) if error else None,
            "median_move_m": float(np.median(moved)) if moved else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True, help="behaviour-model run folder (its dataset.npz)")
    parser.add_argument("models", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, help="JSON file for the figures")
    args = parser.parse_args()
    test = held_out(args.run)
    report = {str(path): misses(LearnedBehaviourModel.load(path), test) for path in args.models}
    for path, row in report.items():
        t = row["t_along_move"]
        print(f"{path}: {row['success_missed']} of {row['success_missed'] + row['success_predicted']} real successes "
              f"missed; moved block at t = {t.get('median', float('nan')):.2f} (q25 {t.get('q25', float('nan')):.2f}, "
              f"q75 {t.get('q75', float('nan')):.2f}) of its move, {row['median_error_m']:.3f} m from the real end "
              f"of a {row['median_move_m']:.3f} m move (medians)")
    if args.out is not None:
        args.out.write_text(json.dumps({"held_out_episodes": len(test), "run": str(args.run), **report}, indent=2)
                            + "\n")


if __name__ == "__main__":
    main()
