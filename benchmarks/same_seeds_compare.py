"""Compare what ``same_seeds_before_after.sh`` wrote: per run, result.json and every metrics row
(wall time aside) before and after; per Fetch evaluation, the success of every program.

    python benchmarks/same_seeds_compare.py WORK [--md OUT.md]
"""
from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return [{k: v for k, v in r.items() if k != "wall_seconds"} for r in csv.DictReader(handle)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work", type=Path)
    parser.add_argument("--md", type=Path)
    args = parser.parse_args()
    lines = ["| run | before | after | identical |", "|---|---|---|---|"]
    for old in sorted(args.work.glob("old-*.json")):
        name = old.name[len("old-"):-len(".json")]
        a, b = json.loads(old.read_text()), json.loads((args.work / f"new-{name}.json").read_text())
        if "programs" in a:
            same = a["programs"] == b["programs"]
            show = a.get("families", {})
            lines.append(f"| {name} | {show} | {b.get('families', {})} | {'yes' if same else 'NO'} |")
            continue
        keys = [k for k in a if k not in ("wall_seconds", "run_dir")]
        same = all(a[k] == b.get(k) for k in keys) and rows(args.work / "old" / name / "metrics.csv") == rows(
            args.work / "new" / name / "metrics.csv")
        lines.append(f"| {name} | success {a['success_rate']:.2f} at {a['env_steps']} steps | "
                     f"success {b['success_rate']:.2f} at {b['env_steps']} steps | {'yes' if same else 'NO'} |")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.md:
        args.md.write_text(text)


if __name__ == "__main__":
    main()
