"""The ``dynorm`` command group; each command lives in a module of its own."""

from __future__ import annotations

import re

import click

from dynorm.core.errors import DynormError

from . import _design, _migrate, _tables, _workbench
from ._output import Interrupted

__all__ = ["cli", "main"]


#: What the library's messages advise (``connect()``'s arguments, Python calls), said with the
#: command's flags instead. Longer phrases first, so a later pattern never rewrites a result.
_FLAGS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p), flag)
    for p, flag in [
        (
            r"connect\(aws_access_key_id=\.\.\., aws_secret_access_key=\.\.\.\) or profile=",
            "--aws-access-key-id and --aws-secret-access-key, or --profile",
        ),
        (
            r"connect\(\)'s profile=, endpoint_url= and region_name=",
            "--profile, --endpoint-url and --region",
        ),
        (r"connect\(\.\.\., region_name='([^']*)'\)", r"--region \1"),
        (r"connect\(retry_quota=(\.\.\.)?\)", "lower --max-concurrency, or try again later"),
        (r"connect\(fast_path=False\)", "--no-fast-path"),
        (r"connect\(endpoint_url=\.\.\.\) and region_name\b", "--endpoint-url and --region"),
        (r"connect\(max_attempts=\.\.\.\)", "--max-attempts"),
        (r"connect\(connect_timeout=\.\.\.\)", "--connect-timeout"),
        (r"connect\(read_timeout=\.\.\.\)", "--read-timeout"),
        (r"connect\(attempt_timeout=\.\.\.\)", "--attempt-timeout"),
        (r"connect\(aws_access_key_id=\.\.\.\)", "--aws-access-key-id"),
        (r"connect\(aws_session_token=\.\.\.\)", "--aws-session-token"),
        (r"\bwithin (connect|read|attempt)_timeout=", r"within --\1-timeout "),
        (r"`await db\.create_table\(\)`", "`dynorm create-table MODULE:TABLE`"),
        (r"\bmigrate\(([\w.]+), from_=(.+?)\)(?=:|$)", r'migrate \1 --from "\2"'),
        (r"\bfrom_= ?", "--from "),
        (r"\bbackfill_index\(([\w.]+), '([^']*)'\): ", r"\1 --backfill --index \2: "),
        (r"\bbackfill_index\(([\w.]+)\): ", r"\1 --backfill: "),
        (r"\brepair_copies\(([\w.]+)\): ", r"\1 --copies: "),
    ]
]


def for_the_command_line(message: str) -> str:
    """``message`` with the advice of connect()'s arguments given as the command's flags."""
    for pattern, flag in _FLAGS:
        message = pattern.sub(flag, message)
    return message


class _Group(click.Group):
    """The command group: errors end as ``Error: ...`` and exit status 1, not a traceback.

    A DynormError says what to change (with the command's flags where the library names
    ``connect()``'s arguments); an OSError names the file that could not be read or written (a
    checkpoint, an output file). Ctrl-C ends a command with status 130 (see ``Interrupted``):
    commands that have done something say what and how to go on; at a prompt nothing is done.
    """

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except Interrupted:
            raise
        except click.UsageError:
            raise
        except click.ClickException as exc:
            said = for_the_command_line(exc.message)
            if said == exc.message:
                raise
            raise click.ClickException(said) from exc
        except click.Abort as exc:
            if isinstance(exc.__context__, KeyboardInterrupt):  # Ctrl-C at a prompt
                raise Interrupted("nothing was done") from None
            raise
        except KeyboardInterrupt:
            raise Interrupted(
                "the command stopped before it finished; run the same command again to complete it"
            ) from None
        except DynormError as exc:
            raise click.ClickException(
                for_the_command_line(f"{type(exc).__name__}: {exc}")
            ) from exc
        except OSError as exc:  # a checkpoint or output path: say which and why
            raise click.ClickException(str(exc)) from exc


@click.group(
    cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}
)
@click.version_option(package_name="dynorm")
def cli() -> None:
    """Tools for a dynorm single-table design: design view, tables, Workbench, migrations.

    Commands that take MODULE:TABLE import the module (from the current directory, or a file
    path such as app/models.py) and work on the dynorm.Table it names.
    """


cli.add_command(_design.design)
cli.add_command(_tables.create_table)
cli.add_command(_tables.delete_table)
cli.add_command(_workbench.workbench)
cli.add_command(_migrate.migrate)


def main() -> None:
    """The ``dynorm`` console script."""
    cli(prog_name="dynorm")
