"""PDF image captions through Ollama: a model that cannot see is refused before any image
is sent (the local stack has no vision model, so only that path runs for real here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.errors import ConfigurationError
from service.models.captions import OllamaCaptioner
from service.settings import Settings
from tests.loaders.pdfs import sample_pdf
from tests.support.cli import cli


@pytest.mark.integration
def test_a_model_without_vision_is_refused_before_any_image_is_sent(settings: Settings) -> None:
    captioner = OllamaCaptioner(settings.with_overrides(vision_model=settings.models.chat_model))
    with pytest.raises(ConfigurationError) as caught:
        captioner(b"\x89PNG\r\n\x1a\n", "png")
    assert str(caught.value) == (
        f"SYNOPSIS_VISION_MODEL {settings.models.chat_model!r} does not accept images (its "
        "capabilities: completion); name a vision model or unset it to only count PDF images"
    )


@pytest.mark.integration
def test_an_unknown_vision_model_is_refused(settings: Settings) -> None:
    captioner = OllamaCaptioner(settings.with_overrides(vision_model="no-such-model"))
    with pytest.raises(ConfigurationError, match="'no-such-model': Ollama does not have it"):
        captioner(b"\x89PNG\r\n\x1a\n", "png")


@pytest.mark.integration
def test_the_cli_reports_it_in_one_line(settings: Settings, tmp_path: Path) -> None:
    (tmp_path / "manual.pdf").write_bytes(sample_pdf())
    code, stdout, stderr = cli(
        settings,
        "chunk",
        str(tmp_path / "manual.pdf"),
        env={"SYNOPSIS_VISION_MODEL": settings.models.chat_model},
    )
    assert code == 1
    assert stderr.startswith(
        f"Error: SYNOPSIS_VISION_MODEL {settings.models.chat_model!r} does not"
    )
    assert "Traceback" not in stdout + stderr
