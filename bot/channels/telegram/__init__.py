"""The Telegram channel: webhook receiver (aiogram routers on aiohttp), reply sender, streaming drafts and the
attachment fetcher. Wired in only when TELEGRAM_BOT_TOKEN and TELEGRAM_WEBHOOK_SECRET are set."""

CHANNEL = "telegram"
