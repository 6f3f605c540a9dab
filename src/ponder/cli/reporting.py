"""How commands end on failure: one line on stderr and an exit code."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn, TextIO

import typer
from rich.console import Console

from ponder.cli.errors import EXIT_PIPE_CLOSED, describe_failure
from ponder.cli.session import model_base_url
from ponder.config import AgentConfig, ConfigWarning

__all__ = ["fail", "plain_console", "reported", "show_warnings_plainly", "stdout_closed"]

_SHOW_WARNING = warnings.showwarning


def plain_console(stderr: bool = False) -> Console:
    """A console for the commands' plain output: no highlighting, long lines kept whole."""
    return Console(highlight=False, stderr=stderr, soft_wrap=True)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """A configuration warning as one line that names the user's file (in its message)."""
    if issubclass(category, ConfigWarning):
        plain_console(stderr=True).print(f"warning: {message}", markup=False)
    else:
        _SHOW_WARNING(message, category, filename, lineno, file, line)


def show_warnings_plainly() -> None:
    """Print configuration warnings as ``warning: ...`` lines, without ponder's source."""
    warnings.showwarning = _show_warning


def fail(line: str, code: int) -> NoReturn:
    """Print ``line`` on stderr and exit with ``code``."""
    plain_console(stderr=True).print(line, markup=False)
    raise typer.Exit(code)


def stdout_closed() -> typer.Exit:
    """The exit for a reader of stdout that went away: quiet, as the shell's own tools do.

    Whatever is still buffered for stdout goes to the null device, so the interpreter's
    last flush does not fail again.
    """
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, sys.stdout.fileno())
    finally:
        os.close(null)
    return typer.Exit(EXIT_PIPE_CLOSED)


@contextmanager
def reported(config: list[AgentConfig] | None = None) -> Iterator[None]:
    """Turn any failure inside into one line and an exit code.

    ``config`` is filled in by the command once loaded, so errors can name the model URL.
    """
    try:
        yield
    except typer.Exit:
        raise
    except BrokenPipeError:
        raise stdout_closed() from None
    except (Exception, KeyboardInterrupt) as error:
        loaded = config[0] if config else None
        failure = describe_failure(error, base_url=model_base_url(loaded))
        fail(failure.line, failure.exit_code)
