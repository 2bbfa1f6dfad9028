"""How a settings section reads the environment: its own prefix, `.env`, unknown keys ignored, frozen."""

from pydantic_settings import SettingsConfigDict


def section(prefix: str) -> SettingsConfigDict:
    return SettingsConfigDict(env_prefix=prefix, env_file=".env", extra="ignore", frozen=True, env_ignore_empty=True)
