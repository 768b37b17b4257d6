"""asg's landmark factories (hm, rhw, zg) against Fast Downward's on a corpus of tasks.

For each task of the corpus and each factory, in one run:

* is the task read by asg (parse + ground; ``UnsupportedRequirementError`` and other refusals
  count as "not read") and does FD's translator take it;
* agreement with FD under ``--encoding binary`` (the normalisation of ``asg.planning.peer``):
  identical landmark sets, identical orderings (transitive closure of the sound orderings and
  greedy-necessary edges one by one); for rhw also given the translator's own variable order
  (``order``), which decides between overlapping disjunctions; and, reported only, against the
  other encoding (``--encoding default`` makes FD's default encoding the reference);
* the cold-process time ratio: ``asg landmarks DOMAIN PROBLEM --factory F --format json`` as a
  process against FD's driver doing translate + the factory (no search), same task, same run.

    python benchmarks/landmarks.py --factory all --corpus ipc
    python benchmarks/landmarks.py --factory rhw,zg --corpus ipc_suite --timeout 60
    python benchmarks/landmarks.py --factory zg blocks gripper     # only tasks matching
    python benchmarks/landmarks.py --factory all --corpus ipc_suite --shard 1/2 --out /tmp/part1  # and 2/2
    python benchmarks/landmarks.py --merge /tmp/part1.json /tmp/part2.json --out benchmarks/results/x

``--shard I/N`` runs every N-th task from the I-th (two shards use both cores; asg and FD are timed
under the same load); ``--merge`` joins shard files in the corpus's order, keeping each part's command
and commit. ``--resume`` keeps every row the output file already holds and runs the chosen tasks it
lacks (each run's command and commit are kept). ``--memory-gb`` caps the address space of the run and its FD
and asg processes: a task that exhausts it counts as not read (or FD's as not run), where it would
otherwise take the machine.

Writes ``benchmarks/results/landmarks_<corpus>_<factory>.json`` (command, commit, per-task rows,
summary) and ``.md`` (the summary); ``--out`` changes the stem. FD runs one at a time.
"""
from __future__ import annotations

import argparse
import csv
import json
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

from landmarks_process import asg_command, compile_asg
from provenance import command_line, git_commit, stamp, write_json

from asg.learning.atomic import atomic_write
from asg.planning import load_task
from asg.planning.errors import AsgError, PlannerError
from asg.planning.landmarks import FACTORIES, build_graph, compute_landmarks
from asg.planning.landmarks.rhw import rhw_landmarks
from asg.planning.peer import asg_view, compare, fd_landmarks, pddl_texts

SHARED = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
RESULTS = Path(__file__).resolve().parent / "results"


def tasks(corpus: str, only: list[str], limit: int | None,
          per_domain: int | None = None, skip: int = 0) -> list[tuple[str, Path, Path]]:
    root = SHARED / corpus
    with open(root / "MANIFEST.tsv") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    if corpus == "ipc":
        rows = [r for r in rows if r["fragment"] == "strips"]
    rows = [r for r in rows if not only or any(o in r["problem_file"] for o in only)]
    if per_domain is not None or skip:
        kept, seen = [], dict.fromkeys((r["domain"] for r in rows), 0)
        for r in rows:
            seen[r["domain"]] += 1
            if skip < seen[r["domain"]] <= skip + (per_domain or len(rows)):
                kept.append(r)
        rows = kept
    return [(r["problem_file"], root / r["domain_file"], root / r["problem_file"]) for r in rows[:limit]]


def agreement(graph, peer) -> dict:
    result = compare(asg_view(graph), peer)
    return {"sets": result.landmarks_equal, "orderings": result.orderings_equal,
            "missing": sorted(" | ".join(sorted(lm)) for lm in result.missing)[:5],
            "extra": sorted(" | ".join(sorted(lm)) for lm in result.extra)[:5]}


def asg_process(domain: Path, problem: Path, factory: str, m: int, timeout: float) -> float | str:
    """Wall seconds of a cold ``asg landmarks`` process, or its error line."""
    command = [*asg_command(), "landmarks", str(domain), str(problem), "--factory", factory, "--format", "json"]
    if factory == "hm":
        command += ["--m", str(m)]
    start = time.perf_counter()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timeout {timeout} s"
    seconds = time.perf_counter() - start
    return seconds if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["?"])[-1]


def run_task(name: str, domain: Path, problem: Path, factories: list[str], m: int, timeout: float,
             encoding: str, other_encoding: bool) -> dict:
    row: dict = {"task": name}
    texts = pddl_texts(domain, problem)
    try:
        task = load_task(domain, problem)
        row["asg_read"] = True
    except (AsgError, RecursionError, MemoryError) as err:
        task, row["asg_read"], row["asg_error"] = None, False, f"{type(err).__name__}: {err}"[:300]
    for factory in factories:
        cell: dict = {}
        row[factory] = cell
        try:
            peer = fd_landmarks(*texts, m=m, factory=factory, timeout=timeout, encoding=encoding)
            cell["fd_s"], cell["fd_landmarks"] = peer.seconds, len(peer.landmarks)
        except PlannerError as err:
            cell["fd_error"] = str(err)[:300]
            continue
        if task is None:
            continue
        start = time.perf_counter()
        try:
            graph = compute_landmarks(task, factory=factory, m=m if factory == "hm" else 1)
        except (AsgError, MemoryError) as err:
            cell["asg_error"] = str(err)[:300]
            continue
        cell["asg_api_s"] = time.perf_counter() - start
        cell["agree"] = agreement(graph, peer)
        if factory == "rhw":
            ordered = build_graph(task, rhw_landmarks(task, peer.variable_order), "rhw")
            cell["agree_fd_order"] = agreement(ordered, peer)
        if other_encoding:
            other = "default" if encoding == "binary" else "binary"
            try:
                cell["agree_other_encoding"] = agreement(graph, fd_landmarks(
                    *texts, m=m, factory=factory, timeout=timeout, encoding=other))
            except PlannerError as err:
                cell["agree_other_encoding"] = {"error": str(err)[:300]}
        process = asg_process(domain, problem, factory, m, timeout)
        if isinstance(process, float):
            cell["asg_process_s"] = process
            cell["process_ratio"] = process / peer.seconds
        else:
            cell["asg_process_error"] = process
    return row


def summarise(rows: list[dict], factories: list[str]) -> dict:
    out: dict = {"tasks": len(rows), "asg_read": sum(r["asg_read"] for r in rows)}
    for factory in factories:
        ran = [r[factory] for r in rows if "fd_s" in r[factory]]
        both = [c for c in ran if "agree" in c]
        entry = {"fd_translated": len(ran), "compared": len(both),
                 "sets_equal": sum(c["agree"]["sets"] for c in both),
                 "orderings_equal": sum(c["agree"]["orderings"] for c in both),
                 "both_equal": sum(c["agree"]["sets"] and c["agree"]["orderings"] for c in both)}
        with_order = [c for c in both if "agree_fd_order" in c]
        if with_order:
            entry["both_equal_fd_order"] = sum(c["agree_fd_order"]["sets"] and c["agree_fd_order"]["orderings"]
                                               for c in with_order)
        other = [c["agree_other_encoding"] for c in both if "sets" in c.get("agree_other_encoding", {})]
        if other:
            entry["other_encoding_compared"] = len(other)
            entry["other_encoding_both_equal"] = sum(d["sets"] and d["orderings"] for d in other)
        ratios = [c["process_ratio"] for c in both if "process_ratio" in c]
        if ratios:
            entry["median_process_ratio"] = statistics.median(ratios)
            entry["median_asg_process_s"] = statistics.median(c["asg_process_s"] for c in both if "asg_process_s" in c)
            entry["median_fd_process_s"] = statistics.median(c["fd_s"] for c in both if "process_ratio" in c)
        entry["differing"] = sorted(r["task"] for r in rows if "agree" in r[factory]
                                    and not (r[factory]["agree"]["sets"] and r[factory]["agree"]["orderings"]))
        out[factory] = entry
    return out


def markdown(summary: dict, command: str, commit: str, corpus: str, encoding: str, parts: list[dict]) -> str:
    other = "default" if encoding == "binary" else "binary"
    lines = [f"# asg landmark factories vs Fast Downward 26.6 on `{corpus}`", "",
             f"`{command}` at commit `{commit}`.", ""]
    lines += [f"* part: `{part['command']}` at commit `{part['commit']}`" for part in parts] + ([""] if parts else [])
    lines += [
             f"{summary['tasks']} of {summary['planned']} tasks done; read by asg: {summary['asg_read']}.", "",
             f"FD encoding {encoding}; \"both, FD's variable order\": rhw given the translator's own variable "
             "numbering (asg computes the same numbering itself; see docs/planning.md).", "",
             "| factory | FD translated | compared | sets equal | orderings equal | both | both, FD's variable order"
             f" | {other} encoding: both | median process ratio asg/FD |",
             "|---|---|---|---|---|---|---|---|---|"]
    for factory, e in summary.items():
        if not isinstance(e, dict) or factory == "planned":
            continue
        ratio = "-"
        if "median_process_ratio" in e:
            ratio = (f"{e['median_process_ratio']:.2f} ({e['median_asg_process_s']:.3f} s / "
                     f"{e['median_fd_process_s']:.3f} s)")
        default = (f"{e['other_encoding_both_equal']}/{e['other_encoding_compared']}"
                   if "other_encoding_compared" in e else "-")
        lines.append(f"| {factory} | {e['fd_translated']} | {e['compared']} | {e['sets_equal']} | "
                     f"{e['orderings_equal']} | {e['both_equal']} | {e.get('both_equal_fd_order', '-')} | "
                     f"{default} | {ratio} |")
    lines.append("")
    for factory, e in summary.items():
        if isinstance(e, dict) and e["differing"]:
            lines.append(f"* {factory} differs on: {', '.join(e['differing'])}")
    lines.append("\nProcess ratio = cold `asg landmarks --factory F --format json` "
                 "/ FD driver (translate + factory). Differences are explained in docs/planning.md, "
                 "\"Landmark factories rhw and zg\".")
    return "\n".join(lines) + "\n"


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--factory", default="all",
                        help=f"one of {', '.join(FACTORIES)}, a comma-separated list, or all")
    parser.add_argument("--corpus", choices=("ipc", "ipc_suite"), default="ipc")
    parser.add_argument("--m", type=int, choices=(1, 2), default=1, help="h^m's m (hm only)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per FD or asg process")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--per-domain", type=int, default=None, help="only N problems of each domain")
    parser.add_argument("--skip-per-domain", type=int, default=0, help="leave out the first K problems of each domain")
    parser.add_argument("--shard", type=shard, default=(1, 1), metavar="I/N", help="every N-th task from the I-th")
    parser.add_argument("--memory-gb", type=float, default=None, help="address-space cap of the run and its processes")
    parser.add_argument("--merge", type=Path, nargs="+", metavar="JSON", help="join these shard files; run nothing")
    parser.add_argument("--note", default=None, help="with --merge: a provenance note kept in the JSON")
    parser.add_argument("--resume", action="store_true",
                        help="keep the tasks the output file already holds (same corpus, encoding, factories)")
    parser.add_argument("--encoding", choices=("binary", "default"), default="binary",
                        help="FD's encoding to agree with (binary: asg's STRIPS semantics, see asg.planning.peer)")
    parser.add_argument("--no-other-encoding", action="store_true", help="skip the report on the other encoding")
    parser.add_argument("--out", type=Path, help="stem of the JSON and markdown files")
    parser.add_argument("only", nargs="*", help="substrings of task paths to keep")
    return parser


def main() -> None:
    parser = arguments()
    args = parser.parse_args()
    command = command_line(__file__)
    if args.merge:
        if args.out is None:
            parser.error("--merge needs --out")
        print(merge(args.merge, args.out, command, args.note))
        return
    if not (SHARED / args.corpus).is_dir():
        sys.exit(f"the {args.corpus} corpus is not at {SHARED / args.corpus}")
    factories = list(FACTORIES) if args.factory == "all" else args.factory.split(",")
    if not set(factories) <= set(FACTORIES):
        parser.error(f"--factory: choose from {', '.join(FACTORIES)} or all, not {args.factory!r}")
    if args.memory_gb is not None:
        cap = int(args.memory_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    compile_asg()
    suffix = "" if args.encoding == "binary" else "_default"
    stem = args.out or RESULTS / f"landmarks_{args.corpus}_{args.factory.replace(',', '_')}{suffix}"
    index, count = args.shard
    chosen = tasks(args.corpus, args.only, args.limit, args.per_domain, args.skip_per_domain)[index - 1::count]
    meta = {"corpus": args.corpus, "encoding": args.encoding, "factories": factories}
    commit = git_commit()  # the code that runs, whatever lands while it runs
    rows, segments = resumed(stem, meta) if args.resume else ([], [])
    segments.append({"command": command, "commit": commit})
    done = {row["task"] for row in rows}
    chosen = [entry for entry in chosen if entry[0] not in done]  # the file's other rows stay as they are
    names = {name for name, _, _ in chosen}
    text = "no task matched"
    for name, domain, problem in chosen:
        row = run_task(name, domain, problem, factories, args.m, args.timeout, args.encoding,
                       not args.no_other_encoding)
        rows.append(row)
        cells = []
        for f in factories:
            c = row[f]
            state = "fd-" if "fd_s" not in c else ("-" if "agree" not in c else
                                                   ("same" if c["agree"]["sets"] and c["agree"]["orderings"]
                                                    else "DIFF"))
            cells.append(f"{f} {state}" + (f" {c['process_ratio']:.2f}" if "process_ratio" in c else ""))
        print(f"{name:40s} {'read' if row['asg_read'] else 'unread':6s} " + "  ".join(cells), flush=True)
        # written after every task, so a run stopped early keeps what it measured
        text = write(stem, rows, meta, command, {"timeout_s": args.timeout}, len(done | names),
                     segments if len(segments) > 1 else [], commit)
    print(text)


def shard(text: str) -> tuple[int, int]:
    """``I/N`` with 1 <= I <= N."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected I/N, not {text!r}") from None
    if not 1 <= index <= count:
        raise argparse.ArgumentTypeError(f"expected 1 <= I <= N, not {text!r}")
    return index, count


def merge(files: list[Path], stem: Path, command: str, note: str | None = None) -> str:
    """Join shard files (same corpus, encoding and factories) in the corpus's task order."""
    parts = [json.loads(path.read_text()) for path in files]
    meta = parts[0]["meta"]
    if any(part["meta"] != meta for part in parts):
        sys.exit("--merge: the files differ in corpus, encoding or factories")
    names = [row["task"] for part in parts for row in part["rows"]]
    if len(names) != len(set(names)):
        sys.exit("--merge: a task appears in more than one file")
    order = {name: i for i, (name, _, _) in enumerate(tasks(meta["corpus"], [], None))}
    rows = sorted((row for part in parts for row in part["rows"]), key=lambda row: order.get(row["task"], -1))
    planned = sum(part["summary"]["planned"] for part in parts)
    sources = [source for part in parts
               for source in part.get("parts") or [{"command": part["command"], "commit": part["commit"]}]]
    # each part's time limit, read back from its command by this script's own parser
    limits = {arguments().parse_args(shlex.split(source["command"])[2:]).timeout for source in sources}
    if len(limits) != 1:
        sys.exit("--merge: the files were run with different --timeout")
    return write(stem, rows, meta, command, {"timeout_s": limits.pop()}, planned, sources, git_commit(), note)


def resumed(stem: Path, meta: dict) -> tuple[list[dict], list[dict]]:
    """Every row of ``stem``'s JSON (a resumed run only adds), and the runs that measured them."""
    path = stem.with_suffix(".json")
    if not path.is_file():
        return [], []
    data = json.loads(path.read_text())
    if data.get("meta") != meta:
        sys.exit(f"--resume: {path} was run on another corpus, encoding or factories")
    return data["rows"], data.get("parts") or [{"command": data["command"], "commit": data["commit"]}]


def write(stem: Path, rows: list[dict], meta: dict, command: str, budget: dict, planned: int,
          parts: list[dict], commit: str, note: str | None = None) -> str:
    """The JSON (stamped: command, commit, budget, no seeds: nothing here is random) and markdown
    files for the rows so far, each written atomically; returns the markdown."""
    summary = summarise(rows, meta["factories"])
    summary["planned"] = planned
    data = stamp({"meta": meta, "summary": summary, "rows": rows}, command, budget, None, commit)
    if parts:
        data["parts"] = parts
    if note:
        data["provenance"] = note
    text = markdown(summary, command, data["commit"], meta["corpus"], meta["encoding"], parts)
    write_json(stem.with_suffix(".json"), data, indent=1)
    atomic_write(stem.with_suffix(".md"), text.encode())
    return text


if __name__ == "__main__":
    main()
