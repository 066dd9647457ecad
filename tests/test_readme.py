"""Every code block of README.md and CONTRIBUTING.md is a test, so the front pages cannot rot (issue 39).

A block is known by its file and its first line, and each has a rule in ``RULES``; a block without one
fails :func:`test_every_block_has_a_rule`, so a new block cannot land unchecked. The rules, the
strongest that runs here in well under a second a block:

- ``run``: a Python block runs, in a namespace of its own, with the substitutions its placeholders
  need (named in the rule), then a check of what the text around it promises.
- ``commands``: each line of a shell block is checked by what it calls. An ``rl4vlm-gym`` line is parsed
  by the CLI's own click parser (an option that no longer exists, a wrong type or a missing argument
  fails) and the cheap ones (``list``, ``info``, ``suite list``) run for real; ``bash script`` lines
  name a script that exists and parses (``bash -n``); ``docker`` lines name a Dockerfile that declares
  the build arguments and environment they pass; a ``pytest`` line names pytest's own options.
- ``bind``: a block calling what cannot run here (a 2B model) runs with those calls recorded and bound
  to the real signatures; the run itself is another test's (named in the rule).

The slow test at the end runs the server blocks for real: a server as README starts it, README's
``Remote-v0`` block against it, and its ``check`` line over it.
"""

from __future__ import annotations

import configparser
import inspect
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from rl4vlm_gym import processes
from rl4vlm_gym.cli import app

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", "CONTRIBUTING.md")


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # 1-based line of the opening fence
    language: str
    code: str

    @property
    def key(self) -> tuple[str, str]:
        return self.page, self.code.strip().splitlines()[0].strip()

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for page in PAGES:
        for token in MarkdownIt().parse((ROOT / page).read_text(encoding="utf-8")):
            if token.type == "fence" and token.content.strip():
                found.append(Block(page, token.map[0] + 1, token.info.strip(), token.content))
    return found


# -- The checks ---------------------------------------------------------------------------------------

CLI = typer.main.get_command(app)
PLACEHOLDERS = {
    "FAMILY": "gridgames",
    "ID": "rl4vlm/NumberLine-v0",
    "ID|SUITE": "smoke",
    "GAME": "tictactoe",
    "A": "random",
    "B": "heuristic",
    "ALGO": "vl-dac",
}
"""Words that stand for a value in a command line, and the value to parse in their place."""
RUN_FOR_REAL = {("list",), ("info",), ("suite", "list")}
"""Commands cheap enough to run, not only parse."""


def parse_cli(words: list[str]) -> None:
    """Parse an ``rl4vlm-gym`` command line with the CLI's own parser, down to the last subcommand
    (typer's click: its errors are ``typer.TyperException``)."""
    command: Any = CLI
    context, name, args = None, "rl4vlm-gym", list(words)
    while hasattr(command, "resolve_command"):  # a group; ours take no options of their own
        context = command.context_class(command, info_name=name, parent=context)
        name, command, args = command.resolve_command(context, args)  # an unknown command: UsageError
    command.make_context(name, args, parent=context, resilient_parsing=False)


def run_cli(words: list[str]) -> None:
    result = CliRunner().invoke(app, words)
    assert result.exit_code == 0, (words, result.output[-2000:])


def command_words(line: str) -> list[str]:
    """The words of a command line: comments dropped, ``[optional ...]`` groups dropped, placeholders
    replaced by a value."""
    words = []
    depth = 0
    for word in shlex.split(line, comments=True):
        depth += word.startswith("[")
        if depth == 0:
            words.append(PLACEHOLDERS.get(word, word))
        depth -= word.endswith("]")
    return words


def check_command(line: str) -> None:
    words = command_words(line)
    if not words:
        return
    tool, *args = words
    if tool == "rl4vlm-gym":
        if args[1:2] == ["/"]:  # "eval / report / suite / leaderboard": a list of commands
            names = args[::2]
            missing = [n for n in names if CLI.get_command(CLI.context_class(CLI), n) is None]
            assert not missing, f"rl4vlm-gym has no command {missing}"
            return
        parse_cli(args)
        if any(tuple(args[: len(prefix)]) == prefix for prefix in RUN_FOR_REAL):
            run_cli(args)
    elif tool == "bash":
        script = ROOT / args[0]
        assert script.is_file(), f"{args[0]} does not exist"
        subprocess.run(["bash", "-n", str(script)], check=True)
    elif tool == "docker":
        check_docker(args)
    elif "=" in tool and tool.split("=")[0].isupper():  # VARIABLE=value command ...: the command's check
        check_command(line.split(None, 1)[1])
    elif tool.endswith("python") and args[:2] == ["-m", "pytest"]:
        assert all(not a.startswith("-") or a in {"-q", "-x", "-v", "-m", "-k", "-n"} for a in args[2:]), args
    else:
        raise AssertionError(f"no check for command lines of {tool!r}")


def check_docker(args: list[str]) -> None:
    action, *rest = args
    if action == "build":
        dockerfile = ROOT / rest[rest.index("-f") + 1]
        text = dockerfile.read_text(encoding="utf-8")
        for i, word in enumerate(rest):
            if word == "--build-arg":
                name = rest[i + 1].split("=")[0]
                assert f"ARG {name}" in text, f"{dockerfile.name} has no ARG {name}"
    elif action == "run":
        text = (ROOT / "docker" / "server.Dockerfile").read_text(encoding="utf-8")
        for i, word in enumerate(rest):
            if word == "-e":
                name = rest[i + 1].split("=")[0]
                assert f"${name}" in text or f"{name}=" in text, f"the server image reads no {name}"
    else:
        raise AssertionError(f"no check for docker {action}")


def commands(block: Block) -> None:
    for line in block.code.splitlines():
        check_command(line)


def run(
    substitutions: dict[str, str] | None = None, then: Callable[[dict[str, Any]], None] | None = None
) -> Callable[[Block], None]:
    def check(block: Block) -> None:
        code = block.code
        for old, new in (substitutions or {}).items():
            assert old in code, f"{block}: the rule substitutes {old!r}, which the block no longer has"
            code = code.replace(old, new)
        namespace: dict[str, Any] = {"__name__": "__readme__"}
        try:
            exec(compile(code, str(block), "exec"), namespace)  # noqa: S102 - our own README
            if then is not None:
                then(namespace)
        finally:
            env = namespace.get("env")
            if env is not None:
                env.close()

    return check


def first_example() -> Block:
    return next(block for block in blocks() if block.key == ("README.md", "import gymnasium as gym"))


def the_first_example_keeps_its_promises(namespace: dict[str, Any]) -> None:
    info, obs = namespace["info"], namespace["obs"]
    assert info["action"]["valid"] is True and info["action"]["error"] is None, info["action"]
    assert info["action"]["parsed"] == "5"
    assert set(obs) == {"image", "text", "mission", "actions"} and obs["image"].shape == (300, 300, 3)
    assert {"success", "progress", "level", "state_key", "optimal_steps"} <= set(info)


def bind_trl(block: Block) -> None:
    """README's TRL block with GRPOTrainer and GRPOConfig recorded: its arguments bind to their real
    signatures, and the rollout and dataset are the real ones (training on a tiny model is
    tests/integrations/test_trl.py::test_grpo_trains_on_the_env_reward)."""
    trl = pytest.importorskip("trl")
    calls: dict[str, inspect.BoundArguments] = {}

    def recorder(real: Any) -> Any:
        def record(*args: Any, **kwargs: Any) -> Any:
            calls[real.__name__] = inspect.signature(real).bind(*args, **kwargs)
            return type("Recorded", (), {"train": lambda self: None})()

        return record

    code = block.code.replace("from trl import GRPOConfig, GRPOTrainer", "").replace(", ...)", ")")
    namespace = {"__name__": "__readme__", "GRPOConfig": recorder(trl.GRPOConfig), "GRPOTrainer": recorder(trl.GRPOTrainer)}
    exec(compile(code, str(block), "exec"), namespace)  # noqa: S102 - our own README
    assert set(calls) == {"GRPOConfig", "GRPOTrainer"}
    trainer = calls["GRPOTrainer"].arguments
    assert callable(trainer["rollout_func"]) and len(trainer["train_dataset"]) == 1024


def entry_point_ini(block: Block) -> None:
    from rl4vlm_gym.registry import ENTRY_POINT_GROUP

    parser = configparser.ConfigParser()
    parser.read_string("\n".join(line.strip() for line in block.code.splitlines()))
    assert ENTRY_POINT_GROUP in parser["options.entry_points"], "CONTRIBUTING names another entry-point group"


def served(block: Block) -> None:
    """A block that needs a running server: its lines parse here; the slow test below runs them."""
    if block.language == "bash":
        commands(block)
    else:
        compile(block.code, str(block), "exec")


def installs(block: Block) -> None:
    """`python -m venv DIR` and `DIR/bin/pip install [-e] SPEC` lines: SPEC is the clone's root with extras setup.cfg
    declares, or `rl4vlm-gym[extras] @ git+URL` (tests/test_packaging.py installs the built wheel into a fresh venv)."""
    from packaging.requirements import Requirement

    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    declared = set(parser["options.extras_require"])
    for line in block.code.splitlines():
        words = shlex.split(line, comments=True)
        if not words or words[1:3] == ["-m", "venv"]:
            continue
        assert Path(words[0]).name == "pip" and words[1] == "install", line
        spec = [word for word in words[2:] if not word.startswith("-")]
        assert len(spec) == 1, line
        if spec[0].startswith("."):
            path, _, extras = spec[0].partition("[")
            assert (ROOT / path / "setup.cfg").is_file(), line
            named = set(extras.rstrip("]").split(",")) if extras else set()
        else:
            requirement = Requirement(spec[0])
            assert requirement.name == "rl4vlm-gym" and (requirement.url or "").startswith("git+"), line
            named = set(requirement.extras)
        assert named <= declared, (line, named - declared)


RULES: dict[tuple[str, str], Callable[[Block], None]] = {
    ("README.md", "bash scripts/run.sh     # set up (.venv, Python and Debian packages) and run the main job"): commands,
    ("README.md", "python -m venv .venv                                   # or activate the venv you train in"): installs,
    ("README.md", "import gymnasium as gym"): run(then=the_first_example_keeps_its_promises),
    (
        "README.md",
        'env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", max_episode_steps=128, reward_variant="vl-dac", image_size=(60, 80))',
    ): run({"env = gym.make(": "import gymnasium as gym\nimport rl4vlm_gym\nenv = gym.make("}),
    ("README.md", "rl4vlm-gym suite list                                   # the built-in suites"): commands,
    ("README.md", "rl4vlm-gym match tictactoe -p random -p heuristic -p perfect --seeds 20 --obs-mode text"): commands,
    (
        "README.md",
        "rl4vlm-gym train --algo vl-dac                                  # tiny model, CPU, ColourNaming (minutes)",
    ): commands,
    ("README.md", "rl4vlm-gym serve rl4vlm/Sokoban-v0 --port 8000 --max-sessions 16 --idle-timeout 600"): served,
    ("README.md", 'env = gym.make("rl4vlm/Remote-v0", url="http://host:8000", env_id="rl4vlm/Sokoban-v0", level=1)'): served,
    ("README.md", "rl4vlm-gym serve rl4vlm/Sokoban-v0 --port 8000 --expose-oracle"): served,
    (
        "README.md",
        "docker build -f docker/server.Dockerfile -t rl4vlm-gym-server .                            # EXTRAS=server",
    ): commands,
    ("README.md", "from trl import GRPOConfig, GRPOTrainer"): bind_trl,
    ("README.md", "rl4vlm-gym list                        # the registry (filters: --family, --skill, --obs-mode)"): commands,
    ("CONTRIBUTING.md", "rl4vlm-gym new-env gridgames --name GridWalk     # from the repository's root"): commands,
    ("CONTRIBUTING.md", "[options.entry_points]"): entry_point_ini,
}


def test_every_block_has_a_rule() -> None:
    keys = [block.key for block in blocks()]
    assert [key for key in keys if key not in RULES] == []  # a new block needs a rule
    assert [key for key in RULES if key not in keys] == []  # a rule whose block changed or went


SLOW = {("README.md", "from trl import GRPOConfig, GRPOTrainer")}  # importing TRL: 10 s


@pytest.mark.parametrize(
    "block",
    [pytest.param(b, id=str(b), marks=[pytest.mark.slow] if b.key in SLOW else []) for b in blocks() if b.key in RULES],
)
def test_block(block: Block) -> None:
    RULES[block.key](block)


def test_a_wrong_option_or_command_fails_the_check() -> None:
    """The checks are not blind: what a rotted block would say is refused."""
    with pytest.raises(typer.TyperException, match="No such option"):
        check_command("rl4vlm-gym eval --agent oracle --no-such-option 3")
    with pytest.raises(typer.TyperException, match="valid integer"):
        check_command("rl4vlm-gym match tictactoe --seeds notanumber")
    with pytest.raises(typer.TyperException, match="No such command"):
        check_command("rl4vlm-gym no-such-command")
    with pytest.raises(typer.TyperException, match="No such command"):
        check_command("rl4vlm-gym suite no-such-command")
    with pytest.raises(AssertionError):
        check_command("bash scripts/no_such_script.sh")
    with pytest.raises(AssertionError):
        check_command("docker build -f docker/server.Dockerfile --build-arg NO_SUCH_ARG=1 .")
    with pytest.raises(AssertionError):
        run(then=the_first_example_keeps_its_promises)(
            Block("README.md", 1, "python", first_example().code.replace('"action": "5"', '"action": "8"'))
        )


SERVE_BLOCK = ("README.md", "rl4vlm-gym serve rl4vlm/Sokoban-v0 --port 8000 --max-sessions 16 --idle-timeout 600")
CHECK_BLOCK = ("README.md", "rl4vlm-gym serve rl4vlm/Sokoban-v0 --port 8000 --expose-oracle")


@pytest.mark.slow  # a server process (about 3 s) and the kit's api check over it
def test_the_server_blocks_run_for_real(tmp_path: Path) -> None:
    """README's serve line (on a free port), its Remote-v0 block against that server, and its check line."""
    serve_line = next(b for b in blocks() if b.key == SERVE_BLOCK).code.splitlines()[0]
    words = command_words(serve_line)
    words[words.index("--port") + 1] = "0"
    server, owned = processes.popen(  # dies with this process, even under SIGKILL
        [sys.executable, "-m", "rl4vlm_gym.cli", *words[1:], "--expose-oracle"], stdout=subprocess.PIPE, text=True
    )
    try:
        first = server.stdout.readline()
        url = first.split(" on ")[1].split(" ")[0]
        remote = next(b for b in blocks() if b.key[1].startswith('env = gym.make("rl4vlm/Remote-v0"'))
        run(
            {
                'url="http://host:8000"': f'url="{url}"',
                "env = gym.make(": "import gymnasium as gym\nimport rl4vlm_gym\nenv = gym.make(",
            }
        )(remote)
        check_line = next(b for b in blocks() if b.key == CHECK_BLOCK).code.splitlines()[1]
        check = command_words(check_line)
        check[check.index("--url") + 1] = url
        run_cli([*check[1:], "--only", "api"])
    finally:
        server.terminate()
        server.wait(timeout=30)
        owned.release()
