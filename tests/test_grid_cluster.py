"""``asg compare --ray-address`` against a real Ray cluster, not a mock: a head (``ray start --head
--num-cpus 2`` on 127.0.0.1) and one more worker node (``ray start --address``), each started with
``--block`` so that this test owns its processes and stops exactly them. The cluster's cells equal
the serial run's; a worker process killed in the middle of a cell is retried by Ray and the grid
completes with the same numbers."""
from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_grid import grid_records  # a sibling: pytest puts tests/ on sys.path

from asg.cli.main import main

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                       reason="ray is not installed (pip install 'asg[distributed]')"),
    pytest.mark.skipif(shutil.which("ray") is None, reason="the ray command is not on PATH"),
]
# Token authentication (Ray >= 2.5x) off: every process of this test cluster runs on 127.0.0.1.
ENV = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0", "RAY_ADDRESS": ""}
GRID = ["--domain", "mario", "--methods", "goal-q", "--seeds", "3", "--steps", "15000", "--eval-episodes", "2",
        "--quiet"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(check, seconds: float, what: str) -> None:
    end = time.monotonic() + seconds
    while not check():
        if time.monotonic() > end:
            raise TimeoutError(what)
        time.sleep(0.2)


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def cluster_cpus(address: str) -> float:
    """The CPUs of the cluster at ``address`` as ``ray status`` counts them (0 while it does not answer)."""
    done = subprocess.run(["ray", "status", "--address", address], env=ENV, capture_output=True, text=True,
                          timeout=60)
    found = re.search(r"/([0-9.]+) CPU", done.stdout) if done.returncode == 0 else None
    return float(found.group(1)) if found else 0.0


@contextlib.contextmanager
def ray_cluster() -> Iterator[str]:
    """A head with 2 CPUs and a worker node with 1 on 127.0.0.1, starting; its address. Both ``ray start``
    processes block, and SIGTERM to each stops that node's processes (``ray stop`` would stop every
    Ray on this machine, other tests' too)."""
    port, temp = free_port(), tempfile.mkdtemp(prefix="asgray", dir="/tmp")  # short: Ray's socket paths
    address = f"127.0.0.1:{port}"
    common = ["--block", "--node-ip-address", "127.0.0.1", "--disable-usage-stats"]
    nodes = [subprocess.Popen(["ray", "start", "--head", "--port", str(port), "--num-cpus", "2",
                               "--include-dashboard", "false", "--temp-dir", temp, *common],
                              env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)]
    try:
        wait_for(lambda: port_open(port), 90, "the head did not start")
        nodes.append(subprocess.Popen(["ray", "start", "--address", address, "--num-cpus", "1", *common],
                                      env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      start_new_session=True))
        yield address
    finally:
        for node in reversed(nodes):
            node.send_signal(signal.SIGTERM)
        for node in reversed(nodes):
            try:
                node.wait(timeout=30)
            except subprocess.TimeoutExpired:
                node.kill()
        shutil.rmtree(temp, ignore_errors=True)


def running_cell(out: Path) -> int | None:
    """The pid of a Ray worker in the middle of a cell: its run folder's lock names it, its first
    evaluation is written and its result is not."""
    for lock in sorted(out.glob("goal-q/seed*/.lock")):
        try:
            holder = json.loads(lock.read_text() or "{}")
        except (OSError, ValueError):
            continue
        if holder.get("pid") and (lock.parent / "metrics.csv").is_file() and not (lock.parent / "result.json").exists():
            return int(holder["pid"])
    return None


def test_compare_on_a_two_node_cluster_equals_the_serial_grid_and_survives_a_killed_worker(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with ray_cluster() as address:
        serial = CliRunner().invoke(main, ["compare", *GRID, "--out", str(tmp_path / "serial")])  # while it starts
        assert serial.exit_code == 0, serial.output
        wait_for(lambda: cluster_cpus(address) == 3, 90, "the cluster did not reach 3 CPUs")
        command = [sys.executable, "-c", "from asg.cli.main import main; main()", "compare", *GRID,
                   "--ray-address", address]
        out = tmp_path / "killed"
        driver = subprocess.Popen([*command, "--out", str(out)], env=ENV, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        try:
            victim = None

            def found() -> bool:
                nonlocal victim
                victim = running_cell(out)
                return victim is not None or driver.poll() is not None
            wait_for(found, 120, "no cell started")
            assert victim is not None, "the grid ended before a cell could be killed"
            os.kill(victim, signal.SIGKILL)  # a Ray worker process, mid-cell
            _, err = driver.communicate(timeout=300)
        finally:
            if driver.poll() is None:
                driver.kill()
        assert driver.returncode == 0, err[-2000:]
    # every cell equals the serial run's, the killed one too: Ray ran it again
    assert grid_records(out) == grid_records(tmp_path / "serial") and len(grid_records(out)) == 3
