"""The `faa` console script as an operator runs it: settings from the environment, output and exit codes."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import asyncpg
import pytest

from bot.ops.cli import build_parser, main
from migrations.runner import load_migrations
from tests.bot.ops.conftest import Faa
from tests.bot.ops.test_local_servers import local_folder
from tests.conftest import EMBEDDING_DIM, PostgresInfo
from tools.storage import identities
from tools.storage.households import Principal, hash_token, resolve_token


def assert_clean_failure(err: str, message: str) -> None:
    assert f"faa: {message}" in err
    assert "Traceback" not in err


async def test_migrate_applies_the_schema_once(faa: Faa, capsys: pytest.CaptureFixture[str]) -> None:
    names = [f"{m.version:04d}_{m.name}" for m in load_migrations(EMBEDDING_DIM)]

    assert await faa("migrate") == 0
    assert capsys.readouterr().out == f"applied: {', '.join(names)}\n"

    assert await faa("migrate") == 0
    assert capsys.readouterr().out == "schema is up to date\n"


async def test_household_and_member_make_a_working_api_token(
    faa: Faa, admin: asyncpg.Connection, environment: PostgresInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await faa("household", "create", "Miller", "--timezone", "Europe/Berlin") == 0  # migrates first
    household = await admin.fetchrow("SELECT id, name, timezone FROM households")
    assert capsys.readouterr().out == f"household {household['id']} created: Miller\n"
    assert (household["name"], household["timezone"]) == ("Miller", "Europe/Berlin")

    assert (
        await faa("member", "add", "Anna", "--household", "Miller", "--timezone", "Europe/Berlin", "--role", "owner")
        == 0
    )

    out = capsys.readouterr().out
    printed = re.fullmatch(  # exactly these two lines: the token appears once
        r"member (\d+) added: Anna \(owner, Europe/Berlin\)\nAPI token \(shown once\): (faa_\S+)\n", out
    )
    assert printed is not None, out
    user_id, token = int(printed.group(1)), printed.group(2)
    anna = await admin.fetchrow("SELECT id, household_id, name, timezone, locale, role, api_token_hash FROM users")
    assert dict(anna) == {
        "id": user_id,
        "household_id": household["id"],
        "name": "Anna",
        "timezone": "Europe/Berlin",
        "locale": "en",
        "role": "owner",
        "api_token_hash": hash_token(token),  # only the hash is kept
    }
    app = await asyncpg.connect(environment.app_dsn)  # no household set: the token is all the caller has
    try:
        principal = await resolve_token(app, token)
        assert principal == Principal(user_id, household["id"])
        assert await resolve_token(app, token + "x") is None
    finally:
        await app.close()


async def test_household_with_an_unknown_timezone_is_refused(
    faa: Faa, admin: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await faa("household", "create", "Miller", "--timezone", "Mars/Olympus") == 2

    out, err = capsys.readouterr()
    assert_clean_failure(err, "unknown timezone 'Mars/Olympus'; use an IANA name such as Europe/Berlin")
    assert out == ""
    assert await admin.fetchval("SELECT count(*) FROM households") == 0


async def test_bad_member_requests_are_refused_with_a_message(
    faa: Faa, admin: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await faa("household", "create", "Miller", "--timezone", "Europe/Berlin") == 0
    assert await faa("member", "add", "Anna", "--household", "Miller", "--timezone", "Europe/Berlin") == 0
    capsys.readouterr()

    assert await faa("member", "add", "anna", "--household", "Miller", "--timezone", "Europe/Berlin") == 2
    assert_clean_failure(capsys.readouterr().err, "the household already has a member named 'anna'")

    assert await faa("member", "add", "Ben", "--household", "Atlantis", "--timezone", "Europe/Berlin") == 2
    assert_clean_failure(capsys.readouterr().err, "no household named 'Atlantis'")

    assert await faa("member", "add", "Ben", "--household", "Miller", "--timezone", "Mars/Olympus") == 2
    assert_clean_failure(capsys.readouterr().err, "unknown timezone 'Mars/Olympus'")

    assert capsys.readouterr().out == ""
    assert [r["name"] for r in await admin.fetch("SELECT name FROM users")] == ["Anna"]
    assert await admin.fetchval("SELECT count(*) FROM user_identities") == 1


async def test_a_household_name_shared_by_two_needs_the_id(
    faa: Faa, admin: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await faa("household", "create", "Miller") == 0
    assert await faa("household", "create", "Miller") == 0
    first, second = [r["id"] for r in await admin.fetch("SELECT id FROM households ORDER BY id")]
    capsys.readouterr()

    assert await faa("member", "add", "Anna", "--household", "Miller", "--timezone", "UTC") == 2
    assert_clean_failure(capsys.readouterr().err, "several households are named 'Miller'; use the id")

    assert await faa("member", "add", "Anna", "--household", str(second), "--timezone", "UTC") == 0
    assert await admin.fetchval("SELECT household_id FROM users WHERE name = 'Anna'") == second
    assert await admin.fetchval("SELECT timezone FROM households WHERE id = $1", first) == "UTC"  # the default


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (
            ["member", "add", "Ben", "--household", "Miller", "--timezone", "UTC", "--role", "admin"],
            "argument --role: invalid choice: 'admin'",
        ),
        (["member", "add", "Ben", "--household", "Miller"], "the following arguments are required: --timezone"),
        (["household"], "the following arguments are required: action"),
        (["chat"], "the following arguments are required: --member"),
        (["launch"], "invalid choice: 'launch'"),
    ],
    ids=["invalid-role", "no-timezone", "no-action", "no-member", "unknown-command"],
)
def test_argparse_refuses_malformed_commands(
    environment: PostgresInfo, argv: list[str], complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)  # parsing fails before anything runs

    assert exit_.value.code == 2
    assert complaint in capsys.readouterr().err


def test_one_cli_holds_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])

    assert exit_.value.code == 0
    usage = capsys.readouterr().out
    commands = ("migrate", "serve", "worker", "up", "chat", "reembed", "household", "member", "invite", "telegram")
    assert all(command in usage for command in commands)
    with pytest.raises(SystemExit):
        main(["chat", "--help"])
    assert "--no-worker" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("variable", "value", "named"),
    [
        ("WEB_PORT", "abc", "port"),
        ("WEB_PORT", "70000", "port"),
        ("WORKER_LEASE_S", "1", "lease_s"),
        ("DATABASE_APP_ROLE", "Robert'); DROP TABLE", "app_role"),
    ],
)
async def test_invalid_settings_exit_2_naming_the_problem(
    faa: Faa, variable: str, value: str, named: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(variable, value)

    assert await faa("migrate") == 2

    out, err = capsys.readouterr()
    assert err.startswith("faa: invalid settings (environment or .env):")
    assert named in err
    assert "Traceback" not in err
    assert out == ""


async def test_settings_are_read_from_dot_env_in_the_working_folder(
    faa: Faa, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".env").write_text("WEB_PORT=abc\n")

    assert await faa("migrate") == 2

    assert "port" in capsys.readouterr().err


async def test_an_unreachable_database_is_reported_without_traceback(
    faa: Faa, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DATABASE_ADMIN_URL", f"postgresql://postgres@/postgres?host={tmp_path}/no-server")

    assert await faa("migrate") == 1

    assert_clean_failure(capsys.readouterr().err, "cannot reach a service:")


async def test_up_without_an_llm_starts_the_local_model_and_reports_its_failure(
    faa: Faa,
    admin: asyncpg.Connection,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    local = local_folder(tmp_path / "local")
    monkeypatch.setenv("LOCAL_DATA_DIR", str(local.data_dir))
    monkeypatch.setenv("LOCAL_LLM_PORT", str(local.llm_port))
    monkeypatch.setenv("LOCAL_EMBEDDING_PORT", str(local.embedding_port))
    monkeypatch.setenv("LOCAL_SPEECH", "false")  # voice has its own tests; its logs would outlive this stderr
    monkeypatch.setenv("FAKE_LOCAL_EXIT", "llama-server")

    assert await faa("up") == 2

    out, err = capsys.readouterr()
    assert out == ""
    assert_clean_failure(err, "llama.cpp stopped while starting")
    assert "failing at start-up" in err  # the server's own last lines
    assert await admin.fetchval("SELECT to_regclass('schema_migrations')") is None  # gave up before touching it


@pytest.mark.parametrize(
    "commands",
    [
        [["household", "create", ""]],
        [["household", "create", "M" * 201]],
        [["household", "create", "Miller"], ["member", "add", "", "--household", "Miller", "--timezone", "UTC"]],
        [["member", "add", "Anna", "--household", "Miller", "--timezone", "UTC"]],  # on a brand-new database
    ],
    ids=["empty-household-name", "long-household-name", "empty-member-name", "member-before-any-household"],
)
async def test_bad_input_is_not_reported_as_an_unreachable_service(
    faa: Faa, commands: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    *setup, bad = commands
    for argv in setup:
        assert await faa(*argv) == 0
    capsys.readouterr()

    assert await faa(*bad) == 2

    err = capsys.readouterr().err
    assert err.startswith("faa: ")
    assert "cannot reach a service" not in err


async def test_invite_prints_a_one_time_code_that_links_a_channel(
    faa: Faa, admin: asyncpg.Connection, environment: PostgresInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await faa("household", "create", "Miller", "--timezone", "Europe/Berlin") == 0
    assert await faa("member", "add", "Anna", "--household", "Miller", "--timezone", "Europe/Berlin") == 0
    capsys.readouterr()

    assert await faa("invite", "--member", "anna", "--days", "2") == 0
    out = capsys.readouterr().out
    printed = re.search(r"one-time invite code for Anna \(valid 2 days\): ([A-Z0-9]{5}-[A-Z0-9]{5})\n", out)
    assert printed is not None, out
    assert f"/start {printed.group(1)}" in out and f"JOIN {printed.group(1)}" in out
    web = re.search(r"Web app: open http://127\.0\.0\.1:8080/join/([A-Z0-9]{5}-[A-Z0-9]{5}) ", out)
    assert web is not None and web.group(1) != printed.group(1), out  # a sign-in link of its own
    lifetimes = await admin.fetch("SELECT expires_at - created_at AS ttl FROM invites")
    assert [row["ttl"] for row in lifetimes] == [timedelta(days=2)] * 2

    app = await asyncpg.connect(environment.app_dsn)  # the app role redeems it without knowing the household
    try:
        principal = await identities.redeem_invite(app, printed.group(1), "threema", "ECHOECHO")
        assert principal is not None and await identities.redeem_invite(app, printed.group(1), "email", "x@y") is None
    finally:
        await app.close()
    anna = await admin.fetchval("SELECT id FROM users WHERE name = 'Anna'")
    assert principal.user_id == anna

    assert await faa("invite", "--member", "Zoe") == 2
    assert_clean_failure(capsys.readouterr().err, "no member named 'Zoe'")


async def test_household_digests_are_shown_and_chosen(
    faa: Faa, admin: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await faa("household", "create", "Miller", "--timezone", "Asia/Shanghai") == 0
    household_id = await admin.fetchval("SELECT id FROM households WHERE name = 'Miller'")
    capsys.readouterr()

    assert await faa("household", "digests", "Miller") == 0
    assert capsys.readouterr().out.splitlines() == [
        f"household {household_id} digests (Asia/Shanghai):",
        "  monthly  on  on day 1 at 08:00",
        "  weekly   off on mon at 08:00",
        "  morning  off at 08:00",
    ]
    argv = ["--monthly", "on", "--day", "2", "--time", "09:30", "--weekly", "on", "--weekday", "sun"]
    assert await faa("household", "digests", "Miller", *argv, "--morning-agenda", "07:00") == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        "  monthly  on  on day 2 at 09:30",
        "  weekly   on  on sun at 08:00",
        "  morning  on  at 07:00",
    ]
    assert await faa("household", "digests", str(household_id), "--monthly", "off", "--morning-agenda", "off") == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        "  monthly  off on day 2 at 09:30",
        "  weekly   on  on sun at 08:00",
        "  morning  off at 07:00",
    ]
    rows = await admin.fetch(
        "SELECT kind, enabled FROM digest_schedules WHERE household_id = $1 ORDER BY kind", household_id
    )
    assert [(r["kind"], r["enabled"]) for r in rows] == [("monthly", False), ("morning", False), ("weekly", True)]


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (["--day", "31"], "argument --day: invalid choice: 31"),
        (["--time", "25:00"], "'25:00' is not a time like 08:00"),
        (["--morning-agenda", "soon"], "'soon' is not a time like 08:00"),
        (["--weekday", "someday"], "argument --weekday: invalid choice: 'someday'"),
    ],
)
def test_bad_digest_choices_are_refused(
    environment: PostgresInfo, argv: list[str], complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["household", "digests", "Miller", *argv])
    assert exit_.value.code == 2
    assert complaint in capsys.readouterr().err


def test_member_add_defaults_to_an_adult_speaking_english() -> None:
    parser = build_parser()

    args = parser.parse_args(["member", "add", "Ben", "--household", "Miller", "--timezone", "Europe/Berlin"])

    assert (args.name, args.household, args.timezone, args.role, args.locale) == (
        "Ben",
        "Miller",
        "Europe/Berlin",
        "adult",
        "en",
    )
