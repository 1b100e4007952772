"""Synopsis as an MCP server: the same tools over Streamable HTTP at `/mcp` (inside the
API) and over stdio (`synopsis mcp`). See docs/mcp.md."""

from __future__ import annotations

from service.mcp.server import INSTRUCTIONS, TOOL_NAMES, build_server

__all__ = ["INSTRUCTIONS", "TOOL_NAMES", "build_server"]
