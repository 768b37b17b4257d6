"""``asg landmarks``, ``asg plan``, ``asg check`` through click's CliRunner, error paths included."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import DATA

from asg import pddl_models
from asg.cli.main import main

HOUSEHOLD = str(pddl_models.path("household_v1"))


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_landmarks_text():
    result = run("landmarks", HOUSEHOLD)
    assert result.exit_code == 0
    assert "5 landmarks" in result.output
    assert "(has-key) -> (door-open)" in result.output
    assert "Subgoals for a learner: (has-key) ->" in result.output


def test_landmarks_json_contract():
    result = run("landmarks", HOUSEHOLD, "--m", "2", "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["m"] == 2 and data["method"] == "hm"
    kinds = {lm["kind"] for lm in data["landmarks"]}
    assert kinds == {"fact", "conjunctive"}
    ids = {lm["id"] for lm in data["landmarks"]}
    assert all(o["from"] in ids and o["to"] in ids for o in data["orderings"])


def test_landmarks_two_files_dot_and_output_file(need_ipc, tmp_path):
    from conftest import IPC
    out = tmp_path / "g.dot"
    result = run("landmarks", IPC / "blocks/domain.pddl", IPC / "blocks/p01.pddl", "--reasonable",
                 "--format", "dot", "-o", out)
    assert result.exit_code == 0
    text = out.read_text()
    assert text.startswith("digraph") and "style=dotted" in text


def test_landmarks_html_page(tmp_path):
    import json

    out = tmp_path / "h.html"
    result = run("landmarks", "household-v1", "--m", "2", "--format", "html", "-o", out)
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "cytoscape" in page
    exported = json.loads(run("landmarks", "household-v1", "--m", "2", "--format", "json").stdout)
    for landmark in exported["landmarks"]:  # every landmark's atoms are in the page's data
        assert all(json.dumps(atom)[1:-1] in page for atom in landmark["atoms"])
    missing = run("landmarks", "household-v1", "--format", "html")
    assert missing.exit_code == 2 and "needs -o" in missing.stderr


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_landmarks_pictures(tmp_path, fmt):
    out = tmp_path / f"h.{fmt}"
    result = run("landmarks", HOUSEHOLD, "--format", fmt, "-o", out)
    assert result.exit_code == 0 and out.stat().st_size > 1000
    bad = run("landmarks", HOUSEHOLD, "--format", fmt, "-o", tmp_path / "h.txt")
    assert bad.exit_code == 2 and bad.stderr.strip().startswith("error: -o")


def test_plan_and_json():
    result = run("plan", HOUSEHOLD)
    assert result.exit_code == 0 and "go_to_destination" in result.output and "validated" in result.output
    data = json.loads(run("plan", pddl_models.path("mario"), "--json").stdout)
    assert data["status"] == "solved" and data["length"] == 4


def test_plan_unsolvable_exits_1():
    result = run("plan", DATA / "bad" / "unreachable_goal.pddl")
    assert result.exit_code == 1


def test_check_ok_and_unreachable_goal():
    assert run("check", HOUSEHOLD).exit_code == 0
    result = run("check", DATA / "bad" / "unreachable_goal.pddl")
    assert result.exit_code == 2
    assert result.stderr.strip().endswith("error: goal (r) unreachable even ignoring deletes")


def test_check_paper_listing_and_lenient():
    path = DATA / "household_v1_as_printed.pddl"
    strict = run("check", path)
    assert strict.exit_code == 2
    assert strict.stderr.strip() == (f"{path}:20:27: error: predicate 'charged' is used in action "
                                     "'charge_door' effect but not declared in :predicates")
    lenient = run("check", path, "--lenient")
    assert lenient.exit_code == 0
    assert "declared by --lenient" in lenient.stderr
    assert run("landmarks", path, "--lenient").exit_code == 0


BAD_FILES = ["unbalanced.pddl", "undeclared.pddl", "arity.pddl", "unknown_type.pddl", "unknown_object.pddl",
             "domain_only.pddl", "unsupported.pddl", "empty.pddl", "junk.pddl", "deep_nesting.pddl",
             "domain_mismatch.pddl", "duplicate_action.pddl", "duplicate_predicate.pddl",
             "type_unrelated_parents.pddl", "unknown_requirement.pddl"]


# `check` accepts a domain alone by design (tested below), so that pair is left out.
CASES = [(c, n) for c in ("landmarks", "plan", "check") for n in BAD_FILES if (c, n) != ("check", "domain_only.pddl")]


@pytest.mark.parametrize("command,name", CASES)
def test_bad_files_give_one_line_and_exit_2(command, name):
    path = DATA / "bad" / name
    result = run(command, path)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{path}:") and ": error: " in lines[0]
    assert "Traceback" not in result.output


def test_check_domain_alone_is_fine():
    result = run("check", DATA / "bad" / "domain_only.pddl")
    assert result.exit_code == 0 and "domain only" in result.output


@pytest.mark.parametrize("args,needle", [
    (["landmarks", str(DATA / "missing.pddl")], "no such file"),
    (["landmarks", str(DATA)], "is a directory"),
    (["landmarks", HOUSEHOLD, "--m", "3"], "--m"),
    (["landmarks", HOUSEHOLD, "--format", "pdf"], "--format"),
    (["landmarks", HOUSEHOLD, "--bogus"], "--bogus"),
    (["plan", HOUSEHOLD, "--timeout", "-1"], "--timeout"),
    (["frobnicate"], "frobnicate"),
])
def test_bad_arguments_give_one_line_and_exit_2(args, needle):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and lines[0].startswith(("error:", str(DATA)))


