"""Who may use a served gym: one bearer token, compared in constant time.

`kgym serve --token T` (or `KGYM_SERVE_TOKEN=T`) requires `Authorization: Bearer T` on every HTTP
route except `GET /health`, on the WebSocket handshake and on `POST /mcp`. Without a token the server
binds only to a loopback address, unless `--insecure-no-auth` says the open port is intended.
Every shipped client reads the token from the same variable.
"""

from __future__ import annotations

import hmac
import ipaddress

from gym import settings
from gym.errors import AuthConfigError

# The variable the server and every shipped client read the token from.
TOKEN_VARIABLE = "KGYM_SERVE_TOKEN"
# Routes open without a token (a load balancer's probe).
OPEN_PATHS = frozenset({"/health"})


def serve_token(token: str | None = None) -> str | None:
    """The token: `token` when given, else `KGYM_SERVE_TOKEN`, else None (an empty value counts as none)."""
    return token or settings.serve_token()


def auth_headers(token: str | None = None) -> dict[str, str]:
    """`{"Authorization": "Bearer <token>"}` for `serve_token(token)`; empty without one."""
    chosen = serve_token(token)
    return {"Authorization": f"Bearer {chosen}"} if chosen else {}


def bearer(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header value; None for any other value."""
    if not authorization:
        return None
    scheme, _, value = authorization.strip().partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None


def token_matches(presented: str | None, expected: str) -> bool:
    """True when `presented` is `expected`, compared in time independent of where they differ."""
    if presented is None:
        return False
    return hmac.compare_digest(presented.encode("utf-8"), expected.encode("utf-8"))


def is_loopback(host: str) -> bool:
    """True for an address only this machine can reach (127.0.0.0/8, ::1, "localhost")."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def startup_notice(host: str, token: str | None, insecure_no_auth: bool) -> str:
    """The line the server says on start about who may use it; AuthConfigError when it must not start."""
    if token:
        return f"kgym serve: every route but /health requires 'Authorization: Bearer <token>' ({TOKEN_VARIABLE} or --token)"
    if is_loopback(host):
        return f"kgym serve: no token set, so only this machine can connect ({host}); --token or {TOKEN_VARIABLE} to serve a network"
    if insecure_no_auth:
        return f"kgym serve: WARNING: no token and bound to {host}: anyone who reaches this port can use the gym (--insecure-no-auth)"
    raise AuthConfigError(
        f"refusing to serve on {host} without a token: anyone who reaches the port could grade code on this machine. "
        f"Set --token or {TOKEN_VARIABLE}, bind to 127.0.0.1, or pass --insecure-no-auth if an open port is intended."
    )
