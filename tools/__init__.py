"""The LLM's tools and their registry (`registry.py`, one module per tool family, `context.py`, `fields.py`,
`filters.py`, `errors.py`); below them `storage` (all SQL) and `infra` (clock, calendar, queue, embeddings client,
embedded PostgreSQL)."""
