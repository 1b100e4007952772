"""What a small source may expand to: the loaders' limits (`loaders.LoadOptions` fields
of the same names)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from service.errors import ConfigurationError
from service.settings.fields import Section, setting

__all__ = ["LOADER_LIMITS", "LoaderLimits"]


@dataclass(frozen=True, kw_only=True)
class LoaderLimits(Section):
    """Loader limits: a source over one is refused, its reason naming the limit and its value."""

    TOPIC = "Loader limits"
    PREFIX = ""

    # Why these values: docs/reliability.md, "Decompression bombs".
    max_markup_tags: int = setting(
        500_000, "Tags of an HTML page or of a Word file's XML, at most."
    )
    max_archive_members: int = setting(10_000, "Members of a Word file (zip), at most.")
    max_inflated_bytes: int = setting(
        100_000_000, "Bytes a Word file's members inflate to together, at most."
    )
    max_compression_ratio: int = setting(
        100, "How many times its compressed size a Word file's member over 1 MiB may inflate."
    )
    max_pdf_pages: int = setting(5_000, "Pages of a PDF, at most.")
    max_page_chars: int = setting(200_000, "Characters of text on one PDF page, at most.")
    max_pdf_operations: int = setting(
        5_000_000, "Things (text, paths, images, clips) a whole PDF draws, at most."
    )
    max_pdf_content_bytes: int = setting(
        100_000_000,
        "Bytes a PDF's content streams inflate to (each form as often as drawn), at most.",
    )

    def check(self) -> None:
        for attribute, variable in self.variables().items():
            if getattr(self, attribute) < 1:
                raise ConfigurationError(f"{variable} must be at least 1")


#: The loader limits (`loaders.LoadOptions` fields of the same names) the settings carry.
LOADER_LIMITS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(LoaderLimits))
