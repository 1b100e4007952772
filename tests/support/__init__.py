"""What the tests import besides the code under test, one module per kind:

- `models`: the chat model a test runs when it is not the default.

The `conftest.py` files hold only fixtures and hooks; they import from here too.
"""
