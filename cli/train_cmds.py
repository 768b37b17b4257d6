"""``asg train``, ``asg eval``, ``asg compare``: the ASGRL learners end to end.

``--domain`` is a plain name checked at run time, so other families can add domains: a module
that trains something else puts a handler in ``DOMAIN_HANDLERS`` (name -> callable taking the
click context and the option dict), e.g. ``fetch-programs``; names in neither
``asg.envs.domains.DOMAINS`` nor ``DOMAIN_HANDLERS`` are one clear error line, exit 2.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

import click

from asg.cli.options import InputPath, LazyChoice, ModelPath, OutputPath, apply_config_file
from asg.cli.progress import Progress
from asg.planning.errors import AsgError

DOMAIN_HANDLERS: dict[str, Callable[[click.Context, dict[str, Any]], None]] = {}
EVAL_HANDLERS: dict[str, Callable[[dict[str, Any]], None]] = {}
WORLD_MODELS = ("exact", "learned")
SUITES = ("atomic", "multistep", "non-atomic")


def _method_names() -> list[str]:
    from asg.learning.registry import METHODS

    return list(METHODS)


def _preset_names() -> list[str]:
    from asg.learning.asgrl.config import PRESETS

    return list(PRESETS)


def _check_domain(domain: str) -> bool:
    """True for an ASGRL domain, False for one with a registered handler; else AsgError."""
    from asg.learning.registry import asgrl_domains

    if domain in asgrl_domains():
        return True
    if domain in DOMAIN_HANDLERS:
        return False
    known = sorted([*asgrl_domains(), *DOMAIN_HANDLERS])
    raise AsgError(f"--domain: unknown domain {domain!r}; choose from {', '.join(known)}")


def _progress_bar(total: int, initial: int, quiet: bool, label: str) -> tuple[Progress, Callable[..., None]]:
    """A ``Progress`` over env steps and the trainer's ``progress(steps, stats, state)`` callback."""
    bar = Progress(total, initial, label=label, unit="step", quiet=quiet)

    def update(steps: int, stats: Any, state: Any) -> None:
        note = f"success {state.rows[-1]['success_rate']:.2f}" if state.rows else None
        bar.update(steps, note)
    return bar, update


def _stop_reason(result: dict[str, Any]) -> str:
    """Why training ended where it did, for the progress bar's last position."""
    status = result["status"]
    if status == "solved":
        return f"solved (greedy success {result['success_rate']:.2f}), stopped early"
    if status == "interrupted":
        return "interrupted, checkpoint saved"
    return f"step budget reached (greedy success {result['success_rate']:.2f})"


def _check_preset(preset: str | None) -> None:
    """AsgError unless ``preset`` is None or a name of ``config.PRESETS``."""
    from asg.learning.asgrl.config import PRESETS

    if preset is not None and preset not in PRESETS:
        raise AsgError(f"--preset: unknown preset {preset!r} for an ASGRL domain; choose from {', '.join(PRESETS)}")


def _eval_overrides(eval_epsilon: float | None, curve_eval: str | None) -> dict[str, Any]:
    """The config overrides of --eval-epsilon and --curve-eval."""
    overrides: dict[str, Any] = {}
    if eval_epsilon is not None:
        overrides["final_eval_epsilon"] = eval_epsilon
    if curve_eval is not None:
        overrides["curve_eval"] = curve_eval
    return overrides


def written_files(folder: Path) -> str:
    """``folder: a, b, c`` for the files a command wrote there (sorted; folders end in /)."""
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError:
        return str(folder)
    names = [p.name + ("/" if p.is_dir() else "") for p in entries if not p.name.startswith(".")]
    return f"{folder}: {', '.join(names)}" if names else str(folder)


def _model_name(cfg: Any) -> str:
    """What to give ``asg landmarks`` for a run's model: the user's file, or the bundled name."""
    if getattr(cfg, "model", None):
        return str(cfg.model)
    from asg.envs.domains import get_domain

    return get_domain(cfg.domain).model.replace("_", "-")


def _print_next(cfg: Any, run_path: Path) -> None:
    click.echo(f"wrote {written_files(run_path)}")
    commands = [(f"asg eval {run_path}", "re-evaluate the frozen greedy policy"),
                (f"asg landmarks {_model_name(cfg)}", "the subgoals its skills were learned for"),
                (f"asg compare --domain {cfg.domain} --seeds 3", "against the paper's baselines")]
    width = max(len(command) for command, _ in commands)
    click.echo("next:")
    for command, why in commands:
        click.echo(f"  {command:<{width}}  # {why}")


def _print_result(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(result, indent=2, sort_keys=True))
        return
    steps = result.get("steps_to_success")
    click.echo(f"{result['domain']} / {result['method']} / seed {result['seed']}: "
               f"success {result['success_rate']:.2f} over {result['eval_episodes']} greedy episodes, "
               f"{result['env_steps']} env steps, {result['wall_seconds']:.1f} s"
               + (f", first success at {steps} steps" if steps is not None else ", never solved")
               + f" [{result['status']}]")
    if result.get("run_dir"):
        click.echo(f"run directory: {result['run_dir']}")


@click.command("train", short_help="Train ASGRL on a domain (or the Fetch pipeline).")
@click.option("--domain", help="ASGRL domain (household-v1, household-v2, minecraft, mario, pixel-mario) "
                               "or fetch-programs.")
@click.option("--method", type=LazyChoice(_method_names), default="asgrl", show_default=True)
@click.option("--model", type=ModelPath(),
              help="PDDL model (file or bundled name, asg models) instead of the domain's own.")
@click.option("--k", type=click.IntRange(min=1), help="Diverse skills per landmark (all landmarks).")
@click.option("--steps", type=click.IntRange(min=1), help="Env-step budget (default 500000).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--out", type=OutputPath("dir"),
              help="Run directory (default runs/<domain>-<method>-seed<N>).")
@click.option("--config", "config_file", type=InputPath("file"),
              help="JSON file of config overrides (nested like the saved config.json).")
@click.option("--resume", type=click.Path(path_type=Path, file_okay=False),
              help="Continue the run in this directory from its checkpoint.")
@click.option("--eval-episodes", type=click.IntRange(min=1), help="Greedy episodes per evaluation point.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--json", "as_json", is_flag=True, help="Print result.json on stdout.")
@click.option("--stage", type=click.Choice(["goal-policy", "behaviour-model", "meta-controller"]),
              help="fetch-programs: what to train.")
@click.option("--preset", help="ASGRL domains: asg (default: the paper's schedules plus our additions) or paper "
                               "(App. G, every addition off); fetch-programs: goal-policy/behaviour-model "
                               "preset (fast or paper; default fast).")
@click.option("--eval-epsilon", type=click.FloatRange(0.0, 1.0),
              help="ε of the final evaluation reported beside the greedy one (default 0.05, the paper's).")
@click.option("--curve-eval", type=click.Choice(["greedy", "epsilon"]),
              help="Protocol of the curve points: greedy (default) or ε-greedy with --eval-epsilon.")
@click.option("--workers", type=click.IntRange(min=1), help="fetch-programs: rollout / self-play workers.")
@click.option("--ray-address", help="fetch-programs goal-policy / meta-controller: Ray cluster address.")
@click.option("--max-epochs", type=click.IntRange(min=1),
              help="fetch-programs goal-policy: stop after this many epochs (resume later).")
@click.option("--policy", type=InputPath("file"),
              help="fetch-programs behaviour-model: goal policy (default: the shipped one).")
@click.option("--episodes", type=click.IntRange(min=1),
              help="fetch-programs behaviour-model: dataset size N in episodes.")
@click.option("--world-model", type=click.Choice(WORLD_MODELS),
              help="fetch-programs meta-controller: the model searched in (default exact).")
@click.option("--behaviour-model", type=InputPath("file"),
              help="fetch-programs meta-controller: learned model file (default: the shipped one).")
@click.option("--iterations", type=click.IntRange(min=1), help="fetch-programs meta-controller: training iterations.")
@click.option("--from-scratch", is_flag=True, default=None,
              help="fetch-programs (no --stage): train every stage instead of using the shipped files.")
@click.pass_context
def train_cmd(ctx: click.Context, domain: str | None, method: str, model: Path | None, k: int | None,
              steps: int | None, seed: int, out: Path | None, config_file: Path | None,
              resume: Path | None, eval_episodes: int | None, quiet: bool, as_json: bool,
              **fetch_options: Any) -> None:
    """Learn skills and a meta-controller from a domain's symbolic model; report success.

    --model takes a PDDL file or a bundled model's name (asg models). Writes a run directory (config.json, metrics.csv, learning_curve.png, checkpoint,
    result.json). Ctrl-C checkpoints; --resume DIR continues (exit 130 when interrupted).
    --domain fetch-programs trains the AlphaNPI-X stages instead (--stage).
    """
    from asg.learning.asgrl.config import make_config, merge_overrides
    from asg.learning.registry import bind_domain, make_subgoals
    from asg.learning.run_dir import RunDir, default_run_path
    from asg.learning.asgrl.trainer import train

    binding = None
    if domain is not None and not _check_domain(domain):
        DOMAIN_HANDLERS[domain](ctx, dict(ctx.params))
        return
    preset = fetch_options.pop("preset")
    eval_epsilon, curve_eval = fetch_options.pop("eval_epsilon"), fetch_options.pop("curve_eval")
    unused = [name for name, value in fetch_options.items() if value is not None]
    if unused:
        raise AsgError(f"--{unused[0].replace('_', '-')}: only with --domain fetch-programs")
    _check_preset(preset)
    if resume is not None and out is not None:
        raise AsgError("--out: not with --resume (the run stays in its folder)")
    if resume is not None:
        if (domain is not None or model is not None or k is not None or config_file is not None
                or preset is not None or eval_epsilon is not None or curve_eval is not None):
            raise AsgError("--resume: give only --steps, --quiet and --json with it")
        run_dir = RunDir.open(resume)
        cfg = run_dir.config()
        _check_domain(cfg.domain)
        if steps is not None:
            cfg = merge_overrides(cfg, {"total_steps": steps})
    else:
        if domain is None:
            raise AsgError("--domain is required (or --resume DIR)")
        cfg = make_config(domain, method, preset or "asg", seed=seed, model=str(model) if model else None)
        if config_file is not None:
            cfg = apply_config_file(cfg, config_file)
        overrides: dict[str, Any] = _eval_overrides(eval_epsilon, curve_eval)
        if steps is not None:
            overrides["total_steps"] = steps
        if eval_episodes is not None:
            overrides["eval_episodes"] = eval_episodes
        if k is not None:
            if cfg.learner.kind != "hierarchical" or cfg.learner.diversity.alpha == 0.0:
                raise AsgError(f"--k: method {method} has no diverse skills")
            overrides["learner"] = {"diversity": {"k": k, "k_overrides": []}}
        if overrides:
            cfg = merge_overrides(cfg, overrides)
        binding = bind_domain(cfg.domain, cfg.model)  # bad input fails before any file is written
        make_subgoals(cfg, binding.task)
        run_dir = RunDir.create(out or default_run_path("runs", domain, method, seed), cfg)
    start = run_dir.checkpoint_steps() if resume is not None else 0
    bar, update = _progress_bar(cfg.total_steps, start, quiet, f"{cfg.domain}/{cfg.method}")
    reason = None
    try:
        # Ctrl-C / SIGTERM: the trainer stops at the next episode boundary and checkpoints there.
        result = train(cfg, binding, run_dir=run_dir, resume=resume is not None, progress=update)
        report = result.to_json()
        bar.update(report["env_steps"])
        reason = _stop_reason(report)
    finally:
        bar.close(reason)
    _print_result(report, as_json)
    if result.status == "interrupted":
        click.echo(f"interrupted; continue with: asg train --resume {run_dir.path}", err=True)
        sys.exit(130)
    if not as_json:
        _print_next(cfg, Path(run_dir.path))


@click.command("eval", short_help="Re-evaluate a saved run, or the Fetch programs.")
@click.argument("run_dir", type=click.Path(path_type=Path), required=False)
@click.option("--episodes", type=click.IntRange(min=1), help="Greedy episodes (default: the run's; fetch 100).")
@click.option("--json", "as_json", is_flag=True, help="Print the evaluation as JSON.")
@click.option("--domain", help="fetch-programs: evaluate the Fetch programs (no RUN_DIR); an ASGRL "
                               "domain: check that RUN_DIR holds a run of it.")
@click.option("--suite", type=click.Choice(SUITES),
              help="fetch-programs: which suite of programs (default atomic).")
@click.option("--programs", "program_list", metavar="A,B",
              help="fetch-programs --suite atomic: only these atomic programs (comma-separated).")
@click.option("--policy", type=InputPath("file"),
              help="fetch-programs: goal policy (default: the shipped one).")
@click.option("--starts", type=click.Choice(["table", "chained"]),
              help="fetch-programs atomic: start states, every block on the table (default) or set up "
                   "as inside a non-atomic program.")
@click.option("--mode", type=click.Choice(["network", "plan", "replan"]),
              help="fetch-programs non-atomic: inference mode (default replan).")
@click.option("--checkpoint", type=InputPath("any"),
              help="fetch-programs non-atomic: meta-controller file or run folder (default: the shipped one).")
@click.option("--world-model", type=click.Choice(WORLD_MODELS),
              help="fetch-programs non-atomic: the model searched in (default exact).")
@click.option("--behaviour-model", type=InputPath("file"),
              help="fetch-programs non-atomic: learned model file (default: the shipped one).")
@click.option("--out", type=OutputPath("dir"),
              help="fetch-programs non-atomic: folder for the JSON and the call-tree PNG (default runs/fetch-programs-eval).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
def eval_cmd(run_dir: Path | None, episodes: int | None, as_json: bool, domain: str | None,
             seed: int, **fetch_options: Any) -> None:
    """Re-evaluate a saved run's frozen greedy policy (or, with --domain fetch-programs, the Fetch programs)."""
    if domain is not None and domain in EVAL_HANDLERS:
        if run_dir is not None:
            raise AsgError(f"RUN_DIR: not used with --domain {domain}")
        EVAL_HANDLERS[domain]({**fetch_options, "episodes": episodes, "as_json": as_json, "seed": seed})
        return
    if domain is not None and not _check_domain(domain):
        raise AsgError(f"--domain {domain}: asg eval does not evaluate this domain")
    unused = [name for name, value in fetch_options.items() if value is not None]
    if unused:
        flag = "--programs" if unused[0] == "program_list" else f"--{unused[0].replace('_', '-')}"
        raise AsgError(f"{flag}: only with --domain fetch-programs")
    if run_dir is None:
        if domain is not None:
            raise AsgError(f"--domain {domain}: asg eval re-evaluates a saved run; give its folder "
                           f"(asg eval RUN_DIR; asg train --domain {domain} writes one)")
        raise AsgError("give a run directory (asg eval RUN_DIR) or --domain fetch-programs")
    from asg.learning.asgrl.evaluation import eval_seeds, evaluate
    from asg.learning.registry import bind_domain, env_max_steps, make_subgoals
    from asg.learning.run_dir import RunDir

    run = RunDir.open(run_dir)
    cfg = run.config()
    _check_domain(cfg.domain)
    if domain is not None and cfg.domain != domain:
        raise AsgError(f"--domain {domain}: {run_dir} holds a run of {cfg.domain}")
    payload = run.load_checkpoint()
    learner = payload["learner"]
    binding = bind_domain(cfg.domain, cfg.model)
    env = binding.make_env(max_steps=env_max_steps(cfg, make_subgoals(cfg, binding.task)))
    n = episodes or cfg.eval_episodes
    result = evaluate(learner, env, binding.labeler, eval_seeds(cfg.seed, n))
    report = {"run_dir": str(run.path), "domain": cfg.domain, "method": cfg.method, "seed": cfg.seed,
              "success_rate": result.success_rate, "eval_episodes": n, "env_steps": learner.env_steps,
              "episodes": [e.to_json() for e in result.episodes]}
    if as_json:
        click.echo(json.dumps(report, indent=2, sort_keys=True))
    else:
        click.echo(f"{cfg.domain} / {cfg.method} / seed {cfg.seed} after {learner.env_steps} env steps: "
                   f"greedy success {result.success_rate:.2f} over {n} episodes")
        first = result.episodes[0]
        click.echo(f"  episode 1: {first.steps} steps, reached {' '.join(first.reached) or '-'}")


@click.command("compare", short_help="Run methods x seeds on a domain; write Figure 3.")
@click.option("--domain", required=True, help="ASGRL domain.")
@click.option("--methods", multiple=True, help="Methods, comma-separated or repeated (default: all).")
@click.option("--seeds", type=click.IntRange(min=1), default=3, show_default=True, help="Seeds 0..N-1.")
@click.option("--steps", type=click.IntRange(min=1), help="Env-step budget per run (default 500000).")
@click.option("--eval-episodes", type=click.IntRange(min=1), help="Greedy episodes per evaluation point.")
@click.option("--out", type=OutputPath("dir"),
              help="Folder for runs and the report (default runs/compare-<domain>).")
@click.option("--preset", type=LazyChoice(_preset_names), default="asg", show_default=True,
              help="asg (the paper's schedules plus our additions) or paper (App. G, every addition off).")
@click.option("--eval-epsilon", type=click.FloatRange(0.0, 1.0),
              help="ε of the final evaluation reported beside the greedy one (default 0.05, the paper's).")
@click.option("--curve-eval", type=click.Choice(["greedy", "epsilon"]),
              help="Protocol of the curve points: greedy (default) or ε-greedy with --eval-epsilon.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def compare_cmd(domain: str, methods: tuple[str, ...], seeds: int, steps: int | None,
                eval_episodes: int | None, out: Path | None, preset: str, eval_epsilon: float | None,
                curve_eval: str | None, quiet: bool, as_json: bool) -> None:
    """Run methods x seeds on one domain; write Figure 3 as a table and a plot."""
    from asg.learning.asgrl.experiments import format_table, run_grid, summarize, write_report
    from asg.learning.registry import METHODS, bind_domain

    if not _check_domain(domain):
        raise AsgError(f"--domain: asg compare does not support {domain!r}")
    chosen = [m.strip() for item in methods for m in item.split(",") if m.strip()] or list(METHODS)
    for name in chosen:
        if name not in METHODS:
            raise AsgError(f"--methods: unknown method {name!r}; choose from {', '.join(METHODS)}")
    out = out or Path("runs") / f"compare-{domain}"
    if out.exists() and any(out.iterdir()):
        raise AsgError(f"--out: {out} is not empty")
    binding = bind_domain(domain)
    overrides: dict[str, Any] = _eval_overrides(eval_epsilon, curve_eval)
    if eval_episodes:
        overrides["eval_episodes"] = eval_episodes
    bars: list[Any] = []

    def on_start(cfg: Any) -> Any:
        for bar in bars:
            bar.close("run done")
        bar, update = _progress_bar(cfg.total_steps, 0, quiet, f"{cfg.method} seed {cfg.seed}")
        bars[:] = [bar]
        return update

    try:
        runs = run_grid(domain, chosen, list(range(seeds)), out, steps=steps, overrides=overrides or None,
                        binding=binding, preset=preset, on_start=on_start)
    finally:
        for bar in bars:
            bar.close("run done")
    payload = write_report(domain, runs, out)
    if as_json:
        click.echo(json.dumps(payload["summary"], indent=2, sort_keys=True))
    else:
        click.echo(format_table(domain, summarize(runs)), nl=False)
        click.echo(f"report: {out / 'compare.md'}, {out / 'compare.png'}")


def register(group: click.Group) -> None:
    """Add ``train``, ``eval`` and ``compare`` to the ``asg`` group."""
    group.add_command(train_cmd)
    group.add_command(eval_cmd)
    group.add_command(compare_cmd)


def _register_families() -> None:
    """The families that add domains to ``train``/``eval`` (imported with this module; they are light)."""
    from asg.cli import fetch_programs_cmds

    fetch_programs_cmds.register_handlers(DOMAIN_HANDLERS, EVAL_HANDLERS)


_register_families()
