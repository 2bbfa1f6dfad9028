"""The web process: the aiohttp app (`app.py`) with the member API (`api.py`, `openapi.py`), signed media links,
GET /metrics and every enabled channel's webhook, served by `server.py`."""
