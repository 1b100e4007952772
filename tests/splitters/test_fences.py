from __future__ import annotations

import pytest

from splitters.fences import Fence, fences_balanced, iter_code_blocks, opening_fence


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("```", Fence("`", 3, 0, "")),
        ("```python", Fence("`", 3, 0, "python")),
        ("````  python3 {.x} ", Fence("`", 4, 0, "python3 {.x}")),
        ("   ~~~", Fence("~", 3, 3, "")),
        ("~~~~~ sh`weird`", Fence("~", 5, 0, "sh`weird`")),  # tildes allow backticks
        ("```a`b", None),  # backtick info string may not contain a backtick
        ("```inline```", None),
        ("    ```", None),  # four spaces: indented code, not a fence
        ("``", None),
        ("\t```", None),
        ("```python\r", Fence("`", 3, 0, "python")),
        ("text ```", None),
    ],
)
def test_opening_fence(line: str, expected: Fence | None) -> None:
    assert opening_fence(line) == expected


@pytest.mark.parametrize(
    ("fence", "line", "closes"),
    [
        (Fence("`", 3, 0, "py"), "```", True),
        (Fence("`", 3, 0, "py"), "   ````  \t", True),
        (Fence("`", 4, 0, ""), "```", False),  # shorter than the opener
        (Fence("`", 3, 0, ""), "~~~", False),  # other character
        (Fence("~", 3, 0, ""), "~~~~", True),
        (Fence("`", 3, 0, ""), "```python", False),  # a closer has no info string
        (Fence("`", 3, 0, ""), "    ```", False),
        (Fence("`", 3, 0, ""), "```\r", True),
    ],
)
def test_fence_closed_by(fence: Fence, line: str, closes: bool) -> None:
    assert fence.is_closed_by(line) is closes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\n```\nx\n```\nb", [(2, 11, True)]),
        ("````md\n```\ninner\n```\n````\n", [(0, 25, True)]),
        ("~~~\n```\n~~~", [(0, 11, True)]),
        ("x\n```py\nopen\n", [(2, 12, False)]),
        ("```\na\n```\n~~~\nb\n~~~", [(0, 9, True), (10, 19, True)]),
    ],
)
def test_iter_code_blocks(text: str, expected: list[tuple[int, int, bool]]) -> None:
    assert [(b.start, b.end, b.closed) for b in iter_code_blocks(text)] == expected


@pytest.mark.parametrize(
    ("text", "balanced"),
    [
        ("```\nx\n```", True),
        ("```\nx\n", False),
        ("````\n```\n", False),
        ("no code at all", True),
        ("```inline``` text", True),
    ],
)
def test_fences_balanced(text: str, balanced: bool) -> None:
    assert fences_balanced(text) is balanced
