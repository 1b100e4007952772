"""The parsed page as the other steps read it: walking a subtree, a tag's classes, id
words and text, and removing tags."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from bs4 import Comment, Tag
from bs4.element import NavigableString, PreformattedString

_WORDS = re.compile(r"[^a-z0-9]+")
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


@dataclass(slots=True)
class _Tags:
    """The tags of a subtree that the conversion steps work on, found in one walk."""

    anchors: list[Tag] = field(default_factory=list)
    images: list[Tag] = field(default_factory=list)
    headings: list[Tag] = field(default_factory=list)
    pres: list[Tag] = field(default_factory=list)
    cells: list[Tag] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)

    @classmethod
    def of(cls, root: Tag) -> _Tags:
        found = cls()
        for tag in root.descendants:
            if not isinstance(tag, Tag):
                if isinstance(tag, Comment):
                    found.comments.append(tag)
                continue
            name = tag.name
            if name == "a":
                found.anchors.append(tag)
            elif name == "img":
                found.images.append(tag)
            elif name in _HEADINGS or name == "dt":
                found.headings.append(tag)
            elif name == "pre":
                found.pres.append(tag)
            elif name in ("td", "th"):
                found.cells.append(tag)
        return found


def _tags(root: Tag) -> Iterator[Tag]:
    for node in root.descendants:
        if isinstance(node, Tag):
            yield node


def _classes(tag: Tag) -> list[str]:
    value: Any = tag.get("class")
    if isinstance(value, str):
        return value.split()
    return list(value or [])


@functools.lru_cache(maxsize=4096)
def _class_tokens(value: str) -> frozenset[str]:
    return frozenset(value.lower().split())


@functools.lru_cache(maxsize=4096)
def _class_words(value: str) -> frozenset[str]:
    return frozenset(word for word in _WORDS.split(value.lower()) if word)


def _class_value(tag: Tag) -> str:
    value: Any = tag.attrs.get("class")
    return value if isinstance(value, str) else " ".join(value or ())


def _tokens(tag: Tag) -> frozenset[str]:
    """The class names and the id of `tag`, lower-cased."""
    tokens = _class_tokens(_class_value(tag))
    ident = tag.attrs.get("id")
    return tokens | {ident.lower()} if isinstance(ident, str) and ident else tokens


def _words(tag: Tag) -> frozenset[str]:
    """The words of `tag`'s class names (split at anything not a letter or digit) and its
    whole id. An id is not split: generators derive ids from the content ("c.PyIter_Next",
    "buffer-related-functions"), while class names come from the theme."""
    words = _class_words(_class_value(tag))
    ident = tag.attrs.get("id")
    return words | {ident.lower()} if isinstance(ident, str) and ident else words


def _attribute(tag: Tag, name: str) -> str:
    value = tag.attrs.get(name)
    return value.strip().lower() if isinstance(value, str) else ""


def _inside_pre(tag: Tag) -> bool:
    return any(parent.name == "pre" for parent in tag.parents)


def _in_heading(tag: Tag) -> bool:
    return any(parent.name in _HEADINGS for parent in tag.parents)


def _text_length(tag: Tag) -> int:
    """Characters of visible text in `tag`, whitespace left out."""
    return sum(
        len("".join(node.split()))
        for node in tag.descendants
        if isinstance(node, NavigableString) and not isinstance(node, PreformattedString)
    )


def _link_stats(tag: Tag) -> tuple[int, int, int]:
    """(text characters, of which in links, number of links) of `tag`."""
    total = _text_length(tag)
    links = [a for a in _tags(tag) if a.name == "a"] if tag.name != "a" else [tag]
    return total, sum(_text_length(a) for a in links), len(links)


def _own_text(tag: Tag) -> int:
    """Text characters of `tag` outside links: what a reader reads rather than clicks."""
    total, linked, _ = _link_stats(tag)
    return total - linked


def _gone(tag: Tag) -> bool:
    """Whether `tag` was decomposed. (bs4's `decomposed` property looks the attribute up
    with `getattr`, which on a live tag becomes a search of its whole subtree.)"""
    return bool(vars(tag).get("_decomposed", False))


def _decompose(doomed: list[Tag]) -> None:
    for tag in doomed:
        if not _gone(tag):
            tag.decompose()


def _enclosing(tag: Tag, name: str) -> Tag | None:
    for parent in tag.parents:
        if parent.name == name:
            return parent
    return None
