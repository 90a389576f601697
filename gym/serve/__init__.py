"""The served gym: `kgym serve` (HTTP, WebSocket and MCP over HTTP) and `kgym mcp` (MCP over stdio).

- `server`: the FastAPI app (`create_app`, `ServerConfig`, `serve`) over the harness's `Env`;
- `sessions`: the sessions behind `/sessions` and `/ws`, each an Env, with their slots;
- `submissions`: one-shot grades (`/submissions`, MCP's submit_kernel) and their results;
- `queue`: the grading queue (at most N running, M waiting; 503 with Retry-After past that);
- `state`: the durable record in the state folder a restarted server resumes from;
- `auth`: the bearer token and the rule that an open port needs one;
- `mcp`, `mcp_http`: the MCP tools and their JSON-RPC over HTTP; `task_views`: what a client sees of a task;
- `client`: `GymClient` / `GymSocket`, a Python client of a served gym (the RL adapters use it).

    from gym.serve import GymClient
    client = GymClient("http://127.0.0.1:8000")
"""

from __future__ import annotations

from gym.lazy import lazy_exports

_EXPORTS = {
    "GymClient": "gym.serve.client",
    "GymSocket": "gym.serve.client",
    "ServerConfig": "gym.serve.server",
    "create_app": "gym.serve.server",
    "serve": "gym.serve.server",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_exports(__name__, _EXPORTS)
