"""structlog set-up: JSON lines with ISO timestamps; context (trace_id, household, job) from contextvars."""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog

from engine.settings import LogSettings


def configure_logging(settings: LogSettings, stream: TextIO | None = None) -> None:
    """Log to `stream` (stderr unless given)."""
    stream = stream or sys.stderr
    level = logging.getLevelNamesMapping().get(settings.level, logging.INFO)
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if settings.json_output else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        # One write per line (PrintLogger writes the newline apart): web processes sharing one stderr never cut
        # each other's lines.
        logger_factory=structlog.WriteLoggerFactory(file=stream),
        cache_logger_on_first_use=True,
    )
    logging.basicConfig(level=max(level, logging.WARNING), stream=stream, format="%(name)s %(levelname)s %(message)s")
