"""PDF image captions from a vision model served by Ollama (off unless configured).

`SYNOPSIS_VISION_MODEL` names an Ollama model that accepts images (e.g. a LLaVA or
Gemma 3 build). When it is set, the PDF loader hands every embedded image to
`OllamaCaptioner`, and each caption becomes a paragraph `*Image (page N): …*` where the
image sits, so the chunk around it is summarized and searched with it. The local stack
ships no vision model, so by default images are only counted (`image_count`).
"""

from __future__ import annotations

import base64

import ollama
from langchain_core.messages import HumanMessage

from service.errors import ConfigurationError, ModelError
from service.models.chat import ollama_chat
from service.settings import Settings

__all__ = ["CAPTION_PROMPT", "OllamaCaptioner"]

CAPTION_PROMPT = (
    "Describe this image from a technical document in one sentence: what it shows and "
    "any text, labels or code in it. No preamble."
)
_MIME = {"jpg": "jpeg", "jpeg": "jpeg", "png": "png", "gif": "gif", "webp": "webp"}


class OllamaCaptioner:
    """Calls the configured vision model once per image; a failure is a `ModelError`.

    Before the first image it asks Ollama whether the model accepts images at all: a
    model without the "vision" capability is a `ConfigurationError` (sending it an image
    can leave Ollama's runner busy without ever answering).
    """

    def __init__(self, settings: Settings) -> None:
        self.model = settings.models.vision_model
        self._url = settings.resolved_ollama_url
        self._checked = False
        self._chat = ollama_chat(
            settings,
            model=settings.models.vision_model,
            max_tokens=80,
            timeout=settings.summaries.timeout,
        )

    def __call__(self, image: bytes, extension: str) -> str:
        """A one-sentence description of `image` (its file extension names the format)."""
        if not self._checked:
            self._check_vision()
        mime = _MIME.get(extension.lower(), "png")
        url = f"data:image/{mime};base64,{base64.b64encode(image).decode('ascii')}"
        message = HumanMessage(
            content=[
                {"type": "text", "text": CAPTION_PROMPT},
                {"type": "image_url", "image_url": url},
            ]
        )
        try:
            reply = self._chat.invoke([message])
        except Exception as exc:
            raise ModelError(f"captioning an image with {self.model!r} failed: {exc}") from exc
        return " ".join(str(reply.content).split())

    def _check_vision(self) -> None:
        try:
            shown = ollama.Client(host=self._url, timeout=30).show(self.model)
        except ollama.ResponseError as exc:
            raise ConfigurationError(
                f"SYNOPSIS_VISION_MODEL {self.model!r}: Ollama does not have it ({exc.error})"
            ) from exc
        except Exception as exc:
            raise ModelError(f"asking Ollama about {self.model!r} failed: {exc}") from exc
        capabilities = list(shown.capabilities or [])
        if "vision" not in capabilities:
            raise ConfigurationError(
                f"SYNOPSIS_VISION_MODEL {self.model!r} does not accept images (its "
                f"capabilities: {', '.join(capabilities) or 'none'}); name a vision model "
                "or unset it to only count PDF images"
            )
        self._checked = True
