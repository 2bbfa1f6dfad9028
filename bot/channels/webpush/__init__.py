"""Web Push as a channel: a push message to each browser a member turned push on in, for what the web app delivers
to them while they have no page of it open (`pushes.py` decides what and when, `sender.py` sends)."""

from tools.storage.push import CHANNEL

__all__ = ["CHANNEL"]
