"""`synopsis mcp`: the MCP server over stdio, for an editor on the same machine.

The editor starts the command and speaks MCP on its stdin and stdout, so nothing else may
write to stdout: progress and errors go to stderr. The server uses the local settings
(the same environment as every other command) and no key: whoever can start the process
can already read the index. `ask`'s model calls run on an `LlmWork` of the process's own,
with the API's limits (`SYNOPSIS_API_LLM_WORKERS`, `SYNOPSIS_API_LLM_PER_KEY`) for its
one caller. It ends when the editor closes its stdin.
"""

from __future__ import annotations

import anyio

from service.api.llm_work import LlmWork
from service.api.security import ANONYMOUS
from service.mcp.server import build_server
from service.synopsis import Synopsis
from splitters.encoding import cl100k_base

__all__ = ["serve_stdio"]


def serve_stdio(synopsis: Synopsis) -> None:
    """Serve the tools over `synopsis` on stdin/stdout until stdin is closed."""
    llm_work = LlmWork.for_settings(synopsis.settings)
    try:
        server = build_server(lambda: synopsis, llm_work=lambda: llm_work, caller=lambda: ANONYMOUS)
        cl100k_base()  # before the first search needs it
        anyio.run(server.run_stdio_async)
    finally:
        llm_work.close()
