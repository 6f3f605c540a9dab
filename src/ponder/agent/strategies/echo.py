"""Whether an answer repeats ponder's own instructions, by similarity to what was sent.

Small models answer with the runtime's words: a correction sentence verbatim, the
final-answer instruction with a word changed, the "results of your tool calls" header, all
of it HTML-escaped by the server's template. A fixed list of phrases misses most of that,
so the comparison is against the instruction texts this run actually sent (`said`): the
system messages, the runtime's user messages and the control tools' results, less what in
them is the user's or the tools' (the request, the gathered results), which an answer may
repeat freely. Both sides are normalised (entities decoded, markup, list marks and
punctuation dropped, lower case) and compared segment by segment: a segment of the answer
(a line, or a sentence of one) is an echo when it is contained in an instruction sentence,
contains one, or is close to one by word-sequence similarity.

`without_echo` keeps the segments that are not echoes; an answer with nothing substantive
left (`substantive`) echoed the runtime and is asked for again.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from difflib import SequenceMatcher

from ponder.agent.strategies import prompts
from ponder.messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from ponder.tools.builtin import CONTROL_TOOLS

__all__ = [
    "ECHO_WINDOW",
    "Said",
    "decoded",
    "normalise",
    "said_by_runtime",
    "substantive",
    "without_echo",
]

_UNESCAPE_ROUNDS = 3
_MARKUP = re.compile(
    r"</?(?:BEGIN|END)_OF_[A-Z_]+>|\b(?:BEGIN|END)_OF_[A-Z]+(?:_[A-Z]+)*\b"
    r"|</?(?:tool_response|tool_result|tool_call|think|thinking)>|<\|[a-z_]+\|>"
)
_NON_WORD = re.compile(r"[\W_]+")
_SEGMENT = re.compile(r"(?<=[.!?:;])\s+|\n+")
_RESULT_LINE = re.compile(r"^\s*- .+ → .*$", re.MULTILINE)
_RUNTIME_MARK = "<BEGIN_OF_"
# The model's own words in the reasoning fed back: everything before the closing instruction.
_FED_BACK = re.compile(r"<BEGIN_OF_REASONING>.*?(?=^Act on it now|<END_OF_REASONING>)", re.S | re.M)
_MIN_WORDS = 3
ECHO_WINDOW = 60
"""How many of the latest messages an answer is checked against (besides the system prompt
and the turn's prompt): what the model can echo is what it read last, and a long run's
answer then costs no more to check than a short one's."""
"""Shorter segments are echoes only when equal to an instruction sentence."""
_MAX_SEGMENTS = 400
"""Segments compared at most; an echo is short, and a long answer's tail is kept as it is."""
_SIMILAR = 0.72
"""Word-sequence similarity (difflib ratio) from which a segment is a paraphrase."""
_STATIC = (
    *prompts.CONTROL_PHRASES,
    prompts.FINAL_ANSWER_INSTRUCTION,
    prompts.REASONING_RECORDED,
    prompts.stop_protocol_reminder(),
    prompts.stop_protocol_reminder(step_mode=True),
    prompts.answer_correction("repeated the runtime's instructions instead of answering"),
    prompts.answer_correction("contained markup that is not meant for the user"),
    prompts.limit_instruction("rounds", 0, "- tool() → result"),
    prompts.loop_final_instruction("- tool() → result"),
    "tools are off now; answer in plain text",
)


def decoded(text: str) -> str:
    """``text`` with HTML entities decoded (small servers escape, sometimes twice)."""
    for _ in range(_UNESCAPE_ROUNDS):
        if "&" not in text:
            break
        once = html.unescape(text)
        if once == text:
            break
        text = once
    return text


def normalise(text: str) -> str:
    """Lower-case words only: entities decoded, markers, tags and punctuation dropped."""
    text = _MARKUP.sub(" ", decoded(text))
    return " ".join(_NON_WORD.sub(" ", text.lower()).split())


def _segments(text: str) -> list[str]:
    return [s for s in _SEGMENT.split(text) if s.strip()]


class Said:
    """The instruction sentences the runtime sent, normalised."""

    def __init__(self, sentences: Iterable[str]) -> None:
        self.sentences = tuple(sentences)
        self._words = [(s.split(), Counter(s.split())) for s in self.sentences]
        self._padded = [f" {s} " for s in self.sentences]

    def echoes(self, segment: str) -> bool:
        """Whether the normalised ``segment`` repeats or paraphrases an instruction."""
        words = segment.split()
        if not words:
            return False
        if len(words) < _MIN_WORDS:
            return segment in self.sentences
        padded, counted = f" {segment} ", Counter(words)
        for sentence, (other, bag) in zip(self._padded, self._words, strict=True):
            if segment in sentence:
                return True
            if len(other) > _MIN_WORDS and sentence in padded:
                return True
            # an upper bound of the ratio first (shared words), then the ratio itself
            shared = sum((counted & bag).values())
            if 2 * shared < _SIMILAR * (len(words) + len(other)):
                continue
            if SequenceMatcher(None, words, other, autojunk=False).ratio() >= _SIMILAR:
                return True
        return False


def _data(messages: Sequence[Message]) -> set[str]:
    """The normalised sentences of what is not the runtime's: requests, arguments, results."""
    texts: list[str] = []
    calls: dict[str, str] = {}
    for message in messages:
        if isinstance(message, UserMessage) and _RUNTIME_MARK not in message.content:
            texts.append(message.content)
        elif isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                calls[call.id] = call.name
                if call.args is not None:
                    texts.extend(str(v) for v in call.args.values() if isinstance(v, str))
        elif isinstance(message, ToolMessage) and calls.get(message.call_id) not in CONTROL_TOOLS:
            texts.append(message.content)
    return {normalise(s) for text in texts for s in _segments(text)} - {""}


def said_by_runtime(messages: Sequence[Message]) -> Said:
    """The instruction sentences of ``messages`` (the ledger) and the runtime's fixed texts."""
    texts: list[str] = list(_STATIC)
    calls: dict[str, str] = {}
    for message in messages:
        if isinstance(message, SystemMessage):
            texts.append(_FED_BACK.sub("", message.content))
        elif isinstance(message, UserMessage) and _RUNTIME_MARK in message.content:
            texts.append(message.content)
        elif isinstance(message, AssistantMessage):
            calls.update((c.id, c.name) for c in message.tool_calls)
        elif isinstance(message, ToolMessage) and calls.get(message.call_id) in CONTROL_TOOLS:
            texts.append(message.content)
    data = _data(messages)
    # the data sentences long enough to count inside a template, padded once for all texts
    carried = [f" {d} " for d in data if len(d.split()) >= _MIN_WORDS]
    sentences: dict[str, None] = {}
    for text in texts:
        for segment in _segments(_RESULT_LINE.sub("", decoded(text))):
            norm = normalise(segment)
            if norm and norm not in data and not _overlaps(norm, carried):
                sentences[norm] = None
    return Said(tuple(sentences))


def _overlaps(sentence: str, carried: Iterable[str]) -> bool:
    """Whether ``sentence`` carries a (padded) data sentence: the request in a template."""
    padded = f" {sentence} "
    return any(d in padded for d in carried)


def without_echo(text: str, said: Said) -> tuple[str, bool]:
    """``text`` without the lines and sentences that echo ``said``; whether any did."""
    kept_lines: list[str] = []
    echoed = False
    budget = _MAX_SEGMENTS
    for line in decoded(text).splitlines():
        parts = [s for s in re.split(r"(?<=[.!?:;])\s+", line) if s.strip()]
        budget -= len(parts)
        kept = parts if budget < 0 else [p for p in parts if not said.echoes(normalise(p))]
        if len(kept) != len(parts):
            echoed = True
        if kept or not line.strip():
            kept_lines.append(" ".join(kept) if len(kept) != len(parts) else line)
    if not echoed:
        return text, False
    return "\n".join(kept_lines).strip(), True


def substantive(text: str) -> bool:
    """Whether ``text`` says something: a number, or at least two words."""
    words = normalise(text).split()
    return len(words) >= 2 or any(ch.isdigit() for ch in text)
