"""Sessions of the HTTP/WebSocket server: one `Env` each, isolated from the others.

An HTTP session is named by the `X-Session-Id` header (created by /reset when
absent); a WebSocket connection owns one session for its lifetime. When the
store is full, the least recently used idle HTTP session is closed to make
room; when none is idle, `SessionsFull`.

Every /reset and every graded step is recorded in the server's `ServeState`
before its answer leaves, so a session survives its `Env`: one closed to make
room, left by a WebSocket, or lost with a server that died is `resume`d by its
id from the record, its attempts replayed into a fresh `Env` (nothing is
regraded). Only `end` (DELETE /session) closes a session for good.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from gym.errors import SessionsFull
from gym.harness.env import Env
from gym.schema.episode import Action, Observation
from gym.schema.http import ResetRequest
from gym.serve.state import EpisodeRecord, ServeState, SubmissionRecord, now


@dataclass
class Session:
    id: str
    env: Env
    # True while a WebSocket connection holds the session (never evicted; closed with the connection).
    websocket: bool = False
    # Held while a call runs, so calls on one session run one at a time.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_used: float = field(default_factory=time.monotonic)

    def touch(self) -> None:
        self.last_used = time.monotonic()


def replay(env: Env, episode: EpisodeRecord) -> None:
    """Put `env` where the recorded episode stood: its task, its episode id, every graded attempt."""
    env.reset(task_id=episode.task_id, episode_id=episode.episode_id, dsl=episode.dsl)
    for grade in episode.grades:
        env.record(grade)


class SessionStore:
    def __init__(self, make_env: Callable[[], Env], max_sessions: int, state: ServeState) -> None:
        if max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        self.make_env = make_env
        self.max_sessions = max_sessions
        self.state = state
        self._sessions: dict[str, Session] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, session_id: str) -> Session | None:
        """An open session (no resume)."""
        session = self._sessions.get(session_id)
        if session is not None:
            session.touch()
        return session

    def create(self, *, websocket: bool = False) -> Session:
        return self._add(Session(id=uuid.uuid4().hex, env=self.make_env(), websocket=websocket))

    async def resume(self, session_id: str) -> Session | None:
        """The open session, else the recorded one reopened with its episode replayed; None when there is neither."""
        session = self.get(session_id)
        if session is not None:
            return session
        env = await asyncio.to_thread(self._replayed, session_id)
        if env is None:
            return None
        session = self.get(session_id)  # another call may have resumed it meanwhile
        if session is not None:
            env.close()
            return session
        return self._add(Session(id=session_id, env=env))

    # ------------------------------------------------------------ episode calls (blocking; hold session.lock)

    def reset(self, session: Session, request: ResetRequest) -> Observation:
        """Start an episode in the session and record it."""
        observation = session.env.reset(request.task_id, request.seed, request.suite, split=request.split, dsl=request.dsl)
        self.state.start_episode(session.id, session.env.state.episode_id, observation.task_id, session.env.episode_dsl)
        return observation

    def step(self, session: Session, action: Action, submitted_at: str) -> Observation:
        """Grade one attempt and record it (with its grade) before the answer leaves."""
        observation = session.env.step(action)
        self.state.insert(
            SubmissionRecord(
                id=uuid.uuid4().hex,
                task_id=observation.task_id,
                code=action.code,
                submitted_at=submitted_at,
                started_at=submitted_at,
                finished_at=now(),
                grade=observation.grade,
                session_id=session.id,
                episode_id=session.env.state.episode_id,
                attempt=observation.attempt,
            )
        )
        return observation

    # ------------------------------------------------------------ closing

    def close(self, session_id: str) -> bool:
        """Drop the session's `Env`; its record stays, so the id can be resumed."""
        session = self._sessions.pop(session_id, None)
        if session is None:
            return False
        session.env.close()
        return True

    def end(self, session_id: str) -> None:
        """Close the session for good (DELETE /session): it is never resumed."""
        self.close(session_id)
        self.state.close_session(session_id)

    def close_all(self) -> None:
        for session_id in list(self._sessions):
            self.close(session_id)

    # ------------------------------------------------------------ helpers

    def _replayed(self, session_id: str) -> Env | None:
        episode = self.state.open_episode(session_id)
        if episode is None:
            return None
        env = self.make_env()
        replay(env, episode)
        return env

    def _add(self, session: Session) -> Session:
        if len(self._sessions) >= self.max_sessions:
            self._evict_one()
        self._sessions[session.id] = session
        return session

    def _evict_one(self) -> None:
        idle = [s for s in self._sessions.values() if not s.websocket and not s.lock.locked()]
        if not idle:
            raise SessionsFull(f"all {self.max_sessions} sessions are busy; close one (DELETE /session) or retry later")
        self.close(min(idle, key=lambda s: s.last_used).id)
