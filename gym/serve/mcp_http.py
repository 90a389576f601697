"""MCP's JSON-RPC over one HTTP POST (`kgym serve`'s `POST /mcp`): the same tools as `kgym mcp`.

Each request is a JSON-RPC 2.0 message (or a batch of them) answered in the response body, as
OpenEnv's HTTP servers do, so `openenv validate` and plain HTTP clients can call the tools without an
MCP session: `initialize`, `ping`, `tools/list` and `tools/call` (list_tasks, get_task,
submit_kernel, get_result). A malformed request is answered with a JSON-RPC error object (HTTP 200);
a notification (no `id`) is answered with nothing.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gym.errors import McpParamsError

# JSON-RPC 2.0 error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

# The MCP revision the answers to `initialize` follow.
PROTOCOL_VERSION = "2025-06-18"
METHODS = ("initialize", "ping", "tools/list", "tools/call")


class JsonRpcRequest(BaseModel):
    """One JSON-RPC 2.0 request or notification."""

    model_config = ConfigDict(extra="ignore")

    jsonrpc: str = Field(pattern=r"^2\.0$", description='Always "2.0".')
    method: str = Field(min_length=1, description='The MCP method, e.g. "tools/call".')
    params: dict[str, Any] | None = Field(default=None, description="The method's parameters.")
    id: int | str | None = Field(default=None, description="The request id; absent for a notification (answered with nothing).")


def error(code: int, message: str, request_id: int | str | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def success(result: dict[str, Any], request_id: int | str | None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _dump(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True, exclude_none=True) if isinstance(value, BaseModel) else value


async def _dispatch(server: Any, request: JsonRpcRequest) -> dict[str, Any]:
    params = request.params or {}
    if request.method == "initialize":
        return {
            "protocolVersion": str(params.get("protocolVersion") or PROTOCOL_VERSION),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": server.name, "version": "1"},
            "instructions": server.instructions or "",
        }
    if request.method == "ping":
        return {}
    if request.method == "tools/list":
        return {"tools": [_dump(tool) for tool in await server.list_tools()]}
    name, arguments = params.get("name"), params.get("arguments") or {}
    if not isinstance(name, str) or not isinstance(arguments, dict):
        raise McpParamsError('tools/call needs params {"name": <tool>, "arguments": {...}}')
    try:
        result = await server.call_tool(name, arguments)
    except Exception as failure:  # noqa: BLE001  (a failing tool is a tool result with is_error, as in MCP's own server)
        return {"content": [{"type": "text", "text": str(failure)}], "isError": True}
    return dict(_dump(result))


async def handle_message(server: Any, message: Any) -> dict[str, Any] | None:
    """The answer to one JSON-RPC message (None for a notification)."""
    if not isinstance(message, dict):
        return error(INVALID_REQUEST, "a JSON-RPC request must be an object")
    try:
        request = JsonRpcRequest.model_validate(message)
    except ValidationError as failure:
        fields = ", ".join(".".join(str(part) for part in item["loc"]) or "(request)" for item in failure.errors())
        request_id = message.get("id") if isinstance(message.get("id"), int | str) else None
        return error(INVALID_REQUEST, f"invalid JSON-RPC request ({fields})", request_id)
    if request.method not in METHODS:
        if request.id is None:
            return None  # notifications/initialized and the like need no answer
        return error(METHOD_NOT_FOUND, f"unknown method {request.method!r} (known: {', '.join(METHODS)})", request.id)
    try:
        result = await _dispatch(server, request)
    except McpParamsError as failure:
        return error(INVALID_PARAMS, str(failure), request.id)
    return None if request.id is None else success(result, request.id)


async def handle_body(server: Any, body: bytes) -> dict[str, Any] | list[dict[str, Any]] | None:
    """The answer to a POST body: one message, a batch, or None when nothing needs answering."""
    try:
        message = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as failure:
        return error(PARSE_ERROR, f"parse error: {failure}")
    if isinstance(message, list):
        if not message:
            return error(INVALID_REQUEST, "an empty batch")
        answers = [answer for item in message if (answer := await handle_message(server, item)) is not None]
        return answers or None
    return await handle_message(server, message)
