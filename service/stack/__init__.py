"""The local stack: Weaviate and Ollama built from their Go modules, run on loopback."""

from __future__ import annotations

from service.stack.local import ComponentStatus, LocalStack, StackStatus

__all__ = ["ComponentStatus", "LocalStack", "StackStatus"]
