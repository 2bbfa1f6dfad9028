"""structlog set-up: JSON lines with ISO timestamps; context (trace_id, household, job) from contextvars."""

from __future__ import annotations

import logging
import sys

import structlog

from engine.settings import LogSettings


def configure_logging(settings: LogSettings) -> None:
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
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    logging.basicConfig(
        level=max(level, logging.WARNING), stream=sys.stderr, format="%(name)s %(levelname)s %(message)s"
    )
