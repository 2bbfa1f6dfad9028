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
