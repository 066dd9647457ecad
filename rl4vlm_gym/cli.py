"""The ``rl4vlm-gym`` command: list, doctor, info, check, play, docs, new-env, eval, match, exploitability, report, train, serve-model, suite and leaderboard."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table

import rl4vlm_gym
from rl4vlm_gym.registry import env_card, env_class, list_envs, protocol_facts

app = typer.Typer(help="RL4VLM Gym: environments for vision-language agents.", no_args_is_help=True, add_completion=False)
console = Console()


def _card_or_exit(env_id: str) -> rl4vlm_gym.EnvCard:
    try:
        return env_card(env_id)
    except KeyError as err:
        console.print(f"[red]{err.args[0]}[/red]")
        raise typer.Exit(2) from None


@app.command("list")
def list_command(
    family: Annotated[str | None, typer.Option(help="Only this family.")] = None,
    skill: Annotated[str | None, typer.Option(help="Only envs exercising this skill.")] = None,
    obs_mode: Annotated[str | None, typer.Option(help="Only envs supporting this obs mode.")] = None,
) -> None:
    """List the registered environments."""
    # Ids are copied from here: never break or cut them (BabaIsAI's run to 79 characters), even
    # where the table must be wider than the terminal; the other columns fold.
    every = list_envs()
    for option, value, known in (
        ("family", family, {c.family for c in every}),
        ("skill", skill, {s for c in every for s in c.skills}),
        ("obs-mode", obs_mode, {m for c in every for m in c.obs_modes}),
    ):
        if value is not None and value not in known:
            console.print(f"[red]no env has --{option} {escape(repr(value))}; the registered ones: {', '.join(sorted(known))}[/red]")
            raise typer.Exit(2)
    cards = list_envs(family=family, skill=skill, obs_mode=obs_mode)
    longest = max((len(c.id) for c in cards), default=2)
    table = Table(Column("id", no_wrap=True, min_width=longest), "family", "levels", "extra", "task")
    for card in cards:
        table.add_row(card.id, card.family, str(len(card.levels)), card.extra or "-", card.summary)
    width = console.width
    console.width = max(width, longest + 60)
    try:
        console.print(table)
    finally:
        console.width = width


@app.command()
def doctor() -> None:
    """What this install has: each pip extra (or how to install it), the data the envs read, and, from a
    clone, the Debian packages the installed extras need."""
    import os
    import subprocess

    from rl4vlm_gym import extras

    installed = extras.installed()
    table = Table("extra", "installed", "missing modules: how to install", title="pip extras")
    for extra, ok in installed.items():
        how = "-" if ok else f"{', '.join(extras.missing_modules(extra))}: {extras.install_command(extra)}"
        table.add_row(extra, "[green]yes[/green]" if ok else "[yellow]no[/yellow]", escape(how))
    console.print(table)
    data = Table("variable", "folder", "found", title="data the envs read")
    for variable, what in (("ALFWORLD_DATA", "rl4vlm/ALFWorld-v0's games"), ("WEBSHOP_DATA", "rl4vlm/WebShop-Amazon-v1's files")):
        folder = os.environ.get(variable)
        found = "not set" if folder is None else ("yes" if Path(folder).is_dir() else "no such folder")
        data.add_row(variable, escape(folder or f"({what})"), found)
    console.print(data)
    listing = Path(__file__).resolve().parents[1] / "scripts" / "debian-packages.txt"
    if not listing.is_file():
        return  # an installed wheel: scripts/setup.sh and its list live in the repository
    debian = Table("extra", "Debian package", "installed", title=f"Debian packages ({listing.name})")
    for line in listing.read_text(encoding="utf-8").splitlines():
        extra, _, packages = line.partition(":")
        if line.startswith("#") or not installed.get(extra):
            continue
        for package in packages.split():
            status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True, check=False)
            ok = "install ok installed" in status.stdout
            debian.add_row(extra, package, "yes" if ok else f"[yellow]no[/yellow]: bash scripts/setup.sh {extra}")
    console.print(debian)


@app.command()
def info(env_id: Annotated[str, typer.Argument(help="e.g. rl4vlm/NumberLine-v0")]) -> None:
    """Show the env card of ENV_ID."""
    card = _card_or_exit(env_id)
    table = Table(show_header=False, title=card.id)
    for field in dataclasses.fields(card):
        value: Any = getattr(card, field.name)
        if field.name == "levels":
            value = "\n".join(f"{i}: {d}" for i, d in enumerate(value))
        elif isinstance(value, tuple):
            value = "\n".join(value)
        elif field.name in ("kwargs", "resources"):
            value = dict(value) or "-"
        table.add_row(field.name, str(value))
    table.add_row("seeds", ", ".join(f"{k} [{r.start}, {r.stop})" for k, r in card.seed_ranges.items()))
    facts = protocol_facts(card.id)
    if facts:
        table.add_row("on this machine", "\n".join(f"{k}: {v}" for k, v in facts.items()))
    console.print(table)


@app.command()
def check(
    env_ids: Annotated[list[str] | None, typer.Argument(help="Ids to check (default: all).")] = None,
    only: Annotated[list[str] | None, typer.Option(help="Run only these checks (repeatable).")] = None,
    throughput_steps: Annotated[int, typer.Option(help="Steps for the throughput figure (0 skips it).")] = 1000,
    url: Annotated[str | None, typer.Option(help="For rl4vlm/Remote-v0: the server (serve --expose-oracle).")] = None,
    served: Annotated[str | None, typer.Option("--env-id", help="For rl4vlm/Remote-v0: the served id or suite task.")] = None,
    make_kwargs: Annotated[str | None, typer.Option("--kwargs", help="gym.make arguments as a JSON object.")] = None,
    episodes: Annotated[
        int | None,
        typer.Option(min=1, help="Episodes per level for the oracle check (default: the kit's, 50 or 5 for EXPENSIVE_PLAN envs)."),
    ] = None,
) -> None:
    """Run the conformance kit (the same checks as the test suite) and report throughput.

    ``rl4vlm-gym check rl4vlm/Remote-v0 --url URL --env-id ID`` checks an env served by ``rl4vlm-gym serve``;
    ``--episodes N`` shortens the oracle check (a served env plays each episode over the network)."""
    from rl4vlm_gym.testing import CHECKS, measure_throughput, run_checks
    from rl4vlm_gym.testing.remote import served_cards_kept

    unknown = sorted(set(only or ()) - set(CHECKS))
    if unknown:
        console.print(f"[red]unknown checks {unknown}; choose from {sorted(CHECKS)}[/red]")
        raise typer.Exit(2)
    ids = env_ids or [card.id for card in list_envs()]
    kwargs = _check_kwargs(ids, url, served, make_kwargs)
    options = {"oracle": {"episodes": episodes}} if episodes is not None else None
    for env_id in ids:
        if "url" not in kwargs:
            _card_or_exit(env_id)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    failures = not_checked = 0
    table = Table("id", "check", "result", "seconds", "detail", title="Conformance")
    names = list(only or CHECKS)
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console)
    job = bar.add_task("checking", total=len(ids) * len(names))
    with bar:
        for env_id in ids:
            missing = _missing_data(env_id, kwargs)
            if missing:
                table.add_row(env_id, "all", "[yellow]skip[/yellow]", "-", f"no data on this machine: {missing}")
                bar.advance(job, len(names))
                continue
            with served_cards_kept():  # a remote id's card read once for all its checks, as one run_checks call does
                for name in names:  # one at a time, so the bar says which check of which env runs (some take minutes)
                    bar.update(job, description=f"{env_id}: {name}")
                    (result,) = run_checks(env_id, [name], options=options, **kwargs)
                    bar.advance(job)
                    not_checked += result.not_checked
                    failures += not (result.passed or result.not_checked)
                    mark = "[green]pass[/green]" if result.passed else "[red]FAIL[/red]"
                    mark = "[yellow]not checked[/yellow]" if result.not_checked else mark
                    table.add_row(env_id, result.check, mark, f"{result.seconds:.1f}", result.detail)
            if throughput_steps:
                bar.update(job, description=f"{env_id}: throughput")
                # An env whose every plan is a search would spend minutes planning: random moves there.
                cls = env_class(env_id) if "url" not in kwargs else None  # a remote env's oracle may be hidden: random moves
                policy = "random" if cls is None or cls.EXPENSIVE_PLAN or not cls.HAS_ORACLE else "oracle"
                figures = measure_throughput(env_id, steps=throughput_steps, resets=50, policy=policy, **kwargs)
                table.add_row(
                    env_id,
                    "throughput",
                    "-",
                    "-",
                    f"{figures['steps_per_s']:,.0f} steps/s, reset p50 {figures['reset_ms_p50']:.2f} ms ({policy}, image+text, default size)",
                )
        bar.update(job, description="checked")
    console.print(table)
    if failures or not_checked:
        console.print(f"[red]{failures} check(s) failed[/red], [yellow]{not_checked} could not be checked[/yellow]")
        raise typer.Exit(1)
    console.print(f"[green]all checks passed for {len(ids)} env(s)[/green]")


def _check_kwargs(ids: list[str], url: str | None, served: str | None, make_kwargs: str | None) -> dict[str, Any]:
    """``check``'s ``gym.make`` arguments: a remote env's server and served id, and ``--kwargs``."""
    import json

    import gymnasium as gym

    from rl4vlm_gym.testing import is_remote

    try:
        kwargs = json.loads(make_kwargs) if make_kwargs else {}
    except json.JSONDecodeError as err:
        console.print(f"[red]--kwargs is not JSON: {err}[/red]")
        raise typer.Exit(2) from None
    if not isinstance(kwargs, dict):
        console.print("[red]--kwargs must be a JSON object[/red]")
        raise typer.Exit(2)
    remote = [i for i in ids if i in gym.registry and is_remote(i)]
    if remote and url is None:
        console.print(f"[red]{remote[0]} plays a served env: give --url (and --env-id)[/red]")
        raise typer.Exit(2)
    if url is not None:
        if remote != ids:
            console.print("[red]--url and --env-id go with rl4vlm/Remote-v0 only[/red]")
            raise typer.Exit(2)
        kwargs = {**kwargs, "url": url, **({"env_id": served} if served else {})}
    return kwargs


def _missing_data(env_id: str, kwargs: dict[str, Any] | None = None) -> str | None:
    """Why ``env_id`` cannot be made here for want of downloaded data, or ``None``."""
    import gymnasium as gym

    from rl4vlm_gym.core import MissingDataError

    try:
        gym.make(env_id, **(kwargs or {})).close()
    except MissingDataError as err:
        return str(err)
    return None


@app.command()
def play(
    env_id: Annotated[str, typer.Argument(help="e.g. rl4vlm/Points24-v0")],
    seed: Annotated[int | None, typer.Option(help="Episode seed.")] = None,
    level: Annotated[int | None, typer.Option(help="Level (default: the card's).")] = None,
    save: Annotated[Path | None, typer.Option(help="Write each frame to this PNG file.")] = Path("frame.png"),
    window: Annotated[bool, typer.Option(help="Show the frames in a window (pygame).")] = False,
    oracle: Annotated[bool, typer.Option(help="Let the oracle play (press Enter for each step).")] = False,
) -> None:
    """Play ENV_ID in the terminal: type an action (or its number), 'q' to quit."""
    import gymnasium as gym
    from PIL import Image

    _card_or_exit(env_id)
    env = gym.make(env_id, level=level, render_mode="human" if window else None)
    obs, info = env.reset(seed=seed)
    episode_return = 0.0
    while True:
        if save is not None:
            Image.fromarray(obs["image"]).save(save)
        _show_observation(obs, save)
        if oracle:
            typed = input("[Enter] for the oracle's move, q to quit> ").strip()
            typed = typed if typed == "q" else env.unwrapped.oracle_action()  # type: ignore[attr-defined]
        else:
            typed = input("action> ").strip()
        if typed in ("q", "quit", "exit"):
            break
        if typed.isdigit() and typed not in obs["actions"] and int(typed) < len(obs["actions"]):
            typed = obs["actions"][int(typed)]
        obs, reward, terminated, truncated, info = env.step(typed)
        episode_return += float(reward)
        console.print(
            f"reward {reward:+g}  return {episode_return:+g}  success {info['success']}  progress {info['progress']:.2f}"
        )
        if terminated or truncated:  # the final state too (Blackjack's dealer hand is shown only now)
            if save is not None:
                Image.fromarray(obs["image"]).save(save)
            console.rule()
            if obs["text"]:
                console.print(obs["text"], markup=False)
            console.print(
                f"[bold]episode over[/bold] ({'terminated' if terminated else 'truncated'}); return {episode_return:+g}"
            )
            break
    env.close()


def _show_observation(obs: dict[str, Any], save: Path | None) -> None:
    console.rule()
    console.print(f"[bold]Mission:[/bold] {escape(obs['mission'])}")
    if obs["text"]:
        console.print(obs["text"], markup=False)
    choices = "  ".join(escape(f"[{i}] {a}") for i, a in enumerate(obs["actions"]))
    console.print(f"[bold]Actions:[/bold] {choices}")
    if save is not None:
        console.print(f"(image saved to {save})")


@app.command()
def docs(
    out: Annotated[Path, typer.Argument(help="Output folder.")] = Path("docs/envs"),
    family: Annotated[list[str] | None, typer.Option(help="Only this family (repeatable; default: every registered id).")] = None,
) -> None:
    """Write one Markdown page per env (from its card and docstring) plus an index of every env."""
    from rl4vlm_gym.docs import write_docs

    ids = None
    if family:
        known = {card.family for card in list_envs()}
        unknown = sorted(set(family) - known)
        if unknown:
            console.print(f"[red]unknown families {unknown}; registered: {sorted(known)}[/red]")
            raise typer.Exit(2)
        ids = [card.id for card in list_envs() if card.family in family]
    from rl4vlm_gym.extras import install_command

    # The index keeps listing every id: regenerating one family's pages must not drop the others'.
    missing: dict[str, list[str]] = {}
    pages = write_docs(out, ids, index_ids=[card.id for card in list_envs()], missing=missing)
    console.print(f"wrote {len(pages)} pages to {out}")
    for extra, skipped in sorted(missing.items()):
        console.print(
            f"[yellow]left as they were: the pages of {len(skipped)} ids that need the `{extra}` extra, not installed here "
            f"({escape(install_command(extra))})[/yellow]"
        )


@app.command("new-env")
def new_env_command(
    family: Annotated[str, typer.Argument(help="The family's name: lower case, e.g. gridgames.")],
    name: Annotated[str, typer.Option(help="The example env's class, CamelCase; the id is NAMESPACE/NAME-v0.")] = "GridWalk",
    plugin: Annotated[
        bool, typer.Option(help="Write a standalone plugin package instead of a family of this repository.")
    ] = False,
    dest: Annotated[
        Path | None, typer.Option(help="Repository root (default .) or the plugin's new folder (default ./rl4vlm-FAMILY).")
    ] = None,
    namespace: Annotated[str | None, typer.Option(help="The ids' namespace (default rl4vlm; a plugin's: FAMILY).")] = None,
) -> None:
    """Scaffold an env family with a small working example env, its card, tests and docs page."""
    from rl4vlm_gym.scaffold import Scaffold, ScaffoldError, new_env

    try:
        scaffold = Scaffold(family, name, plugin=plugin, namespace=namespace)
        root = dest or (Path(scaffold.dist_name) if plugin else Path("."))
        written = new_env(scaffold, root)
    except ScaffoldError as err:
        console.print(f"[red]{escape(str(err))}[/red]")
        raise typer.Exit(2) from None
    for path in written:
        console.print(f"wrote {path}", markup=False, highlight=False)
    if plugin:
        steps = [f"cd {root}", "pip install -e .", f"rl4vlm-gym check {scaffold.env_id}", "pytest"]
    else:
        steps = [
            "bash scripts/setup.sh dev   # reinstall: setup.cfg has a new entry point",
            f"rl4vlm-gym check {scaffold.env_id}",
            f"pytest tests/envs/{family} -q",
            "rl4vlm-gym docs docs/envs   # the index lists the new page",
        ]
    console.print("next:\n  " + "\n  ".join(steps), markup=False, highlight=False)


# Evaluation -------------------------------------------------------------------------------------

suite_app = typer.Typer(help="Evaluation suites: list them, draw seed lists.", no_args_is_help=True)
leaderboard_app = typer.Typer(help="Leaderboards: validate submissions, build the pages.", no_args_is_help=True)
app.add_typer(suite_app, name="suite")
app.add_typer(leaderboard_app, name="leaderboard")


def _agent_kwargs(pairs: list[str] | None) -> dict[str, Any]:
    """``key=value`` pairs; values are read as YAML scalars (``3``, ``0.5``, ``true``, ``cpu``)."""
    import yaml

    kwargs: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            console.print(f"[red]--agent-arg {pair!r}: expected KEY=VALUE[/red]")
            raise typer.Exit(2)
        try:
            kwargs[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            kwargs[key.strip()] = value
    return kwargs


@app.command("eval")
def eval_command(
    agent: Annotated[str, typer.Option(help="random, oracle, hf, openai, or package.module:Class.")],
    suite: Annotated[str, typer.Option(help="A built-in suite name or a YAML file.")] = "smoke",
    out: Annotated[
        Path | None, typer.Option(help="Run folder (default runs/SUITE-AGENT, or runs/SUITE-AGENT-cut-HASH for a cut suite); re-run to resume.")
    ] = None,
    agent_arg: Annotated[
        list[str] | None, typer.Option("--agent-arg", "-a", help="Agent argument KEY=VALUE (repeatable).")
    ] = None,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes (Ray actors with --backend ray).")] = 1,
    backend: Annotated[str, typer.Option(help="local (this machine's processes) or ray (Ray actors; extra 'ray').")] = "local",
    address: Annotated[
        str | None, typer.Option(help="With --backend ray: the cluster, auto or ray://host:port (default: a local Ray).")
    ] = None,
    actor_option: Annotated[
        list[str] | None,
        typer.Option("--actor-option", help="With --backend ray: a Ray actor option KEY=VALUE, e.g. num_gpus=1."),
    ] = None,
    template: Annotated[str | None, typer.Option(help="Prompt template (overrides the suite's).")] = None,
    history: Annotated[
        int | None,
        typer.Option(
            help="Past steps in the prompt (overrides the suite's); under the balrog template, observations kept, "
            "the current one included (BALROG's max_text_history)."
        ),
    ] = None,
    images: Annotated[int | None, typer.Option(help="Observations whose image is sent (overrides the suite's).")] = None,
    output_format: Annotated[
        str | None,
        typer.Option(
            help="What the model is asked to write (overrides the suite's): json, tags, plain, or a BALROG agent, balrog-cot ..."
        ),
    ] = None,
    baseline: Annotated[Path | None, typer.Option(help="Another run folder to compare with, seed by seed.")] = None,
    report: Annotated[bool, typer.Option(help="Write report.md and report.html into the run folder.")] = True,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    decisions: Annotated[
        bool, typer.Option(help="Record each step's decision facts (scored by the env's solver); --no-decisions for slow planners.")
    ] = True,
    task: Annotated[
        list[str] | None, typer.Option("--task", help="Only this task of the suite (repeatable; an unknown name lists the suite's tasks).")
    ] = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Only the first N seeds (deals) of each task: a quick look, not the suite's protocol.")
    ] = None,
    seeds: Annotated[
        str | None,
        typer.Option(
            help="Only the seeds at these positions of each task's list, 0-based, e.g. 0,3,5-7 (deals where a task plays "
            "a deal from several seeds); with --limit, the first N of them. Not the suite's protocol."
        ),
    ] = None,
) -> None:
    """Run an agent over a suite: per-episode JSONL, a summary with 95% intervals and a report."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from rl4vlm_gym.harness.runner import AgentSpec, RunError, run_suite, write_summary
    from rl4vlm_gym.harness.suite import SuiteError, load_suite, parse_positions
    from rl4vlm_gym.prompts import PromptConfig

    try:
        loaded = load_suite(suite)
        if task or limit is not None or seeds is not None:
            loaded = loaded.subset(task or (), limit, None if seeds is None else parse_positions(seeds))
        overrides = {"template": template, "history": history, "images": images, "output_format": output_format}
        overrides = {k: v for k, v in overrides.items() if v is not None}
        prompt = PromptConfig(**{**loaded.prompt.as_dict(), **overrides})
    except (SuiteError, ValueError) as err:
        console.print(f"[red]{escape(str(err))}[/red]")
        raise typer.Exit(2) from None
    spec = AgentSpec(agent, _agent_kwargs(agent_arg))
    cut = f"-cut-{loaded.protocol_hash(prompt)[:8]}" if task or limit is not None or seeds is not None else ""
    # a quick look never takes the whole run's default folder (running the whole suite there would be refused)
    out = out or Path("runs") / f"{loaded.name}-{agent.rsplit(':', 1)[-1].lower()}{cut}"
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not progress,
    )
    job = bar.add_task(f"{loaded.name} / {agent}", total=len(loaded.episodes))
    try:
        with bar:
            records = run_suite(
                loaded, spec, out, workers=workers, prompt=prompt, on_episode=lambda r, n, total: bar.update(job, completed=n),
                backend=backend, address=address, actor_options=_agent_kwargs(actor_option), decisions=decisions,
            )  # fmt: skip
    except (SuiteError, RunError, ValueError) as err:
        console.print(f"[red]{escape(str(err))}[/red]")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        console.print(f"[yellow]interrupted: finished episodes are saved in {out}; run the same command again to resume[/yellow]")
        raise typer.Exit(130) from None
    summary = write_summary(out, loaded, records)
    _print_summary(summary)
    if report:
        from rl4vlm_gym.harness.report import write_report

        md, html = write_report([out], out, baseline=baseline)
        console.print(f"report: {md} and {html}")
    console.print(f"episodes: {out / 'episodes.jsonl'}, summary: {out / 'summary.json'}")


def _print_summary(summary: dict[str, Any]) -> None:
    def mean(score: dict[str, Any] | None) -> str:
        return "-" if score is None else f"{score['mean']:.3f}"

    def interval(score: dict[str, Any] | None) -> str:
        return "-" if score is None else f"{score['ci95'][0]:.2f}-{score['ci95'][1]:.2f}"

    table = Table(
        Column("task", no_wrap=True),
        "n",
        "success",
        "95% CI",
        "progress",
        "SPL",
        "invalid",
        title=f"{summary['suite']} / {summary['agent']['name']}",
    )
    for name, t in [*summary["tasks"].items(), ("overall", summary["overall"])]:
        table.add_row(
            name,
            str(t["episodes"]),
            mean(t["success"]),
            interval(t["success"]),
            mean(t["progress"]),
            mean(t["normalised_steps"]),
            f"{t['invalid_action_rate']:.3f}",
        )
    console.print(table)
    failed = summary["overall"]["failed_episodes"]
    if failed:
        console.print(f"[yellow]{failed} episode(s) failed (agent or env error): see 'error' in episodes.jsonl[/yellow]")
    if "balrog" in summary:
        balrog = summary["balrog"]
        table = Table(
            Column("BALROG env", no_wrap=True),
            "n",
            "progression %",
            "± SE",
            "95% CI (bootstrap)",
            "failed",
            title="BALROG's figures",
        )
        for env, e in balrog["envs"].items():
            low, high = e["ci95"]
            table.add_row(
                env,
                str(e["episodes_played"]),
                f"{e['progression_percentage']:.1f}",
                f"{e['standard_error']:.1f}",
                f"{low:.1f}-{high:.1f}",
                str(e["episodes_failed"]),
            )
        table.add_row("average", "", f"{balrog['average_progress']:.1f}", f"{balrog['standard_error']:.1f}", "", "")
        console.print(table)
    decisions = (summary.get("decisions") or {}).get("overall")
    if decisions and decisions["scored_steps"]:
        console.print(
            f"decisions: {decisions['scored_steps']} of {decisions['steps']} steps scored, accuracy {mean(decisions['accuracy'])} "
            f"({interval(decisions['accuracy'])}), regret {mean(decisions['regret_steps'])} ({interval(decisions['regret_steps'])}) steps per decision (rl4vlm-gym decisions RUN shows where the errors are)"
        )
    console.print(f"protocol hash {summary['protocol_hash'][:16]}  complete: {summary['complete']}")


@app.command("balrog-results")
def balrog_results_command(
    run: Annotated[Path, typer.Argument(help="A run folder of a suite with BALROG tasks (rl4vlm-gym eval --suite balrog).")],
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("balrog-results"),
) -> None:
    """Write a run in BALROG's result layout (per-episode JSON and CSV, per-env and overall summaries)."""
    from rl4vlm_gym.harness.balrog_results import write_balrog_results
    from rl4vlm_gym.harness.runner import RunError

    try:
        overall = write_balrog_results(run, out)
    except RunError as err:
        console.print(f"[red]{escape(str(err))}[/red]")
        raise typer.Exit(2) from None
    console.print(f"BALROG average progress {overall['average_progress']:.1f} ± {overall['standard_error']:.1f}: {out}")


@app.command("match")
def match_command(
    game: Annotated[str | None, typer.Argument(help="A game (see --list) or a PettingZoo AEC env factory 'package.module:function'.")] = None,
    player: Annotated[
        list[str] | None,
        typer.Option(
            "--player",
            "-p",
            help="[LABEL=]NAME, repeatable: a built-in player of the game, random, oracle, human (you, at this terminal), hf, openai "
            "or package.module:Class.",
        ),
    ] = None,
    player_arg: Annotated[list[str] | None, typer.Option("--player-arg", "-a", help="LABEL:KEY=VALUE, an agent's argument (repeatable).")] = None,
    seeds: Annotated[
        int,
        typer.Option(min=1, max=100_000, help="Seeds; each group of players plays each seed from every seat (swiss: one round per seed)."),
    ] = 10,
    schedule: Annotated[str, typer.Option(help="round-robin, or swiss (n/2 pairings a round).")] = "round-robin",
    first_seed: Annotated[int, typer.Option(min=0, max=2**32 - 1, help="The first seed (seeds are consecutive).")] = 0,
    out: Annotated[Path | None, typer.Option(help="Match folder (default matches/GAME); re-run to resume or to add players and seeds.")] = None,
    obs_mode: Annotated[str, typer.Option(help="image+text, image or text.")] = "image+text",
    image_size: Annotated[int, typer.Option(min=32, max=4096, help="Square image side.")] = 256,
    game_arg: Annotated[list[str] | None, typer.Option("--game-arg", "-g", help="The game env's argument KEY=VALUE (repeatable), e.g. max_cycles=40.")] = None,
    output_format: Annotated[str, typer.Option(help="What model agents are asked to write: json, tags or plain.")] = "json",
    history: Annotated[int, typer.Option(help="Past turns in a model agent's prompt.")] = 0,
    exploitability: Annotated[bool, typer.Option(help="Poker games: each player's exploitability (exact best response, OpenSpiel).")] = False,
    samples: Annotated[int, typer.Option(min=1, max=1000, help="Answers asked of an agent per information state for --exploitability.")] = 1,
    report: Annotated[bool, typer.Option(help="Write report.md, report.html and ratings.json into the match folder.")] = True,
    list_games: Annotated[bool, typer.Option("--list", help="List the games and their built-in players.")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Play a round robin of agents on a multi-agent game (every seed from every seat), rank them and write a report.

    Chip games (poker) rank by mean chips per game (AIVAT's estimate), win/draw/loss games by a Bradley-Terry
    fit, both with bootstrap intervals over the seeds. With -p human you play a seat yourself: each turn shows your observation, the legal
    moves and where your image is saved, and reads your move from the terminal (end the input to forfeit and stop).
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from rl4vlm_gym.harness import matches
    from rl4vlm_gym.harness.exploitability import PolicyError
    from rl4vlm_gym.prompts import PromptConfig

    try:
        if list_games:
            table = Table()
            for column in ("game", "built-in players", "payoff"):
                table.add_column(column, no_wrap=True)  # names are read whole; the summary folds
            table.add_column("OpenSpiel")
            table.add_column("summary")
            for g in matches.list_games():
                table.add_row(g.name, ", ".join(g.players) or "-", g.payoff, g.spiel_game or "-", g.summary)
            console.print(table)
            return
        if game is None:
            raise matches.MatchError("name a game (rl4vlm-gym match --list shows them)")
        spec = matches.game_spec(game)
        kwargs: dict[str, dict[str, Any]] = {}
        for pair in player_arg or []:
            label, sep, rest = pair.partition(":")
            if not sep:
                raise matches.MatchError(f"--player-arg {pair!r}: expected LABEL:KEY=VALUE")
            kwargs.setdefault(label, {}).update(_agent_kwargs([rest]))
        players = [matches.parse_player(p, spec) for p in player or []]
        players = [matches.parse_player(p, spec, kwargs.get(q.label)) for p, q in zip(player or [], players, strict=True)]
        unknown = set(kwargs) - {p.label for p in players}
        if unknown:
            raise matches.MatchError(f"--player-arg names no player: {sorted(unknown)}")
        out = out or Path("matches") / spec.name.rsplit(":", 1)[-1]
        progress = progress and not any(p.kind == "human" for p in players)  # a bar would redraw over the prompts
        bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=console, disable=not progress)
        job = bar.add_task(spec.name, total=None)
        with bar:
            matches.run_matches(
                spec,
                players,
                range(first_seed, first_seed + seeds),
                out,
                game_kwargs={"obs_mode": obs_mode, "image_size": image_size, **_agent_kwargs(game_arg)},
                on_game=lambda r, n, total: bar.update(job, completed=n, total=total),
                kind=schedule,
                prompt=PromptConfig(output_format=output_format, history=history),
            )
        if exploitability:
            result = matches.match_exploitability(out, samples=samples)
            for label, value in result["players"].items():
                console.print(f"exploitability of {escape(label)}: {'not asked' if value is None else f'{value:.4f}'}")
        if report:
            from rl4vlm_gym.harness.match_report import write_match_report

            md, html = write_match_report(out)
            _print_standings(out / "ratings.json")
            console.print(f"report: {md} and {html}")
    except (matches.MatchError, PolicyError, ValueError, ImportError) as err:
        console.print(f"[red]{escape(str(err))}[/red]")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        console.print(f"[yellow]interrupted: finished games are saved in {out}; run the same command again to resume[/yellow]")
        raise typer.Exit(130) from None
    console.print(f"games: {out / 'games.jsonl'}")


def _print_standings(path: Path) -> None:
    """The match's standings from the report's ``ratings.json``: rank, player, games, W-D-L and the rating
    it ranks by (mean chips for chip games, Elo for win-loss games), with 95% intervals."""
    import json

    standings = json.loads(path.read_text(encoding="utf-8"))
    rows = standings["ratings"]
    key = next((k for k in ("chips", "elo", "score") if rows and k in rows[0]), None)
    table = Table("rank", "player", "games", "W-D-L", f"{key or 'rating'} [95% CI]", title=f"standings: {standings['rank_basis']}")
    digits = 0 if key == "elo" else 3
    for row in rows:
        value = row.get(key) if key else None
        interval = row.get(f"{key}_ci95") if key else None
        shown = "-" if value is None else f"{value:.{digits}f}"
        if value is not None and interval:
            shown += f" [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"
        wdl = f"{row['wins']}-{row['draws']}-{row['losses']}"
        table.add_row(str(row.get("rank", "-")), escape(str(row["player"])), str(row["games"]), wdl, shown)
    console.print(table)


@app.command("exploitability")
def exploitability_command(
    game: Annotated[str, typer.Argument(help="An OpenSpiel game name, e.g. kuhn_poker or leduc_poker.")],
    policy: Annotated[
        Path,
        typer.Option(
            help="JSON policy table, gzipped or not: {information state: [probability per action]} or [[action, probability], ...] "
            "rows (or {\"policy\": {...}}, as the tables in envs/games/assets)."
        ),
    ],
    table: Annotated[
        str | None, typer.Option(help="In a best-response file (one pure policy per opponent), the opponent whose best response to read.")
    ] = None,
) -> None:
    """The exact exploitability of a tabular policy (OpenSpiel's best response)."""
    from rl4vlm_gym.harness.exploitability import PolicyError, exploitability, read_policy

    try:
        result = exploitability(game, read_policy(policy, table))
    except (PolicyError, ImportError) as err:
        console.print(f"[red]{escape(str(err))}[/red]")
        raise typer.Exit(2) from None
    console.print(f"{result['game']}: exploitability {result['exploitability']:.6f} (NashConv {result['nash_conv']:.6f}, {result['information_states']} information states)")


@app.command("report")
def report_command(
    runs: Annotated[list[Path], typer.Argument(help="Run folders.")],
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("report"),
    baseline: Annotated[Path | None, typer.Option(help="A run folder to compare each run with.")] = None,
    training_log: Annotated[list[Path] | None, typer.Option(help="Training log CSV (repeatable): learning curves.")] = None,
) -> None:
    """Write a Markdown and an HTML report (tables and plots) of one or more runs, or of a match folder."""
    from rl4vlm_gym.harness.report import write_report

    if len(runs) == 1 and (runs[0] / "match.json").exists():  # a match folder (rl4vlm-gym match)
        from rl4vlm_gym.harness.match_report import write_match_report
        from rl4vlm_gym.harness.matches import MatchError

        try:
            md, html = write_match_report(runs[0], out)
        except MatchError as err:
            console.print(f"[red]{escape(str(err))}[/red]")
            raise typer.Exit(2) from None
        console.print(f"wrote {md} and {html}")
        return

    md, html = write_report(runs, out, baseline=baseline, training_logs=training_log or ())
    console.print(f"wrote {md} and {html}")


@app.command("decisions")
def decisions_command(
    run: Annotated[Path, typer.Argument(help="A run folder (rl4vlm-gym eval) whose episodes carry decision facts.")],
    compare: Annotated[Path | None, typer.Option(help="Another run folder: compared decision by decision on the same seeds.")] = None,
    trained_on: Annotated[
        str | None, typer.Option(help="With --compare (the run before training): the family trained on; shows decision transfer.")
    ] = None,
    out: Annotated[Path, typer.Option(help="The HTML file to write.")] = Path("decisions.html"),
    images: Annotated[int, typer.Option(min=0, help="At most this many frames of error states (each replays an episode).")] = 8,
    figures: Annotated[bool, typer.Option(help="Plot accuracy per family (needs the eval extra's matplotlib).")] = True,
) -> None:
    """Write the decision report: per family where the agent goes wrong (the states and moves of the
    most common errors, with frames), and with --compare the two runs decision by decision."""
    from rl4vlm_gym.harness.decision_report import DecisionReportError, write_decision_report

    try:
        path = write_decision_report(run, out, compare=compare, trained_on=trained_on, images=images, figures=figures)
    except DecisionReportError as err:
        console.print(f"[red]{escape(str(err))}[/red]")
        raise typer.Exit(2) from None
    console.print(f"wrote {path}")


def _progress(follow: Callable[[], int] | None = None) -> Any:
    """A progress bar as ``check`` and ``leaderboard build`` show it (description, bar, M/N, elapsed); with
    ``follow``, its first task's count is read from ``follow()`` at every refresh."""
    from rich.console import RenderableType
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    class Following(Progress):
        def get_renderables(self) -> Iterable[RenderableType]:
            if follow is not None and self.tasks:
                self.update(self.tasks[0].id, completed=follow())
            yield from super().get_renderables()

    return Following(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console)


def _log_above_bars() -> None:
    """Log INFO through the console, so log lines print above a live progress bar instead of through it."""
    import logging

    from rich.logging import RichHandler

    handler = RichHandler(console=console, show_level=False, show_path=False, markup=False, rich_tracebacks=False)
    logging.basicConfig(level=logging.INFO, format="%(message)s", handlers=[handler])


@app.command("train")
def train_command(
    algo: Annotated[str, typer.Option(help="vl-dac, rl4vlm, loop, gigpo or grow.")],
    env: Annotated[str | None, typer.Option(help="Env id to train on (overrides the config's).")] = None,
    model: Annotated[
        str | None, typer.Option(help="Model folder or hub id (default: the config's; the tiny model on CPU).")
    ] = None,
    device: Annotated[str | None, typer.Option(help="cpu or cuda (overrides the config's; picks the default config).")] = None,
    config: Annotated[Path | None, typer.Option(help="YAML config (default: configs/ALGO/cpu.yaml or FAMILY-gpu.yaml).")] = None,
    out: Annotated[Path | None, typer.Option(help="Run folder (default runs/train-ALGO-ENV); re-run to resume.")] = None,
    updates: Annotated[int | None, typer.Option(min=1, help="Number of updates (overrides the config's).")] = None,
    override: Annotated[
        list[str] | None, typer.Option("--set", "-o", help="Config field KEY=VALUE, dotted (repeatable).")
    ] = None,
) -> None:
    """Train a reference baseline; evaluation through the harness at the start, every N updates and
    at the end, with a report of the learning curves."""

    from rl4vlm_gym.baselines.config import ConfigError, default_config_path, load_config

    overrides = _agent_kwargs(override)
    for key, value in {"env.id": env, "model.name": model, "model.device": device, "updates": updates}.items():
        if value is not None:
            overrides[key] = value
    try:
        path = config or default_config_path(algo, env, device or "cpu")
        loaded = load_config(path, overrides)
        if loaded.algo != algo:
            raise ConfigError(f"{path} is a {loaded.algo} config, not {algo}")
    except (ConfigError, ValueError) as err:
        console.print(f"[red]{escape(str(err))}[/red]")
        raise typer.Exit(2) from None
    from rl4vlm_gym.baselines.trainer import Trainer

    _log_above_bars()
    name = (loaded.env.id or "mixture").rsplit("/", 1)[-1]
    out = out or Path("runs") / f"train-{algo}-{name}"
    bar = _progress(follow=lambda: trainer.update)  # a resumed run's bar starts at the update it resumes from
    job = bar.add_task(f"{algo} on {name}", total=loaded.updates)

    def show(row: dict[str, Any]) -> None:
        console.print(  # above the bar: the log of every update stays
            f"update {row['update']:>4}  env steps {row['env_steps']:>7}  success {row['success']:.3f}  "
            f"return {row['return']:.3f}  invalid {row['invalid_rate']:.3f}  loss {row.get('loss', float('nan')):.4f}  {row['seconds']:.1f}s"
        )
        bar.update(job, description=f"{algo} on {name}: success {row['success']:.2f}, invalid {row['invalid_rate']:.2f}")

    try:
        trainer = Trainer(loaded, out, on_update=show)
    except ValueError as err:  # a config that names no env, an env id or kwargs the env refuses
        console.print(f"[red]{escape(str(err))}[/red]")
        raise typer.Exit(2) from None
    try:
        with bar:
            summary = trainer.run()
    except KeyboardInterrupt:
        console.print(f"[yellow]interrupted: run the same command again to resume from {out}/checkpoints/latest[/yellow]")
        raise typer.Exit(130) from None
    _print_summary(summary)
    console.print(f"report: {out / 'report' / 'report.html'}")


@app.command("study")
def study_command(
    algo: Annotated[str, typer.Option(help="vl-dac, rl4vlm, loop, gigpo or grow.")] = "vl-dac",
    k: Annotated[
        list[int] | None, typer.Option("--k", help="Set sizes: families per training set (repeatable; default 1 2).")
    ] = None,
    draws: Annotated[int, typer.Option(min=1, help="Sets drawn per size.")] = 2,
    family: Annotated[
        list[str] | None, typer.Option(help="Families to draw from (repeatable; default all of the study's).")
    ] = None,
    target: Annotated[list[str] | None, typer.Option(help="Target suites (repeatable; default balrog-smoke).")] = None,
    held_out_episodes: Annotated[int, typer.Option(min=0, help="Seeds per task of each held-out family (0: none).")] = 4,
    image_size: Annotated[int, typer.Option(min=128, help="Image side for every env (a mixture shares one observation space).")] = 128,
    config: Annotated[Path | None, typer.Option(help="Training config (default: configs/ALGO/cpu.yaml).")] = None,
    override: Annotated[
        list[str] | None, typer.Option("--set", "-o", help="Config field KEY=VALUE, dotted (repeatable).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the set draws.")] = 0,
    out: Annotated[Path, typer.Option(help="Study folder; re-run to resume.")] = Path("runs/study"),
) -> None:
    """Env-set scaling study: train on sets of k families, measure transfer to BALROG and held-out families."""

    from rl4vlm_gym.baselines.config import ConfigError, default_config_path, load_config
    from rl4vlm_gym.baselines.study import FAMILIES, StudySpec, run_study

    try:
        loaded = load_config(config or default_config_path(algo, None, "cpu"), _agent_kwargs(override))
        unknown = sorted(set(family or ()) - set(FAMILIES))
        if unknown:
            raise ValueError(f"unknown families {unknown}; choose from {sorted(FAMILIES)}")
        families = {f: FAMILIES[f] for f in (family or FAMILIES)}
        spec = StudySpec(
            loaded, families, tuple(k or (1, 2)), draws, seed, tuple(target or ("balrog-smoke",)), held_out_episodes, (image_size, image_size)
        )
        spec.sets()  # a k out of range fails here
    except (ConfigError, ValueError) as err:
        console.print(f"[red]{escape(str(err))}[/red]")
        raise typer.Exit(2) from None
    _log_above_bars()
    bar = _progress()
    job = bar.add_task("study", total=len(spec.sets()))
    with bar:
        study = run_study(spec, out, on_stage=lambda stage, done, total: bar.update(job, completed=done, total=total, description=stage))
    for name, per_k in study["gain_by_k"].items():
        console.print(f"{name}: " + ", ".join(f"k={k} gain {g['mean']:+.3f}" for k, g in per_k.items()))
    console.print(f"report: {out / 'report.md'}")


@app.command("serve-model")
def serve_model(
    model: Annotated[str | None, typer.Option(help="Path or hub id (default: the tiny offline Qwen2-VL).")] = None,
    device: Annotated[str, typer.Option(help="cpu or cuda.")] = "cpu",
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0: a free one).")] = 8000,
) -> None:
    """Serve a local model behind an OpenAI-compatible API (a CPU stand-in for vLLM)."""
    import threading

    from rl4vlm_gym.agents.serve import ModelServer

    with ModelServer(model, device=device, port=port) as server:
        console.print(f"serving {server.model_name} at {server.url} (Ctrl-C stops)")
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


@suite_app.command("list")
def suite_list() -> None:
    """List the built-in suites."""
    from rl4vlm_gym.harness.suite import builtin_suites, load_suite

    table = Table("suite", "axis", "tasks", "episodes", "description")
    for name in builtin_suites():
        s = load_suite(name)
        table.add_row(s.name, s.axis, str(len(s.tasks)), str(len(s.episodes)), s.description)
    console.print(table)


@suite_app.command("seeds")
def suite_seeds(
    n: Annotated[int, typer.Option(help="How many seeds.")] = 10,
    split: Annotated[str, typer.Option(help="train, eval or test.")] = "eval",
    root: Annotated[int, typer.Option(help="Root of numpy's SeedSequence.")] = 0,
) -> None:
    """Print a seed list for a suite file, reproducible from its root."""
    from rl4vlm_gym.harness.suite import draw_seeds

    try:
        print(draw_seeds(split, n, root))
    except ValueError as err:
        console.print(f"[red]{err}[/red]")
        raise typer.Exit(2) from None


def _path_text(path: Path) -> str:
    """A submission's path for the console: markup escaped, and quoted as ASCII when it holds
    anything else (a folder name is written by the submitter)."""
    text = str(path)
    return escape(text if text.isascii() and text.isprintable() else ascii(text))


@leaderboard_app.command("validate")
def leaderboard_validate(
    submissions: Annotated[list[Path] | None, typer.Argument(help="Submission folders (default: all under ROOT).")] = None,
    root: Annotated[Path, typer.Option(help="The leaderboards folder.")] = Path("leaderboards"),
    replay: Annotated[bool, typer.Option(help="Replay every episode in its env.")] = True,
) -> None:
    """Re-check submissions against the built-in suites, from their episode logs; exit 1 if any is rejected."""
    from rl4vlm_gym.harness.leaderboard import find_submissions, validate_submission

    folders = submissions or find_submissions(root)
    if not folders:
        console.print(f"[yellow]no submissions under {_path_text(root / 'submissions')}[/yellow]")
    bad = 0
    for folder in folders:
        result = validate_submission(folder, replay=replay)
        if result.ok:
            console.print(f"[green]ok[/green] {_path_text(folder)}")
            continue
        bad += 1
        console.print(f"[red]rejected[/red] {_path_text(folder)}")
        for problem in result.problems:
            console.print(f"  - {escape(problem)}", markup=True)
    if bad:
        raise typer.Exit(1)


@leaderboard_app.command("build")
def leaderboard_build(
    root: Annotated[Path, typer.Option(help="The leaderboards folder.")] = Path("leaderboards"),
    out: Annotated[Path | None, typer.Option(help="Output folder (default ROOT/site).")] = None,
    replay: Annotated[bool, typer.Option(help="Replay every episode while validating.")] = True,
) -> None:
    """Validate every submission and write the leaderboard pages (Markdown and HTML)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from rl4vlm_gym.harness.leaderboard import LeaderboardError, build_leaderboard

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console)
    job = bar.add_task("validating submissions", total=None)

    def started(folder: Path, done: int, total: int) -> None:
        bar.update(job, completed=done, total=total, description=f"validating {folder.parent.name}/{folder.name}")

    try:
        with bar:
            pages, rejected = build_leaderboard(root, out, replay=replay, on_submission=started)
            bar.update(job, completed=bar.tasks[0].total, description="validated")
    except LeaderboardError as err:
        console.print(f"[red]{escape(str(err))}[/red]")
        raise typer.Exit(1) from None
    for report in rejected:
        console.print(f"[red]left out[/red] {_path_text(report.folder)}: {escape(report.problems[0])}")
    console.print("wrote " + ", ".join(_path_text(p) for p in pages))
    if rejected:
        raise typer.Exit(1)


@leaderboard_app.command("verify")
def leaderboard_verify(
    submissions: Annotated[list[Path], typer.Argument(help="Submission folders to mark verified.")],
    root: Annotated[Path, typer.Option(help="The leaderboards folder (its maintainers.yaml is updated).")] = Path("leaderboards"),
) -> None:
    """Maintainers only: mark submissions verified in ROOT/maintainers.yaml (after re-running a sample of their episodes)."""
    from rl4vlm_gym.harness.leaderboard import LeaderboardError, mark_verified

    bad = 0
    for folder in submissions:
        try:
            result = mark_verified(root, folder)
        except LeaderboardError as err:
            console.print(f"[red]{escape(str(err))}[/red]")
            raise typer.Exit(1) from None
        if result.ok:
            console.print(f"[green]verified[/green] {_path_text(folder)}")
            continue
        bad += 1
        console.print(f"[red]rejected[/red] {_path_text(folder)}: {escape(result.problems[0])}")
    if bad:
        raise typer.Exit(1)


@app.command("submit")
def submit_command(
    run: Annotated[Path, typer.Argument(help="A finished run folder of a built-in suite (rl4vlm-gym eval's --out).")],
    out: Annotated[Path, typer.Argument(help="The submission's new folder: leaderboards/submissions/SUITE/YYYYMMDD_NAME.")],
    name: Annotated[str, typer.Option(help="The row's name on the board.")],
    contact: Annotated[str, typer.Option(help="An email or a URL.")],
    model: Annotated[str, typer.Option(help="Model id or path, or none.")] = "none",
    training_env: Annotated[str, typer.Option(help="Env id(s) the model was trained on, or none.")] = "none",
    algorithm: Annotated[str, typer.Option(help="Training algorithm (vl-dac, rl4vlm, loop, gigpo, grow, ...), or none.")] = "none",
    env_steps: Annotated[int, typer.Option(min=0, help="Env steps of RL training.")] = 0,
    compute: Annotated[str, typer.Option(help="Hardware and hours, e.g. '1x A100 80GB, 6 h'.")] = "",
    url: Annotated[str | None, typer.Option(help="Paper or code (http or https).")] = None,
    date: Annotated[str | None, typer.Option(help="YYYY-MM-DD (default: today, UTC).")] = None,
    readme: Annotated[Path | None, typer.Option(help="A Markdown file to include as the submission's README.md.")] = None,
    replay: Annotated[bool, typer.Option(help="Validate by replaying every episode, as the board's CI does (minutes for large suites).")] = True,
    compress: Annotated[bool, typer.Option(help="Write episodes.jsonl.gz (as the committed rows are) rather than episodes.jsonl.")] = True,
) -> None:
    """Package a finished run as a leaderboard submission (only the files a board takes, and metadata.yaml) and validate it."""
    from rl4vlm_gym.harness.submit import SubmitError, make_submission

    fields: dict[str, Any] = {"name": name, "contact": contact, "model": model, "training_env": training_env, "algorithm": algorithm}
    fields |= {"env_steps": env_steps, "compute": compute, "url": url, "date": date}
    try:
        text = None if readme is None else readme.read_text(encoding="utf-8")
        doing = "replaying every episode (minutes for a large suite; --no-replay skips it)" if replay else "validating"
        with console.status(f"packaging {_path_text(run)}, then {doing}"):
            report = make_submission(run, out, fields, readme=text, replay=replay, compress=compress)
    except (SubmitError, OSError, UnicodeDecodeError) as err:
        console.print(f"[red]{escape(str(err))}[/red]")
        raise typer.Exit(2) from None
    assert report.summary is not None
    checked = "replayed and validated" if replay else "validated without replay (the board's CI replays: --replay to do it here)"
    console.print(f"[green]ok[/green] {_path_text(out)}: {report.summary['overall']['episodes']} episodes {checked}")
    console.print("next: commit the folder and open a pull request; CI runs rl4vlm-gym leaderboard validate over it")


@app.command()
def serve(
    target: Annotated[str, typer.Argument(help="An env id or a suite (built-in name or YAML file).")],
    host: Annotated[str, typer.Option(help="Address to bind (0.0.0.0: every interface).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: a free one, printed).")] = 8000,
    max_sessions: Annotated[int, typer.Option(min=1, help="Concurrent WebSocket sessions, one env each.")] = 16,
    idle_timeout: Annotated[float, typer.Option(min=0, help="Close sessions idle this many seconds (0: never).")] = 600.0,
    make_kwargs: Annotated[
        str | None, typer.Option(help="gym.make arguments as JSON, e.g. '{\"image_size\": [224, 224]}'.")
    ] = None,
    expose_oracle: Annotated[
        bool, typer.Option(help="Put the oracle's next action in `state` (trusted evaluation only).")
    ] = False,
    client_kwargs: Annotated[
        str | None,
        typer.Option(
            help="make_kwargs names a client may set, comma-separated (replaces the safe default per env; "
            "'' allows none). Names with a default rule keep its bounds."
        ),
    ] = None,
    policy: Annotated[
        Path | None,
        typer.Option(help="A policy file (YAML or JSON): client_kwargs and their rules, max_image_size."),
    ] = None,
    max_image_size: Annotated[
        int | None, typer.Option(min=1, help="The largest image side a client may ask (default 1024, or the policy file's).")
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            help="Bearer token every route but /health requires (header 'Authorization: Bearer TOKEN'); default: "
            "$RL4VLM_GYM_SERVER_TOKEN. Prefer the env var: a command line is visible to other users in ps."
        ),
    ] = None,
    stateless: Annotated[
        bool,
        typer.Option(
            help="Serve the stateless HTTP routes (POST /reset, POST /step, GET /state); --no-stateless: they answer 404, "
            "play over the WebSocket /ws only."
        ),
    ] = True,
    stateless_limit: Annotated[
        int | None, typer.Option(min=1, help="At most N stateless HTTP requests at once; 503 over it (default: --max-sessions).")
    ] = None,
    first_message_timeout: Annotated[
        float,
        typer.Option(
            min=0,
            help="Close a WebSocket that sends nothing for SECONDS after connecting, so silent sockets cannot hold the "
            "server (0: never).",
        ),
    ] = 10.0,
    mcp: Annotated[bool, typer.Option(help="Offer the env's actions as MCP tools too (rl4vlm_gym.server.mcp).")] = False,
) -> None:
    """Serve envs over OpenEnv's HTTP/WebSocket protocol (extra `server`); see rl4vlm_gym.server.

    Clients may set only the ``make_kwargs`` the operator allows: by default, per env, the arguments that change
    what an episode shows or asks (level, obs_mode, image_size up to --max-image-size, reward_variant...), never
    a path, a renderer or a planner bound; ``--client-kwargs`` or ``--policy`` replaces that list. ``--make-kwargs``
    are the operator's own and are not checked."""
    import json

    try:
        from rl4vlm_gym.server.app import serve as run_server
        from rl4vlm_gym.server.environment import Catalog
        from rl4vlm_gym.server.policy import MAX_IMAGE_SIZE, ClientPolicy
    except ImportError as err:
        console.print(f"[red]the server needs the `server` extra: pip install 'rl4vlm-gym[server]' ({err})[/red]")
        raise typer.Exit(2) from None
    try:
        kwargs = json.loads(make_kwargs) if make_kwargs else {}
        if not isinstance(kwargs, dict):
            raise ValueError("--make-kwargs must be a JSON object")
        if client_kwargs is not None and policy is not None:
            raise ValueError("give either --client-kwargs or --policy (a policy file lists its names itself)")
        if policy is not None:
            chosen = ClientPolicy.from_file(policy, max_image_size=max_image_size)
        elif client_kwargs is not None:
            chosen = ClientPolicy.of_names(client_kwargs.split(","), max_image_size=max_image_size or MAX_IMAGE_SIZE)
        else:
            chosen = ClientPolicy(max_image_size=max_image_size or MAX_IMAGE_SIZE)
        # the Catalog is made here (serve() takes a ready one), so that it carries the policy
        catalog = Catalog.of(target, kwargs, expose_oracle=expose_oracle, policy=chosen)
        options: dict[str, Any] = {}
        if mcp:
            from rl4vlm_gym.server.mcp import MCPServedEnv  # FastMCP itself comes with the first MCP request

            options["environment"] = MCPServedEnv
        run_server(
            catalog,
            host=host,
            port=port,
            max_sessions=max_sessions,
            idle_timeout=idle_timeout or None,
            token=token,
            stateless=stateless,
            stateless_limit=stateless_limit,
            first_message_timeout=first_message_timeout or None,
            **options,
        )
    except (ValueError, OSError) as err:
        console.print(f"[red]{escape(str(err))}[/red]")
        raise typer.Exit(2) from None


def main() -> None:
    """Entry point of the ``rl4vlm-gym`` console script."""
    app()


if __name__ == "__main__":
    main()
