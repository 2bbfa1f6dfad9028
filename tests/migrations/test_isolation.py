"""The CI check for household isolation: every household table has RLS with FORCE; the app role can't bypass it."""

import asyncpg

from tests.conftest import APP_ROLE
from tools.storage.database import Database


async def test_every_household_table_forces_row_level_security(admin_conn: asyncpg.Connection) -> None:
    rows = await admin_conn.fetch(
        """SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
                  (SELECT count(*) FROM pg_policy p WHERE p.polrelid = c.oid) AS policies
           FROM pg_class c
           WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
             AND (c.relname = 'households' OR EXISTS (
                  SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'household_id'
                  AND NOT a.attisdropped))"""
    )
    assert len(rows) >= 12
    unprotected = [
        r["relname"] for r in rows if not (r["relrowsecurity"] and r["relforcerowsecurity"] and r["policies"])
    ]
    assert unprotected == []


async def test_app_role_cannot_bypass_rls_and_owns_nothing(admin_conn: asyncpg.Connection) -> None:
    role = await admin_conn.fetchrow(
        "SELECT rolsuper, rolbypassrls, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = $1", APP_ROLE
    )
    assert role is not None
    assert not any(role.values())
    owned = await admin_conn.fetchval(
        "SELECT count(*) FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner WHERE r.rolname = $1", APP_ROLE
    )
    assert owned == 0
    member_of = await admin_conn.fetch(
        "SELECT b.rolname FROM pg_auth_members m JOIN pg_roles b ON b.oid = m.roleid "
        "JOIN pg_roles r ON r.oid = m.member WHERE r.rolname = $1",
        APP_ROLE,
    )
    assert member_of == []


async def test_without_a_household_the_app_sees_nothing(db: Database, admin_conn: asyncpg.Connection) -> None:
    await admin_conn.execute("INSERT INTO households (name) VALUES ('Hidden')")
    async with db.unscoped() as conn:
        assert await conn.fetchval("SELECT count(*) FROM households") == 0
        assert await conn.fetchval("SELECT count(*) FROM memories") == 0
