"""The first run's setup link: printed while the database has no household, one working link at a time."""

from __future__ import annotations

import asyncpg

from bot.ops.runtime import Runtime
from bot.ops.setup_link import public_base, setup_link
from engine.settings import DatabaseSettings, MediaSettings, Settings, WebSettings
from tests.conftest import PostgresInfo
from tools.storage import web_sessions
from tools.storage.database import Database


def _runtime(database: PostgresInfo, host: str, port: int) -> Runtime:
    settings = Settings(
        database=DatabaseSettings(url=database.app_dsn, admin_url=database.admin_dsn),
        web=WebSettings(host=host, port=port),
    )
    return Runtime(settings)


async def test_an_empty_database_gets_one_working_link_and_a_household_none(own_database: PostgresInfo) -> None:
    runtime = _runtime(own_database, host="0.0.0.0", port=8123)
    first, second = await setup_link(runtime), await setup_link(runtime)
    assert first is not None and second is not None
    assert first.startswith("http://127.0.0.1:8123/setup/") and first != second

    db = await Database.connect(own_database.app_dsn, min_size=1, max_size=1)
    try:
        async with db.unscoped() as conn:
            old = await web_sessions.setup_household(
                conn, first.rsplit("/", 1)[1], household="A", timezone="UTC", member="Ann", locale="en"
            )
            new = await web_sessions.setup_household(
                conn, second.rsplit("/", 1)[1], household="B", timezone="UTC", member="Bo", locale="zh"
            )
            assert old is None and new is not None  # only the link printed last works
            member = await web_sessions.resolve(conn, new[1])
        assert member is not None and (member.name, member.role, member.locale) == ("Bo", "owner", "zh")
        async with db.unscoped() as conn:  # the app role sees no setup code
            assert await conn.fetchval("SELECT count(*) FROM setup_codes") == 0
    finally:
        await db.close()
    assert await setup_link(runtime) is None  # a household exists now
    admin = await asyncpg.connect(own_database.admin_dsn)
    try:
        assert await admin.fetchval("SELECT count(*) FROM setup_codes WHERE used_at IS NULL") == 0
    finally:
        await admin.close()


def test_links_use_the_public_address_when_one_is_set() -> None:
    assert public_base(Settings(media=MediaSettings(base_url="https://faa.example.org/"))) == "https://faa.example.org"
    assert public_base(Settings(web=WebSettings(host="::", port=80))) == "http://127.0.0.1:80"
