"""The openai agent against a scripted OpenAI-compatible server on 127.0.0.1 (real HTTP, real SDK)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gym.errors import AgentError
from gym.harness.agents.base import make_agent
from gym.harness.agents.openai_agent import (
    PLACEHOLDER_KEY,
    OpenAIAgent,
    code_from_arguments,
    extract_code,
)
from gym.harness.env import Env
from gym.schema.episode import Action, Observation
from gym.schema.result import Environment, GradeResult, Status
from gym.tasks.loader import find_task
from gym.tasks.model import Task
from tests.support.fake_openai import FakeOpenAI, completion, submit, text

KEY_ENV = "KGYM_TEST_OPENAI_KEY"
SECRET = "sk-test-secret-123456"
MARKER = "# CORRECT"
BROKEN = "import triton\n\ndef kernel(x, y):\n    return x  # BROKEN\n"
FIXED = f"import triton\n\ndef kernel(x, y):\n    return x + y  {MARKER}\n"
WRONG_FEEDBACK = "wrong_answer on float32 public #1: 1000 of 1000 elements differ (max abs error 1.7)"

# ------------------------------------------------------------ the fake server (tests/support/fake_openai.py)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    yield server
    server.close()


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, SECRET)
    return SECRET


def agent_for(fake: FakeOpenAI, **options: Any) -> OpenAIAgent:
    options = {"retries": 2, "retry_backoff_s": 0.01, "timeout_s": 10, **options}
    return OpenAIAgent(model="fake-model-1", base_url=fake.base_url, api_key_env=KEY_ENV, **options)


# ------------------------------------------------------------ a fake grader


class FakeGrader:
    """Passes code containing MARKER; records what it was given."""

    def __init__(self) -> None:
        self.codes: list[str] = []

    def __call__(self, task: Task, submission: Path) -> GradeResult:
        code = submission.read_text(encoding="utf-8")
        self.codes.append(code)
        passed = MARKER in code
        return GradeResult(
            task_id=task.id,
            task_version=task.spec.version,
            submission_sha256=hashlib.sha256(code.encode()).hexdigest(),
            status=Status.passed if passed else Status.wrong_answer,
            speedup_vs_eager=1.25 if passed else None,
            environment=Environment(python="3.11", torch="2.13.0", triton="3.7.1", platform="linux", device="cpu", sandbox="fake"),
            feedback="All checks held on every trial." if passed else WRONG_FEEDBACK,
            graded_at=datetime.now(UTC).isoformat(timespec="seconds"),
            duration_s=0.01,
        )


def drive(agent: OpenAIAgent, env: Env, task_id: str = "l1/vector_add") -> tuple[list[Observation], Any]:
    """What the runner does: reset, then propose/step until done or the agent gives up."""
    observation = env.reset(task_id)
    episode = agent.start(observation, [])
    seen = [observation]
    while True:
        action = episode.propose(observation)
        if action is None:
            break
        observation = env.step(action)
        seen.append(observation)
    return seen, episode


# ------------------------------------------------------------ episodes


def test_full_episode_feeds_the_grade_back_and_stops_on_pass(fake: FakeOpenAI, key: str) -> None:
    fake.script = [text("Let me think about masking first."), submit(BROKEN, "call_a"), submit(f"```python\n{FIXED}```", "call_b")]
    grader = FakeGrader()
    seen, episode = drive(agent_for(fake), Env(grader=grader, max_attempts=5))

    assert [o.summary.status for o in seen[1:] if o.summary] == [Status.wrong_answer, Status.passed]
    assert seen[-1].done
    assert grader.codes == [BROKEN.strip(), FIXED.strip()]  # the fence was stripped
    assert len(fake.requests) == 3
    for request in fake.requests:
        assert request["headers"]["authorization"] == f"Bearer {key}"
        assert request["body"]["model"] == "fake-model-1"
        assert [tool["function"]["name"] for tool in request["body"]["tools"]] == ["submit_kernel"]

    first = fake.bodies()[0]["messages"]
    assert [m["role"] for m in first] == ["system", "user"]
    assert first[1]["content"] == seen[0].prompt

    # The text-only answer was nudged towards the tool.
    second = fake.bodies()[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": "Let me think about masking first."}
    assert second[-1]["role"] == "user" and "submit_kernel" in second[-1]["content"]

    # The broken kernel's grade came back as the tool result of its call.
    third = fake.bodies()[2]["messages"]
    assert third[-2]["tool_calls"][0]["id"] == "call_a"
    result = third[-1]
    assert result["role"] == "tool" and result["tool_call_id"] == "call_a"
    assert "status: wrong_answer" in result["content"]
    assert WRONG_FEEDBACK in result["content"]
    assert "attempt: 1 (4 left)" in result["content"]

    # After the pass the transcript ends with the passing grade; nothing more is asked.
    transcript = episode.transcript()
    assert transcript[-1]["role"] == "tool" and transcript[-1]["tool_call_id"] == "call_b"
    assert "status: passed" in transcript[-1]["content"] and "1.25x" in transcript[-1]["content"]
    assert episode.propose(seen[-1]) is None
    assert len(fake.requests) == 3


def test_transcript_is_json_with_model_and_usage_and_no_key(fake: FakeOpenAI, key: str) -> None:
    fake.script = [submit(FIXED)]
    _, episode = drive(agent_for(fake), Env(grader=FakeGrader()))
    transcript = episode.transcript()
    dumped = json.dumps(transcript)
    assert key not in dumped and PLACEHOLDER_KEY not in dumped
    replies = [m for m in transcript if m["role"] == "assistant"]
    assert replies[0]["model"] == "fake-model-1"
    assert replies[0]["usage"]["total_tokens"] == 120
    assert replies[0]["finish_reason"] == "tool_calls"
    # Transcript-only fields are never sent to the API.
    assert all("usage" not in m and "model" not in m for body in fake.bodies() for m in body["messages"])


def test_gives_up_after_max_turns_without_a_tool_call(fake: FakeOpenAI, key: str) -> None:
    fake.script = [text("I cannot"), text("Still no"), text("No")]
    grader = FakeGrader()
    seen, episode = drive(agent_for(fake, max_turns_per_attempt=3), Env(grader=grader))
    assert len(seen) == 1 and grader.codes == []
    assert len(fake.requests) == 3
    nudges = [m for m in episode.transcript() if m.get("nudge")]
    assert len(nudges) == 3


def test_gives_up_when_the_env_says_done(fake: FakeOpenAI, key: str) -> None:
    fake.script = [submit(BROKEN, "call_1"), submit(BROKEN, "call_2"), submit(FIXED, "call_3")]
    seen, episode = drive(agent_for(fake), Env(grader=FakeGrader(), max_attempts=2))
    assert [o.summary.status for o in seen[1:] if o.summary] == [Status.wrong_answer, Status.wrong_answer]
    assert len(fake.requests) == 2
    assert "No attempts left." in episode.transcript()[-1]["content"]


def test_bad_arguments_are_answered_and_retried(fake: FakeOpenAI, key: str) -> None:
    broken_json = completion(
        {"content": None, "tool_calls": [{"id": "call_x", "type": "function", "function": {"name": "submit_kernel", "arguments": '{"code": "def ker'}}]},
        "length",
    )
    fake.script = [broken_json, submit(FIXED, "call_y")]
    grader = FakeGrader()
    seen, _ = drive(agent_for(fake), Env(grader=grader))
    assert seen[-1].summary is not None and seen[-1].summary.status == Status.passed
    answer = fake.bodies()[1]["messages"][-1]
    assert answer["role"] == "tool" and answer["tool_call_id"] == "call_x"
    assert "not valid JSON" in answer["content"]


def test_resume_rebuilds_the_conversation_from_history(fake: FakeOpenAI, key: str) -> None:
    grader = FakeGrader()
    env = Env(grader=grader)
    first = env.reset("l1/vector_add")
    past = env.step(Action(code=BROKEN))
    fake.script = [submit(FIXED, "call_next")]
    episode = agent_for(fake).start(first, [(Action(code=BROKEN), past)])
    action = episode.propose(past)
    assert action is not None and action.code == FIXED.strip()
    messages = fake.bodies()[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    call = messages[2]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"code": BROKEN}
    assert messages[3]["tool_call_id"] == call["id"]
    assert WRONG_FEEDBACK in messages[3]["content"]


def test_resume_after_a_pass_asks_nothing(fake: FakeOpenAI, key: str) -> None:
    env = Env(grader=FakeGrader())
    first = env.reset("l1/vector_add")
    passed = env.step(Action(code=FIXED))
    episode = agent_for(fake).start(first, [(Action(code=FIXED), passed)])
    assert episode.propose(passed) is None
    assert fake.requests == []


# ------------------------------------------------------------ keys, errors, options


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(AgentError, match=KEY_ENV):
        OpenAIAgent(model="m", api_key_env=KEY_ENV)


def test_local_endpoint_without_key_gets_a_placeholder(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    fake.script = [submit(FIXED)]
    drive(agent_for(fake), Env(grader=FakeGrader()))
    assert fake.requests[0]["headers"]["authorization"] == f"Bearer {PLACEHOLDER_KEY}"


def test_401_without_key_names_the_variable(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    fake.script = [401]
    with pytest.raises(AgentError, match=f"set {KEY_ENV}"):
        drive(agent_for(fake), Env(grader=FakeGrader()))
    assert len(fake.requests) == 1  # not retried


def test_server_errors_are_retried_then_reported(fake: FakeOpenAI, key: str) -> None:
    fake.script = [500, 500, 500, 500]
    with pytest.raises(AgentError) as caught:
        drive(agent_for(fake, retries=2), Env(grader=FakeGrader()))
    message = str(caught.value)
    assert "after 3 tries" in message and "HTTP 500" in message and "fake-model-1" in message and fake.base_url in message
    assert len(fake.requests) == 3


def test_a_transient_error_is_retried_transparently(fake: FakeOpenAI, key: str) -> None:
    fake.script = [503, 429, submit(FIXED)]
    seen, _ = drive(agent_for(fake, retries=2), Env(grader=FakeGrader()))
    assert seen[-1].summary is not None and seen[-1].summary.status == Status.passed
    assert len(fake.requests) == 3


def test_unreachable_endpoint_is_an_agent_error(key: str) -> None:
    agent = OpenAIAgent(model="m", base_url="http://127.0.0.1:9/v1", api_key_env=KEY_ENV, retries=1, retry_backoff_s=0.01, timeout_s=5)
    with pytest.raises(AgentError, match="connection failed"):
        drive(agent, Env(grader=FakeGrader()))


def test_options_and_request_settings(fake: FakeOpenAI, key: str) -> None:
    agent = agent_for(fake, temperature=0.2, max_tokens=4096)
    options = agent.options()
    assert options["model"] == "fake-model-1" and options["base_url"] == fake.base_url and options["temperature"] == 0.2
    assert key not in json.dumps(options)
    fake.script = [submit(FIXED)]
    drive(agent, Env(grader=FakeGrader()))
    body = fake.bodies()[0]
    assert body["temperature"] == 0.2 and body["max_tokens"] == 4096


def test_registry_builds_the_agent(fake: FakeOpenAI, key: str) -> None:
    agent = make_agent("openai", model="fake-model-1", base_url=fake.base_url, api_key_env=KEY_ENV)
    assert isinstance(agent, OpenAIAgent) and agent.name == "openai" and agent.model == "fake-model-1"
    with pytest.raises(AgentError, match="model"):
        make_agent("openai", base_url=fake.base_url, api_key_env=KEY_ENV)


# ------------------------------------------------------------ code extraction


@pytest.mark.parametrize(
    "given",
    [
        FIXED,
        f"```python\n{FIXED}```",
        f"```\n{FIXED}\n```\n",
        f"Here is the kernel:\n```python\n{FIXED}```\nIt masks the tail.",
        f"```python\n{FIXED}",  # unclosed fence
    ],
)
def test_extract_code_strips_fences(given: str) -> None:
    assert extract_code(given) == FIXED.strip()


def test_extract_code_keeps_python_that_mentions_fences() -> None:
    code = 'DOC = """\n```python\nx = 1\n```\n"""\n\ndef kernel(x):\n    return x\n'
    assert extract_code(code) == code.strip()


def test_code_from_arguments_rejects_what_cannot_be_graded() -> None:
    for arguments, problem in [("{}", "JSON object"), ('{"code": "  "}', "empty"), ('{"code": "x', "not valid JSON")]:
        with pytest.raises(ValueError, match=problem):
            code_from_arguments(arguments)
    assert code_from_arguments(FIXED) == FIXED.strip()  # a bare file instead of JSON


# ------------------------------------------------------------ the real grader


def test_real_grader_passes_the_shipped_solution(fake: FakeOpenAI, key: str) -> None:
    solution = find_task("l1/vector_add").solution_path.read_text(encoding="utf-8")
    fake.script = [submit(solution)]
    seen, _ = drive(agent_for(fake), Env(max_attempts=2))
    final = seen[-1]
    assert final.summary is not None, final
    assert final.summary.status == Status.passed, final.feedback
    assert final.done
