"""`extract_identifiers`: the code names that BM25 must match whole."""

from __future__ import annotations

import pytest

from service.index.identifiers import extract_identifiers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("os.path.join(base, name)", ["os.path.join", "join"]),
        ("def __init__(self):", ["__init__"]),
        ("for i in range(10):", ["range"]),
        ("The `range()` Function", ["range"]),
        ("Use `pass` when a statement is required", ["pass"]),
        ('print("hi") and len(x)', ["print", "len"]),
        ("see str.format() and __name__", ["str.format", "__name__", "format"]),
        ("x = a.b. c", ["a.b"]),
        ("loops (e.g. for), i.e. iteration; E.g. this", []),  # abbreviations are prose
        # Numbers and one-letter names are not identifiers worth indexing.
        ("version 3.11 and 1.2.3", []),
        ("f(x)", []),
        ("", []),
    ],
)
def test_extract_identifiers(text: str, expected: list[str]) -> None:
    assert extract_identifiers(text) == expected


def test_repeats_are_kept_once_in_order_of_first_appearance() -> None:
    text = "len(a); os.path.join(a); len(b); os.path.join(b); __init__; __init__"
    assert extract_identifiers(text) == ["os.path.join", "__init__", "len", "join"]


def test_at_most_200_identifiers() -> None:
    text = " ".join(f"name{index}()" for index in range(300))
    found = extract_identifiers(text)
    assert found == [f"name{index}" for index in range(200)]
