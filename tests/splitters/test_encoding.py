"""cl100k_base, loaded from the bundled rank file with the network switched off."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Literal

import pytest
import tiktoken

from splitters.encoding import cl100k_base, count_tokens


class NetworkBlockedError(AssertionError):
    """Raised by any attempt to open a network connection during these tests."""


def _refuse(*args: object, **kwargs: object) -> None:
    raise NetworkBlockedError(f"network access attempted: {args!r}")


@pytest.fixture(autouse=True, scope="module")
def no_network() -> Iterator[None]:
    """Fail on any connection or name lookup, and load the encoding afresh under the block."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", _refuse)
        patch.setattr(socket.socket, "connect_ex", _refuse)
        patch.setattr(socket, "getaddrinfo", _refuse)
        cl100k_base.cache_clear()
        yield
    cl100k_base.cache_clear()


def test_the_block_is_real() -> None:
    with pytest.raises(NetworkBlockedError), socket.create_connection(("127.0.0.1", 9)):
        pass


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("", []),
        ("hello world", [15339, 1917]),
        ("Hello, world!", [9906, 11, 1917, 0]),
        ("tiktoken is great!", [83, 1609, 5963, 374, 2294, 0]),
        (
            "def f(x):\n    return x ** 2\n",
            [755, 282, 2120, 997, 262, 471, 865, 3146, 220, 17, 198],
        ),
        (
            "Ünïcödé — 日本語",
            [53591, 77, 38672, 66, 3029, 67, 978, 2001, 76502, 22656, 45918, 252],
        ),
    ],
)
def test_encode_decode_known_ids(text: str, ids: list[int]) -> None:
    encoding = cl100k_base()
    assert encoding.encode(text) == ids
    assert encoding.decode(ids) == text
    assert count_tokens(text) == len(ids)


def test_is_the_real_cl100k_base() -> None:
    encoding = cl100k_base()
    assert isinstance(encoding, tiktoken.Encoding)
    assert (encoding.name, encoding.n_vocab, encoding.max_token_value) == (
        "cl100k_base",
        100277,
        100276,
    )
    assert encoding.eot_token == 100257


@pytest.mark.parametrize(
    ("text", "allowed", "ids"),
    [
        ("<|endoftext|>", "all", [100257]),
        ("<|endofprompt|>", "all", [100276]),
        ("<|endoftext|>", set(), None),  # disallowed special text raises
    ],
)
def test_special_tokens(
    text: str, allowed: Literal["all"] | set[str], ids: list[int] | None
) -> None:
    encoding = cl100k_base()
    if ids is None:
        with pytest.raises(ValueError, match="disallowed special token"):
            encoding.encode(text, allowed_special=allowed)
    else:
        assert encoding.encode(text, allowed_special=allowed) == ids


def test_count_tokens_treats_special_text_as_plain_text() -> None:
    assert count_tokens("<|endoftext|>") == 7


def test_loaded_once() -> None:
    assert cl100k_base() is cl100k_base()
