"""Infrastructure beneath storage and the tools: clock, calendar arithmetic, the queue, the embeddings client and
embedded PostgreSQL. Nothing here imports the rest of FAA (only the error hierarchy)."""
