"""``dynorm design``, and what every command says about a MODULE:TABLE it cannot use."""

from __future__ import annotations

import orjson
import pytest

from .cli import ROOT, Cli

pytestmark = pytest.mark.integration


def test_design_prints_the_key_table_and_the_patterns(cli: Cli) -> None:
    ran = cli("design", "tests.seed_models:app")

    assert ran.code == 0, ran.output
    lines = ran.out.splitlines()
    assert any(
        "Org" in line and "ORG#{name}" in line and "METADATA#{name}" in line for line in lines
    )
    assert any("User.tickets" in line and "1 Query on GSI1, newest first" in line for line in lines)


def test_design_of_a_file_path_with_sibling_imports_as_markdown(cli: Cli) -> None:
    # The seed examples import `common` from their own directory, as scripts do.
    ran = cli("design", "examples/seed_003_strategies.py:table", "--format", "markdown")

    assert ran.code == 0, ran.output
    assert ran.out.startswith("### Table `strategies`\n")
    assert (
        "| Customer.addresses | `db.get(Customer, customer_id=…, load=[Customer.addresses])` | "
        "Embedded(key='nickname', max_items=20) | the parent's GetItem |"
    ) in ran.out


def test_design_as_json_is_the_design_data(cli: Cli) -> None:
    ran = cli("design", "seed_000_organizations:table", "--format", "json", cwd=ROOT / "examples")

    assert ran.code == 0, ran.output
    data = orjson.loads(ran.out)
    assert data["table"] == "orgs"
    assert [e["entity"] for e in data["entities"]] == ["Org", "User"]
    users = next(p for p in data["patterns"] if p["name"] == "Org.users")
    assert users["cost"] == "1 Query on the table"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("tests.seed_models", "is not MODULE:TABLE"),
        ("tests.no_such_module:app", "no module 'tests.no_such_module'"),
        ("tests.seed_models:nothing", "has no attribute 'nothing'; its Tables: app"),
        ("tests.seed_models:Org", "is a type, not a dynorm.Table"),
        ("examples/missing.py:table", "no file 'examples/missing.py'"),
    ],
)
@pytest.mark.parametrize("command", ["design", "create-table"])
def test_a_target_that_names_no_table_is_a_usage_error(
    cli: Cli, command: str, target: str, message: str
) -> None:
    ran = cli(command, target)

    assert ran.code == 2
    assert message in ran.err
    assert "Traceback" not in ran.err


def test_the_help_lists_every_command(cli: Cli) -> None:
    ran = cli("--help")

    assert ran.code == 0
    for command in ("design", "create-table", "delete-table"):
        assert command in ran.out
