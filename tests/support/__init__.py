"""What the tests import besides the code under test, one module per kind:

- `models`: the chat model a test runs when it is not the default.
- `stacks`: throwaway local stacks (the type of `isolated_settings`).
- `corpus`: the Python 3.11 HTML docs and the session's load of them.

The `conftest.py` files hold only fixtures and hooks; they import from here too.
"""
