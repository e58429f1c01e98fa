"""Keep an agent's conversation under a token budget (a pydantic-ai history processor).

`ContextCompactor.process` runs before every model request of an agent (through
pydantic-ai's `ProcessHistory` capability, see `history_capability`) and returns the history
the model gets, which also becomes the run's history (so a stored conversation stays
compact). It acts only when the history is over budget: more tokens than
`ContextBudget.max_tokens`, or more messages than `max_messages` (seed 004 compresses past
40 events and keeps the last 20).

1. Old tool results are cleared first: every tool return older than the last
   `keep_messages` messages becomes a short stub naming its tool and the data labels it
   produced or mentioned, so a label the conversation still needs is never lost.
2. If that is not enough, the older turns are summarised (the cheap `inline` tier, through
   the session's `ModelRouter`) into one message that starts with `SUMMARY_MARKER` and
   ends with every data label the summarised part named. The cut falls only where a new
   request starts, so a tool call and its return are always kept together. A failing
   summariser never breaks the turn: a plain account (requests and labels) replaces it.
3. If the recent messages alone are still over budget, their tool results are stubbed too,
   all but the latest (which the model is about to read).

Tokens: the provider's count (input + output tokens of the latest response) where it
reports one, plus an estimate (4 characters a token) of what came after; an estimate of the
whole history otherwise. The larger of that count and the estimate decides, so neither a
provider that counts low nor a count made before an earlier compaction lets it overflow.
Each compaction publishes a `context_compacted` event (tokens and messages before and
after, results cleared, messages summarised); `session_history` wires all of it to a
session. Imports pydantic-ai and, from xhelio, `config`, `agents.models` and
`tools.workspace`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RunUsage

from xhelio.agents.models import ModelRouter
from xhelio.config import Settings
from xhelio.tools.workspace import Workspace

__all__ = [
    "SUMMARY_MARKER",
    "Compaction",
    "ContextBudget",
    "ContextCompactor",
    "count_tokens",
    "estimate_tokens",
    "history_capability",
    "llm_summarizer",
    "session_history",
]

logger = logging.getLogger(__name__)

SUMMARY_MARKER = "[Summary of the earlier conversation, for context; not a new request]"
CLEARED_MARKER = "[cleared to save context]"
CHARS_PER_TOKEN = 4
_STUB_OVER_CHARS = 240
"""Tool results shorter than this are kept: a stub would not save anything."""
_TRANSCRIPT_PART_CHARS = 600
_LABEL_KEY = re.compile(r"(^|_)labels?$")

Summarize = Callable[[str], Awaitable[str]]
"""Turns a transcript of older turns into a short summary (an LLM on the cheap tier)."""
Publish = Callable[["Compaction"], None]
LabelSource = Callable[[], Iterable[str]]

SUMMARY_PROMPT = """\
You compress the older part of a conversation between a space physicist and a data \
assistant. Write a short factual summary: what the user asked, which datasets, \
parameters and time ranges were used, which data labels exist and what they hold, \
figures made, results and numbers with units, and what failed. Keep every data label \
and dataset id exactly as written. No advice, no new requests."""


@dataclass(frozen=True)
class ContextBudget:
    """How large an agent's history may grow before it is compacted."""

    max_tokens: int = 60_000
    max_messages: int = 40
    keep_messages: int = 20

    @classmethod
    def of(cls, settings: Settings) -> ContextBudget:
        """The budget the settings configure."""
        return cls(
            settings.context_budget_tokens,
            settings.context_max_messages,
            settings.context_keep_messages,
        )


@dataclass(frozen=True)
class Compaction:
    """What one compaction did, for the trace."""

    agent: str
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    results_cleared: int
    messages_summarized: int
    summary_source: str = ""
    """"llm", "plain" (the summariser failed or none is configured) or "" (no summary)."""

    def describe(self) -> str:
        """One line for the trace."""
        text = (
            f"context compacted for {self.agent}: {self.tokens_before} -> {self.tokens_after} "
            f"tokens, {self.messages_before} -> {self.messages_after} messages"
        )
        if self.results_cleared:
            text += f", {self.results_cleared} old tool result(s) cleared"
        if self.messages_summarized:
            text += f", {self.messages_summarized} message(s) summarised ({self.summary_source})"
        return text


# -- measuring ------------------------------------------------------------------------------


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str, ensure_ascii=False)


def _part_text(part: Any) -> str:
    if isinstance(part, ToolCallPart):
        return part.tool_name + (part.args_as_json_str() if part.args else "")
    if isinstance(part, ToolReturnPart | RetryFeedbackPart | UserPromptPart | TextPart):
        return _text(part.content)
    return _text(getattr(part, "content", ""))


def _chars(messages: Iterable[ModelMessage]) -> int:
    return sum(len(_part_text(part)) for message in messages for part in message.parts)


def estimate_tokens(messages: Sequence[ModelMessage]) -> int:
    """An estimate of the history's size in tokens (4 characters a token)."""
    return _chars(messages) // CHARS_PER_TOKEN


def count_tokens(messages: Sequence[ModelMessage]) -> int:
    """The history's size: the provider's count where reported, plus an estimate of the rest."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, ModelResponse) and message.usage.input_tokens > 0:
            reported = message.usage.input_tokens + message.usage.output_tokens
            return reported + estimate_tokens(messages[index + 1 :])
    return estimate_tokens(messages)


# -- labels ---------------------------------------------------------------------------------


def _json_labels(value: Any, out: list[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():  # pyright: ignore[reportUnknownVariableType]
            if _LABEL_KEY.search(str(key)) or key == "produced":  # pyright: ignore[reportUnknownArgumentType]
                for text in _strings(item):
                    if text not in out:
                        out.append(text)
            else:
                _json_labels(item, out)
    elif isinstance(value, list):
        for item in value:  # pyright: ignore[reportUnknownVariableType]
            _json_labels(item, out)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v.strip()]  # pyright: ignore[reportUnknownVariableType]
    return []


def labels_in(text: str, known: Iterable[str]) -> list[str]:
    """Data labels a tool result names: its label fields, and any known label it mentions."""
    found: list[str] = []
    with contextlib.suppress(ValueError):
        _json_labels(json.loads(text), found)
    found += [label for label in known if label not in found and label in text]
    return found


# -- compacting -----------------------------------------------------------------------------


def _is_boundary(message: ModelMessage) -> bool:
    """A request that answers no tool call: the history may be cut right before it."""
    return isinstance(message, ModelRequest) and not any(
        isinstance(part, ToolReturnPart | RetryFeedbackPart) for part in message.parts
    )


def _stub(part: ToolReturnPart, known: Sequence[str]) -> ToolReturnPart | None:
    text = _text(part.content)
    if text.startswith(CLEARED_MARKER) or len(text) < _STUB_OVER_CHARS:
        return None
    labels = labels_in(text, known)
    stub = f"{CLEARED_MARKER} {part.tool_name} result"
    stub += f"; data labels: {', '.join(labels)}" if labels else "; it named no data labels"
    return replace(part, content=stub)


def clear_old_results(
    messages: list[ModelMessage], keep: int, known: Sequence[str]
) -> tuple[list[ModelMessage], int]:
    """Stub every long tool result older than the last `keep` messages; (history, count)."""
    out: list[ModelMessage] = []
    cleared = 0
    old = max(0, len(messages) - keep)
    for index, message in enumerate(messages):
        if index >= old or not isinstance(message, ModelRequest):
            out.append(message)
            continue
        parts: list[Any] = []
        for part in message.parts:
            stub = _stub(part, known) if isinstance(part, ToolReturnPart) else None
            cleared += stub is not None
            parts.append(stub or part)
        out.append(replace(message, parts=parts))
    return out, cleared


def cut_point(messages: Sequence[ModelMessage], keep: int) -> int:
    """Where older turns end: the last request start at or before len - keep (0: none)."""
    for index in range(min(len(messages) - keep, len(messages) - 1), 0, -1):
        if _is_boundary(messages[index]):
            return index
    return 0


def transcript(messages: Sequence[ModelMessage]) -> str:
    """The older turns as plain text for the summariser (long parts shortened)."""
    lines: list[str] = []
    for message in messages:
        for part in message.parts:
            text = _part_text(part)[:_TRANSCRIPT_PART_CHARS]
            if isinstance(part, UserPromptPart):
                lines.append(f"User: {text}")
            elif isinstance(part, TextPart):
                lines.append(f"Assistant: {text}")
            elif isinstance(part, ToolCallPart):
                lines.append(f"Tool call: {text}")
            elif isinstance(part, ToolReturnPart):
                lines.append(f"Tool result ({part.tool_name}): {text}")
    return "\n".join(lines)


def _plain_summary(messages: Sequence[ModelMessage]) -> str:
    asked = [
        _text(part.content)[:200]
        for message in messages
        for part in message.parts
        if isinstance(part, UserPromptPart) and not _text(part.content).startswith(SUMMARY_MARKER)
    ]
    return "Earlier requests: " + ("; ".join(asked[-20:]) or "none") + "."


def _labels_of(messages: Sequence[ModelMessage], known: Sequence[str]) -> list[str]:
    """Every data label the messages name (tool results, stubs and earlier summaries)."""
    found: list[str] = []
    for message in messages:
        for part in message.parts:
            text = _part_text(part)
            names: list[str] = []
            if isinstance(part, ToolReturnPart):
                names = labels_in(text, known)
            for line in text.splitlines():
                if line.startswith("Data labels so far: ") or CLEARED_MARKER in line:
                    tail = line.split("labels", 1)[-1].split(":", 1)[-1]
                    names += [n.strip(" .") for n in tail.split(",") if n.strip(" .")]
            found += [n for n in names if n not in found and not n.startswith("it named no")]
    return found


class ContextCompactor:
    """A history processor that keeps one agent's history within its `ContextBudget`."""

    def __init__(
        self,
        budget: ContextBudget,
        agent: str,
        *,
        summarize: Summarize | None = None,
        known_labels: LabelSource = tuple,
        publish: Publish | None = None,
    ) -> None:
        self.budget = budget
        self.agent = agent
        self.summarize = summarize
        self.known_labels = known_labels
        self.publish = publish

    def over_budget(self, messages: Sequence[ModelMessage], tokens: int) -> bool:
        """Whether the history must shrink."""
        return tokens > self.budget.max_tokens or len(messages) > self.budget.max_messages

    async def process(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """The history to send: unchanged while within budget, compacted otherwise."""
        before = max(count_tokens(messages), estimate_tokens(messages))
        if not self.over_budget(messages, before):
            return messages
        known = list(self.known_labels())
        keep = max(2, self.budget.keep_messages)
        compacted, cleared = clear_old_results(messages, keep, known)
        summarized, source = 0, ""
        if self.over_budget(compacted, estimate_tokens(compacted)):
            cut = cut_point(compacted, keep)
            if cut > 0:
                older, recent = compacted[:cut], compacted[cut:]
                text, source = await self._summary(older)
                labels = _labels_of(older, known)
                body = f"{SUMMARY_MARKER}\n{text}"
                if labels:
                    body += "\nData labels so far: " + ", ".join(labels)
                compacted = [ModelRequest(parts=[UserPromptPart(body)]), *recent]
                summarized = len(older)
        if self.over_budget(compacted, estimate_tokens(compacted)):
            # The recent turns alone are too large: only the latest results stay whole.
            compacted, more = clear_old_results(compacted, 1, known)
            cleared += more
        if cleared or summarized:
            self._report(messages, before, compacted, cleared, summarized, source)
        return compacted

    async def _summary(self, older: Sequence[ModelMessage]) -> tuple[str, str]:
        if self.summarize is not None:
            try:
                text = (await self.summarize(transcript(older))).strip()
                if text:
                    return text, "llm"
            except Exception as exc:  # the turn must go on; a plain account replaces it
                logger.warning("Context summary failed (%s); using a plain account.", exc)
        return _plain_summary(older), "plain"

    def _report(
        self,
        messages: Sequence[ModelMessage],
        before: int,
        compacted: Sequence[ModelMessage],
        cleared: int,
        summarized: int,
        source: str,
    ) -> None:
        if self.publish is None:
            return
        self.publish(
            Compaction(
                self.agent,
                before,
                estimate_tokens(compacted),
                len(messages),
                len(compacted),
                cleared,
                summarized,
                source,
            )
        )


UsageRecorder = Callable[[str, RunUsage], None]


def llm_summarizer(router: ModelRouter, record_usage: UsageRecorder | None = None) -> Summarize:
    """A summariser on the cheap `inline` tier (the fallback model after a rate limit)."""
    agent: Agent[None, str] = Agent(output_type=str, instructions=SUMMARY_PROMPT, name="context")

    async def summarize(text: str) -> str:
        result = await router.run_with_fallback(
            lambda model: agent.run(
                text, model=model, model_settings=router.settings_for("inline")
            ),
            "inline",
        )
        if record_usage is not None:
            record_usage("context_summary", result.usage)
        return result.output

    return summarize


def history_capability(compactor: ContextCompactor) -> ProcessHistory[Any]:
    """The pydantic-ai capability that runs `compactor` before every model request."""
    return ProcessHistory(compactor.process)


def session_history(
    workspace: Workspace,
    router: ModelRouter,
    agent: str,
    record_usage: UsageRecorder | None = None,
) -> ProcessHistory[Any]:
    """The capability that keeps `agent`'s history within the session's context budget.

    The budget comes from the session's settings, summaries from the `inline` tier, the
    labels to keep from the session's DataStore, and each compaction becomes a
    `context_compacted` event of the session.
    """
    session = workspace.session

    def publish(done: Compaction) -> None:
        session.events.publish(
            "context_compacted", agent=agent, summary=done.describe(), data=asdict(done)
        )

    compactor = ContextCompactor(
        ContextBudget.of(workspace.context.settings),
        agent,
        summarize=llm_summarizer(router, record_usage),
        known_labels=session.store.labels,
        publish=publish,
    )
    return history_capability(compactor)
