"""Sessions of the HTTP/WebSocket server: one `Env` each, isolated from the others.

An HTTP session is named by the `X-Session-Id` header (created by /reset when
absent); a WebSocket connection owns one session for its lifetime. When the
store is full, the least recently used idle HTTP session is closed to make
room; when none is idle, `SessionsFull`.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from gym.errors import KernelGymError
from gym.harness.env import Env


class SessionsFull(KernelGymError, RuntimeError):
    """Every session slot is held by a busy session or a WebSocket."""

    http_status = 503
    # What the server answers in Retry-After.
    retry_after_s = 5


@dataclass
class Session:
    id: str
    env: Env
    # True for a WebSocket connection's session (never evicted; closed with the connection).
    websocket: bool = False
    # Held while a call runs, so calls on one session run one at a time.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_used: float = field(default_factory=time.monotonic)

    def touch(self) -> None:
        self.last_used = time.monotonic()


class SessionStore:
    def __init__(self, make_env: Callable[[], Env], max_sessions: int) -> None:
        if max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        self.make_env = make_env
        self.max_sessions = max_sessions
        self._sessions: dict[str, Session] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, session_id: str) -> Session | None:
        session = self._sessions.get(session_id)
        if session is not None:
            session.touch()
        return session

    def create(self, *, websocket: bool = False) -> Session:
        if len(self._sessions) >= self.max_sessions:
            self._evict_one()
        session = Session(id=uuid.uuid4().hex, env=self.make_env(), websocket=websocket)
        self._sessions[session.id] = session
        return session

    def close(self, session_id: str) -> bool:
        session = self._sessions.pop(session_id, None)
        if session is None:
            return False
        session.env.close()
        return True

    def close_all(self) -> None:
        for session_id in list(self._sessions):
            self.close(session_id)

    def _evict_one(self) -> None:
        idle = [s for s in self._sessions.values() if not s.websocket and not s.lock.locked()]
        if not idle:
            raise SessionsFull(f"all {self.max_sessions} sessions are busy; close one (DELETE /session) or retry later")
        self.close(min(idle, key=lambda s: s.last_used).id)
