"""Loader options from the settings: the crawl's extent, the fetch deadline, the loader
limits, and a captioner only with a vision model."""

from __future__ import annotations

import dataclasses

import pytest

from loaders import LoadOptions
from service.ingest.load_options import load_options
from service.models.captions import OllamaCaptioner
from service.settings import LOADER_LIMITS, Settings


def test_without_a_vision_model_images_are_only_counted() -> None:
    assert load_options(Settings().with_overrides(vision_model="")).captioner is None


def test_with_a_vision_model_images_are_captioned_by_it() -> None:
    captioner = load_options(Settings().with_overrides(vision_model="llava:7b")).captioner
    assert isinstance(captioner, OllamaCaptioner)
    assert captioner.model == "llava:7b"


def test_the_fetch_deadline_comes_from_the_settings() -> None:
    assert load_options(Settings()).fetch_deadline == 60.0
    assert load_options(Settings().with_overrides(fetch_deadline=2.5)).fetch_deadline == 2.5


def test_the_settings_default_to_the_loaders_own_limits() -> None:
    options = load_options(Settings.from_env({}))
    assert {name: getattr(options, name) for name in LOADER_LIMITS} == {
        name: getattr(LoadOptions(), name) for name in LOADER_LIMITS
    }
    assert set(LOADER_LIMITS) <= {field.name for field in dataclasses.fields(LoadOptions)}


@pytest.mark.parametrize("name", LOADER_LIMITS)
def test_each_loader_limit_is_set_by_its_variable(name: str) -> None:
    settings = Settings.from_env({f"SYNOPSIS_{name.upper()}": "7"})
    assert getattr(load_options(settings), name) == 7
