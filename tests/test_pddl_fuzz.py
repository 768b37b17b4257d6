"""A seeded PDDL mutator over ``pddl_models/*.pddl`` and the ADL, derived-predicate and action-cost
files of ``tests/data/adl/``: bad input gives one typed line, never a traceback.

Each model is mutated (tokens deleted, duplicated, swapped or replaced, parentheses
inserted or deleted, deep nesting, duplicated definitions, truncation, junk and non-UTF-8
bytes). Loading a mutant (parse, model check, grounding) either succeeds or raises an
``AsgError`` whose text is one line naming the file, and the line where the error has one.
A subset goes through ``asg check`` and ``asg landmarks``: exit code 0 or 2, no traceback.
"""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from asg import pddl_models
from asg.planning import load_task, parse_files
from asg.planning.errors import AsgError

SEED = 20261201
MUTANTS_PER_MODEL = 64  # 5 shipped models and 3 ADL files: 512 mutants
ADL = Path(__file__).parent / "data" / "adl"
SOURCES = {**{name: Path(pddl_models.path(name)) for name in pddl_models.names()},
           **{f"adl/{p.stem}": p for p in sorted(ADL.glob("*.pddl"))}}
CLI_MUTANTS_PER_MODEL = 4
_TOKEN = re.compile(rb"[()]|[^\s()]+")
# Replacement words: keywords in the wrong place, malformed names and variables, numbers.
_WORDS = [b":foo", b"either", b"-", b"?x", b"?", b"forall", b"=", b"not", b"and", b"object", b":requirements",
          b":action", b":types", b":predicates", b":parameters", b":effect", b":domain", b"define", b"1.5",
          b"(either a)", b"when", b":typing", b":adl", b"?k", b"--", b"a?b", b"()", b"(=)", b"(not)", b"total-cost"]


def _spans(data: bytes) -> list[tuple[int, int]]:
    return [m.span() for m in _TOKEN.finditer(data)]


def _delete_token(rng: random.Random, data: bytes) -> bytes:
    start, end = rng.choice(_spans(data))
    return data[:start] + data[end:]


def _duplicate_token(rng: random.Random, data: bytes) -> bytes:
    start, end = rng.choice(_spans(data))
    return data[:end] + b" " + data[start:end] + data[end:]


def _swap_tokens(rng: random.Random, data: bytes) -> bytes:
    spans = _spans(data)
    i = rng.randrange(len(spans) - 1)
    j = i + 1 if rng.random() < 0.5 else rng.randrange(i + 1, len(spans))
    (a0, a1), (b0, b1) = spans[i], spans[j]
    return data[:a0] + data[b0:b1] + data[a1:b0] + data[a0:a1] + data[b1:]


def _replace_token(rng: random.Random, data: bytes) -> bytes:
    start, end = rng.choice(_spans(data))
    return data[:start] + rng.choice(_WORDS) + data[end:]


def _insert_paren(rng: random.Random, data: bytes) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice([b"(", b")", b"()", b"(("]) + data[at:]


def _delete_paren(rng: random.Random, data: bytes) -> bytes:
    parens = [i for i, c in enumerate(data) if c in b"()"]
    at = rng.choice(parens)
    return data[:at] + data[at + 1:]


def _deep_nesting(rng: random.Random, data: bytes) -> bytes:
    opens = [i for i, c in enumerate(data) if c == ord("(")][2:]  # inside the define
    at = rng.choice(opens)
    depth = rng.choice([60, 99, 101, 150, 600, 5000])
    wrapper = rng.choice([b"(and ", b"(not ", b"(", b"(p "])
    close = _matching(data, at)
    if close is None:
        return data[:at] + wrapper * depth + data[at:]
    return data[:at] + wrapper * depth + data[at:close + 1] + b")" * depth + data[close + 1:]


def _matching(data: bytes, at: int) -> int | None:
    depth = 0
    for i in range(at, len(data)):
        depth += {ord("("): 1, ord(")"): -1}.get(data[i], 0)
        if depth == 0:
            return i
    return None


def _duplicate_definition(rng: random.Random, data: bytes) -> bytes:
    """Repeat one action, predicate declaration, type or section right after itself."""
    starts = [m.start() for m in re.finditer(rb"\((?::action|:types|:predicates|:objects|:init|:constants)\b", data)]
    starts += [m.start() + 1 for m in re.finditer(rb"\(\s*:predicates\s*\(", data)]
    at = rng.choice(starts)
    if data[at:at + 1] != b"(":
        at = data.index(b"(", at)
    close = _matching(data, at)
    if close is None:
        return data
    return data[:close + 1] + b"\n" + data[at:close + 1] + data[close + 1:]


def _truncate(rng: random.Random, data: bytes) -> bytes:
    return data[:rng.randrange(len(data))]


def _junk_bytes(rng: random.Random, data: bytes) -> bytes:
    at = rng.randrange(len(data) + 1)
    junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    if rng.random() < 0.5:
        junk = junk.replace(b"\x00", b"")  # mostly reach the reader, not just the NUL check
    return data[:at] + junk + data[at:]


def _non_utf8(rng: random.Random, data: bytes) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice([b"\xff", b"\xc3", b"\xe2\x82", b"\x80abc", b"\xed\xa0\x80"]) + data[at:]


def _control_characters(rng: random.Random, data: bytes) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice(["\u00a0", "\u200b", "\x0b", "\x1f", "\u2028", "é", "\x7f"]).encode() + data[at:]


MUTATORS = [_delete_token, _duplicate_token, _swap_tokens, _replace_token, _insert_paren, _delete_paren,
            _deep_nesting, _duplicate_definition, _truncate, _junk_bytes, _non_utf8, _control_characters]


def mutants(name: str, count: int, seed: int = SEED) -> list[tuple[str, bytes]]:
    """``count`` (description, bytes) mutants of shipped model ``name``; 1-3 mutations each."""
    rng = random.Random(f"{seed}:{name}")
    source = SOURCES[name].read_bytes()
    out = []
    for i in range(count):
        data = source
        steps = []
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            mutator = MUTATORS[(i + len(steps)) % len(MUTATORS)] if not steps else rng.choice(MUTATORS)
            data = mutator(rng, data) or data
            steps.append(mutator.__name__.lstrip("_"))
        out.append((f"{name}#{i} ({', '.join(steps)})", data))
    return out


def _load(path: Path, has_problem: bool) -> None:
    if has_problem:
        load_task(path)
    else:
        parse_files(path, require_problem=False)


def _check_error(err: AsgError, path: Path) -> str | None:
    """What is wrong with the error's text, or None."""
    text = str(err)
    if "\n" in text:
        return f"more than one line: {text!r}"
    if not text.startswith(f"{path}:"):
        return f"does not name the file: {text!r}"
    line = getattr(err, "line", None)
    if line is not None and not text.startswith(f"{path}:{line}:"):
        return f"does not name line {line}: {text!r}"
    return None


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_mutants_load_or_raise_one_line_naming_the_file(name, tmp_path):
    has_problem = b"(problem" in SOURCES[name].read_bytes().lower()
    failures = []
    outcomes = {"loaded": 0, "refused": 0}
    for i, (what, data) in enumerate(mutants(name, MUTANTS_PER_MODEL)):
        path = tmp_path / f"mutant{i}.pddl"
        path.write_bytes(data)
        try:
            _load(path, has_problem)
            outcomes["loaded"] += 1
        except AsgError as err:
            outcomes["refused"] += 1
            problem = _check_error(err, path)
            if problem:
                failures.append(f"{what}: {type(err).__name__} {problem}")
        except Exception as err:  # noqa: BLE001 - anything else is a bug: report the mutant showing it
            failures.append(f"{what}: {type(err).__name__}: {str(err)[:200]}")
    assert not failures, "\n".join(failures[:20])
    assert outcomes["refused"] > MUTANTS_PER_MODEL // 4  # the mutator does break files


def test_enough_mutants_of_every_kind():
    kinds = [what for name in SOURCES for what, _ in mutants(name, MUTANTS_PER_MODEL)]
    assert len(kinds) >= 300
    for mutator in MUTATORS:
        assert sum(mutator.__name__.lstrip("_") in what for what in kinds) >= 10, mutator.__name__


def test_mutants_are_seeded():
    assert mutants("mario.pddl", 8) == mutants("mario.pddl", 8)
    assert mutants("mario.pddl", 8) != mutants("mario.pddl", 8, seed=SEED + 1)


@pytest.mark.parametrize("command", ["check", "landmarks"])
def test_mutants_through_the_cli_exit_0_or_2_without_traceback(command, tmp_path):
    from asg.cli.main import main

    runner = CliRunner()
    for name in SOURCES:
        for i, (what, data) in enumerate(mutants(name, CLI_MUTANTS_PER_MODEL, seed=SEED + 7)):
            path = tmp_path / f"{name.replace('/', '-')}-{i}.pddl"
            path.write_bytes(data)
            result = runner.invoke(main, [command, str(path)])
            assert result.exit_code in (0, 2), f"{what}: exit {result.exit_code}: {result.output}{result.exception!r}"
            assert "Traceback" not in result.output, what
            if result.exit_code == 2:
                lines = result.stderr.strip().splitlines()
                refused_option = f"error: --factory hm: {path} has axioms"  # a model h^m does not take
                assert lines and (lines[-1].startswith(f"{path}:") and ": error: " in lines[-1]
                                  or lines[-1].startswith(refused_option)), (what, result.stderr)
