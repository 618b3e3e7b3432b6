"""What the package's tests share: a real Starport service (``node bin/starport serve`` on
SQLite in a temporary DATA_DIR, PORT=0), its CLI, a scripted HTTP server for the answers the
service cannot be made to give, and a webhook receiver.

The tests import the package from ../src unless STARPORT_TEST_INSTALLED=1 (then the installed
one). STARPORT_NODE names the node binary (default: node on PATH)."""

from __future__ import annotations

import http.server
import json
import os
import queue
import shutil
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

PACKAGE = Path(__file__).resolve().parents[1]
REPO = PACKAGE.parents[1]
if os.environ.get("STARPORT_TEST_INSTALLED") != "1":
    sys.path.insert(0, str(PACKAGE / "src"))

NODE = os.environ.get("STARPORT_NODE", "node")

# Keep every outbound call of the service on loopback: the TON API and rate feed point at a
# closed port (live prices are then unavailable, which one error test relies on).
BASE_ENV = {
    "LOG_LEVEL": "warn",
    "TEST_FULFILMENT_DELAY_MS": "300",
    "TON_API_URL": "http://127.0.0.1:9/api/v2",
    "RATE_FEED": "tonapi",
    "RATE_FEED_URL": "http://127.0.0.1:9/v2/rates",
    "DEPOSIT_ADDRESS": "EQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi4wJB",
    "DEPOSIT_POLL_MS": "3600000",
}


def poll_until(probe: Callable[[], Any], done: Callable[[Any], bool], what: str, timeout: float = 15.0, step: float = 0.05) -> Any:
    """Calls ``probe`` until ``done(result)``; fails naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = probe()
        if done(result):
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}; last: {result!r}")
        time.sleep(step)


class Service:
    """A running Starport service on a fresh SQLite database."""

    def __init__(self, **env: str) -> None:
        self.data_dir = tempfile.mkdtemp(prefix="starport-py-")
        self.env = {**os.environ, **BASE_ENV, **env, "DATA_DIR": self.data_dir, "PORT": "0"}
        self.env.pop("DATABASE_URL", None)
        self.process = subprocess.Popen(
            [NODE, str(REPO / "bin" / "starport"), "serve"],
            cwd=str(REPO),
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.output: List[str] = []
        lines: "queue.Queue[Optional[str]]" = queue.Queue()

        def drain() -> None:
            assert self.process.stdout is not None
            for line in self.process.stdout:
                self.output.append(line)
                lines.put(line)
            lines.put(None)

        threading.Thread(target=drain, daemon=True).start()
        deadline = time.monotonic() + 30
        self.url = ""
        while not self.url:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError("the service did not start:\n" + "".join(self.output[-30:]))
            if line.startswith("listening on "):
                self.url = line.split()[2]
        self.api = f"{self.url}/api/v1"

    def cli(self, *args: str) -> Any:
        """Runs bin/starport with the service's DATA_DIR; the parsed --json output."""
        done = subprocess.run(
            [NODE, str(REPO / "bin" / "starport"), *args, "--json"],
            cwd=str(REPO),
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.returncode != 0:
            raise RuntimeError(f"starport {' '.join(args)} failed: {done.stderr or done.stdout}")
        return json.loads(done.stdout)

    def account(self, test: Optional[str] = None, live: Optional[str] = None) -> Dict[str, str]:
        """A new account ({account_id, live_key, test_key}); ``test``/``live`` TON credited."""
        created = self.cli("account", "create", "--email", f"py-{time.time_ns()}@example.com")
        for mode, amount in (("test", test), ("live", live)):
            if amount is not None:
                self.cli("balance", "credit", "--account", created["account_id"], "--mode", mode, "--amount", amount, "--reason", "python tests")
        return created

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.data_dir, ignore_errors=True)


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


Answer = Dict[str, Any]


class ScriptedServer:
    """An HTTP server on loopback that answers each request with the next entry of ``script``
    (``{"status", "headers", "body"}``, ``{"drop": True}`` to close the connection unanswered,
    or ``{"hang": True}`` to hold it until close()), then ``fallback``; it records every request
    as (method, path, headers, body, monotonic arrival time)."""

    def __init__(self) -> None:
        self.script: List[Answer] = []
        self.fallback: Answer = {"status": 200, "body": {"ok": True}}
        self.requests: List[Tuple[str, str, Dict[str, str], bytes, float]] = []
        self.released = threading.Event()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def handle_any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                owner.requests.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic()))
                answer = owner.script.pop(0) if owner.script else owner.fallback
                if answer.get("drop"):
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if answer.get("hang"):
                    owner.released.wait(30)
                    self.close_connection = True
                    return
                payload = answer.get("body")
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(answer.get("status", 200))
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Request-Id", "req_scripted")
                for name, value in (answer.get("headers") or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = handle_any

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api/v1"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


def error_answer(status: int, code: str, headers: Optional[Dict[str, str]] = None, **error: Any) -> Answer:
    """A contract error body (docs/api.md, Errors)."""
    return {"status": status, "headers": headers or {}, "body": {"ok": False, "error": {"code": code, "message": f"scripted {code}", **error}, "request_id": "req_scripted"}}


class Receiver:
    """A webhook receiver on loopback: records each delivery's raw body and headers, answers 200."""

    def __init__(self) -> None:
        self.received: List[Tuple[bytes, Dict[str, str], Any]] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                owner.received.append((body, dict(self.headers.items()), self.headers))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
