"""The server's transport (rl4vlm_gym/server/app.py's ``_Transport``) against hostile and careless clients,
in-process (Starlette's TestClient: the real app and openenv-core's routes, no port): malformed messages,
silent sockets, a full server, the bearer token, the stateless routes' cap, slow work off the event loop,
errors that never quote the input, and the abuse log. One slow test plays a real uvicorn server."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("openenv")  # the server extra
import rl4vlm_gym.server  # noqa: E402, F401 - first: openenv-core without Gradio (a raw import costs 4 s of CPU)

# isort: split
from fastapi.testclient import TestClient  # noqa: E402
from starlette.testclient import WebSocketDenialResponse  # noqa: E402
from starlette.websockets import WebSocketDisconnect  # noqa: E402

from rl4vlm_gym.server.app import MAX_JSON_DEPTH, TOKEN_ENV, _loopback, create_app, json_depth, parse_message  # noqa: E402
from rl4vlm_gym.server.environment import Catalog  # noqa: E402
from rl4vlm_gym.server.models import MAX_ACTION_CHARS  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import server_envs  # noqa: E402

ENV = "rl4vlm/NumberLine-v0"
RESET = {"type": "reset", "data": {"seed": 0, "make_kwargs": {"image_size": [64, 64]}}}
STEP = {"type": "step", "data": {"text": "+"}}
LOGGER = "rl4vlm_gym.server.app"


pytestmark = pytest.mark.usefixtures("server_test_envs")  # servertest/... ids (conftest.py)


def _client(target: str | Catalog = ENV, **kwargs) -> TestClient:
    catalog = target if isinstance(target, Catalog) else Catalog.of(target)
    return TestClient(create_app(catalog, **kwargs))


def _send(ws, message) -> dict:
    ws.send_text(message if isinstance(message, str) else json.dumps(message))
    return json.loads(ws.receive_text())


def _refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno == logging.WARNING]


# -- malformed messages: an error answer, and the session goes on ---------------------------------------

MALFORMED = {
    "array": ("[1, 2, 3]", "not a JSON array"),
    "string": ('"reset"', "not a JSON string"),
    "4301-digit integer": ("9" * 4301, "digits"),
    "100k-deep nesting": ("[" * 100_000 + "]" * 100_000, f"nested deeper than {MAX_JSON_DEPTH}"),
    "not JSON": ("{reset", "Invalid JSON"),
    "binary frame, not UTF-8": (b"\xff\xfe", "Invalid JSON"),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_a_malformed_message_is_answered_and_the_session_goes_on(name: str, caplog: pytest.LogCaptureFixture) -> None:
    raw, says = MALFORMED[name]
    with _client() as client, client.websocket_connect("/ws") as ws:
        assert _send(ws, RESET)["type"] == "observation"
        caplog.clear()
        with caplog.at_level(logging.WARNING, LOGGER):
            if isinstance(raw, bytes):
                ws.send_bytes(raw)
                got = json.loads(ws.receive_text())
            else:
                got = _send(ws, raw)
        assert got == {"type": "error", "data": {"code": "INVALID_JSON", "message": got["data"]["message"]}}, got
        assert says in got["data"]["message"] and len(got["data"]["message"]) < 200  # named, not echoed
        (logged,) = _refusals(caplog)  # once, with the address, without the input
        assert "testclient" in logged and says in logged and "9999" not in logged and "[[[" not in logged
        assert _send(ws, STEP)["type"] == "observation"  # the same session plays on
        assert _send(ws, {"type": "state"})["data"]["step_count"] == 1


def test_a_malformed_first_message_starts_no_session_and_a_valid_one_does() -> None:
    with _client(max_sessions=1) as client, client.websocket_connect("/ws") as ws:
        assert _send(ws, "[]")["data"]["code"] == "INVALID_JSON"
        assert client.app.state.openenv_server.active_sessions == 0
        assert _send(ws, RESET)["type"] == "observation"
        assert client.app.state.openenv_server.active_sessions == 1


def test_nesting_is_measured_before_parsing_at_the_bound() -> None:
    for depth, ok in ((MAX_JSON_DEPTH - 1, True), (MAX_JSON_DEPTH, True), (MAX_JSON_DEPTH + 1, False)):
        text = '{"type": "step", "data": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"
        assert json_depth(text) == depth
        assert (parse_message(text)[0] is not None) is ok, depth
    # brackets inside strings, escaped quotes included, are text, not nesting
    quoted = json.dumps({"type": "step", "data": {"text": '"[' * 500 + "{" * 500}})
    assert json_depth(quoted) == 2 and parse_message(quoted)[0] is not None
    assert (
        parse_message("9" * 4300)[1] == 'Invalid JSON: a message is a JSON object {"type": ..., "data": ...}, not a JSON number'
    )
    assert "digits" in parse_message("9" * 4301)[1]


def test_validation_errors_name_the_field_and_never_echo_the_input() -> None:
    long_action = "x" * (MAX_ACTION_CHARS + 1)
    with _client() as client:
        with client.websocket_connect("/ws") as ws:
            _send(ws, RESET)
            got = _send(ws, {"type": "step", "data": {"text": long_action}})
            assert got["data"]["code"] == "VALIDATION_ERROR" and "xxxxxxxx" not in json.dumps(got)
            assert got["data"]["errors"][0]["loc"] and got["data"]["errors"][0]["msg"]
            got = _send(ws, {"type": "reset", "data": "x" * 100_000})  # openenv-core's message model quotes its input
            assert got["data"]["code"] == "VALIDATION_ERROR" and "xxxxxxxx" not in json.dumps(got), str(got)[:300]
            assert got["data"]["errors"][0]["loc"] == ["data"] and len(json.dumps(got)) < 2000
            assert _send(ws, STEP)["type"] == "observation"
        answer = client.post("/step", json={"action": {"text": long_action}})
        assert answer.status_code == 422 and "xxxxxxxx" not in answer.text and len(answer.text) < 2000
        answer = client.post("/reset", json={"seed": "x" * 100_000})
        assert answer.status_code == 422 and "xxxxxxxx" not in answer.text


# -- sessions: counted from the first message, silent sockets closed, a full server says so -------------


def test_silent_sockets_do_not_take_sessions() -> None:
    with _client(max_sessions=2) as client:
        with client.websocket_connect("/ws"), client.websocket_connect("/ws"), client.websocket_connect("/ws"):
            with client.websocket_connect("/ws") as a, client.websocket_connect("/ws") as b:
                assert _send(a, RESET)["type"] == "observation" and _send(b, RESET)["type"] == "observation"
                assert client.app.state.openenv_server.active_sessions == 2


def test_a_socket_silent_past_the_first_message_timeout_is_closed(caplog: pytest.LogCaptureFixture) -> None:
    with _client(first_message_timeout=0.2) as client, caplog.at_level(logging.WARNING, LOGGER):
        with client.websocket_connect("/ws") as ws:
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
        assert closed.value.code == 1008 and closed.value.reason == "no message within 0.2 s of connecting"
        with client.websocket_connect("/ws") as ws:  # a client that talks at once is served
            assert _send(ws, RESET)["type"] == "observation"
    assert any("no message within 0.2 s" in m for m in _refusals(caplog))
    with pytest.raises(ValueError, match="first_message_timeout"):
        create_app(Catalog.of(ENV), first_message_timeout=0)


def test_a_full_server_answers_capacity_reached_and_closes_1013(caplog: pytest.LogCaptureFixture) -> None:
    with _client(max_sessions=1) as client, client.websocket_connect("/ws") as a:
        _send(a, RESET)
        with caplog.at_level(logging.WARNING, LOGGER), client.websocket_connect("/ws") as b:
            got = _send(b, RESET)
            assert got["data"]["code"] == "CAPACITY_REACHED" and (
                got["data"]["active_sessions"],
                got["data"]["max_sessions"],
            ) == (1, 1)
            with pytest.raises(WebSocketDisconnect) as closed:
                b.receive_text()
            assert (closed.value.code, closed.value.reason) == (1013, "server at capacity")
        assert sum("at capacity" in m for m in _refusals(caplog)) == 1
        assert _send(a, STEP)["type"] == "observation"


# -- the bearer token --------------------------------------------------------------------------------


def test_a_token_guards_every_route_but_health(caplog: pytest.LogCaptureFixture) -> None:
    good = {"Authorization": "Bearer s3cret"}
    with _client(token="s3cret") as client, caplog.at_level(logging.WARNING, LOGGER):
        assert client.get("/health").status_code == 200
        for headers in (
            {},
            {"Authorization": "Bearer wrong"},
            {"Authorization": "Basic s3cret"},
            {"Authorization": "Bearer s3cre"},
        ):
            for answer in (client.get("/metadata", headers=headers), client.post("/reset", json={}, headers=headers)):
                assert answer.status_code == 403 and "Authorization: Bearer" in answer.json()["detail"], headers
                assert "s3cret" not in answer.text
            with pytest.raises(WebSocketDenialResponse) as denied, client.websocket_connect("/ws", headers=headers):
                pass
            assert denied.value.status_code == 403 and "Authorization: Bearer" in denied.value.json()["detail"]
        assert len([m for m in _refusals(caplog) if "bearer token" in m]) == 12
        assert all("s3cret" not in m for m in _refusals(caplog))
        assert client.get("/metadata", headers=good).status_code == 200
        assert client.post("/reset", json={"seed": 1}, headers=good).status_code == 200
        assert client.get("/metadata", headers={"authorization": "bearer s3cret"}).status_code == 200  # the scheme's case
        with client.websocket_connect("/ws", headers=good) as ws:
            assert _send(ws, RESET)["type"] == "observation"


def test_loopback_hosts() -> None:
    assert all(_loopback(h) for h in ("127.0.0.1", "127.3.2.1", "::1", "[::1]", "localhost"))
    assert not any(_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.1", "example.org", "192.168.1.2"))


# -- the stateless routes: bounded, or off, their envs closed off the event loop --------------------------


def test_stateless_routes_can_be_turned_off() -> None:
    with _client(stateless=False) as client:
        for answer in (
            client.post("/reset", json={}),
            client.post("/step", json={"action": {"text": "+"}}),
            client.get("/state"),
        ):
            assert answer.status_code == 404 and "stateless HTTP routes are off" in answer.json()["detail"]
        with client.websocket_connect("/ws") as ws:
            assert _send(ws, RESET)["type"] == "observation"


def _gated(request) -> tuple[threading.Thread, list]:
    """Run ``request()`` in a thread until it reaches the gate (STEPPING), the gate closed meanwhile."""
    server_envs.STEPPING.clear(), server_envs.OPEN.clear()
    answers: list = []
    thread = threading.Thread(target=lambda: answers.append(request()), daemon=True)
    thread.start()
    assert server_envs.STEPPING.wait(30)
    return thread, answers


def test_stateless_requests_are_capped_and_the_slot_is_freed() -> None:
    catalog = server_envs.catalog(server_envs.GATED_ID, server_envs.SLOW_ID)
    with _client(catalog, stateless_limit=1) as client:
        timer = threading.Timer(60, server_envs.OPEN.set)  # a server that queues instead of refusing fails, not hangs
        thread, answers = _gated(
            lambda: client.post("/step", json={"action": {"text": "+"}, "seed": 0, "env_id": server_envs.GATED_ID})
        )
        timer.start()
        try:
            busy = client.post("/reset", json={"seed": 0, "env_id": server_envs.SLOW_ID})
            assert busy.status_code == 503 and "1 stateless requests already running" in busy.json()["detail"]
            assert busy.headers["retry-after"] == "1"
            assert not server_envs.OPEN.is_set()
        finally:
            server_envs.OPEN.set()
            timer.cancel()
        thread.join(30)
        assert answers[0].status_code == 200
        assert client.post("/reset", json={"seed": 0, "env_id": server_envs.SLOW_ID}).status_code == 200  # the slot is free
    with pytest.raises(ValueError, match="stateless_limit"):
        create_app(Catalog.of(ENV), stateless_limit=0)


def test_a_slow_close_runs_off_the_event_loop() -> None:
    # openenv-core closes a stateless request's env on its event loop (WebShop's browser: /health stalled 1.35 s)
    with _client(server_envs.catalog(server_envs.GATED_CLOSE_ID), stateless_limit=1) as client:
        timer = threading.Timer(60, server_envs.OPEN.set)  # a server closing on its loop fails, not hangs
        thread, answers = _gated(lambda: client.post("/reset", json={"seed": 0}))
        timer.start()
        try:
            start = time.perf_counter()
            assert client.get("/health").status_code == 200
            assert time.perf_counter() - start < 0.2 and not server_envs.OPEN.is_set()
            assert client.post("/reset", json={"seed": 0}).status_code == 503  # the slot is held until the env is closed
        finally:
            server_envs.OPEN.set()
            timer.cancel()
        thread.join(30)
        assert answers[0].status_code == 200


def test_a_slow_state_runs_off_the_event_loop() -> None:
    # The first state read after a step (never read before, not asked with the step) computes describe() and the
    # rules: openenv-core reads it on its event loop; the transport in the session's thread.
    with _client(server_envs.catalog(server_envs.GATED_DESCRIBE_ID)) as client, client.websocket_connect("/ws") as ws:
        _send(ws, RESET), _send(ws, STEP)
        timer = threading.Timer(60, server_envs.OPEN.set)
        thread, answers = _gated(lambda: _send(ws, {"type": "state"}))
        timer.start()
        try:
            start = time.perf_counter()
            assert client.get("/health").status_code == 200
            assert time.perf_counter() - start < 0.2 and not server_envs.OPEN.is_set()
        finally:
            server_envs.OPEN.set()
            timer.cancel()
        thread.join(30)
        assert answers[0]["type"] == "state" and answers[0]["data"]["elapsed_steps"] == 1
        assert _send(ws, {"type": "state", "extra": 1})["data"]["code"] == "VALIDATION_ERROR"  # as openenv-core's


# -- a real server ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_real_server_with_a_token_from_the_environment() -> None:
    """``serve`` on a non-loopback bind: the warning without a token; with RL4VLM_GYM_SERVER_TOKEN set, no warning,
    and a real websockets client meets the contract (403 handshake, CAPACITY_REACHED then 1013, INVALID_JSON)."""
    from serving import served
    from websockets.exceptions import ConnectionClosedError, InvalidStatus
    from websockets.sync.client import connect

    code = "from rl4vlm_gym.server.app import serve; serve('rl4vlm/NumberLine-v0', host='0.0.0.0', port=0, max_sessions=1)"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "without a token" in proc.stderr.readline()
    finally:
        proc.kill(), proc.wait()
        proc.stdout.close(), proc.stderr.close()
    with_token = f"import os; os.environ[{TOKEN_ENV!r}] = 't0ken'; " + code.replace("0.0.0.0", "127.0.0.1")
    with served([sys.executable, "-c", with_token]) as url:
        ws_url = url.replace("http", "ws") + "/ws"
        with pytest.raises(InvalidStatus) as denied:
            connect(ws_url)
        assert denied.value.response.status_code == 403
        auth = {"Authorization": "Bearer t0ken"}
        with connect(ws_url, additional_headers=auth) as a, connect(ws_url, additional_headers=auth) as b:
            assert _send_real(a, "[" * 100_000)["data"]["code"] == "INVALID_JSON"
            assert _send_real(a, RESET)["type"] == "observation"
            assert _send_real(b, RESET)["data"]["code"] == "CAPACITY_REACHED"
            with pytest.raises(ConnectionClosedError) as closed:
                b.recv(timeout=30)
            assert closed.value.rcvd.code == 1013


def _send_real(ws, message) -> dict:
    ws.send(message if isinstance(message, str) else json.dumps(message))
    return json.loads(ws.recv(timeout=30))


# -- what the app serves -----------------------------------------------------------------------------


def test_schema_names_our_state() -> None:
    with _client() as client:
        schema = client.get("/schema").json()
    assert {"facts", "served_id", "description"} <= set(schema["state"]["properties"])
    assert "text" in schema["action"]["properties"] and "image" in schema["observation"]["properties"]


def _counting() -> tuple[type, list]:
    """A ServedEnv class that lists every instance made (``environment=`` of create_app), and that list."""
    from rl4vlm_gym.server.environment import ServedEnv

    made: list[ServedEnv] = []

    class Counted(ServedEnv):
        def __init__(self, catalog: Catalog) -> None:
            super().__init__(catalog)
            made.append(self)

    return Counted, made


def _all_closed(envs: list, seconds: float = 10) -> bool:
    """Whether every env of ``envs`` is closed within ``seconds`` (closes run in worker threads, after answers)."""
    deadline = time.monotonic() + seconds
    while not all(env._closed for env in envs) and time.monotonic() < deadline:
        time.sleep(0.01)
    return all(env._closed for env in envs)


def test_sessions_and_stateless_requests_play_the_given_environment_class() -> None:
    counted, made = _counting()

    with _client(environment=counted) as client:
        before = len(made)  # openenv-core makes one to look at when the app is made
        with client.websocket_connect("/ws") as ws:
            assert _send(ws, RESET)["type"] == "observation" and len(made) == before + 1
            ws.send_text(json.dumps({"type": "close"}))
            assert _all_closed(made[-1:])
        assert client.post("/reset", json={"seed": 0}).status_code == 200 and len(made) == before + 2
        assert _all_closed(made[-1:])  # in a worker thread


def test_other_websocket_paths_get_the_token_check_only() -> None:
    # /mcp speaks JSON-RPC (a batch is a JSON array): the OpenEnv message guard is /ws's alone
    from starlette.websockets import WebSocket

    app = create_app(Catalog.of(ENV), token="s3cret")

    async def echo(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_text(await websocket.receive_text())
        await websocket.close()

    app.router.add_websocket_route("/echo", echo)
    with TestClient(app) as client:
        with client.websocket_connect("/echo", headers={"Authorization": "Bearer s3cret"}) as ws:
            ws.send_text("[1, 2]")
            assert ws.receive_text() == "[1, 2]"
        with pytest.raises(WebSocketDenialResponse), client.websocket_connect("/echo"):
            pass


def test_a_session_whose_handler_is_cancelled_still_closes_its_env() -> None:
    # Leaving the TestClient's socket context cancels openenv-core's handler, at times between taking the session
    # out of the table and closing its env (as a server's shutdown cancels handlers): 2-3 of 10 envs stayed open.
    counted, made = _counting()
    with _client(environment=counted) as client:
        before = len(made)
        for _ in range(10):
            with client.websocket_connect("/ws") as ws:
                _send(ws, RESET)
        assert len(made) == before + 10 and _all_closed(made[before:])
