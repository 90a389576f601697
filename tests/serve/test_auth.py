"""Who may use a served gym: with a token, every route but /health (HTTP, the WebSocket handshake and
POST /mcp) answers 401 unless the request carries `Authorization: Bearer <token>`; the shipped clients
send it (given, or from KGYM_SERVE_TOKEN); without a token `kgym serve` keeps to loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from gym.cli import app
from gym.errors import AuthConfigError, GymClientError
from gym.schema.result import Status
from gym.serve import auth
from gym.serve.auth import TOKEN_VARIABLE, bearer, is_loopback, startup_notice, token_matches
from gym.serve.client import GymClient, GymSocket
from gym.serve.server import ServerConfig
from tests.support.serve_process import ServerProcess
from tests.support.server_fixtures import FakeGrader, running_server

TOKEN = "kgym-test-token-1f3a"
TASK = "l1/vector_add"
RIGHT = "def kernel(x, y):\n    return x + y  # PASS\n"
# Every route that needs the token, with a request each answers 2xx once the token is there.
GUARDED = [
    ("GET", "/metadata", None),
    ("GET", "/schema", None),
    ("GET", "/openapi.json", None),
    ("GET", "/tasks", None),
    ("GET", f"/tasks/{TASK}", None),
    ("POST", "/reset", {"task_id": TASK}),
    ("POST", "/submissions", {"task_id": TASK, "code": RIGHT}),
    ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
]


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_server(ServerConfig(grader=FakeGrader(), token=TOKEN)) as url:
        yield url


def ws_url(base_url: str) -> str:
    return base_url.replace("http://", "ws://") + "/ws"


@pytest.mark.parametrize(("method", "path", "body"), GUARDED, ids=[f"{m} {p}" for m, p, _ in GUARDED])
def test_a_guarded_route_needs_the_right_token(base_url: str, method: str, path: str, body: object) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong-token"}, {"Authorization": f"Basic {TOKEN}"}, {"Authorization": TOKEN}):
        refused = httpx.request(method, base_url + path, json=body, headers=headers)
        assert refused.status_code == 401, (headers, refused.text)
        assert refused.headers["www-authenticate"].startswith("Bearer")
        assert "bearer token" in refused.json()["detail"]
    allowed = httpx.request(method, base_url + path, json=body, headers={"Authorization": f"Bearer {TOKEN}"})
    assert 200 <= allowed.status_code < 300, allowed.text


def test_health_stays_open(base_url: str) -> None:
    assert httpx.get(base_url + "/health").json()["status"] == "healthy"


def test_the_token_is_compared_in_constant_time(base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    compared: list[tuple[bytes, bytes]] = []
    real = auth.hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(auth.hmac, "compare_digest", spy)
    assert httpx.get(base_url + "/metadata", headers={"Authorization": "Bearer nope"}).status_code == 401
    assert compared == [(b"nope", TOKEN.encode())]


def test_bearer_parsing() -> None:
    assert bearer(f"Bearer {TOKEN}") == TOKEN
    assert bearer(f"bearer   {TOKEN} ") == TOKEN
    assert bearer("Bearer") is None and bearer(None) is None and bearer(f"Token {TOKEN}") is None
    assert token_matches(TOKEN, TOKEN) and not token_matches(TOKEN[:-1], TOKEN) and not token_matches(None, TOKEN)


def test_the_http_client_sends_the_token(base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_VARIABLE, raising=False)
    with GymClient(base_url) as anonymous, pytest.raises(GymClientError) as refused:
        anonymous.reset(task_id=TASK)
    assert refused.value.status == 401
    with GymClient(base_url, token=TOKEN) as client:
        client.reset(task_id=TASK)
        assert client.step(RIGHT).summary.status == Status.passed  # type: ignore[union-attr]
    monkeypatch.setenv(TOKEN_VARIABLE, TOKEN)
    with GymClient(base_url) as from_variable:
        assert from_variable.reset(task_id=TASK).task_id == TASK


def test_the_websocket_handshake_needs_the_token(base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_VARIABLE, raising=False)
    for headers in ({}, {"Authorization": "Bearer wrong-token"}):
        with pytest.raises(InvalidStatus) as refused:
            connect(ws_url(base_url), additional_headers=headers, open_timeout=10).close()
        assert refused.value.response.status_code == 401
    with GymSocket(ws_url(base_url), token=TOKEN) as socket:
        socket.reset(task_id=TASK)
        assert socket.step(RIGHT).summary.status == Status.passed  # type: ignore[union-attr]
    monkeypatch.setenv(TOKEN_VARIABLE, TOKEN)
    with GymSocket(ws_url(base_url)) as from_variable:
        assert from_variable.reset(task_id=TASK).task_id == TASK


def test_without_a_token_the_server_keeps_to_loopback() -> None:
    for host in ("127.0.0.1", "127.0.0.2", "::1", "localhost"):
        assert is_loopback(host) and "only this machine" in startup_notice(host, None, False)
    for host in ("0.0.0.0", "::", "10.0.0.5", "gpu-node-3"):
        assert not is_loopback(host)
        with pytest.raises(AuthConfigError, match="--insecure-no-auth"):
            startup_notice(host, None, False)
        assert "WARNING" in startup_notice(host, None, True)
        assert "Bearer" in startup_notice(host, TOKEN, False)


def test_kgym_serve_refuses_an_open_port_without_a_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_VARIABLE, raising=False)
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--port", "1"])
    assert result.exit_code == 2
    assert "refusing to serve on 0.0.0.0 without a token" in result.output


def test_kgym_serve_takes_the_token_from_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_VARIABLE, TOKEN)
    log = tmp_path / "serve.log"
    server = ServerProcess(tmp_path / "state", log)
    try:
        assert httpx.get(server.url + "/tasks").status_code == 401
        listed = httpx.get(server.url + "/tasks", headers={"Authorization": f"Bearer {TOKEN}"})
        assert listed.status_code == 200 and TASK in {item["id"] for item in listed.json()}
        mcp = httpx.post(server.url + "/mcp", json={"jsonrpc": "2.0", "id": 7, "method": "ping"})
        assert mcp.status_code == 401
    finally:
        server.stop()
    assert "requires 'Authorization: Bearer <token>'" in log.read_text()
    assert TOKEN not in log.read_text()
