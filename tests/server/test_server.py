"""The OpenEnv server in-process (Starlette's TestClient: real app, real openenv-core routes, no port):
the protocol, the observation and info, sessions, and hostile input."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import sys
import threading
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from PIL import Image

pytest.importorskip("openenv")  # the server extra
import rl4vlm_gym.server  # noqa: E402, F401 - first: openenv-core without Gradio (a raw import costs 4 s of CPU)

# isort: split
from fastapi.testclient import TestClient  # noqa: E402
from starlette.websockets import WebSocketDisconnect  # noqa: E402

from rl4vlm_gym.server.app import MAX_BODY_BYTES, MAX_WS_MESSAGE_BYTES, create_app  # noqa: E402
from rl4vlm_gym.server.environment import Catalog  # noqa: E402
from rl4vlm_gym.server.models import MAX_ACTION_CHARS, ReceivedFrames, SentFrames, _Recent, decode_image, png_bytes  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import server_envs  # noqa: E402

ENV = "rl4vlm/NumberLine-v0"
SMALL = {"image_size": [72, 64]}


pytestmark = pytest.mark.usefixtures("server_test_envs")  # servertest/... ids (conftest.py)


def _client(target: str | Catalog = ENV, **kwargs) -> TestClient:
    expose = kwargs.pop("expose_oracle", False)
    catalog = target if isinstance(target, Catalog) else Catalog.of(target, expose_oracle=expose)
    return TestClient(create_app(catalog, **kwargs))


def _send(ws, message) -> dict:
    """One message and its answer, over Starlette's test socket or a real one (websockets)."""
    text = message if isinstance(message, str) else json.dumps(message)
    if hasattr(ws, "send_text"):
        ws.send_text(text)
        return json.loads(ws.receive_text())
    ws.send(text)
    return json.loads(ws.recv(timeout=30))


def _reset(ws, **data) -> dict:
    return _send(ws, {"type": "reset", "data": {"make_kwargs": SMALL, **data}})


def _step(ws, text) -> dict:
    return _send(ws, {"type": "step", "data": {"text": text}})


def test_a_websocket_episode_is_the_local_env_s() -> None:
    local = gym.make(ENV, image_size=(72, 64))
    obs, info = local.reset(seed=4)
    with _client() as client, client.websocket_connect("/ws") as ws:
        for image_format in ("png", "raw"):
            got = _reset(ws, seed=4, image_format=image_format)
            assert got["type"] == "observation", got
            remote = got["data"]["observation"]
            assert remote["image"]["format"] == image_format and remote["image"]["shape"] == [72, 64, 3]
            assert np.array_equal(decode_image(remote["image"]), obs["image"])
            assert (remote["text"], remote["mission"], tuple(remote["actions"])) == (obs["text"], obs["mission"], obs["actions"])
            assert remote["info"] == info and got["data"]["done"] is False
        for text in ("<action>+</action>", "nonsense", "-"):
            obs, reward, terminated, truncated, info = local.step(text)
            got = _step(ws, text)
            remote = got["data"]["observation"]
            assert np.array_equal(decode_image(remote["image"]), obs["image"])
            assert remote["text"] == obs["text"] and remote["info"] == info
            assert got["data"]["reward"] == reward and (remote["terminated"], remote["truncated"]) == (terminated, truncated)
            assert set(remote["info"]) >= {"success", "progress", "state_key", "optimal_steps", "action"}
        assert remote["info"]["action"]["raw"] == "-"
        state = _send(ws, {"type": "state"})["data"]
        assert state["env_id"] == ENV and state["step_count"] == 3 and "oracle_action" not in state
    local.close()


def test_a_black_frame_travels_as_its_shape_and_decodes_to_the_local_env_s() -> None:
    local = gym.make(ENV, image_size=(72, 64), obs_mode="text")
    obs, _ = local.reset(seed=4)
    assert obs["image"].shape == (72, 64, 3) and not obs["image"].any()  # text mode: a black frame
    with _client() as client, client.websocket_connect("/ws") as ws:
        for image_format in ("png", "raw"):
            got = _send(
                ws,
                {
                    "type": "reset",
                    "data": {"make_kwargs": {**SMALL, "obs_mode": "text"}, "seed": 4, "image_format": image_format},
                },
            )
            image = got["data"]["observation"]["image"]
            assert image == {"format": "black", "shape": [72, 64, 3], "data": ""}
            decoded = decode_image(image)
            assert decoded.dtype == np.uint8 and np.array_equal(decoded, obs["image"])
    local.close()
    with pytest.raises(ValueError, match="carries no data"):
        decode_image({"format": "black", "shape": [72, 64, 3], "data": "AAAA"})
    with pytest.raises(ValueError, match="bad image shape"):
        decode_image({"format": "black", "shape": [1 << 20, 1 << 20, 3], "data": ""})


def _png_message(payload: bytes, shape: tuple[int, ...]) -> dict:
    return {"format": "png", "shape": list(shape), "data": base64.b64encode(payload).decode("ascii")}


def test_png_frames_are_standard_pngs_and_any_png_decodes_as_pillow_reads_it() -> None:
    """The server's PNG (unfiltered rows, read back without Pillow) is one Pillow reads as the same pixels;
    another encoder's PNG, its rows filtered (Pillow's, of a gradient), decodes through Pillow as before;
    corrupt data and a size other than the announced one are refused, never decoded to other pixels."""
    rng = np.random.default_rng(0)
    noisy = rng.integers(0, 256, (9, 7, 3), dtype=np.uint8)
    gradient = np.add.outer(np.arange(30), np.arange(20))[..., None].repeat(3, axis=2).astype(np.uint8) * 4
    for image in (noisy, gradient):
        ours = png_bytes(image)
        with Image.open(io.BytesIO(ours)) as png:
            assert np.array_equal(np.asarray(png), image)
        decoded = decode_image(_png_message(ours, image.shape))
        assert np.array_equal(decoded, image) and decoded.flags.writeable
        buffer = io.BytesIO()
        Image.fromarray(image).save(buffer, format="PNG", compress_level=1)  # adaptive filters: rows Sub, Up...
        assert np.array_equal(decode_image(_png_message(buffer.getvalue(), image.shape)), image)
    corrupt = bytearray(png_bytes(noisy))
    corrupt[corrupt.index(b"IDAT") + 40] ^= 1  # a bit inside the zlib stream (its CRC then fails too)
    with pytest.raises(OSError):
        decode_image(_png_message(bytes(corrupt), noisy.shape))
    with pytest.raises(ValueError, match="PNG is 7x9, not the announced 9x7"):
        decode_image(_png_message(png_bytes(noisy), (7, 9, 3)))


def test_frames_sent_and_received_lately_are_reused_only_when_byte_for_byte_the_same() -> None:
    """A session's server encodes a frame it sent lately once, and its client decodes a payload once: a frame that
    differs in one byte, in a row the lookup's hash skips, is encoded anew; a decoded frame comes back as a new
    writable array each time (writing to one leaves the next as sent); both forget the oldest past their bound."""
    image = np.random.default_rng(1).integers(0, 256, (16, 8, 3), dtype=np.uint8)
    other = image.copy()
    other[1, 0, 0] ^= 1  # row 1: not among the rows hashed (every eighth)
    sent = SentFrames(max_bytes=3 * (image.nbytes + 600))
    first = sent.encode(image, "png")
    assert sent.encode(image.copy(), "png") is first  # kept
    changed = sent.encode(other, "png")
    assert changed is not first and np.array_equal(decode_image(changed), other)
    assert sent.encode(image, "raw").format == "raw"  # raw frames cost no encoding: not kept
    received = ReceivedFrames(max_bytes=2 * image.nbytes + 2000)
    for frame in (first, changed):
        one = received.decode(frame.model_dump())
        one[:] = 0
        two = received.decode(frame)
        assert two is not one and two.flags.writeable and np.array_equal(two, decode_image(frame))
    rng = np.random.default_rng(2)
    for _ in range(4):  # more frames than the bounds hold: the oldest go
        last = rng.integers(0, 256, (16, 8, 3), dtype=np.uint8)
        kept = sent.encode(last, "png")
        received.decode(kept)
    assert sent.encode(last, "png") is kept and 0 < sent._recent.held <= sent._recent.max_bytes
    assert 0 < received._recent.held <= received._recent.max_bytes and len(received._recent.items) == 2
    assert sent.encode(image, "png") is not first  # forgotten: encoded anew


def test_a_session_whose_frames_seldom_repeat_stops_keeping_them() -> None:
    """From its 32nd miss on, a frame memory hit less than an eighth of the time is emptied and stays off (a 3-D view
    would else hold 4 MiB per session for nothing); below 32 misses, or hit an eighth of the time, it keeps on."""

    def memory(hits: int, misses: int) -> _Recent:
        recent = _Recent(1 << 20)
        for _ in range(hits):
            recent.hit()
        for n in range(misses):
            recent.put(n, None, n, 10)
        return recent

    assert not memory(0, 31).off and memory(0, 31).held == 310
    assert memory(0, 32).off and memory(0, 32).held == 0 and not memory(0, 32).items
    assert not memory(4, 32).off and memory(4, 33).off and memory(3, 32).off
    sent, rng = SentFrames(), np.random.default_rng(3)
    frames = [rng.integers(0, 256, (8, 8, 3), dtype=np.uint8) for _ in range(33)]
    for frame in frames:  # none repeats
        sent.encode(frame, "png")
    assert sent._recent.off and not sent._recent.items
    assert sent.encode(frames[-1], "png") is not sent.encode(frames[-1], "png")  # off: encoded each time, correctly
    assert np.array_equal(decode_image(sent.encode(frames[-1], "png")), frames[-1])


def test_reset_options_level_and_make_kwargs_reach_the_env() -> None:
    with _client(expose_oracle=True) as client, client.websocket_connect("/ws") as ws:
        got = _reset(ws, seed=1, options={"level": 1}, make_kwargs={"image_size": [64, 80], "obs_mode": "text"})
        assert got["data"]["observation"]["info"]["level"] == 1
        assert got["data"]["observation"]["image"]["shape"] == [64, 80, 3]
        state = _send(ws, {"type": "state"})["data"]
        assert state["make_kwargs"] == {"image_size": [64, 80], "obs_mode": "text"} and state["oracle_action"] in ("+", "-")


def test_state_extras_asked_with_a_reset_or_step_come_with_its_observation_and_only_those() -> None:
    with _client(expose_oracle=True) as client, client.websocket_connect("/ws") as ws:
        got = _reset(ws, seed=0)
        assert got["data"]["observation"]["state"] is None  # not asked: not sent
        got = _reset(ws, seed=0, state_extras=["rules"])["data"]["observation"]["state"]
        assert got["extras"] == ["rules"] and got["description"] and got["facts"]["name"] == "NumberLine"
        assert not {"oracle_action", "optimal_steps", "fresh_frame_sha256"} & set(got), sorted(got)  # not computed unasked
        step = {"type": "step", "data": {"text": got["admissible"][0], "metadata": {"state_extras": ["oracle", "frame"]}}}
        got = _send(ws, step)["data"]["observation"]["state"]
        assert got["extras"] == ["oracle", "frame"] and got["step_count"] == 1 and "facts" not in got, sorted(got)
        assert got["oracle_action"] in ("+", "-") and len(got["fresh_frame_sha256"]) == 64
        full = _send(ws, {"type": "state"})["data"]  # every group: the rules computed now, the others as they were
        assert (
            full["extras"] == ["rules", "oracle", "frame"]
            and full["elapsed_steps"] == 1
            and full["facts"]["name"] == "NumberLine"
        )
        assert {k: full[k] for k in got if k != "extras"} == {k: v for k, v in got.items() if k != "extras"}
        assert _step(ws, "+")["data"]["observation"]["state"] is None
        # a state after a step that asked for part of the extras is all of them
        _send(ws, {"type": "step", "data": {"text": "+", "metadata": {"state_extras": []}}})
        assert _send(ws, {"type": "state"})["data"]["extras"] == ["rules", "oracle", "frame"]
        for bad in (["plans"], "rules", [1]):
            got = _send(ws, {"type": "reset", "data": {"seed": 0, "state_extras": bad}})
            assert got["type"] == "error" and "state_extras must be a list of" in got["data"]["message"], got
            got = _send(ws, {"type": "step", "data": {"text": "+", "metadata": {"state_extras": bad}}})
            assert got["type"] == "error" and "state_extras must be a list of" in got["data"]["message"], got


def test_http_is_stateless_and_steps_from_a_reset_when_given_a_seed() -> None:
    with _client() as client:
        assert client.get("/health").json() == {"status": "healthy"}
        assert set(client.get("/schema").json()) == {"action", "observation", "state"}
        reset = client.post("/reset", json={"seed": 2, "make_kwargs": SMALL})
        assert reset.status_code == 200 and reset.json()["observation"]["image"]["shape"] == [72, 64, 3]
        lone = client.post("/step", json={"action": {"text": "+"}})
        assert lone.status_code == 409 and "reset" in lone.json()["detail"]
        step = client.post("/step", json={"action": {"text": "+"}, "seed": 2, "make_kwargs": SMALL})
        assert step.status_code == 200 and step.json()["observation"]["info"]["action"]["parsed"] == "+"


def _plays_like(ws, twin: gym.Env, move: str | None = None, seed: int | None = None) -> None:
    """A reset (``seed``) or a step (``move``) of the session ``ws`` and of its local ``twin``: the same observation
    (image included), reward, ends and info."""
    if move is None:
        obs, info = twin.reset(seed=seed)
        reward, ended = 0.0, (False, False)
        got = _reset(ws, seed=seed)["data"]
    else:
        obs, reward, *ended, info = twin.step(move)
        got = _step(ws, move)["data"]
    remote = got["observation"]
    assert (remote["text"], remote["info"], got["reward"]) == (obs["text"], info, reward), (remote["text"], obs["text"])
    assert [remote["terminated"], remote["truncated"]] == list(ended)
    assert np.array_equal(decode_image(remote["image"]), obs["image"])


def test_each_session_plays_an_env_of_its_own() -> None:
    # Two sessions of one server, interleaved, each step for step its own local twin's (two seeds, two different
    # episodes); a reset of one leaves the other's episode where it was; one closing leaves the other playing.
    # A server whose sessions shared an env fails at the first interleaved step.
    twins = {seed: gym.make(ENV, image_size=(72, 64)) for seed in (4, 5)}
    with _client(max_sessions=2) as client, client.websocket_connect("/ws") as b:
        with client.websocket_connect("/ws") as a:
            sessions = {4: a, 5: b}
            for seed, ws in sessions.items():
                _plays_like(ws, twins[seed], seed=seed)
            assert twins[4].unwrapped.describe() != twins[5].unwrapped.describe()  # two episodes that differ
            for move in ("+", "-", "+"):
                for seed, ws in sessions.items():
                    _plays_like(ws, twins[seed], move)
            _plays_like(a, twins[4], seed=4)
            steps = [_send(ws, {"type": "state"})["data"]["step_count"] for ws in (a, b)]
            assert steps == [0, 3], steps
            _plays_like(b, twins[5], "+")
            _plays_like(a, twins[4], "-")
        _plays_like(b, twins[5], "-")  # a's session closed, with its env
        _plays_like(b, twins[5], seed=5)
    for twin in twins.values():
        twin.close()


@pytest.mark.parametrize(
    ("message", "code", "says"),
    [
        ("{not json", "INVALID_JSON", "Invalid JSON"),
        ({"type": "dance"}, "UNKNOWN_TYPE", "dance"),
        ({"type": "step", "data": {"text": "+", "extra": 1}}, "VALIDATION_ERROR", "Invalid message"),
        ({"type": "step", "data": {"text": "x" * (MAX_ACTION_CHARS + 1)}}, "VALIDATION_ERROR", "Invalid message"),
        ({"type": "reset", "data": {"env_id": "rl4vlm/Nope-v0"}}, "EXECUTION_ERROR", "not served here"),
        ({"type": "reset", "data": {"sed": 3}}, "EXECUTION_ERROR", "sed"),
        ({"type": "reset", "data": {"seed": -1}}, "EXECUTION_ERROR", "seed"),
        ({"type": "reset", "data": {"make_kwargs": {"level": 99}}}, "EXECUTION_ERROR", "level"),
        ({"type": "reset", "data": {"make_kwargs": {"colour": "red"}}}, "EXECUTION_ERROR", "colour"),
        ({"type": "reset", "data": {"make_kwargs": {"render_mode": "human"}}}, "EXECUTION_ERROR", "may not set"),
        ({"type": "reset", "data": {"image_format": "jpeg"}}, "EXECUTION_ERROR", "image_format"),
    ],
)
def test_bad_messages_get_openenv_s_error_shape_and_the_session_goes_on(message, code, says) -> None:
    with _client() as client, client.websocket_connect("/ws") as ws:
        _reset(ws, seed=0)
        got = _send(ws, message)
        assert got["type"] == "error" and got["data"]["code"] == code, got
        assert says in json.dumps(got["data"]) and "Traceback" not in json.dumps(got)
        assert _step(ws, "+")["type"] == "observation"  # the session survived


def test_hostile_actions_are_invalid_actions_not_errors() -> None:
    with _client() as client, client.websocket_connect("/ws") as ws:
        _reset(ws, seed=0)
        for text in ("\ud800 lone surrogate", "x" * MAX_ACTION_CHARS, 12345, None, "\x00" * 64):
            got = _step(ws, text)
            assert got["type"] == "observation", str(got)[:300]
            assert got["data"]["observation"]["info"]["action"]["valid"] is False


def test_step_before_reset_is_an_error() -> None:
    with _client() as client, client.websocket_connect("/ws") as ws:
        got = _step(ws, "+")
        assert got["data"]["code"] == "EXECUTION_ERROR" and "reset" in got["data"]["message"]


def test_oversized_websocket_message_and_http_body_are_refused_before_parsing() -> None:
    with _client() as client:
        big = json.dumps({"type": "step", "data": {"text": "x" * MAX_WS_MESSAGE_BYTES}})
        with client.websocket_connect("/ws") as ws:
            _reset(ws, seed=0)
            # TestClient does not enforce uvicorn's ws_max_size; the served limit is tested over a real socket
            # (test_remote.py); here the action bound answers.
            assert _send(ws, big)["data"]["code"] == "VALIDATION_ERROR"
        body = b'{"action": {"text": "' + b"x" * (MAX_BODY_BYTES + 1) + b'"}}'
        assert client.post("/step", content=body, headers={"content-type": "application/json"}).status_code == 413
        liar = client.post("/step", content=b"{}", headers={"content-type": "application/json", "content-length": "abc"})
        assert liar.status_code in (400, 413)


def test_sessions_are_capped_and_freed() -> None:
    with _client(max_sessions=2) as client:
        with client.websocket_connect("/ws") as a, client.websocket_connect("/ws") as b:
            _reset(a, seed=0), _reset(b, seed=1)
            with client.websocket_connect("/ws") as c:  # a session counts from its first message: refused there
                got = _reset(c, seed=2)
                assert got["data"]["code"] == "CAPACITY_REACHED" and got["data"]["max_sessions"] == 2
                with pytest.raises(WebSocketDisconnect) as closed:
                    c.receive_text()
                assert closed.value.code == 1013 and "capacity" in closed.value.reason
            assert _step(a, "+")["type"] == "observation"  # the others are still served
        with client.websocket_connect("/ws") as d:  # a and b left: room again
            assert _reset(d, seed=0)["type"] == "observation"


def test_a_slow_env_does_not_hold_up_other_sessions() -> None:
    server_envs.STEPPING.clear(), server_envs.OPEN.clear()
    with _client(
        server_envs.catalog(server_envs.SLOW_ID, server_envs.GATED_ID, server_envs.GATED_DESCRIBE_ID), max_sessions=4
    ) as client:
        with client.websocket_connect("/ws") as slow, client.websocket_connect("/ws") as fast:
            _send(slow, {"type": "reset", "data": {"seed": 0, "env_id": server_envs.GATED_ID, "make_kwargs": SMALL}})
            _reset(fast, seed=0, env_id=server_envs.SLOW_ID)
            slow.send_text(json.dumps({"type": "step", "data": {"text": "+"}}))
            assert server_envs.STEPPING.wait(30)  # the slow step is running, and waits until the gate opens
            # a server that serialises sessions fails, not hangs (a correct one serves the 5 steps in ms; the timer,
            # cancelled then, costs nothing)
            timer = threading.Timer(60, server_envs.OPEN.set)
            timer.start()
            try:
                for _ in range(5):
                    assert _step(fast, "+")["type"] == "observation"
                assert not server_envs.OPEN.is_set(), "the fast session was served only once the slow step ended"
            finally:
                server_envs.OPEN.set()
                timer.cancel()
            assert json.loads(slow.receive_text())["type"] == "observation"


def test_a_slow_state_does_not_hold_up_other_sessions() -> None:
    # openenv-core reads state on its event loop: the server computes it in the session's thread after each
    # step instead (once the client reads state), so a slow oracle or render there holds up no one else.
    server_envs.STEPPING.clear(), server_envs.OPEN.clear()
    with _client(
        server_envs.catalog(server_envs.SLOW_ID, server_envs.GATED_ID, server_envs.GATED_DESCRIBE_ID), max_sessions=4
    ) as client:
        with client.websocket_connect("/ws") as slow, client.websocket_connect("/ws") as fast:
            _send(slow, {"type": "reset", "data": {"seed": 0, "env_id": server_envs.GATED_DESCRIBE_ID, "make_kwargs": SMALL}})
            assert _send(slow, {"type": "state"})["type"] == "state"  # the client reads state
            slow.send_text(json.dumps({"type": "step", "data": {"text": "+"}}))
            slow.send_text(json.dumps({"type": "state"}))
            assert server_envs.STEPPING.wait(30)  # the state after the step is being computed
            timer = threading.Timer(60, server_envs.OPEN.set)  # a server computing it on its loop fails, not hangs
            timer.start()
            try:
                _reset(fast, seed=0, env_id=server_envs.SLOW_ID)
                assert _step(fast, "+")["type"] == "observation" and _send(fast, {"type": "state"})["type"] == "state"
                assert not server_envs.OPEN.is_set(), "the other session was served only once the slow state was done"
            finally:
                server_envs.OPEN.set()
                timer.cancel()
            assert json.loads(slow.receive_text())["type"] == "observation"
            state = json.loads(slow.receive_text())
            assert state["type"] == "state" and state["data"]["elapsed_steps"] == 1 and state["data"]["description"]


def _children() -> set[int]:
    """This process's live child processes (from /proc: no psutil needed)."""
    me, found = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me and fields[0] != "Z":
                found.add(int(entry))
    return found


def _sleepers(before: set[int]) -> set[int]:
    """ProcessNumberLine's children started since ``before``."""
    found = set()
    for pid in _children() - before:
        try:
            if "sleep(600)" in Path(f"/proc/{pid}/cmdline").read_text():
                found.add(pid)
        except OSError:
            continue
    return found


@contextlib.contextmanager
def _live(target: str, **kwargs):
    """A real uvicorn server in a thread of this process (serving.served_app): its WebSocket URL and its sessions."""
    from serving import served_app

    app = create_app(Catalog.of(target), **kwargs)
    with served_app(app) as url:
        yield url.replace("http", "ws") + "/ws", app.state.openenv_server


def _wait(condition, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def test_envs_and_their_processes_close_with_their_session_even_when_the_client_vanishes_mid_step() -> None:
    from websockets.sync.client import connect

    before = _children()
    with _live(server_envs.PROC_ID, max_sessions=2) as (url, server):
        with connect(url) as ws:
            _reset(ws, seed=0)
            assert len(_sleepers(before)) == 1  # the env's child is running
        assert _wait(lambda: not server.active_sessions and not _sleepers(before)), "the env's process outlived its session"
    with _live(server_envs.SLOW_ID, max_sessions=1) as (url, server):
        with connect(url) as ws:
            _send(ws, {"type": "reset", "data": {"seed": 0, "make_kwargs": {**SMALL, "delay": 0.5}}})
            ws.send(json.dumps({"type": "step", "data": {"text": "+"}}))
            ws.socket.close()  # vanish mid-step, without a closing handshake
        # the step finishes, the session is closed, its slot is free again
        assert _wait(lambda: not server.active_sessions)
        with connect(url) as again:
            assert _reset(again, seed=0)["type"] == "observation"


def test_a_websocket_message_over_the_limit_closes_its_connection_unparsed() -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    with _live(ENV, max_sessions=2) as (url, server), connect(url, max_size=None) as other:
        _reset(other, seed=0)
        with connect(url, max_size=None) as ws:
            with pytest.raises(ConnectionClosed) as closed:
                ws.send("x" * (MAX_WS_MESSAGE_BYTES + 1))
                ws.recv(timeout=10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
        assert _step(other, "+")["type"] == "observation"


IDLE_TIMEOUT = 0.5


def test_idle_sessions_are_reclaimed_and_sessions_in_use_are_not() -> None:
    # Our reaper looks every 0.1 s (openenv-core's own, where the patch openenv-idle-reaper is refused, every
    # max(timeout / 4, 5) s) for sessions idle over IDLE_TIMEOUT. `busy` steps every 0.05 s from before `idle`'s
    # reset until the reaper has reclaimed `idle`, and for 3 reaper rounds after: busy is then older than the
    # timeout, so a reaper that went by a session's age, not its last message, has reclaimed it too.
    # No wall-clock bound: busy's longest quiet spell is measured (from sending a message to the answer of the next
    # one: the server's spell between the two lies within it), and a round in which it reached the timeout (the
    # machine stalled, busy was idle and may rightly go) is played again.
    with _client(max_sessions=2, idle_timeout=IDLE_TIMEOUT, reap_every=0.1) as client:
        server = client.app.state.openenv_server
        assert "_reap_idle_sessions" in vars(server), "the server's reaper is ours"
        for _ in range(5):
            with client.websocket_connect("/ws") as busy, client.websocket_connect("/ws") as idle:
                sent = time.monotonic()
                _reset(busy, seed=0)
                _reset(idle, seed=0)
                longest, rounds_after, deadline = 0.0, 0, time.monotonic() + 30
                while rounds_after < 6:
                    time.sleep(0.05)
                    if server.active_sessions < 2:  # idle (at least) reclaimed: 6 steps of 0.05 s more
                        rounds_after += 1
                    assert time.monotonic() < deadline, "the idle session was not reclaimed within 30 s"
                    before, sent = sent, time.monotonic()
                    got = _step(busy, "+")
                    longest = max(longest, time.monotonic() - before)
                    if got["type"] != "observation":
                        break
                if got["type"] == "observation":  # busy served to the end: the session reclaimed was idle
                    got = _step(idle, "+")
                    assert got["data"]["code"] == "EXECUTION_ERROR" and "closed" in got["data"]["message"], got
                    return
                assert "closed" in got["data"]["message"], got
                assert longest >= IDLE_TIMEOUT, f"a session in use was reclaimed (its longest quiet spell: under {longest:.2f} s)"
    pytest.fail(f"5 rounds in which the machine stalled for over {IDLE_TIMEOUT} s between two steps")


def test_idle_reaper_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    # Another openenv-core's reaper (a changed fingerprint): reap_every is refused loudly, and the
    # server keeps openenv-core's own reaper (the class's method, nothing set on the instance).
    from openenv.core.env_server.http_server import HTTPEnvServer

    from rl4vlm_gym.patches import PatchRefusedWarning

    async def reap(self):  # noqa: ANN001, ANN202 - an openenv-core whose reaper changed
        return None

    monkeypatch.setattr(HTTPEnvServer, "_reap_idle_sessions", reap)
    with pytest.warns(PatchRefusedWarning, match="refused the patch 'openenv-idle-reaper'"):
        app = create_app(Catalog.of(ENV), idle_timeout=0.5, reap_every=0.1)
    assert "_reap_idle_sessions" not in vars(app.state.openenv_server)
    with pytest.raises(ValueError, match="reap_every must be > 0"):
        create_app(Catalog.of(ENV), reap_every=0)


def _rss_kib() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


@pytest.mark.slow
def test_a_thousand_sessions_opened_and_dropped_leak_nothing() -> None:
    with _client(max_sessions=8) as client:
        server = client.app.state.openenv_server

        def churn(n: int) -> None:
            for i in range(n):
                with client.websocket_connect("/ws") as ws:
                    _reset(ws, seed=i)
                    if i % 2:
                        _step(ws, "+")  # half leave politely after a step, half just vanish
                    else:
                        ws.send_text(json.dumps({"type": "close"}))

        churn(100)  # warm up caches and pools
        time.sleep(0.5)
        rss, threads, children = _rss_kib(), threading.active_count(), _children()
        churn(1000)
        deadline = time.monotonic() + 10
        while server.active_sessions and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.active_sessions == 0
        assert threading.active_count() <= threads + 2, (threads, threading.active_count())
        assert _children() <= children
        grown = _rss_kib() - rss
        assert grown < 20_000, f"RSS grew {grown} KiB over 1,000 sessions"


def test_a_suite_serves_its_tasks_and_ids_and_asks_which() -> None:
    catalog = Catalog.of("smoke")
    env_id, kwargs = catalog.resolve(next(name for name in catalog.entries if "/" not in name))
    assert env_id in catalog.entries and "obs_mode" in kwargs
    with TestClient(create_app(catalog)) as client, client.websocket_connect("/ws") as ws:
        got = _send(ws, {"type": "reset", "data": {"seed": 0}})
        assert got["data"]["code"] == "EXECUTION_ERROR" and "name an env" in got["data"]["message"]
        got = _send(ws, {"type": "reset", "data": {"seed": 0, "env_id": ENV, "make_kwargs": SMALL}})
        assert got["type"] == "observation"
    with pytest.raises(ValueError, match="neither a registered env id nor a suite"):
        Catalog.of("no-such-suite")
