"""One API app per settings for the in-process API tests, with each test's fake core.

Building the app is most of an in-process API test's time (about 0.1 s: Litestar parses
every handler's signature and the MCP server builds its tools' schemas), and most tests
built one for the same settings. `client_over(fake)` reuses the app built for the fake's
settings and gives a `TestClient` that, like a fresh app's, runs the app's lifespan when
entered (a new model executor, MCP session manager, metrics sync), then serves the test's
own fake core and Ollama client; on exit the app's state is put back as it was built, so
nothing a test set on `app.state` reaches the next one. An app whose client is still open
is not shared: a second client at once gets an app of its own.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

import httpx
from litestar import Litestar
from litestar.testing import TestClient

from service.api import create_app
from service.settings import Settings
from service.synopsis import Synopsis
from tests.service.serving import IN_PROCESS_URL

__all__ = ["client_over"]


class _NoCore(Synopsis):
    """The core an app is built with until a test's fake is swapped in: never used."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"the shared app's placeholder core has no {name}: a test's fake")


class _SharedApp:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.app = create_app(
            settings,
            synopsis=_NoCore(settings),
            # Replaced by the test's once the lifespan has run; never sent a request.
            ollama_http=httpx.AsyncClient(base_url="http://127.0.0.1:9"),
            background=False,  # no Weaviate to watch or run jobs on
        )
        self.built_state = dict(self.app.state)
        self.in_use = False


_APPS: list[_SharedApp] = []


def _shared(settings: Settings) -> _SharedApp:
    for shared in _APPS:
        if not shared.in_use and shared.settings == settings:
            return shared
    shared = _SharedApp(settings)
    _APPS.append(shared)
    return shared


class _Client(TestClient[Litestar]):
    """A `TestClient` of a shared app that serves `fake` and `ollama` once started."""

    def __init__(
        self, shared: _SharedApp, fake: object, ollama: httpx.AsyncClient, base_url: str
    ) -> None:
        super().__init__(shared.app, base_url=base_url)
        self._shared = shared
        self._fake = fake
        self._ollama = ollama

    def __enter__(self) -> _Client:
        self._shared.in_use = True
        try:
            super().__enter__()
        except BaseException:
            self._restore()
            raise
        self.app.state.synopsis = self._fake
        self.app.state.ollama_http = self._ollama
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            super().__exit__(exc_type, exc_value, traceback)
        finally:
            self._restore()

    def _restore(self) -> None:
        state = self.app.state
        for key in [key for key in state if key not in self._shared.built_state]:
            del state[key]
        state.update(self._shared.built_state)
        self._shared.in_use = False


def client_over(
    fake: Any,
    ollama: httpx.AsyncClient,
    *,
    settings: Settings | None = None,
    base_url: str = IN_PROCESS_URL,
) -> TestClient[Litestar]:
    """A client (enter it) of the app for `settings` (default: `fake.settings`), serving
    the fake core `fake` and the Ollama client `ollama`."""
    return _Client(_shared(settings or fake.settings), fake, ollama, base_url)
