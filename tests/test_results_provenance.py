"""Every results file README.md, docs/*.md and examples/*/README.md quote says how it was made:
JSON with the command, the commit, the budget and the seeds (``benchmarks/provenance.py``).

Which files: every path under ``benchmarks/results/`` the docs name (``{a,b}`` expanded); a
quoted ``.md``, ``.txt``, ``.csv`` or ``.png`` stands for the JSON of the same name beside it,
where there is one (the table, log or plot of that JSON). Folders and globs are not files.
"""
from __future__ import annotations

import fnmatch
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
import provenance  # noqa: E402  (benchmarks/provenance.py, a script folder, not a package)

QUOTED = re.compile(r"benchmarks/results/[A-Za-z0-9_./{},-]*[A-Za-z0-9_}]")
# Run inputs the docs name beside results (a config, overrides): not results, so no provenance.
INPUTS = {
    "benchmarks/results/fetch_programs/paper_pipeline/epochs-30/goal_policy_config.json",
    "benchmarks/results/fetch_programs/figure11/paper-random-buffer-program-seed0/overrides.json",
    "benchmarks/results/fetch_programs/learned_stop/stop_at_expansion.json",
}
# Results that may still lack provenance keys: pattern -> (the keys it may lack, why). None now.
NOT_YET: dict[str, tuple[tuple[str, ...], str]] = {}


def _not_yet(name: str) -> tuple[tuple[str, ...], str]:
    return next((v for pattern, v in NOT_YET.items() if fnmatch.fnmatch(name, pattern)), ((), ""))


def doc_files(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md")), *sorted(root.glob("examples/*/README.md"))]


def _expand(path: str) -> list[str]:
    match = re.search(r"\{([^{}]*)\}", path)
    if not match:
        return [path]
    return [q for part in match.group(1).split(",") for q in _expand(path[:match.start()] + part + path[match.end():])]


def quoted_results(root: Path) -> dict[str, str]:
    """Each results JSON the docs quote (directly or through its table, log or plot) -> the doc quoting it."""
    found: dict[str, str] = {}
    for doc in doc_files(root):
        for match in QUOTED.finditer(doc.read_text(encoding="utf-8")):
            for quoted in _expand(match.group(0).rstrip(".")):
                path = root / quoted
                target = path if path.suffix == ".json" else path.with_suffix(".json")
                if path.suffix and target.is_file():
                    found.setdefault(target.relative_to(root).as_posix(), doc.relative_to(root).as_posix())
    return found


def faults(root: Path) -> list[str]:
    """``file (quoted in doc): what is wrong`` for each quoted results JSON without its provenance."""
    out = []
    for name, doc in sorted(quoted_results(root).items()):
        if name in INPUTS:
            continue
        data = json.loads((root / name).read_text())
        allowed = _not_yet(name)[0]
        lacking = [key for key in provenance.missing(data) if key not in allowed]
        if lacking:
            out.append(f"{name} (quoted in {doc}): lacks {', '.join(lacking)}")
            continue
        if not isinstance(data, dict) or allowed:
            continue
        command, seeds = data["command"], data["seeds"]
        if not (isinstance(command, str) and command.strip()) and not (
                isinstance(command, list) and command and all(isinstance(c, str) and c.strip() for c in command)):
            out.append(f"{name} (quoted in {doc}): 'command' is not a command line or a list of them")
        if not (isinstance(data["commit"], str) and re.match(r"^[0-9a-f]{7,40}(\+dirty)?$", data["commit"])):
            out.append(f"{name} (quoted in {doc}): 'commit' {data['commit']!r} is not a git commit")
        if not (isinstance(data["budget"], dict) and data["budget"]):
            out.append(f"{name} (quoted in {doc}): 'budget' is not a non-empty dict")
        if seeds is not None and not (isinstance(seeds, list) and all(isinstance(s, int) for s in seeds)):
            out.append(f"{name} (quoted in {doc}): 'seeds' is neither a list of ints nor null")
    return out


def test_every_quoted_result_has_its_provenance() -> None:
    """Every results JSON the docs quote has command, commit, budget and seeds."""
    assert faults(REPO) == []


def test_the_docs_quote_results() -> None:
    """The reader finds what it must: the status table's files and a result known only by its table."""
    found = quoted_results(REPO)
    assert "benchmarks/results/figure3/figure3.json" in found
    assert "benchmarks/results/omitted/omitted_k6.json" in found  # quoted as omitted_k6.md
    assert "benchmarks/results/landmarks_m2_binary.json" in found
    assert len(found) > 30


def test_exemptions_are_still_needed() -> None:
    """Each let-off matches a file that still lacks a key it may lack (else the let-off goes), and
    each input is still quoted."""
    for pattern, (keys, why) in NOT_YET.items():
        names = [p.relative_to(REPO).as_posix() for p in REPO.glob(pattern)]
        assert names, f"{pattern} matches no file: drop it from NOT_YET"
        for name in names:
            data = json.loads((REPO / name).read_text())
            assert set(keys) & set(provenance.missing(data)), f"{name} has {keys} now: drop it from NOT_YET ({why})"
    found = quoted_results(REPO)
    for name in INPUTS:
        assert name in found, f"{name} is no longer quoted: drop it from INPUTS"


def _copy(root: Path) -> Path:
    """The docs and every results JSON they quote, as committed."""
    for doc in doc_files(REPO):
        (root / doc.relative_to(REPO)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(doc, root / doc.relative_to(REPO))
    for name in quoted_results(REPO):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, root / name)
    return root


@pytest.mark.parametrize("key", provenance.REQUIRED)
def test_a_result_without_a_key_fails(tmp_path: Path, key: str) -> None:
    """A copy with one key taken out of the Figure 3 results: the check names the file and the key."""
    copy = _copy(tmp_path)
    assert faults(copy) == []
    path = copy / "benchmarks/results/figure3/figure3.json"
    data = json.loads(path.read_text())
    del data[key]
    path.write_text(json.dumps(data))
    assert faults(copy) == [f"benchmarks/results/figure3/figure3.json (quoted in README.md): lacks {key}"]


def test_bad_values_and_a_newly_quoted_json_fail(tmp_path: Path) -> None:
    """A commit that is no commit, seeds that are a count, and a doc that starts quoting a JSON
    without provenance are each reported."""
    copy = _copy(tmp_path)
    path = copy / "benchmarks/results/omitted/omitted_cap_d20.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps(data | {"commit": "yesterday", "seeds": 10}))
    bare = copy / "benchmarks/results/bare.json"
    bare.write_text(json.dumps({"rows": []}))
    (copy / "docs" / "planning.md").write_text("Measured: `benchmarks/results/bare.json`.\n")
    assert faults(copy) == [
        "benchmarks/results/bare.json (quoted in docs/planning.md): lacks command, commit, budget, seeds",
        "benchmarks/results/omitted/omitted_cap_d20.json (quoted in README.md): 'commit' 'yesterday' is not a git "
        "commit",
        "benchmarks/results/omitted/omitted_cap_d20.json (quoted in README.md): 'seeds' is neither a list of ints "
        "nor null"]


def test_write_result_stamps_atomically(tmp_path: Path) -> None:
    """The benchmarks' writer: the four keys first, the checkout's commit, no temp file left."""
    path = tmp_path / "r.json"
    written = provenance.write_result(path, {"rows": [1]}, provenance.command_line("x.py", ["--seeds", "2"]),
                                      {"env_steps_per_run": 10}, range(2))
    data = json.loads(path.read_text())
    assert data == written and list(data)[:4] == list(provenance.REQUIRED) and data["rows"] == [1]
    assert data["command"] == "python benchmarks/x.py --seeds 2" and data["seeds"] == [0, 1]
    assert provenance.missing(data) == [] and re.match(r"^[0-9a-f]{7,40}(\+dirty)?$|^unknown$", data["commit"])
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]
