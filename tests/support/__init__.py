"""What the tests import besides the code under test, one module per kind:

- `models`: the chat model a test runs when it is not the default.
- `stacks`: throwaway local stacks (the type of `isolated_settings`).
- `corpus`: the Python 3.11 HTML docs, the session's load of them, and the control-flow
  page the core integration tests ingest.
- `documents`: small Markdown documents that tests write.
- `cli`: the `synopsis` command run in-process.
- `invariants`: what the collections hold, and the invariants every change keeps.

The `conftest.py` files hold only fixtures and hooks; they import from here too.
"""
