"""A scripted OpenAI-compatible server on 127.0.0.1 (real HTTP for the real SDKs), and its reply builders.

    fake = FakeOpenAI()
    fake.script = [text("thinking"), submit(code)]          # answered in order, whoever asks
    fake.route("l1/vector_add", [text("```python ...```")])  # answered to requests that mention the key
    client = openai.OpenAI(base_url=fake.base_url, api_key="x")
    ...
    fake.requests   # every request: path, headers (lower-case names), body
    fake.close()

A routed script serves the requests whose messages contain its key (the first matching route wins, in the
order routes were added); other requests take the shared `script`. Several conversations (two tasks'
rollouts, say) can so run concurrently, each against its own script. An exhausted script answers 500.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# A scripted answer: a chat.completion body, an HTTP error status, or a function of the request body.
Reply = dict[str, Any] | int | Callable[[dict[str, Any]], dict[str, Any] | int]


def _mentions(body: dict[str, Any], key: str) -> bool:
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            content = " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        if isinstance(content, str) and key in content:
            return True
    return False


class FakeOpenAI:
    """Answers POST /v1/chat/completions from a script; records every request (headers and body)."""

    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.routes: dict[str, list[Reply]] = {}
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def route(self, key: str, replies: list[Reply]) -> None:
        """Answer the requests whose messages contain `key` from `replies`, in order."""
        with self._lock:
            self.routes[key] = list(replies)

    def bodies(self, route: str | None = None) -> list[dict[str, Any]]:
        """The request bodies, in arrival order (only those served by `route`, when given)."""
        return [request["body"] for request in self.requests if route is None or request["route"] == route]

    def _next(self, body: dict[str, Any]) -> tuple[str | None, Reply]:
        with self._lock:
            for key, replies in self.routes.items():
                if _mentions(body, key):
                    return key, replies.pop(0) if replies else 500
            return None, self.script.pop(0) if self.script else 500

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                record: dict[str, Any] = {
                    "path": self.path,
                    "headers": {name.lower(): value for name, value in self.headers.items()},
                    "body": body,
                    "route": None,
                }
                with fake._lock:
                    fake.requests.append(record)
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": "no such route"}})
                record["route"], reply = fake._next(body)
                if callable(reply):
                    reply = reply(body)
                if isinstance(reply, int):
                    return self._send(reply, {"error": {"message": f"scripted {reply}", "type": "server_error"}})
                self._send(200, reply)

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def completion(message: dict[str, Any], finish_reason: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "fake-model-1",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def submit(code: str, call_id: str = "call_1", content: str | None = None) -> dict[str, Any]:
    call = {"id": call_id, "type": "function", "function": {"name": "submit_kernel", "arguments": json.dumps({"code": code})}}
    return completion({"content": content, "tool_calls": [call]}, "tool_calls")


def text(content: str) -> dict[str, Any]:
    return completion({"content": content}, "stop")
