"""Agents that play `Env` episodes, by name: `solutions`, `replay`, `openai`."""

from gym.errors import AgentError
from gym.harness.agents.base import Agent, AgentEpisode, available_agents, make_agent, register_agent

__all__ = ["Agent", "AgentEpisode", "AgentError", "available_agents", "make_agent", "register_agent"]
