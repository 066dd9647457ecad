"""The ``rl4vlm-gym`` command: list, info, check, play and docs."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table

import rl4vlm_gym
from rl4vlm_gym.registry import env_card, list_envs

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
    # Ids are copied from here: never break them across lines.
    table = Table(Column("id", no_wrap=True), "family", "levels", "extra", "task")
    for card in list_envs(family=family, skill=skill, obs_mode=obs_mode):
        table.add_row(card.id, card.family, str(len(card.levels)), card.extra or "-", card.summary)
    console.print(table)


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
        elif field.name == "kwargs":
            value = dict(value) or "-"
        table.add_row(field.name, str(value))
    table.add_row("seeds", ", ".join(f"{k} [{r.start}, {r.stop})" for k, r in card.seed_ranges.items()))
    console.print(table)


@app.command()
def check(
    env_ids: Annotated[list[str] | None, typer.Argument(help="Ids to check (default: all).")] = None,
    only: Annotated[list[str] | None, typer.Option(help="Run only these checks (repeatable).")] = None,
    throughput_steps: Annotated[int, typer.Option(help="Steps for the throughput figure (0 skips it).")] = 1000,
) -> None:
    """Run the conformance kit (the same checks as the test suite) and report throughput."""
    from rl4vlm_gym.testing import CHECKS, measure_throughput, run_checks

    unknown = sorted(set(only or ()) - set(CHECKS))
    if unknown:
        console.print(f"[red]unknown checks {unknown}; choose from {sorted(CHECKS)}[/red]")
        raise typer.Exit(2)
    ids = env_ids or [card.id for card in list_envs()]
    for env_id in ids:
        _card_or_exit(env_id)
    failures = 0
    table = Table("id", "check", "result", "seconds", "detail", title="Conformance")
    for env_id in ids:
        missing = _missing_data(env_id)
        if missing:
            table.add_row(env_id, "all", "[yellow]skip[/yellow]", "-", f"no data on this machine: {missing}")
            continue
        for result in run_checks(env_id, only):
            failures += not result.passed
            mark = "[green]pass[/green]" if result.passed else "[red]FAIL[/red]"
            table.add_row(env_id, result.check, mark, f"{result.seconds:.1f}", result.detail)
        if throughput_steps:
            figures = measure_throughput(env_id, steps=throughput_steps, resets=50, policy="oracle")
            table.add_row(
                env_id, "throughput", "-", "-",
                f"{figures['steps_per_s']:,.0f} steps/s, reset p50 {figures['reset_ms_p50']:.2f} ms (oracle, image+text, default size)",
            )
    console.print(table)
    if failures:
        console.print(f"[red]{failures} check(s) failed[/red]")
        raise typer.Exit(1)
    console.print(f"[green]all checks passed for {len(ids)} env(s)[/green]")


def _missing_data(env_id: str) -> str | None:
    """Why ``env_id`` cannot be made here for want of downloaded data, or ``None``."""
    import gymnasium as gym

    from rl4vlm_gym.core import MissingDataError

    try:
        gym.make(env_id).close()
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
        episode_return += reward
        console.print(f"reward {reward:+g}  return {episode_return:+g}  success {info['success']}  progress {info['progress']:.2f}")
        if terminated or truncated:
            console.print(obs["text"].split("\n", 1)[0], markup=False)
            console.print(f"[bold]episode over[/bold] ({'terminated' if terminated else 'truncated'}); return {episode_return:+g}")
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
def docs(out: Annotated[Path, typer.Argument(help="Output folder.")] = Path("docs/envs")) -> None:
    """Write one Markdown page per env (from its card and docstring) plus an index."""
    from rl4vlm_gym.docs import write_docs

    pages = write_docs(out)
    console.print(f"wrote {len(pages)} pages to {out}")


def main() -> None:
    """Entry point of the ``rl4vlm-gym`` console script."""
    app()
