"""``asg landmarks`` as a process against Fast Downward's, on every IPC STRIPS task.

What a shell user pays: a cold ``asg landmarks DOMAIN PROBLEM --format json`` process
against FD's whole process (driver, Python translator, C++ ``lm_hm(m)`` factory; the search
is bounded at cost 0, so it stops at the initial state). Beside it, the in-process figures:
asg's parse + ground + landmarks, timed in this process, against FD's translator time and
landmark-graph time as FD itself logs them (interpreter start-up excluded on both sides).
All four are measured in one run, task by task, interleaved, ``--repeat`` times; a task's
figure is the median of its repeats and the summary is the median of per-task ratios.

    python benchmarks/landmarks_process.py                  # every STRIPS task, 3 repeats
    python benchmarks/landmarks_process.py --limit 5 --repeat 1

Writes ``benchmarks/results/landmarks_process.json`` and ``.md`` (``--out`` to change).
Before timing, asg's own modules are byte-compiled into their ``__pycache__`` (what pip does
for an installed package, and what FD's translator ships with): with
``PYTHONDONTWRITEBYTECODE`` set, an editable checkout would otherwise recompile every module
in every process. ``--no-compile`` times the checkout as it is.
FD runs with ``--encoding binary`` by default, the STRIPS semantics asg agrees with
(see ``asg.planning.peer``); ``--encoding default`` keeps FD's invariant synthesis.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from provenance import command_line, write_result

from asg.learning.atomic import atomic_write
from asg.planning import compute_landmarks, ground, parse_files
from asg.planning.peer import fd_driver

IPC = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "ipc"
RESULTS = Path(__file__).resolve().parent / "results" / "landmarks_process"

_TRANSLATE_DONE = re.compile(r"^Done! \[[\d.]+s CPU, ([\d.]+)s wall-clock\]", re.M)
_LM_TIME = re.compile(r"Landmark graph generation time: ([\d.]+)s")
_LM_COUNT = re.compile(r"Landmark graph contains (\d+) landmarks")


def strips_tasks(limit: int | None, only: list[str]) -> list[tuple[str, Path, Path]]:
    with open(IPC / "MANIFEST.tsv") as handle:
        rows = [r for r in csv.DictReader(handle, delimiter="\t") if r["fragment"] == "strips"]
    rows = [r for r in rows if not only or any(o in r["problem_file"] for o in only)]
    return [(r["problem_file"], IPC / r["domain_file"], IPC / r["problem_file"]) for r in rows[:limit]]


def asg_command() -> list[str]:
    """The installed ``asg`` console script, else the same entry point through this interpreter."""
    found = shutil.which("asg")
    return [found] if found else [sys.executable, "-m", "asg.cli.main"]


def compile_asg() -> list[str]:
    """Byte-compile the asg packages the CLI loads; returns the folders compiled."""
    import compileall
    import importlib.util

    done = []
    for package in ("asg", "asg.planning", "asg.cli", "asg.pddl_models"):
        spec = importlib.util.find_spec(package)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            # the asg root is the repository root: only its own files, not every folder below it
            compileall.compile_dir(folder, maxlevels=0 if package == "asg" else 10, quiet=1)
            done.append(folder)
    return done


def time_asg_process(domain: Path, problem: Path, m: int, timeout: float) -> tuple[float, int]:
    """Wall seconds of a cold ``asg landmarks ... --format json``, and its landmark count."""
    start = time.perf_counter()
    proc = subprocess.run([*asg_command(), "landmarks", str(domain), str(problem), "--m", str(m),
                           "--format", "json"], capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"asg landmarks failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
    return seconds, len(json.loads(proc.stdout)["landmarks"])


def time_fd_process(domain: Path, problem: Path, m: int, encoding: str, timeout: float) -> dict:
    """Wall seconds of FD's driver (translate + lm_hm, no search), with FD's own in-process times."""
    translate = ["--translate-options", "--invariant-generation-max-candidates", "0"] if encoding == "binary" else []
    search = f"eager_greedy([landmark_sum(lm_hm(m={m}))], bound=0)"
    with tempfile.TemporaryDirectory(prefix="asg-fd-bench-") as workdir:  # the driver writes output.sas to cwd
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, str(fd_driver()), str(domain), str(problem), *translate,
                               "--search-options", "--search", search],
                              cwd=workdir, capture_output=True, text=True, timeout=timeout)
        seconds = time.perf_counter() - start
    translated, built, count = (_TRANSLATE_DONE.search(proc.stdout), _LM_TIME.search(proc.stdout),
                                _LM_COUNT.search(proc.stdout))
    if translated is None or built is None:
        tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
        raise RuntimeError(f"FD did not build a landmark graph (exit {proc.returncode}): {tail}")
    return {"process": seconds, "translate": float(translated.group(1)), "landmarks": float(built.group(1)),
            "count": int(count.group(1)) if count else None}


def time_asg_in_process(domain: Path, problem: Path, m: int) -> dict:
    """Seconds of asg's parse, ground and landmark stages in this (warm) interpreter."""
    t0 = time.perf_counter()
    model = parse_files(domain, problem)
    t1 = time.perf_counter()
    task = ground(model)
    t2 = time.perf_counter()
    compute_landmarks(task, m=m)
    t3 = time.perf_counter()
    return {"parse": t1 - t0, "ground": t2 - t1, "landmarks": t3 - t2, "total": t3 - t0}


def interpreter_floor(repeat: int) -> float:
    """Median wall seconds of ``python -c pass``: what any Python process pays before its own work."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(tasks, m: int, encoding: str, repeat: int, timeout: float) -> list[dict]:
    samples: dict[str, dict[str, list[float]]] = {name: {} for name, _, _ in tasks}
    notes: dict[str, dict] = {name: {} for name, _, _ in tasks}
    # warm-up, not recorded: lazy imports here, and the page cache for both processes
    time_asg_in_process(*tasks[0][1:], m)
    time_asg_process(*tasks[0][1:], m, timeout)
    time_fd_process(*tasks[0][1:], m, encoding, timeout)
    for r in range(repeat):
        for k, (name, domain, problem) in enumerate(tasks):
            got = samples[name]
            if "error" in notes[name]:
                continue
            try:
                # alternate which process goes first, so neither always meets a warmer page cache
                order = ("asg", "fd") if (r + k) % 2 == 0 else ("fd", "asg")
                for side in order:
                    if side == "asg":
                        seconds, count = time_asg_process(domain, problem, m, timeout)
                        got.setdefault("asg_process", []).append(seconds)
                        notes[name]["asg_landmarks"] = count
                    else:
                        fd = time_fd_process(domain, problem, m, encoding, timeout)
                        for key in ("process", "translate", "landmarks"):
                            got.setdefault(f"fd_{key}", []).append(fd[key])
                        notes[name]["fd_landmarks"] = fd["count"]
                for key, value in time_asg_in_process(domain, problem, m).items():
                    got.setdefault(f"asg_{key}", []).append(value)
            except (RuntimeError, subprocess.TimeoutExpired) as err:
                notes[name]["error"] = str(err)
            if r == repeat - 1 or "error" in notes[name]:
                print(_line(name, samples[name], notes[name]), flush=True)
    records = []
    for name, _, _ in tasks:
        record = {"task": name, **notes[name]}
        record.update({key: statistics.median(values) for key, values in samples[name].items()})
        if "error" not in record:
            record["fd_in_process"] = record["fd_translate"] + record["fd_landmarks"]
            record["process_ratio"] = record["asg_process"] / record["fd_process"]
            record["in_process_ratio"] = record["asg_total"] / record["fd_in_process"]
            record["api_vs_fd_process"] = record["asg_total"] / record["fd_process"]
        records.append(record)
    return records


def _line(name: str, got: dict[str, list[float]], note: dict) -> str:
    if "error" in note:
        return f"{name:22s} skipped: {note['error']}"
    med = {key: statistics.median(values) for key, values in got.items()}
    fd_in = med["fd_translate"] + med["fd_landmarks"]
    return (f"{name:22s} process asg {med['asg_process']:6.3f}s fd {med['fd_process']:6.3f}s "
            f"ratio {med['asg_process'] / med['fd_process']:5.2f} | in-process asg {med['asg_total']:6.3f}s "
            f"(parse {med['asg_parse']:.3f} ground {med['asg_ground']:.3f} lm {med['asg_landmarks']:.3f}) "
            f"fd {fd_in:6.3f}s ratio {med['asg_total'] / fd_in:5.2f}")


def summary(records: list[dict], m: int, encoding: str, repeat: int, floor: float, compiled: bool) -> dict:
    done = [r for r in records if "error" not in r]

    def median(key: str) -> float:
        return statistics.median(r[key] for r in done) if done else float("nan")

    return {
        "m": m, "encoding": encoding, "repeat": repeat, "tasks": len(records), "measured": len(done),
        "median_process_ratio": median("process_ratio"),
        "median_in_process_ratio": median("in_process_ratio"),
        "median_api_vs_fd_process_ratio": median("api_vs_fd_process"),
        "median_asg_process_s": median("asg_process"), "median_fd_process_s": median("fd_process"),
        "median_asg_parse_s": median("asg_parse"), "median_asg_ground_s": median("asg_ground"),
        "median_asg_landmarks_s": median("asg_landmarks"),
        "python_floor_s": floor,
        "asg_command": " ".join(asg_command()),
        "asg_bytecode": "compiled before timing" if compiled else "as found",
        "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE", ""),
    }


def markdown(records: list[dict], stats: dict) -> str:
    lines = [
        f"# asg landmarks vs Fast Downward, as processes (m={stats['m']}, FD encoding {stats['encoding']})",
        "",
        f"{stats['measured']} of {stats['tasks']} IPC STRIPS tasks, {stats['repeat']} interleaved repeats, "
        "median per task; ratios are asg / FD (below 1: asg is faster).",
        "",
        f"* median process ratio (cold `{stats['asg_command']} landmarks --format json` / FD driver): "
        f"**{stats['median_process_ratio']:.3f}**",
        f"* median in-process ratio (asg parse+ground+landmarks / FD translate+landmark graph, as FD logs "
        f"them): **{stats['median_in_process_ratio']:.3f}**",
        f"* median asg in-process / FD process (the figure `benchmarks/landmarks.py` calls api/fd): "
        f"{stats['median_api_vs_fd_process_ratio']:.3f}",
        f"* medians: asg process {stats['median_asg_process_s']:.3f} s, FD process "
        f"{stats['median_fd_process_s']:.3f} s, `python -c pass` {stats['python_floor_s']:.3f} s; "
        f"asg parse {stats['median_asg_parse_s']:.4f} s, ground {stats['median_asg_ground_s']:.4f} s, "
        f"landmarks {stats['median_asg_landmarks_s']:.4f} s",
        f"* asg bytecode: {stats['asg_bytecode']} (PYTHONDONTWRITEBYTECODE={stats['PYTHONDONTWRITEBYTECODE']!r})",
        "",
        "| task | asg proc s | FD proc s | ratio | asg parse | ground | landmarks | asg in-proc | FD in-proc | ratio |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        if "error" in r:
            lines.append(f"| {r['task']} | skipped: {r['error'][:80]} | | | | | | | | |")
            continue
        lines.append(
            f"| {r['task']} | {r['asg_process']:.3f} | {r['fd_process']:.3f} | {r['process_ratio']:.2f} | "
            f"{r['asg_parse']:.4f} | {r['asg_ground']:.4f} | {r['asg_landmarks']:.4f} | {r['asg_total']:.4f} | "
            f"{r['fd_in_process']:.4f} | {r['in_process_ratio']:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, choices=(1, 2), default=1)
    parser.add_argument("--encoding", choices=("binary", "default"), default="binary")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds over all tasks")
    parser.add_argument("--limit", type=int, help="only the first N STRIPS tasks of the manifest")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per process")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results path without suffix")
    parser.add_argument("--no-compile", action="store_true", help="do not byte-compile asg first")
    parser.add_argument("only", nargs="*", help="substrings of task paths to keep")
    args = parser.parse_args()
    if not (IPC / "MANIFEST.tsv").is_file():
        print(f"skipped: the IPC corpus is not at {IPC} (../shared is absent in this checkout)")
        return
    tasks = strips_tasks(args.limit, args.only)
    if not tasks:
        sys.exit("no STRIPS task matches")
    os.environ.setdefault("PYTHONHASHSEED", "0")  # FD's translator output depends on it
    if not args.no_compile:
        compile_asg()
    records = run(tasks, args.m, args.encoding, max(1, args.repeat), args.timeout)
    stats = summary(records, args.m, args.encoding, max(1, args.repeat), interpreter_floor(5),
                    compiled=not args.no_compile)
    print(f"median process ratio asg/fd: {stats['median_process_ratio']:.3f}; "
          f"median in-process ratio: {stats['median_in_process_ratio']:.3f}; "
          f"asg in-process / fd process: {stats['median_api_vs_fd_process_ratio']:.3f} "
          f"({stats['measured']}/{stats['tasks']} tasks)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    # no seeds: nothing here is random (PYTHONHASHSEED is fixed for FD's translator)
    write_result(args.out.with_suffix(".json"), {"summary": stats, "tasks": records}, command_line(__file__),
                 {"timeout_s": args.timeout, "repeats": max(1, args.repeat)}, None, indent=1)
    atomic_write(args.out.with_suffix(".md"), markdown(records, stats).encode())
    print(f"wrote {args.out.with_suffix('.json')} and .md")


if __name__ == "__main__":
    main()
