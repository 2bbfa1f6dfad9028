"""The OpenAPI 3.1 document of the web API."""

from __future__ import annotations

from typing import Any

_ERROR = {
    "type": "object",
    "properties": {
        "error": {"type": "object", "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}
    },
}

_MEDIA_ITEM = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "url": {"type": "string"},
        "description": {"type": "string", "description": "What the image shows, in words (a chart's alt text)"},
    },
    "required": ["id"],
}

_STATUS = {
    "type": "object",
    "properties": {
        "message_id": {"type": "integer"},
        "status": {"type": "string", "enum": ["queued", "processing", "done", "failed"]},
        "reply": {"type": "string"},
        "outcome": {"type": "string", "enum": ["answered", "clarifying", "degraded", "failed"]},
        "options": {"type": "array", "items": {"type": "string"}},
        "media": {
            "type": "array",
            "description": "Images sent with the reply (charts); url is a signed, expiring link when links are on",
            "items": _MEDIA_ITEM,
        },
        "duplicate": {"type": "boolean"},
    },
    "required": ["message_id", "status"],
}

_NOTIFICATIONS = {
    "type": "object",
    "properties": {
        "notifications": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "text": {"type": "string"},
                    "kind": {"type": "string", "enum": ["reminder", "digest"]},
                    "media": {"type": "array", "items": _MEDIA_ITEM},
                    "reminder_id": {"type": "integer"},
                    "options": {"type": "array", "items": {"type": "string"}},
                    "created_at": {"type": "string", "format": "date-time"},
                },
                "required": ["id", "text", "created_at"],
            },
        },
        "next_since": {"type": ["string", "null"], "format": "date-time"},
    },
    "required": ["notifications", "next_since"],
}


def _errors(*codes: int) -> dict[str, Any]:
    text = {
        400: "Invalid body",
        401: "Missing or unknown token",
        403: "Forged or expired link",
        404: "Not found",
        413: "Body over 1 MiB",
        429: "More than WEB_MESSAGES_PER_MINUTE from this member; retry after the Retry-After header's seconds",
    }
    return {
        str(code): {
            "description": text[code],
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
        for code in codes
    }


def document(message_schema: dict[str, Any]) -> dict[str, Any]:
    status_ref = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/MessageStatus"}}}}
    message_body = {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MessageIn"}}},
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "FAA — family AI assistant", "version": "1"},
        "components": {
            "securitySchemes": {"member_token": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "MessageIn": message_schema,
                "MessageStatus": _STATUS,
                "Notifications": _NOTIFICATIONS,
                "Error": _ERROR,
            },
        },
        "security": [{"member_token": []}],
        "paths": {
            "/v1/messages": {
                "post": {
                    "summary": "Send a message as a member; waits for the reply up to the server's limit",
                    "requestBody": message_body,
                    "responses": {
                        "200": {"description": "The reply", **status_ref},
                        "202": {"description": "Accepted; poll the Location", **status_ref},
                        **_errors(400, 401, 413, 429),
                    },
                }
            },
            "/v1/messages/stream": {
                "post": {
                    "summary": "Send a message and follow its processing as server-sent events",
                    "description": "Events: stream_start, thinking, tool_use, tool_result, content_delta, "
                    "session_stats, error, stream_end.",
                    "requestBody": message_body,
                    "responses": {"200": {"description": "text/event-stream"}, **_errors(400, 401, 413, 429)},
                }
            },
            "/v1/messages/{message_id}": {
                "get": {
                    "summary": "A message's status and reply",
                    "parameters": [
                        {"name": "message_id", "in": "path", "required": True, "schema": {"type": "integer"}}
                    ],
                    "responses": {"200": {"description": "Status", **status_ref}, **_errors(401, 404)},
                }
            },
            "/v1/notifications": {
                "get": {
                    "summary": "The member's notifications (reminders, digests), newest first",
                    "description": "Poll with since = the next_since of the previous answer to get only new ones.",
                    "parameters": [
                        {"name": "since", "in": "query", "schema": {"type": "string", "format": "date-time"}},
                        {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100}},
                    ],
                    "responses": {
                        "200": {
                            "description": "Notifications",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Notifications"}}},
                        },
                        **_errors(400, 401),
                    },
                }
            },
            "/media/{media_id}": {
                "get": {
                    "summary": "An image sent with a reply, through the signed link given in the reply's media",
                    "security": [],
                    "parameters": [
                        {"name": "media_id", "in": "path", "required": True, "schema": {"type": "integer"}},
                        {"name": "h", "in": "query", "required": True, "schema": {"type": "integer"}},
                        {"name": "e", "in": "query", "required": True, "schema": {"type": "integer"}},
                        {"name": "s", "in": "query", "required": True, "schema": {"type": "string"}},
                    ],
                    "responses": {
                        "200": {"description": "The image", "content": {"image/png": {}}},
                        **_errors(403, 404),
                    },
                }
            },
            "/health": {
                "get": {
                    "summary": "PostgreSQL and Redis reachability",
                    "security": [],
                    "responses": {"200": {"description": "Healthy"}, "503": {"description": "Unhealthy"}},
                }
            },
            "/metrics": {
                "get": {
                    "summary": "Prometheus metrics (text format); a bearer token when METRICS_TOKEN is set",
                    "security": [],
                    "responses": {"200": {"description": "text/plain"}, "401": {"description": "Token required"}},
                }
            },
        },
    }
