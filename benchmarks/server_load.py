"""Load and fault test of the env server: many honest WebSocket clients while hostile ones push at every edge.

    .venv/bin/python benchmarks/server_load.py [--clients 64] [--seconds 40] [--env rl4vlm/NumberLine-v0]

Loopback only, bounded (about a minute): the server is our app (``create_app`` under uvicorn, as ``rl4vlm-gym
serve`` runs it, with a bearer token and a 3 s first-message timeout) in its own process group, killed at the end.
For ``--seconds``:

- ``--clients`` honest clients (threads, ``websockets``' client) each open a session, reset (seeded), take 20
  random admissible steps, close, and start again: every step's latency is recorded; a refused session
  (``CAPACITY_REACHED``) waits 0.2 s and retries.
- hostile traffic, all at once: 4 clients sending malformed messages (a JSON array, a string, a 4,301-digit
  integer, 100k-deep nesting), each followed by a step that must still be served in the same session;
  oversized WebSocket messages (9 MiB: closed with 1009) and HTTP bodies (413); 16 sockets at a time that
  connect and never send (closed by the server with 1008); clients killed mid-step (a TCP reset right after
  sending the step); a stateless HTTP flood (8 threads of ``POST /reset``: 200, or 503 over the cap); clients
  with a wrong token (403); and clients opening sessions past the cap (``CAPACITY_REACHED``). ``--honest-only``
leaves the hostile traffic out: the latency to compare with.

Printed: sessions served, answers and errors by kind, p50/p95/max step latency of the honest clients, the
server's peak RSS (VmHWM) and, once the clients are gone, that nothing leaked: the server's sessions back to
zero, its threads back to what its pools keep, and no child processes. Exits 1 if something leaked or an
honest client saw an error other than a capacity refusal.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import logging
import os
import random
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

import requests
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from rl4vlm_gym import processes

TOKEN = "load-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SERVER = """
import sys, threading, socket, uvicorn
from rl4vlm_gym.server.app import MAX_WS_MESSAGE_BYTES, create_app
from rl4vlm_gym.server.environment import Catalog
app = create_app(Catalog.of(sys.argv[1]), max_sessions=int(sys.argv[2]), token=sys.argv[3], stateless_limit=8,
                 first_message_timeout=3.0, idle_timeout=60)
@app.get("/_load/stats")
def stats():
    return {"sessions": app.state.openenv_server.active_sessions, "threads": threading.active_count()}
sock = socket.socket(); sock.bind(("127.0.0.1", 0)); sock.listen(2048)
print(f"serving on http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="critical", ws_max_size=MAX_WS_MESSAGE_BYTES,
                              ws_per_message_deflate=False)).run(sockets=[sock])
"""


class Tally:
    """Counts by kind and the honest clients' step latencies, from many threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: collections.Counter[str] = collections.Counter()
        self.latencies: list[float] = []

    def add(self, kind: str, n: int = 1) -> None:
        with self.lock:
            self.counts[kind] += n


def _reset_message(seed: int) -> str:
    return json.dumps({"type": "reset", "data": {"seed": seed, "make_kwargs": {"image_size": [64, 64]}}})


def _step_message(text: str) -> str:
    return json.dumps({"type": "step", "data": {"text": text}})


def honest(url: str, index: int, until: float, tally: Tally) -> None:
    rng = random.Random(index)
    while time.monotonic() < until:
        try:
            with connect(url, additional_headers=AUTH, max_size=None) as ws:
                ws.send(_reset_message(rng.randrange(1 << 30)))
                answer = json.loads(ws.recv(timeout=60))
                if answer["type"] == "error":
                    tally.add(f"honest: {answer['data']['code']}")
                    time.sleep(0.2)
                    continue
                tally.add("honest: sessions served")
                for _ in range(20):
                    actions = answer["data"]["observation"].get("actions") or ["+"]
                    start = time.perf_counter()
                    ws.send(_step_message(rng.choice(actions)))
                    answer = json.loads(ws.recv(timeout=60))
                    elapsed = time.perf_counter() - start
                    if answer["type"] != "observation":
                        tally.add(f"honest: step {answer['data']['code']}")
                        break
                    with tally.lock:
                        tally.latencies.append(elapsed)
                    if answer["data"]["done"]:
                        ws.send(_reset_message(rng.randrange(1 << 30)))
                        answer = json.loads(ws.recv(timeout=60))
        except (ConnectionClosed, OSError, TimeoutError) as err:
            tally.add(f"honest: connection lost ({type(err).__name__})")


MALFORMED = ["[1, 2, 3]", '"reset"', "9" * 4301, "[" * 100_000 + "]" * 100_000]


def malformed(url: str, until: float, tally: Tally) -> None:
    while time.monotonic() < until:
        try:
            with connect(url, additional_headers=AUTH, max_size=None) as ws:
                ws.send(_reset_message(0))
                if json.loads(ws.recv(timeout=60))["type"] != "observation":
                    tally.add("malformed: no session (capacity)")
                    time.sleep(0.2)
                    continue
                for text in MALFORMED:
                    ws.send(text)
                    code = json.loads(ws.recv(timeout=60))["data"].get("code")
                    tally.add(f"malformed: answered {code}")
                    ws.send(_step_message("+"))
                    kind = json.loads(ws.recv(timeout=60))["type"]
                    tally.add("malformed: session went on" if kind == "observation" else f"malformed: then {kind}")
        except (ConnectionClosed, OSError, TimeoutError) as err:
            tally.add(f"malformed: connection lost ({type(err).__name__})")


def oversized(url: str, http: str, until: float, tally: Tally) -> None:
    big = json.dumps({"type": "step", "data": {"text": "x" * (9 << 20)}})
    while time.monotonic() < until:
        try:
            with connect(url, additional_headers=AUTH, max_size=None) as ws:
                ws.send(big)
                ws.recv(timeout=30)
                tally.add("oversized ws: answered (not closed)")
        except ConnectionClosed as err:  # no close frame: the server dropped the connection while the client still sent
            tally.add(f"oversized ws: closed {err.rcvd.code if err.rcvd else 'without a close frame'}")
        except OSError as err:
            tally.add(f"oversized ws: {type(err).__name__}")
        try:
            answer = requests.post(f"{http}/step", data=big, headers={**AUTH, "content-type": "application/json"}, timeout=30)
            tally.add(f"oversized http: {answer.status_code}")
        except requests.RequestException as err:
            tally.add(f"oversized http: {type(err).__name__}")
        time.sleep(1.0)


def silent(url: str, until: float, tally: Tally) -> None:
    """16 sockets at a time that connect and never send; each should be closed by the server (1008)."""
    while time.monotonic() < until:
        with contextlib.ExitStack() as stack:
            sockets = []
            for _ in range(16):
                try:
                    sockets.append(stack.enter_context(connect(url, additional_headers=AUTH)))
                except (InvalidStatus, OSError) as err:
                    tally.add(f"silent: connect {type(err).__name__}")
            for ws in sockets:
                try:
                    ws.recv(timeout=10)
                    tally.add("silent: got a message")
                except ConnectionClosed as err:
                    tally.add(f"silent: closed {err.rcvd.code if err.rcvd else None}")
                except TimeoutError:
                    tally.add("silent: still open after 10 s")


def killed(url: str, until: float, tally: Tally) -> None:
    """Sessions whose client vanishes right after sending a step (a TCP reset, no close handshake)."""
    while time.monotonic() < until:
        try:
            with connect(url, additional_headers=AUTH) as ws:
                ws.send(_reset_message(1))
                if json.loads(ws.recv(timeout=60))["type"] == "observation":
                    ws.send(_step_message("+"))
                    ws.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    ws.socket.close()  # the client's closing handshake, on exit, then fails quietly
                    tally.add("killed mid-step")
                else:
                    tally.add("killed: no session (capacity)")
        except (ConnectionClosed, OSError, TimeoutError) as err:
            tally.add(f"killed: {type(err).__name__}")
        time.sleep(0.1)


def flood(http: str, until: float, tally: Tally) -> None:
    session = requests.Session()
    while time.monotonic() < until:
        try:
            answer = session.post(f"{http}/reset", json={"seed": 3}, headers=AUTH, timeout=60)
            tally.add(f"stateless flood: {answer.status_code}")
        except requests.RequestException as err:
            tally.add(f"stateless flood: {type(err).__name__}")


def bad_token(url: str, http: str, until: float, tally: Tally) -> None:
    while time.monotonic() < until:
        try:
            connect(url, additional_headers={"Authorization": "Bearer wrong"}).close()
            tally.add("bad token ws: accepted")
        except InvalidStatus as err:
            tally.add(f"bad token ws: {err.response.status_code}")
        tally.add(f"bad token http: {requests.get(f'{http}/metadata', timeout=30).status_code}")
        time.sleep(0.5)


def overflow(url: str, until: float, tally: Tally) -> None:
    """Sessions opened past the cap, held 2 s when they get in."""
    while time.monotonic() < until:
        try:
            with connect(url, additional_headers=AUTH) as ws:
                ws.send(_reset_message(2))
                answer = json.loads(ws.recv(timeout=60))
                if answer["type"] == "error":
                    tally.add(f"overflow: {answer['data']['code']}")
                    try:
                        ws.recv(timeout=10)
                    except ConnectionClosed as err:
                        tally.add(f"overflow: closed {err.rcvd.code if err.rcvd else None}")
                else:
                    tally.add("overflow: got a session")
                    time.sleep(2)
        except (ConnectionClosed, OSError, TimeoutError) as err:
            tally.add(f"overflow: {type(err).__name__}")
        time.sleep(0.2)


def _log_kind(line: str) -> str:
    """A server log line without the client's address and numbers: what kind of refusal it logs."""
    text = line.split(": ", 1)[-1].strip()
    return "".join("N" if c.isdigit() else c for c in text)[:45]


def _status(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except OSError:
                continue
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--env", default="rl4vlm/NumberLine-v0")
    parser.add_argument("--honest-only", action="store_true", help="no hostile traffic: the latency it is compared with")
    args = parser.parse_args()
    cap = args.clients + 6  # the honest clients, the malformed and the killed ones; the overflow clients meet the cap
    logging.getLogger("websockets").setLevel(logging.CRITICAL)  # the hostile clients' own failures are counted, not logged
    server_log = tempfile.TemporaryFile("w+")
    command = [sys.executable, "-c", SERVER, args.env, str(cap), TOKEN]
    proc, owned = processes.popen(command, stdout=subprocess.PIPE, stderr=server_log, text=True)
    try:
        http = proc.stdout.readline().split(" on ")[1].strip()
        url = http.replace("http", "ws") + "/ws"
        stats = lambda: requests.get(f"{http}/_load/stats", headers=AUTH, timeout=30).json()  # noqa: E731
        before = stats()
        load = os.getloadavg()[0]
        tally = Tally()
        until = time.monotonic() + args.seconds
        workers = [threading.Thread(target=honest, args=(url, i, until, tally)) for i in range(args.clients)]
        hostile = [threading.Thread(target=malformed, args=(url, until, tally)) for _ in range(4)]
        hostile += [threading.Thread(target=oversized, args=(url, http, until, tally))]
        hostile += [threading.Thread(target=silent, args=(url, until, tally))]
        hostile += [threading.Thread(target=killed, args=(url, until, tally)) for _ in range(2)]
        hostile += [threading.Thread(target=flood, args=(http, until, tally)) for _ in range(8)]
        hostile += [threading.Thread(target=bad_token, args=(url, http, until, tally))]
        hostile += [threading.Thread(target=overflow, args=(url, until, tally)) for _ in range(4)]
        workers += [] if args.honest_only else hostile
        start = time.monotonic()
        for worker in workers:
            worker.start()
        peak_threads = 0
        while any(w.is_alive() for w in workers):
            peak_threads = max(peak_threads, _status(proc.pid, "Threads"))
            time.sleep(0.5)
        wall = time.monotonic() - start
        deadline, after = time.monotonic() + 30, stats()
        while after["sessions"] and time.monotonic() < deadline:  # killed clients' sessions end as their sockets do
            time.sleep(0.5)
            after = stats()
        children = _children(proc.pid)
        hwm_mib = _status(proc.pid, "VmHWM") / 1024
        rss_mib = _status(proc.pid, "VmRSS") / 1024
    finally:
        processes.kill_group(proc.pid)
        proc.wait()
        owned.release()
    server_log.seek(0)
    logged = collections.Counter(_log_kind(line) for line in server_log if line.strip())
    lat = sorted(tally.latencies)
    print(
        f"{args.clients} honest clients{'' if args.honest_only else ' + hostile traffic'} for {wall:.0f} s on {args.env} (load average {load:.1f} at the start)"
    )
    for kind, count in sorted(tally.counts.items()):
        print(f"  {kind:45s} {count:7d}")
    print(f"server's WARNING log: {sum(logged.values())} lines")
    for kind, count in sorted(logged.items()):
        print(f"  {kind:45s} {count:7d}")
    if lat:
        p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000  # noqa: E731
        print(
            f"honest steps: {len(lat)}, p50 {statistics.median(lat) * 1000:.1f} ms, p95 {p(0.95):.1f} ms, max {lat[-1] * 1000:.0f} ms"
        )
    print(
        f"server: peak RSS {hwm_mib:.0f} MiB (now {rss_mib:.0f} MiB); threads {before['threads']} before, peak {peak_threads}, after {after['threads']}"
    )
    # what the server's pools may keep idle: openenv-core's stateless pool (32), our close pool (8), anyio's (40)
    leaked = after["sessions"] != 0 or children or after["threads"] > before["threads"] + 32 + 8 + 40
    print(f"after: {after['sessions']} sessions, {len(children)} child processes: {'LEAKED' if leaked else 'nothing leaked'}")
    bad = [
        k for k in tally.counts if k.startswith("honest:") and k not in ("honest: sessions served", "honest: CAPACITY_REACHED")
    ]
    return 1 if leaked or bad else 0


if __name__ == "__main__":
    sys.exit(main())
