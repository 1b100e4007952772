"""What `synopsis serve` sets up before uvicorn starts the API: its logging, and
prometheus-client's multiprocess directory, checked before the API's metrics exist and
cleaned for several workers."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from service.errors import ConfigurationError

if TYPE_CHECKING:
    from service.settings import Settings

__all__ = ["check_metrics_directory", "log_config", "use_multiprocess_metrics"]


def log_config() -> dict[str, Any]:
    """uvicorn's logging, plus Synopsis's own loggers (5xx with request ids, jobs)."""
    from uvicorn.config import LOGGING_CONFIG  # noqa: PLC0415 - only serving needs uvicorn

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["service"] = {"handlers": ["default"], "level": "INFO", "propagate": False}
    return config


def check_metrics_directory() -> None:
    """A PROMETHEUS_MULTIPROC_DIR that cannot be written is one line, not a traceback:
    prometheus-client writes its count files there as soon as the API's metrics exist."""
    configured = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not configured:
        return
    try:
        Path(configured).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(
            f"PROMETHEUS_MULTIPROC_DIR={configured}: cannot be created ({exc.strerror or exc}); "
            "point it at a writable directory or unset it"
        ) from exc
    if not os.access(configured, os.W_OK):
        raise ConfigurationError(
            f"PROMETHEUS_MULTIPROC_DIR={configured}: not writable; point it at a writable "
            "directory or unset it"
        )


def use_multiprocess_metrics(settings: Settings, port: int) -> None:
    """Point prometheus-client's multiprocess mode at a clean directory before the workers
    start (they inherit the environment), so /metrics adds up every worker's counts."""
    # Imported here: the API's metrics must not exist before the directory is set.
    from service.api.metrics import (  # noqa: PLC0415
        MULTIPROC_ENV,
        reset_multiprocess_dir,
    )

    # One directory per port: two servers on one data directory keep their counts apart.
    configured = os.environ.get(MULTIPROC_ENV)
    directory = Path(configured) if configured else settings.stack.data_dir / "metrics" / str(port)
    os.environ[MULTIPROC_ENV] = str(reset_multiprocess_dir(directory))
