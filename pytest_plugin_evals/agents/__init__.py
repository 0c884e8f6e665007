"""Agent adapters: each turns a :class:`RunRequest` into a transcript."""

from .base import Agent, AgentError, RunRequest, make_agent

__all__ = ["Agent", "AgentError", "RunRequest", "make_agent"]
