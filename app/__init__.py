"""Contexts: durable, scoped, cited context for AI agents, retrieved inside PostgreSQL."""

__version__ = "0.1.0"
