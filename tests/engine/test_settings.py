import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from engine.settings import Settings, WorkerSettings

ENV_EXAMPLE = Path(__file__).parents[2] / ".env.example"


def test_env_example_documents_every_setting() -> None:
    documented = set(re.findall(r"^# ([A-Z_]+)=", ENV_EXAMPLE.read_text(), re.M))
    expected = set()
    for section in Settings.model_fields.values():
        cls = section.default_factory
        prefix = cls.model_config["env_prefix"]
        expected |= {field.alias or prefix + name.upper() for name, field in cls.model_fields.items()}
    assert expected - documented == set()


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_MODEL", "qwen2.5")
    monkeypatch.setenv("ENGINE_VARIANTS", '{"default": 50, "terse": 50}')
    settings = Settings.load()
    assert settings.llm.model == "qwen2.5"
    assert settings.engine.variants == {"default": 50, "terse": 50}


def test_bad_settings_are_refused_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEB_PORT", "not-a-port")
    with pytest.raises(ValidationError, match="WEB_PORT|port"):
        Settings.load()
    with pytest.raises(ValidationError, match="lease_s"):
        WorkerSettings(lease_s=1)


def test_a_channel_keeps_no_file_larger_than_media_storage_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file a channel accepted is always stored: its limit may not exceed the media store's (a 20 MB photo by
    email was answered 500 on every retry when the store held 10 MB)."""
    from tools.storage.media import MAX_MEDIA_BYTES

    assert Settings.load().channel.attachment_max_bytes <= MAX_MEDIA_BYTES
    monkeypatch.setenv("CHANNEL_ATTACHMENT_MAX_BYTES", str(MAX_MEDIA_BYTES + 1))
    with pytest.raises(ValidationError, match="ATTACHMENT_MAX_BYTES|attachment_max_bytes"):
        Settings.load()
