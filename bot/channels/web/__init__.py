"""The web API as a channel: members' apps post messages to `bot.web.api`, and replies reach the request that
waits for them (or the notification feed) live over Redis."""

CHANNEL = "web"
