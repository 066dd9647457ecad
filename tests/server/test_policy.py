"""The operator's policy on clients' ``make_kwargs`` (issue 37): every refusal, its cap at, just above and
just below, errors that name the problem without echoing the input, policy files read as hostile input,
and the CLI's verdicts. In-process on :class:`ServedEnv` (nothing made for a refused reset: no browser,
no walk of ``/``), plus one test over a real server."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("openenv")  # the server extra
import rl4vlm_gym.server  # noqa: E402, F401 - first: openenv-core without Gradio (a raw import costs 4 s of CPU)

# isort: split

from pydantic import ValidationError  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from rl4vlm_gym.cli import app as cli_app  # noqa: E402
from rl4vlm_gym.server.environment import ARGUMENT_ERROR, SESSION_CLOSED, Catalog, ServedEnv  # noqa: E402
from rl4vlm_gym.server.models import MAX_ACTION_CHARS, VLMAction, VLMState  # noqa: E402
from rl4vlm_gym.server.policy import (  # noqa: E402
    MAX_IMAGE_SIZE,
    MAX_NAME_CHARS,
    ClientPolicy,
    PolicyError,
    Rule,
    default_rules,
)

NUMBERLINE = "rl4vlm/NumberLine-v0"
SECRET = "/SECRET-VALUE-7f3a"  # a value no message may echo


def _refused(env_id: str, make_kwargs: dict, policy: ClientPolicy | None = None, **catalog) -> str:
    """The message of a refused reset; the session's env was never made."""
    served = ServedEnv(Catalog.of(env_id, policy=policy, **catalog))
    with pytest.raises(ValueError) as caught:
        served.reset(seed=0, make_kwargs=make_kwargs)
    assert served.env is None, "a refused reset made an env"
    message = str(caught.value)
    assert message.startswith(ARGUMENT_ERROR), message
    assert SECRET not in message and len(message) < 1000, message
    return message


@pytest.mark.parametrize(
    ("env_id", "make_kwargs", "said"),
    [
        # the abuses: Chromium per session, a walk of "/", a 67 MB message per reset
        ("rl4vlm/WebShop-v1", {"renderer": "browser"}, "'renderer' is not allowed on this server"),
        ("rl4vlm/ALFWorld-v0", {"data_dir": "/"}, "'data_dir' is not allowed on this server"),
        (NUMBERLINE, {"image_size": 4096}, "over 1024 pixels a side (this server's cap, --max-image-size 1024)"),
        ("rl4vlm/ALFWorld-v0", {"planner_timeout": 10_000}, "'planner_timeout' is not allowed"),
        ("rl4vlm/WebShop-Amazon-v1", {"goals": SECRET}, "'goals' is not allowed"),
        ("rl4vlm/MiniWorld-OneRoom-v1", {"render_view": SECRET}, "'render_view' must be one of ['agent', 'top']"),
        ("rl4vlm/MiniWorld-OneRoom-v1", {"render_process": False}, "'render_process' is not allowed"),  # GL in the server
        (NUMBERLINE, {"level": 99}, "'level' must be an int in 0..4"),
        (NUMBERLINE, {"level": True}, "'level' must be an int in 0..4"),
        (NUMBERLINE, {"obs_mode": SECRET * 100}, "'obs_mode' must be one of"),
        (NUMBERLINE, {"optimal_steps_at_reset": True}, "'optimal_steps_at_reset' is not allowed"),  # a plan a reset
        (NUMBERLINE, {"max_episode_steps": 10**9}, "'max_episode_steps' must be an int in -1..1000000"),
        (NUMBERLINE, {"image_size": [SECRET, 64]}, "'image_size' must be an int or [height, width]"),
        (NUMBERLINE, {"render_mode": "human"}, "may not set 'render_mode'"),
    ],
)
def test_the_default_policy_refuses_what_the_operator_did_not_allow(env_id, make_kwargs, said, caplog) -> None:
    with caplog.at_level("WARNING", logger="rl4vlm_gym.server.environment"):
        message = _refused(env_id, make_kwargs)
    assert said in message, message
    if "render_mode" not in make_kwargs:  # logged for the operator, without the value
        assert [r.getMessage() for r in caplog.records] == [f"{env_id}: refused by the policy: {message[len(ARGUMENT_ERROR) :]}"]


def test_the_image_size_cap_at_just_above_and_just_below() -> None:
    served = ServedEnv(Catalog.of(NUMBERLINE, policy=ClientPolicy(max_image_size=128)))
    for size in (127, 128, [128, 127]):
        obs = served.reset(seed=0, make_kwargs={"image_size": size})
        assert obs.image.shape[:2] == ((size, size) if isinstance(size, int) else tuple(size))
    for size in (129, [128, 129], [129, 64]):
        with pytest.raises(ValueError, match=r"over 128 pixels a side \(this server's cap, --max-image-size 128\)"):
            served.reset(seed=0, make_kwargs={"image_size": size})
    assert served.env.unwrapped.image_size == (128, 127), "a refused reset changed the session's env"
    # the default cap, in the policy alone (no 1024-pixel env is made)
    rule = default_rules(NUMBERLINE)["image_size"]
    assert rule.check("image_size", 1024, MAX_IMAGE_SIZE) == (1024, 1024)
    assert rule.check("image_size", [1023, 64], MAX_IMAGE_SIZE) == (1023, 64)
    with pytest.raises(ValueError, match="over 1024 pixels"):
        rule.check("image_size", [64, 1025], MAX_IMAGE_SIZE)


def test_client_kwargs_replace_the_defaults_and_keep_their_bounds() -> None:
    policy = ClientPolicy.of_names(["level", "image_size", "catalog_seed"], max_image_size=256)
    assert "'obs_mode' is not allowed on this server (--client-kwargs)" in _refused(NUMBERLINE, {"obs_mode": "text"}, policy)
    assert "'level' must be an int in 0..4" in _refused(NUMBERLINE, {"level": 5}, policy)
    assert "--max-image-size 256" in _refused(NUMBERLINE, {"image_size": 257}, policy)
    rules = policy.rules_for(NUMBERLINE)
    assert set(rules) == {"level", "image_size", "catalog_seed"} and rules["catalog_seed"] == Rule("any")  # NumberLine has none
    # the operator may allow what the default never does (and the env, not the policy, then judges the value)
    assert ClientPolicy.of_names(["renderer"]).check("rl4vlm/WebShop-v1", {"renderer": "none"}) == {"renderer": "none"}
    with pytest.raises(PolicyError, match="not a keyword name"):
        ClientPolicy.of_names(["level", "no such"])
    with pytest.raises(PolicyError, match="the server's to decide"):
        ClientPolicy.of_names(["render_mode"])


def test_operator_kwargs_stay_free_and_names_any_env_does_not_take_are_refused() -> None:
    # the operator's own kwargs are not the client's: a plan at reset on an untrusted server
    served = ServedEnv(Catalog.of(NUMBERLINE, {"optimal_steps_at_reset": True}))
    assert served.reset(seed=0).info["optimal_steps"] >= 0
    assert "optimal_steps_at_reset" in default_rules(NUMBERLINE, trusted=True)  # the kit's server (--expose-oracle)
    # a name the operator allowed but the env does not take: refused before make, also for classes taking **kwargs
    message = _refused("rl4vlm/Household-v0", {"colour": "red"}, ClientPolicy.of_names(["colour"]))
    assert "takes no arguments 'colour'" in message and "commands" in message, message


def test_refusals_name_the_problem_and_never_echo_the_input() -> None:
    long_name = "k" * 5_000
    message = _refused(NUMBERLINE, {long_name: 1})
    assert "k" * MAX_NAME_CHARS + "'..." in message and "k" * (MAX_NAME_CHARS + 1) not in message
    served = ServedEnv(Catalog.of(NUMBERLINE))
    big = SECRET * 100_000  # 1.8 MB
    cases = {
        "seed": ({"seed": big}, "seed must be an int in 0..2**63-1 (got a str of 1800000 characters)"),
        "big seed": ({"seed": 2**70}, "seed must be an int in 0..2**63-1 (got an int of 22 digits)"),
        "image_format": ({"image_format": big}, "image_format must be one of ['png', 'raw'] (got a str of 1800000"),
        "options": ({"options": {"level": big}}, "options is longer than 10000 characters as JSON"),
        "options type": ({"options": [big]}, "options must be an object (got a list of 1 items)"),
        "episode_id": ({"episode_id": big}, "episode_id must be a string of at most 256 characters"),
        "state_extras": ({"state_extras": [big]}, "state_extras must be a list of names from"),
        "make_kwargs": ({"make_kwargs": big}, "make_kwargs must be an object (got a str of 1800000 characters)"),
        "unknown": ({long_name: big}, "reset() got unknown arguments '" + "k" * MAX_NAME_CHARS + "'..."),
        "env_id": ({"env_id": big}, "env_id '" + SECRET),
    }
    for case, (kwargs, said) in cases.items():
        with pytest.raises(ValueError) as caught:
            served.reset(**kwargs)
        message = str(caught.value)
        assert said in message and len(message) < 1000, f"{case}: {message[:300]}"
    assert served.env is None


def test_action_validation_errors_say_the_field_and_its_size_never_the_input() -> None:
    for data, field, said in [
        ({"text": "a" * (MAX_ACTION_CHARS + 1)}, ["text"], f"a str of {MAX_ACTION_CHARS + 1} characters"),
        ({"text": ["a" * 7_000_000]}, ["text", "str"], "a list of 1 items"),
        ({"text": "up", "z" * 1000: SECRET * 1000}, ["z" * 64 + "..."], "a str of 18000 characters"),
        ({"metadata": SECRET * 1000}, ["metadata"], "a str of 18000 characters"),
    ]:
        with pytest.raises(ValidationError) as caught:
            VLMAction.model_validate(data)
        errors = caught.value.errors()
        sent = json.dumps(errors)
        assert len(sent) < 2000 and SECRET not in sent and "aaaaaaaa" not in sent, sent[:300]
        assert any(list(e["loc"]) == field and e["input"] == said for e in errors), errors
    assert VLMAction.model_validate({"text": "a" * MAX_ACTION_CHARS}).text == "a" * MAX_ACTION_CHARS  # at the limit


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("ok.yaml", "max_image_size: 256\nclient_kwargs:\n  level: {min: 0, max: 2}\n  obs_mode: {choices: [text]}\n", None),
        ("ok.json", '{"client_kwargs": ["level", "image_size"]}', None),
        ("anchors.yaml", "a: &x [1, 2]\nclient_kwargs: *x\n", "YAML anchors and aliases are not accepted"),
        ("deep.json", '{"client_kwargs": ' + "[" * 100 + "]" * 100 + "}", "nested deeper than MAX_DEPTH = 32"),
        ("big.yaml", "#" * (64 << 10) + "\n", "larger than 65536 bytes"),
        ("tag.yaml", "client_kwargs: !!python/object:os.system {}\n", "explicit YAML tags"),
        ("dup.json", '{"max_image_size": 1, "max_image_size": 2}', "repeats 'max_image_size' in one object"),
        ("key.yaml", "client_kwargs: [level]\n" + "k" * 200 + ": 1\n", "unknown key '" + "k" * 64 + "'..."),
        ("rule.yaml", "client_kwargs:\n  level: {min: 3, max: 1}\n", "client_kwargs 'level': min is above max"),
        ("kind.yaml", "client_kwargs:\n  level: {type: float}\n", "type must be one of"),
        ("cap.yaml", "max_image_size: 0\n", "max_image_size must be an int >= 1"),
        ("reserved.yaml", "client_kwargs: [render_mode]\n", "the server's to decide"),
        ("list.yaml", "- level\n", "must be a mapping"),
        ("bytes.yaml", "\xff\xfe", "not UTF-8"),
    ],
)
def test_policy_files_are_read_as_hostile_input(tmp_path, name, text, said) -> None:
    path = tmp_path / name
    path.write_bytes(text.encode("latin-1") if name == "bytes.yaml" else text.encode())
    if said is None:
        policy = ClientPolicy.from_file(path)
        rules = policy.rules_for(NUMBERLINE)
        assert set(rules) == {"level", "obs_mode"} or set(rules) == {"level", "image_size"}
        if name == "ok.yaml":
            assert policy.max_image_size == 256 and rules["level"] == Rule("int", 0, 2) and rules["obs_mode"].choices == ("text",)
            assert ClientPolicy.from_file(path, max_image_size=512).max_image_size == 512  # the command line wins
        return
    with pytest.raises(PolicyError) as caught:
        ClientPolicy.from_file(path)
    assert said in str(caught.value) and SECRET[1:] not in str(caught.value), str(caught.value)


def test_serve_s_flags_give_verdicts_not_tracebacks(tmp_path) -> None:
    bad = tmp_path / "policy.yaml"
    bad.write_text("client_kwargs:\n  level: {min: 3, max: 1}\n")
    runner = CliRunner()
    for args, said in [
        (["--policy", str(bad)], "min is above max"),
        (["--policy", str(tmp_path / "missing.yaml")], "cannot be read"),
        (["--client-kwargs", "level,no such"], "not a keyword name"),
        (["--client-kwargs", "level", "--policy", str(bad)], "either --client-kwargs or --policy"),
        (["--max-image-size", "0"], "max-image-size"),
    ]:
        # a target no server can serve: a flag let through by mistake ends in another verdict, never a running server
        result = runner.invoke(cli_app, ["serve", "no-such-env-or-suite", *args])
        assert result.exit_code == 2 and said in result.output and "Traceback" not in result.output, (args, result.output)


def test_state_schema_is_vlmstate_s_and_extras_not_computed_are_absent() -> None:
    schema = VLMState.model_json_schema()
    assert {"facts", "served_id", "make_kwargs", "instruction_prompt", "oracle_action"} <= set(schema["properties"])
    dumped = VLMState(episode_id="e", step_count=2, extras=["rules"], optimal_steps=3.0).model_dump()
    assert dumped == {"episode_id": "e", "step_count": 2, "env_id": None, "extras": ["rules"], "optimal_steps": 3.0}
    served = ServedEnv(Catalog.of(NUMBERLINE))
    served.reset(seed=0)
    state = served.state.model_dump()
    assert state["served_id"] == NUMBERLINE and "instruction_prompt" in state and "oracle_action" not in state
    served.close()
    for closed in (lambda: served.reset(seed=0), lambda: served.state):  # a reaped session says so, also to a state read
        with pytest.raises(RuntimeError, match=f"^{SESSION_CLOSED}this session is closed"):
            closed()


def test_a_real_server_refuses_with_an_error_and_the_session_goes_on() -> None:
    """Over uvicorn and a WebSocket: the refusals reach the client as OpenEnv's error shape, short, and the
    session plays on."""
    websockets = pytest.importorskip("websockets.sync.client")
    import serving

    with serving.served_here(Catalog.of(NUMBERLINE, policy=ClientPolicy(max_image_size=96))) as url:
        with websockets.connect(url.replace("http", "ws") + "/ws", max_size=None) as ws:

            def send(message: dict) -> dict:
                ws.send(json.dumps(message))
                return json.loads(ws.recv(timeout=30))

            got = send({"type": "reset", "data": {"seed": 0, "make_kwargs": {"image_size": 97}}})
            assert got["type"] == "error" and "--max-image-size 96" in got["data"]["message"], got
            got = send({"type": "reset", "data": {"seed": 0, "make_kwargs": {"data_dir": "/"}}})
            assert "'data_dir' is not allowed on this server" in got["data"]["message"], got
            raw = json.dumps({"type": "step", "data": {"text": "a" * (MAX_ACTION_CHARS + 1)}})
            ws.send(raw)
            answer = ws.recv(timeout=30)
            assert json.loads(answer)["data"]["code"] == "VALIDATION_ERROR" and len(answer) < 2000, answer[:300]
            got = send({"type": "reset", "data": {"seed": 0, "make_kwargs": {"image_size": 96}}})
            assert got["type"] == "observation" and got["data"]["observation"]["image"]["shape"] == [96, 96, 3], got


@pytest.mark.slow  # an interpreter that imports the server (~3 s): the full run checks the flags reach serve()
def test_rl4vlm_gym_serve_applies_its_policy_token_and_stateless_flags(tmp_path) -> None:
    import sys
    import urllib.error
    import urllib.request

    import serving

    websockets = pytest.importorskip("websockets.sync.client")
    policy = tmp_path / "policy.yaml"
    policy.write_text("max_image_size: 96\nclient_kwargs:\n  level: {min: 0, max: 1}\n  image_size: {}\n")
    command = [sys.executable, "-m", "rl4vlm_gym.cli", "serve", NUMBERLINE, "--port", "0", "--policy", str(policy)]
    with serving.served([*command, "--token", "t0ken", "--no-stateless", "--first-message-timeout", "5"]) as url:
        auth = {"Authorization": "Bearer t0ken"}
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(url + "/metadata"), timeout=30)
        refused.value.close()  # the error holds the response (a socket) open
        assert refused.value.code == 403  # --token
        with pytest.raises(urllib.error.HTTPError) as off:
            urllib.request.urlopen(urllib.request.Request(url + "/reset", data=b"{}", headers=auth), timeout=30)
        off.value.close()
        assert off.value.code == 404  # --no-stateless
        with websockets.connect(url.replace("http", "ws") + "/ws", additional_headers=auth) as ws:
            for make_kwargs, said in [
                ({"image_size": 97}, "--max-image-size 96"),
                ({"level": 2}, "'level' must be an int in 0..1"),
                ({"obs_mode": "text"}, "'obs_mode' is not allowed on this server (policy file policy.yaml)"),
            ]:
                ws.send(json.dumps({"type": "reset", "data": {"seed": 0, "make_kwargs": make_kwargs}}))
                got = json.loads(ws.recv(timeout=30))
                assert got["type"] == "error" and said in got["data"]["message"], got
            ws.send(json.dumps({"type": "reset", "data": {"seed": 0, "make_kwargs": {"image_size": 96, "level": 1}}}))
            got = json.loads(ws.recv(timeout=30))
            assert (
                got["data"]["observation"]["image"]["shape"] == [96, 96, 3] and got["data"]["observation"]["info"]["level"] == 1
            )
