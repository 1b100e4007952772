"""Code blocks: swapped for placeholders before the conversion, put back after it as
fences around the `<pre>`'s exact text."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bs4 import BeautifulSoup, Tag

from loaders.html.tree import _classes, _enclosing, _gone, _tags
from splitters.base.markdown_syntax import fence_block

_LANGUAGE_CLASS = re.compile(r"^(?:highlight|language|lang|sourceCode)-(.+)$")
# Sphinx highlight languages that mean "no particular language".
_NO_LANGUAGE = {"none", "text", "default-text", "plain", "plaintext", "nohighlight"}
_LANGUAGE_ALIASES = {"python3": "python", "py": "python", "py3": "python", "default": "python"}
# Private-use characters: markdownify neither escapes nor collapses them.
_PLACEHOLDER = "\ue000{}\ue001"
_PLACEHOLDER_RE = re.compile("\ue000(\\d+)\ue001")
# What may surround a placeholder on its line without being text: indentation, quote
# markers, table pipes, list bullets.
_NOT_TEXT = " \t>|-*+"


@dataclass(frozen=True, slots=True)
class _Code:
    text: str
    language: str


def _language(pre: Tag) -> str:
    """The language of a code block from classes on the `<pre>`, its `<code>` or ancestors."""
    candidates: list[Tag] = [pre]
    code = next((tag for tag in _tags(pre) if tag.name == "code"), None)
    if code is not None:
        candidates.insert(0, code)
    for number, parent in enumerate(pre.parents):
        if number == 6:
            break
        candidates.append(parent)
    for tag in candidates:
        for cls in _classes(tag):
            match = _LANGUAGE_CLASS.match(cls)
            if match:
                name = match.group(1).lower()
                if name in _NO_LANGUAGE:
                    return ""
                return _LANGUAGE_ALIASES.get(name, name)
    return ""


def _extract_code(pres: list[Tag], soup: BeautifulSoup) -> list[_Code]:
    """Swap every outermost `<pre>` for a placeholder; return the code in order."""
    codes: list[_Code] = []
    for pre in pres:
        if _gone(pre) or _enclosing(pre, "pre") is not None:
            continue
        cell = _enclosing(pre, "td")
        if cell is not None and {"linenos", "linenodiv"} & set(_classes(cell)):
            pre.decompose()  # line numbers of a Pygments table, not code
            continue
        codes.append(_Code(text=pre.get_text(), language=_language(pre)))
        holder = soup.new_tag("div")
        holder.string = _PLACEHOLDER.format(len(codes) - 1)
        # A Pygments line-number table holds one block: replace the whole table.
        table = next(
            (
                parent
                for parent in pre.parents
                if parent.name == "table" and "highlighttable" in _classes(parent)
            ),
            None,
        )
        (table if table is not None else pre).replace_with(holder)
    return codes


def _restore_code(markdown: str, codes: list[_Code]) -> str:
    """Tidy the converted text and put each code block back as a fence at column 0.

    Trailing spaces and runs of blank lines are trimmed outside code only: a fenced block
    is appended as one item, so its content is never looked at.
    """
    out: list[str] = []

    def blank() -> None:
        if out and out[-1]:
            out.append("")

    for raw in markdown.split("\n"):
        line = raw.rstrip()
        if "\ue000" not in line:
            if line:
                out.append(line)
            else:
                blank()
            continue
        position = 0
        for match in _PLACEHOLDER_RE.finditer(line):
            before = line[position : match.start()]
            if before.strip(_NOT_TEXT):
                out.append(before.rstrip())
            blank()
            code = codes[int(match.group(1))]
            out.extend([fence_block(code.text, code.language), ""])
            position = match.end()
        after = line[position:]
        if after.strip(_NOT_TEXT):
            out.append(after.strip())
    return "\n".join(out).strip("\n")
