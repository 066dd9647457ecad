"""deploy/rl4vlm_gym_env, our server as an OpenEnv environment project: ``openenv validate`` passes on it
(openenv-core's own command, run in this process: it reads files), its uv.lock locks what its
pyproject.toml asks for, and its server/app.py serves ``ENV_ID`` with the MCP tools."""

from __future__ import annotations

import importlib.util
import json
import shutil
import tomllib
from pathlib import Path

import pytest

pytest.importorskip("openenv")  # the server extra (openenv-core: imported by the tests, not here)

PROJECT = Path(__file__).resolve().parents[2] / "deploy" / "rl4vlm_gym_env"


def _validate(path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    """``openenv validate PATH --json``: its report (the command exits 1 when it fails)."""
    import typer
    from openenv.cli.commands.validate import validate

    try:
        validate(target=str(path), url=None, json_output=True, timeout=5.0, verbose=True)
        code = 0
    except typer.Exit as done:
        code = done.exit_code
    out = capsys.readouterr()
    if code and not out.out.strip():
        return {"passed": False, "error": out.err}
    report = json.loads(out.out)
    assert report["passed"] == (code == 0), (report, code)
    return report


def test_openenv_validate_passes(capsys: pytest.CaptureFixture[str]) -> None:
    report = _validate(PROJECT, capsys)
    assert report["passed"] and report["issues"] == [], report
    assert report["environment"] == "rl4vlm_gym"  # the directory's name, less OpenEnv's "_env"
    modes = report["deployment_modes"]
    assert modes["uv_run"] and modes["python_module"] and modes["openenv_serve"], modes


@pytest.mark.parametrize(
    ("drop", "issue"),
    [
        ("uv.lock", "Missing uv.lock"),
        ("openenv.yaml", "missing openenv.yaml"),
        ("guard", "missing if __name__ == '__main__'"),
    ],
)
def test_openenv_validate_fails_without_each_part(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], drop: str, issue: str
) -> None:
    """The check above has teeth: a copy lacking one part fails it, naming the part."""
    copy = tmp_path / "rl4vlm_gym_env"
    shutil.copytree(PROJECT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    if drop == "guard":
        app = copy / "server" / "app.py"
        app.write_text(app.read_text().replace('if __name__ == "__main__":\n    main()', ""))
    else:
        (copy / drop).unlink()
    report = _validate(copy, capsys)
    assert not report["passed"]
    assert issue in json.dumps(report), report


def test_uv_lock_locks_the_projects_requirements() -> None:
    """uv.lock was made from this pyproject.toml: its record of the project's requirements is the
    pyproject's list (run ``uv lock`` in the directory after changing it), and it pins openenv-core
    and rl4vlm-gym (from this repository)."""
    project = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]
    lock = tomllib.loads((PROJECT / "uv.lock").read_text())
    packages = {package["name"]: package for package in lock["package"]}
    root = packages[project["name"]]
    locked = sorted(
        f"{r['name']}[{','.join(r.get('extras', []))}]{r.get('specifier', '')}" for r in root["metadata"]["requires-dist"]
    )
    assert locked == sorted(project["dependencies"]), (locked, project["dependencies"])
    assert packages["rl4vlm-gym"]["source"] == {"editable": "../../"}
    assert packages["openenv-core"]["version"].startswith("0.3."), packages["openenv-core"]["version"]


def test_the_projects_app_serves_env_id_with_mcp_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """server/app.py's ``app`` (openenv.yaml's ``server.app:app``) serves the env id of ``ENV_ID``, requires the
    token of ``RL4VLM_GYM_SERVER_TOKEN``, and its sessions answer the MCP tools; ``main`` is the pyproject's
    ``server`` entry point."""
    from fastapi.testclient import TestClient

    from rl4vlm_gym.server.mcp import TOOL_NAMES

    monkeypatch.setenv("ENV_ID", "rl4vlm/FrozenLake-v0")
    monkeypatch.setenv("IDLE_TIMEOUT", "none")
    monkeypatch.setenv("RL4VLM_GYM_SERVER_TOKEN", "s3cret")
    spec = importlib.util.spec_from_file_location("rl4vlm_gym_env_server_app", PROJECT / "server" / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.IDLE_TIMEOUT is None
    scripts = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["server"].endswith("server.app:main") and callable(module.main)
    with TestClient(module.app) as client:
        assert client.get("/metadata").status_code == 403
        client.headers["Authorization"] = "Bearer s3cret"
        assert "rl4vlm/FrozenLake-v0" in client.get("/metadata").json()["description"]
        listed = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).json()
    assert [tool["name"] for tool in listed["result"]["tools"]] == list(TOOL_NAMES), listed
