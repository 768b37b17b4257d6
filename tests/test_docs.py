"""Docs that cannot drift: every ``asg`` command line in the docs parses against today's CLI, and
every figure of the README's status table is read from the results file it links.

Which lines are command lines
    README.md, docs/*.md and examples/*/README.md: in a fenced code block, the lines beginning
    ``$ asg`` (a block with ``$`` prompts) or ``asg`` (a block without); in the prose, inline code
    spans beginning ``asg`` and a command name. Under benchmarks/results/, every committed
    commands.txt, command.txt and README.txt: the lines beginning ``asg`` (indented or not) and the
    code spans beginning ``asg`` in their prose; a line beginning ``#`` is a comment. A trailing
    ``\\`` continues a line. A line is split into shell commands at ``&&``, ``;`` and pipes; a
    ``# comment`` and a ``> FILE`` redirection are dropped.

Synopsis notation
    ``[...]`` is an optional part, and every one is included (a synopsis must hold with all its
    options at once); ``[A | B]`` and ``a|b`` are alternatives, each checked on its own. An
    upper-case word (``FILE``, ``DIR``, ``N``, ``A,B``, ``module:NAME``) is a placeholder: it takes
    a value its option accepts, and no file behind it is checked. ``...`` and ``…`` are dropped.

Where a command runs
    From the repository root; in examples/X/README.md from examples/X. ``cd DIR`` moves the rest
    of its code block (or of its line); a ``DIR`` that is not there but is in the repository root
    is taken from the root (the doc shows the command from there).

What fails
    1. An unknown command or option, or a value its option refuses: click's own parser and types
       (``make_context``).
    2. A refused combination: the command's own checks run (its callback), up to the library call
       that would do the work, which a stub replaces: the stub stops there, so nothing runs.
    3. A missing file: a file or folder a command reads must exist where the command runs, unless
       an earlier command of the same file produces it. Produced are: an earlier command line's
       ``--out``/``-o``/``--output`` target and anything under it (asg or a script), or the
       destination of ``cp``; except that ``asg train --domain fetch-programs`` produces only the
       files its stage writes (``policy.npz``, ``behaviour_model.npz``, ``meta_controller.npz``
       in its ``--out``; a whole pipeline writes them in ``<out>/<stage>/``), and ``asg train`` of
       an ASGRL domain its run folder (by default ``runs/<domain>-<method>-seed<N>``). Where a
       command writes is not checked against the disk (it creates it).
"""
from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from unittest import mock

import click
import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
import claims  # noqa: E402  (benchmarks/claims.py, a script folder, not a package)

PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*(,[A-Z][A-Z0-9_]*)*$|^[A-Za-z_.]+:NAME$")
SAMPLES = {"domain": "mario", "methods": "asgrl", "env_id": "MiniGrid-DoorKey-5x5-v0",  # placeholder values
           "program_list": "Stack_0_1"}
MAX_VARIANTS = 64


class Stop(Exception):
    """The command reached the call that does its work: every check before it passed."""


# -- finding the command lines -------------------------------------------------------------------
@dataclass(frozen=True)
class DocCommand:
    """One shell command of a doc: its text (after ``asg``, or a whole non-asg command), where it
    runs, and where it is written."""

    source: str
    line: int
    text: str
    cwd: Path
    is_asg: bool
    shows_error: bool = False  # a `$` line whose output is an ``error:`` line: it must fail


def doc_files(root: Path = REPO) -> list[Path]:
    """Every file whose command lines are checked."""
    files = [root / "README.md", *sorted((root / "docs").glob("*.md")), *sorted(root.glob("examples/*/README.md"))]
    for name in ("commands.txt", "command.txt", "README.txt"):
        files += sorted((root / "benchmarks" / "results").rglob(name))
    return [f for f in files if f.is_file()]


def _strip_comment(line: str) -> str:
    return re.split(r"(?:^|\s)#", line, maxsplit=1)[0]


def _segments(line: str) -> list[str]:
    """A shell line split at ``&&``, ``;`` and pipes outside ``[...]``, each without a redirection."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(line):
        char = line[i]
        depth += {"[": 1, "]": -1}.get(char, 0)
        sep = next((s for s in (" && ", " ; ", "; ", " | ") if line.startswith(s, i)), None)
        if sep and (depth == 0 or sep != " | "):
            parts.append(line[start:i])
            start = i = i + len(sep)
            continue
        i += 1
    parts.append(line[start:])
    return [re.split(r"\s\d?>", part, maxsplit=1)[0].strip() for part in parts if part.strip()]


def _commands_of_line(line: str, number: int, source: str, cwd: Path) -> tuple[list[DocCommand], Path]:
    """The commands of one shell line and the folder after it (``cd`` moves it)."""
    found = []
    for segment in _segments(_strip_comment(line)):
        if segment.startswith("cd "):
            target = segment[3:].strip()
            cwd = (cwd / target).resolve() if (cwd / target).is_dir() or not (REPO / target).is_dir() else REPO / target
        elif segment == "asg" or segment.startswith("asg "):
            found.append(DocCommand(source, number, segment[3:].strip(), cwd, True))
        else:
            found.append(DocCommand(source, number, segment, cwd, False))
    return found, cwd


def _joined(lines: list[str], first: int) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` with ``\\`` continuations joined."""
    held, start = "", first
    for offset, line in enumerate(lines):
        if not held:
            start = first + offset
        if line.rstrip().endswith("\\"):
            held += line.rstrip()[:-1] + " "
            continue
        yield start, held + line
        held = ""
    if held:
        yield start, held


def _spans(text: str, first: int, source: str, cwd: Path) -> list[DocCommand]:
    """The inline code spans of prose that begin with ``asg`` and a command name."""
    from asg.cli.main import COMMANDS

    found = []
    for match in re.finditer(r"`([^`]+)`", text):
        words = " ".join(match.group(1).split())
        names = words.split()
        arguments = names[3:] if names[1:2] == ["fetch"] else names[2:]  # `asg train` names a command
        if names[0] == "asg" and len(names) > 1 and names[1] in COMMANDS and arguments:
            number = first + text.count("\n", 0, match.start())
            found += _commands_of_line(words, number, source, cwd)[0]
    return found


def extract(path: Path, root: Path = REPO) -> list[DocCommand]:
    """The shell commands of one doc file, in the order they are written."""
    text = path.read_text(encoding="utf-8")
    source = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
    base = path.parent if path.name == "README.md" and path.parent.parent.name == "examples" else root
    if path.suffix != ".md":
        found = _spans(text, 1, source, base)
        prose = re.sub(r"`[^`]*`", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
        for number, line in _joined(prose.splitlines(), 1):
            if line.strip().startswith(("asg ", "python ", "cp ")):  # asg, and the scripts that produce files
                found += _commands_of_line(line.strip(), number, source, base)[0]
        return sorted(found, key=lambda c: c.line)
    found, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if not lines[i].lstrip().startswith("```"):
            j = i
            while j < len(lines) and not lines[j].lstrip().startswith("```"):
                j += 1
            found += _spans("\n".join(lines[i:j]), i + 1, source, base)
            i = j
            continue
        j = i + 1
        while j < len(lines) and not lines[j].lstrip().startswith("```"):
            j += 1
        block, cwd = lines[i + 1:j], base
        prompts = any(line.lstrip().startswith("$ ") for line in block)
        joined = list(_joined(block, i + 2))
        for k, (number, line) in enumerate(joined):
            line = line.strip()
            if prompts and not line.startswith("$ "):
                continue
            commands, cwd = _commands_of_line(line.removeprefix("$ "), number, source, cwd)
            if prompts and k + 1 < len(joined) and joined[k + 1][1].strip().startswith("error:"):
                commands = [replace(c, shows_error=True) for c in commands]
            kept = ("cp ", "pip ")  # outside `$` blocks: asg, and the commands that produce files
            found += [c for c in commands if c.is_asg or prompts or "--out" in c.text or c.text.startswith(kept)]
        i = j + 1
    return found


# -- expanding a synopsis -------------------------------------------------------------------------
def variants(text: str) -> list[list[str]]:
    """The argument lists a synopsis stands for: every ``[...]`` included, each alternative apart."""
    match = re.search(r"\[([^\[\]]*)\]", text)
    if match:
        out: list[list[str]] = []
        for alternative in match.group(1).split(" | "):
            out += variants(text[:match.start()] + alternative.strip() + text[match.end():])
        return out[:MAX_VARIANTS]
    tokens = [t for t in shlex.split(text) if t not in ("...", "…")]
    choices = [t.split("|") if "|" in t and not t.startswith("{") else [t] for t in tokens]
    return [list(c) for c in itertools.islice(itertools.product(*choices), MAX_VARIANTS)]


# -- checking one command -------------------------------------------------------------------------
@dataclass
class Session:
    """The commands of one file, checked in order; what they produce lives in ``sandbox``."""

    sandbox: Path
    produced: dict[str, str] = field(default_factory=dict)  # absolute path -> "file" | "dir" | "tree"
    strict: set[str] = field(default_factory=set)  # folders whose files are named one by one

    def produce(self, path: str | Path, kind: str) -> None:
        absolute = os.path.abspath(path)
        if absolute in self.strict and kind == "tree":
            return
        self.produced.setdefault(absolute, kind)

    def produced_at(self, absolute: str) -> str | None:
        if absolute in self.produced:
            return self.produced[absolute]
        if any(kind == "dir" and p.startswith(absolute + os.sep) for p, kind in self.produced.items()):
            return "dir"
        parents = (p for p, kind in self.produced.items() if kind == "tree" and absolute.startswith(p + os.sep))
        return "tree" if any(parents) else None

    def materialize(self, absolute: str, kind: str) -> str:
        """The sandbox's stand-in for a produced path, with every produced path under it."""
        target = self.sandbox / absolute.lstrip(os.sep)
        if kind == "file" or (kind == "tree" and Path(absolute).suffix):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("{}")
            return str(target)
        target.mkdir(parents=True, exist_ok=True)
        for path, inner in self.produced.items():
            if path.startswith(absolute + os.sep) and inner == "file":
                self.materialize(path, "file")
        return str(target)

    def stand_in(self, token: str) -> str:
        """``token`` itself, or a produced path's stand-in where it is not on the disk."""
        prefix, sep, value = token.partition("=") if token.startswith("--") else ("", "", token)
        if not value or value.startswith("-") or PLACEHOLDER.match(value):
            return token
        absolute = os.path.abspath(value)
        if os.path.exists(absolute):
            return token
        kind = self.produced_at(absolute)
        return token if kind is None else prefix + sep + self.materialize(absolute, kind)


def resolve_command(args: list[str]) -> tuple[click.Command, str, list[str]]:
    """The click command ``asg ARGS`` names, its name, and its own arguments."""
    from asg.cli.main import main

    command: click.Command = main
    name = "asg"
    while isinstance(command, click.Group) and args and not args[0].startswith("-"):
        sub = command.get_command(None, args[0])  # type: ignore[arg-type]
        if sub is None:
            raise click.UsageError(f"no such command {args[0]!r}")
        command, name, args = sub, args[0], args[1:]
    return command, name, args


def fill_placeholders(command: click.Command, args: list[str], session: Session) -> tuple[list[str], set[str]]:
    """``args`` with each placeholder replaced by a value its option or argument accepts."""
    from asg.cli.options import ModelPath, OutputPath

    by_flag = {flag: p for p in command.params if isinstance(p, click.Option) for flag in p.opts + p.secondary_opts}
    positional = [p for p in command.params if isinstance(p, click.Argument)]
    out, filled, previous, position = [], set(), None, 0
    for token in args:
        param = previous
        if param is None and not token.startswith("-"):
            param = positional[position] if position < len(positional) else None
            position += 1
        previous = by_flag.get(token)
        if previous is not None and (previous.is_flag or previous.count):
            previous = None
        if param is None or not PLACEHOLDER.match(token):
            out.append(token)
            continue
        kind = param.type
        if isinstance(kind, click.Choice):
            value = str(list(kind.choices)[0])
        elif isinstance(kind, click.IntRange | click.FloatRange):
            low = kind.min if kind.min is not None else 1
            value = str(low + 1 if kind.min_open else low)
        elif isinstance(kind, ModelPath):
            value = "mario"
        elif isinstance(kind, click.Path) and kind.exists:
            value = session.materialize(os.path.abspath(session.sandbox / "placeholder" / "file.json"), "file")
        elif isinstance(kind, click.Path | OutputPath):
            fmt = next((b for a, b in zip(args, args[1:]) if a == "--format" and b in ("html", "png", "svg")), "out")
            value = str(session.sandbox / f"placeholder.{fmt}")
        else:
            value = SAMPLES.get(param.name or "", {click.INT: "1", click.FLOAT: "0.5"}.get(kind, "placeholder"))
        out.append(value)
        filled.add(value)
    return out, filled


def _need(path: str | Path | None, what: str, filled: set[str]) -> None:
    if path is not None and str(path) not in filled and not Path(path).exists():
        raise click.UsageError(f"{what} {path}: no such file or folder (not made by an earlier command)")


def _need_module(spec: str | None, filled: set[str]) -> None:
    """``module:NAME`` must name a module file where the command runs, or an installed module."""
    if spec is None or spec in filled or ":" not in spec:
        return
    module = spec.split(":")[0]
    if not Path(module.replace(".", "/") + ".py").is_file() and importlib.util.find_spec(module) is None:
        raise click.UsageError(f"--labeler {spec}: no module {module} here")


@contextlib.contextmanager
def work_stubs(session: Session, filled: set[str]) -> Iterator[None]:
    """The library calls that do each command's work, replaced by stubs that record what the
    command would write, check what it would read, and stop."""
    import asg.cli.options as options
    import asg.cli.planning_cmds as planning_cmds
    import asg.envs.domains as domains
    import asg.envs.fetch as fetch_env
    import asg.envs.plugins as plugins
    import asg.learning.asgrl.experiments as experiments
    import asg.learning.asgrl.trainer as trainer
    import asg.learning.fetch_programs as fp
    import asg.learning.goal_policy.evaluate as goal_eval
    import asg.pddl_models as pddl_models
    import asg.planning as planning
    import asg.planning.program_view as program_view
    from asg.learning.run_dir import default_run_path

    def stop(*args: object, **kwargs: object) -> None:
        raise Stop

    def load(domain: object, problem: str | None, lenient: bool = False) -> None:
        _need(problem, "PROBLEM", filled)
        raise Stop

    def parse(file: object, problem: str | None = None, **kwargs: object) -> None:
        load(file, problem)

    def own_world(env: str, labeler: str, model: object, **kwargs: object) -> None:
        _need_module(labeler, filled)
        given = click.get_current_context().params  # the run folder `asg train` would make
        session.produce(given["out"] or default_run_path("runs", env, given["method"], given["seed"]), "tree")
        raise Stop

    def domain_from_parts(env: str, labeler: str, model: str) -> None:
        _need_module(labeler, filled)
        raise Stop

    def create(path: Path, cfg: object, binding: object = None, plugin: object = None) -> None:
        session.produce(path, "tree")
        raise Stop

    def resume(path: Path, steps: int | None = None) -> None:
        _need(path, "--resume", filled)
        raise Stop

    def evaluate_run(run_dir: Path, **kwargs: object) -> None:
        _need(run_dir, "RUN_DIR", filled)
        raise Stop

    def run_hints(run_dir: Path, **kwargs: object) -> None:
        _need(run_dir, "RUN_DIR", filled)
        raise Stop

    def stage(name: str):  # one fetch-programs stage: its folder and the file it writes there
        def train(folder: Path, *args: object, resume: bool = False, **kwargs: object) -> None:
            if resume:
                _need(folder, "--resume", filled)
            session.strict.add(os.path.abspath(folder))
            session.produce(folder, "dir")
            session.produce(Path(folder) / fp.STAGE_FILE[name], "file")
            raise Stop
        return train

    def pipeline(folder: Path, **kwargs: object) -> None:
        session.strict.add(os.path.abspath(folder))
        for name, file in fp.STAGE_FILE.items():
            session.strict.add(os.path.abspath(Path(folder) / name))
            session.produce(Path(folder) / name / file, "file")
        raise Stop

    def non_atomic(*args: object) -> None:
        session.produce(args[7], "tree")  # out
        raise Stop

    def run_grid(domain: str, methods: object, seeds: object, out: Path, **kwargs: object) -> None:
        session.produce(out, "tree")
        raise Stop

    replaced = [(options, "check_writable", lambda path, kind="file": Path(path)),
                (planning_cmds, "_load", load), (planning, "parse_files", parse), (pddl_models, "bundled", stop),
                (program_view, "library_text", stop), (program_view, "library_json", stop),
                (program_view, "draw_hierarchy", stop), (trainer, "own_world", own_world),
                (trainer.TrainRun, "create", create), (trainer.TrainRun, "resume", resume),
                (trainer, "evaluate_run", evaluate_run), (trainer, "run_hints", run_hints),
                (experiments, "run_grid", run_grid),
                (fp, "train_pipeline", pipeline), (fp, "train_goal_policy", stage("goal-policy")),
                (fp, "train_behaviour_model", stage("behaviour-model")),
                (fp, "train_meta_controller", stage("meta-controller")), (fp, "_evaluate_non_atomic", non_atomic),
                (goal_eval, "evaluate_atomic", stop), (goal_eval, "evaluate_multistep", stop),
                (domains, "get_domain", stop), (plugins, "domain_from_parts", domain_from_parts),
                (fetch_env, "run_program", stop)]
    with contextlib.ExitStack() as stack:
        for owner, name, new in replaced:
            stack.enter_context(mock.patch.object(owner, name, new))
        yield


def check_args(args: list[str], session: Session) -> None:
    """Parse and check one ``asg ARGS`` as the CLI would, stopping before its work; raise on a fault."""
    from asg.cli.options import OutputPath

    command, name, args = resolve_command([session.stand_in(a) for a in args])
    args, filled = fill_placeholders(command, args, session)
    with work_stubs(session, filled):
        try:
            ctx = command.make_context(name, list(args))
        except click.exceptions.Exit as done:  # --help, --version
            if done.exit_code:
                raise
            return
        with ctx:
            try:
                command.invoke(ctx)
            except Stop:
                pass
            except click.exceptions.Exit as done:
                if done.exit_code:
                    raise click.UsageError(f"exits {done.exit_code} before its work") from None
    for param in command.params:
        value = ctx.params.get(param.name or "")
        if isinstance(param.type, OutputPath) and value is not None and str(value) not in filled:
            session.produce(value, "tree" if param.type.kind == "dir" else "file")


@contextlib.contextmanager
def plugin_domains() -> Iterator[list[str]]:
    """A list to which :func:`install_plugin` adds domains; they are removed at the end."""
    from asg.envs.plugins import unregister_domain

    names: list[str] = []
    path = list(sys.path)
    try:
        yield names
    finally:
        for name in names:
            unregister_domain(name)
        sys.path[:] = path


def install_plugin(words: list[str], cwd: Path, names: list[str]) -> None:
    """``pip install DIR`` of a package with ``asg.domains`` entry points: its domains, registered."""
    from asg.envs.plugins import add_domain

    folder = cwd / words[-1] if (cwd / words[-1]).is_dir() else REPO / words[-1]  # as `cd` takes it
    toml = folder / "pyproject.toml"
    if not toml.is_file() or "asg.domains" not in toml.read_text():
        return
    section = toml.read_text().split('"asg.domains"]', 1)[1].split("[", 1)[0]
    sys.path.insert(0, str(folder))
    for name, target in re.findall(r'^(\S+)\s*=\s*"([^"]+)"', section, flags=re.M):
        module, _, attribute = target.partition(":")
        spec = getattr(importlib.import_module(module), attribute)
        add_domain(spec() if callable(spec) else spec, replace=True)
        names.append(name)


def check_doc_commands(commands: list[DocCommand], sandbox: Path) -> list[str]:
    """Every fault of ``commands`` (one file's, in order), as ``source:line: asg ...: error`` lines."""
    session, faults = Session(sandbox), []
    here = os.getcwd()
    with plugin_domains() as plugins:
        _check_each(commands, session, faults, plugins)
    os.chdir(here)
    return faults


def _check_each(commands: list[DocCommand], session: Session, faults: list[str], plugins: list[str]) -> None:
    from asg.planning.errors import AsgError

    for command in commands:
        if not command.cwd.is_dir():
            faults.append(f"{command.source}:{command.line}: cd {command.cwd}: no such folder")
            continue
        os.chdir(command.cwd)
        if not command.is_asg:
            words = command.text.split()
            for flag, value in zip(words, words[1:]):
                if flag in ("--out", "-o", "--output"):
                    session.produce(value, "tree")
            if words and words[0] == "cp" and len(words) > 2:
                session.produce(words[-1], "tree")
            if words[:2] == ["pip", "install"] and len(words) > 2:
                install_plugin(words, command.cwd, plugins)
            continue
        try:
            expanded = variants(command.text)
        except ValueError as err:
            faults.append(f"{command.source}:{command.line}: asg {command.text}: {err}")
            continue
        found = []
        for args in expanded:
            try:
                check_args(args, session)
            except (click.ClickException, AsgError) as err:
                message = err.format_message() if isinstance(err, click.ClickException) else str(err)
                found.append(f"{command.source}:{command.line}: asg {' '.join(args)}: {message}")
                break
        if command.shows_error and not found:
            found.append(f"{command.source}:{command.line}: asg {command.text}: shown failing, but passes")
        faults += [] if command.shows_error and found and not found[0].endswith("passes") else found


# -- the tests ------------------------------------------------------------------------------------
@pytest.mark.parametrize("doc", doc_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_doc_commands_parse_against_the_cli(doc: Path, tmp_path: Path) -> None:
    """Every asg command line of the doc parses, passes the CLI's checks and names files that exist."""
    commands = extract(doc)
    assert not check_doc_commands(commands, tmp_path), "\n".join(check_doc_commands(commands, tmp_path / "again"))


def test_the_docs_have_commands() -> None:
    """The extraction finds the commands it must (a reader that finds none checks nothing)."""
    readme = [c.text for c in extract(REPO / "README.md") if c.is_asg]
    assert "train --domain mario" in readme
    assert any(text.startswith("eval --domain fetch-programs") for text in readme)
    assert sum(len(extract(doc)) for doc in doc_files()) > 100


BROKEN = {
    "an unknown option": "asg train --domain mario --no-such-option 3",
    "an option of another workflow": "asg train --domain mario --stage goal-policy",
    "a refused synopsis": "asg eval --domain fetch-programs --suite atomic|multistep [--starts table|chained]",
    "options refused with --resume": "asg train --domain mario [--out DIR | --resume DIR] --k 3\n"
                                     "asg train --resume runs/never-made --k 3",
    "a bad value": "asg landmarks mario --m 3",
    "a missing PDDL file": "asg landmarks no-such-dir/blocks.pddl",
    "a missing problem file": "asg landmarks mario no-such-problem.pddl",
    "a removed option": "asg eval --domain fetch-programs --programs atomic --model exact --episodes 2",
    "a stage file under an old name": "asg train --domain fetch-programs --stage behaviour-model --out runs/bm\n"
                                      "asg train --domain fetch-programs --stage meta-controller "
                                      "--behaviour-model runs/bm/behaviour_model.pt",
    "a run folder no command made": "asg eval runs/mario-asgrl-seed9",
    "a missing labeler module": "asg mvtr --env MiniGrid-DoorKey-5x5-v0 --labeler nolabels:X --model mario",
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_command_fails(case: str, tmp_path: Path) -> None:
    """A deliberately broken commands file: the check reports it."""
    doc = tmp_path / "commands.txt"
    doc.write_text("asg train --domain mario\n" + BROKEN[case] + "\n")
    faults = check_doc_commands(extract(doc, tmp_path), tmp_path / "sandbox")
    assert faults, f"{case}: no fault found"


def test_good_commands_pass(tmp_path: Path) -> None:
    """The same shapes, written right, pass: a run made earlier, a stage file under its own name."""
    doc = tmp_path / "README.txt"
    doc.write_text("asg train --domain mario\nasg eval runs/mario-asgrl-seed0\n"
                   "asg train --domain fetch-programs --stage behaviour-model --out runs/bm\n"
                   "    asg train --domain fetch-programs --stage meta-controller \\\n"
                   "        --behaviour-model runs/bm/behaviour_model.npz --out runs/mc\n"
                   "prose `asg eval --domain fetch-programs --suite non-atomic --checkpoint runs/mc` prose\n"
                   "asg eval --domain fetch-programs --suite atomic|multistep [--policy FILE] [--episodes N]\n")
    commands = extract(doc, tmp_path)
    assert len(commands) == 6
    assert check_doc_commands(commands, tmp_path / "sandbox") == []


def test_markdown_blocks_prompts_and_cd(tmp_path: Path) -> None:
    """``$`` blocks keep only prompted lines; ``cd`` moves the rest of its block only."""
    shutil.copytree(REPO / "examples" / "doorkey", tmp_path / "doorkey")
    doc = tmp_path / "x.md"
    doc.write_text("```\n$ cd doorkey\n$ asg mvtr --env MiniGrid-DoorKey-5x5-v0 --labeler labels:DOORKEY "
                   "--model doorkey.pddl\nasg output line --not-checked\n```\n\n"
                   "`asg landmarks doorkey.pddl` fails here: it is not in the doc's folder.\n")
    commands = extract(doc, tmp_path)
    assert [c.cwd.name for c in commands if c.is_asg] == ["doorkey", tmp_path.name]
    faults = check_doc_commands(commands, tmp_path / "sandbox")
    assert len(faults) == 1 and "doorkey.pddl" in faults[0]


# -- the README's figures -----------------------------------------------------------------------------
def test_status_table_figures_match_their_files() -> None:
    """Every figure of the README's status table is the one its results file gives."""
    assert claims.check(REPO) == []


def _copy_with_results(root: Path) -> Path:
    """A folder holding the README and every results file a claim reads, as committed."""
    root.mkdir()
    shutil.copy(REPO / "README.md", root / "README.md")
    for claim in claims.CLAIMS:
        (root / claim.file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / claim.file, root / claim.file)
    return root


def test_a_changed_number_in_a_results_file_fails(tmp_path: Path) -> None:
    """A copy of the results with one figure changed (Table 2's Stack_All_Blocks, 0.45 -> 0.46):
    the claims check names the file."""
    copy = _copy_with_results(tmp_path / "repo")
    assert claims.check(copy) == []
    claim = next(c for c in claims.CLAIMS if c.file.endswith("fast-200/non-atomic-replan-learned.json"))
    data = json.loads((copy / claim.file).read_text())
    data["families"]["Stack_All_Blocks"] += 0.01
    (copy / claim.file).write_text(json.dumps(data))
    faults = claims.check(copy)
    assert len(faults) == 1 and claim.file in faults[0] and "0.46" in faults[0]


def test_a_changed_number_in_the_readme_fails(tmp_path: Path) -> None:
    """A copy of the README with one status-table figure changed: the claims check names it."""
    copy = _copy_with_results(tmp_path / "repo")
    text = (REPO / "README.md").read_text()
    for claim in claims.CLAIMS:
        figure = claim.value(REPO)
        changed = re.sub(r"\d", lambda m: str((int(m.group(0)) + 1) % 10), figure, count=1)
        (copy / "README.md").write_text(text.replace(figure, changed))
        assert any(claim.file in fault for fault in claims.check(copy)), claim


def test_an_unread_number_in_the_status_table_fails(tmp_path: Path) -> None:
    """A figure typed into the table that no claim reads is reported."""
    copy = _copy_with_results(tmp_path / "repo")
    text = (copy / "README.md").read_text()
    (copy / "README.md").write_text(text.replace("| — |", "| 0.97 on Mario |", 1))
    assert claims.unclaimed_numbers(copy) == ["README.md: row 'ASGRL, asg defaults': '0.97' is read from no file"]


def test_every_status_figure_is_a_claim() -> None:
    """No number stands in the status table that no claim reads from a file."""
    assert claims.unclaimed_numbers(REPO) == []
