"""Everything the sandbox returns is text to be shown, never terminal control.

Error messages, printed output, warnings, string results, attribute values and labels
written by sandboxed code reach the CLI, the web app and MCP clients. They come back
without ESC sequences (OSC 52 writes the clipboard, CSI moves the cursor), control
characters or bidi overrides, and the CLI strips them again where it prints.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import replace

import pandas as pd
import pytest
from rich.console import Console

from xhelio.api.models import AskResponse, ErrorInfo
from xhelio.cli.progress import print_turn_result
from xhelio.config import Settings
from xhelio.errors import SandboxError
from xhelio.sandbox import SandboxExecutor
from xhelio.sandbox.text import display_text

OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"
CURSOR = "\x1b[2J\x1b[1;1H\x1b[3A"
HOSTILE = f"bad{OSC52}{CURSOR}\x9b2J\r\x08\u202eevil\u2066x\x1bP1$q\x1b\\done"
# The same text built by sandboxed code from chr(), since literals hold no ESC there.
HOSTILE_IN_CODE = (
    "E = chr(27)\n"
    "text = 'bad' + E + ']52;c;cm0gLXJmIH4=' + chr(7) + E + '[2J' + E + '[1;1H' + E + '[3A'"
    " + chr(0x9b) + '2J' + chr(13) + chr(8) + chr(0x202e) + 'evil' + chr(0x2066) + 'x'"
    " + E + 'P1$q' + E + chr(92) + 'done'\n"
)


def _is_display_text(text: str) -> bool:
    controls = [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]
    bidi = [c for c in text if 0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069]
    return not controls and not bidi


@pytest.fixture(scope="module")
def executor() -> Iterator[SandboxExecutor]:
    with SandboxExecutor(replace(Settings(), sandbox_timeout_s=30.0)) as sandbox:
        sandbox.warm_up()
        yield sandbox


def test_display_text_strips_sequences_and_keeps_text() -> None:
    cleaned = display_text(HOSTILE)
    assert _is_display_text(cleaned)
    assert "52;c" not in cleaned and "[2J" not in cleaned and "1$q" not in cleaned
    assert cleaned.startswith("bad") and cleaned.endswith("done") and "evil" in cleaned
    kept = "B = 5 nT\n\tsecond line: ±3 sigma, 東京, é"
    assert display_text(kept) == kept


def test_error_messages_come_back_clean(executor: SandboxExecutor) -> None:
    with pytest.raises(SandboxError) as info:
        executor.run(HOSTILE_IN_CODE + "raise ValueError(text)\nresult = 1", {})
    assert info.value.category == "runtime"
    assert _is_display_text(info.value.message) and "evil" in info.value.message
    assert _is_display_text(str(info.value)) and _is_display_text(info.value.to_dict()["message"])


def test_validation_messages_quoting_literals_come_back_clean(executor: SandboxExecutor) -> None:
    with pytest.raises(SandboxError) as info:
        executor.run(f"result = df.agg({HOSTILE!r})", {"a": pd.DataFrame({"x": [1.0]})})
    assert info.value.category == "validation"
    assert _is_display_text(info.value.message)


def test_printed_output_warnings_and_strings_come_back_clean(executor: SandboxExecutor) -> None:
    outcome = executor.run(
        HOSTILE_IN_CODE + "print(text)\nimport_free = np.log(np.array([-1.0]))\nresult = text",
        {},
    )
    assert isinstance(outcome.value, str)
    for shown in [outcome.value, outcome.stdout, *outcome.warnings]:
        assert _is_display_text(shown)
    assert "evil" in outcome.value and "evil" in outcome.stdout


def test_labels_with_control_characters_are_refused_and_attrs_cleaned(
    executor: SandboxExecutor,
) -> None:
    with pytest.raises(SandboxError) as info:
        executor.run(HOSTILE_IN_CODE + "result = pd.DataFrame({text: [1.0]})", {})
    assert info.value.category == "output" and "control characters" in info.value.message
    outcome = executor.run(
        HOSTILE_IN_CODE + "a = xr.DataArray([1.0], dims='t')\na.attrs['units'] = text\nresult = a",
        {},
    )
    units = outcome.value.attrs["units"]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
    assert isinstance(units, str) and _is_display_text(units)


def test_the_cli_prints_errors_and_answers_without_terminal_control() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=False, width=200)
    error = ErrorInfo(type="SandboxError", message=f"oops {HOSTILE}")
    print_turn_result(console, AskResponse(answer=f"answer {HOSTILE}", session_id="s", error=error))
    printed = buffer.getvalue()
    assert "\x1b" not in printed and _is_display_text(printed)
    assert "oops" in printed and "answer" in printed
