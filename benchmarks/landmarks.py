"""asg's h^m landmarks against Fast Downward's ``lm_hm`` on every IPC STRIPS task.

For each task: are the landmark sets identical, do the sound orderings agree (transitive
closure, and greedy-necessary edges one by one), and how long does each side take?
Times are measured in the same run, on the same machine:

* ``asg api``: parse + ground + landmarks in-process (what a Python user pays);
* ``asg cli``: the ``asg landmarks --format json`` process, interpreter start-up included;
* ``fd``: FD's driver (Python translator + the C++ landmark factory), as a process.

    python benchmarks/landmarks.py --m 1 --encoding binary
    python benchmarks/landmarks.py --m 2 --timeout 300 --json results.json

Normalisations are those of ``asg.planning.peer`` (static facts, negated atoms, FD's
invariant-based encoding with ``--encoding binary``).
"""
from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from asg.planning import compute_landmarks, load_task
from asg.planning.errors import PlannerError
from asg.planning.peer import asg_view, compare, fd_landmarks, pddl_texts

IPC = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "ipc"


def run(m: int, encoding: str, timeout: float, only: list[str], cli: bool) -> list[dict]:
    rows = list(csv.DictReader(open(IPC / "MANIFEST.tsv"), delimiter="\t"))
    out = []
    for row in rows:
        if row["fragment"] != "strips" or (only and not any(o in row["problem_file"] for o in only)):
            continue
        domain, problem = IPC / row["domain_file"], IPC / row["problem_file"]
        start = time.perf_counter()
        graph = compute_landmarks(load_task(domain, problem), m=m)
        api = time.perf_counter() - start
        cli_seconds = None
        if cli:
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "asg.cli.main", "landmarks", str(domain), str(problem),
                            "--m", str(m), "--format", "json"], check=True, capture_output=True)
            cli_seconds = time.perf_counter() - start
        record = {"task": row["problem_file"], "landmarks": len(graph.landmarks), "asg_api_s": api,
                  "asg_cli_s": cli_seconds}
        try:
            peer = fd_landmarks(*pddl_texts(domain, problem), m=m, timeout=timeout, encoding=encoding)
        except PlannerError as err:
            record.update(fd_s=None, status=f"fd: {err}")
            out.append(record)
            print(f"{record['task']:24s} FD did not finish: {err}", flush=True)
            continue
        result = compare(asg_view(graph), peer)
        record.update(fd_s=peer.seconds, fd_landmarks=len(peer.landmarks),
                      landmarks_equal=result.landmarks_equal, orderings_equal=result.orderings_equal,
                      status="ok")
        out.append(record)
        cli_text = f"{cli_seconds:7.3f}" if cli_seconds is not None else "      -"
        print(f"{record['task']:24s} lm {len(peer.landmarks):4d}  sets {'same' if result.landmarks_equal else 'DIFF'}"
              f"  orderings {'same' if result.orderings_equal else 'DIFF'}  api {api:7.3f}s  cli {cli_text}s"
              f"  fd {peer.seconds:7.3f}s", flush=True)
    return out


def summary(records: list[dict], m: int, encoding: str) -> str:
    done = [r for r in records if r["status"] == "ok"]
    same_sets = sum(r["landmarks_equal"] for r in done)
    same_orders = sum(r["orderings_equal"] for r in done)
    api = statistics.median(r["asg_api_s"] / r["fd_s"] for r in done) if done else float("nan")
    lines = [f"m={m}, FD encoding {encoding}: {len(records)} STRIPS tasks, FD finished {len(done)}",
             f"  identical landmark sets: {same_sets}/{len(done)}; identical orderings: {same_orders}/{len(done)}",
             f"  median time ratio asg api / fd: {api:.3f}"]
    with_cli = [r for r in done if r["asg_cli_s"] is not None]
    if with_cli:
        ratio = statistics.median(r["asg_cli_s"] / r["fd_s"] for r in with_cli)
        lines.append(f"  median time ratio asg cli / fd: {ratio:.3f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, choices=(1, 2), default=1)
    parser.add_argument("--encoding", choices=("binary", "default"), default="binary")
    parser.add_argument("--timeout", type=float, default=120.0, help="FD seconds per task")
    parser.add_argument("--no-cli", action="store_true", help="skip timing the asg process")
    parser.add_argument("--json", type=Path, help="also write the records here")
    parser.add_argument("only", nargs="*", help="substrings of task paths to keep")
    args = parser.parse_args()
    if not IPC.is_dir():
        sys.exit(f"the IPC corpus is not at {IPC}")
    records = run(args.m, args.encoding, args.timeout, args.only, cli=not args.no_cli)
    print(summary(records, args.m, args.encoding))
    if args.json:
        args.json.write_text(json.dumps(records, indent=1))


if __name__ == "__main__":
    main()
