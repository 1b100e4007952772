"""Code identifiers in text (`os.path.join`, `__init__`, `range()`), for exact BM25 matches.

Weaviate's `word` tokenization splits `os.path.join` into `os`, `path`, `join`; the
`identifiers` property (whitespace tokenization) keeps each name whole so that a
query naming it exactly ranks the chunk that contains it first.
"""

from __future__ import annotations

import re

__all__ = ["extract_identifiers"]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_PATTERNS = (
    re.compile(rf"\b{_NAME}(?:\.{_NAME})+"),  # dotted: os.path.join, str.format
    re.compile(r"\b__[A-Za-z0-9_]+__\b"),  # dunders: __init__, __name__
    re.compile(rf"\b({_NAME})\("),  # calls: range(, print(
    re.compile(r"`([A-Za-z_][A-Za-z0-9_.]*)`"),  # inline code names: `pass`, `elif`
)
_MAX = 200
_ABBREVIATIONS = frozenset({"e.g", "i.e", "a.k.a", "n.b", "et.al", "viz"})


def extract_identifiers(text: str) -> list[str]:
    """Distinct identifiers in `text`, in order of first appearance (at most 200)."""
    found: dict[str, None] = {}
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            name = (match.group(1) if pattern.groups else match.group(0)).strip(".")
            if _is_name(name):
                found.setdefault(name, None)
            if len(found) >= _MAX:
                return list(found)
    return list(found)


def _is_name(text: str) -> bool:
    """Not a number (3.11), not one letter, not a prose abbreviation (e.g., i.e.)."""
    return (
        len(text) > 1 and not text.replace(".", "").isdigit() and text.lower() not in _ABBREVIATIONS
    )
