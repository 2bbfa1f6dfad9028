"""The arq worker: `main.py` builds it (settings, dependencies, every enabled channel's sender and fetcher);
`jobs.py` names every job it runs; the work is in `messages.py` (answering), `delivery.py` (outbox rows),
`reminders.py` and `digests.py`."""
