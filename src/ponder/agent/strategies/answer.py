"""What may be given to the user as an answer: no echoed control markup, not empty.

ponder talks to the model with its own markers (``<BEGIN_OF_INSTRUCTIONS>`` ...) and local
servers leak their chat-template tags (``<tool_response>``, ``<|im_end|>`` ...). An answer
that contains either, or that repeats one of ponder's instruction sentences, is detected
here (`answer_problem`) so the strategy can ask once more, and cleaned (`strip_markup`)
if the second answer has it too. `gathered_results` lists what the tools returned, for
instructions that ask the model to answer from its results.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from ponder.agent.strategies.echo import Said, decoded, substantive, without_echo
from ponder.agent.strategies.prompts import CONTROL_PHRASES
from ponder.messages import AssistantMessage, Message, ToolCallPart, ToolMessage
from ponder.tools.builtin import CONTROL_TOOLS, PROCESSING_MESSAGE

__all__ = [
    "answer_problem",
    "gathered_results",
    "lost_results",
    "strip_markup",
    "without_call_text",
    "without_repeats",
]

_BLOCK = re.compile(r"<BEGIN_OF_([A-Z_]+)>.*?(?:<END_OF_\1>|\Z)", re.DOTALL)
_PAIRED = re.compile(
    r"<(tool_call|function=[^>]*|think|thinking)>.*?(?:</(?:tool_call|function|think|thinking)>|\Z)",
    re.DOTALL,
)
# A marker with or without its angle brackets (small models drop or escape them).
_MARKER = re.compile(r"</?(?:BEGIN|END)_OF_[A-Z_]+>|\b(?:BEGIN|END)_OF_[A-Z]+(?:_[A-Z]+)*\b")
_TAG = re.compile(
    r"</?(?:tool_response|tool_result|tool_call|think|thinking)>|<function=[^>]*>|</function>"
    r"|<\|[a-z_]+\|>(?:(?:system|user|assistant|tool)\n)?"
)
# A call in the stock llama.cpp server's function syntax (``functions.multiply:{...}``).
_CALL_SYNTAX = re.compile(r"^\s*functions\.[A-Za-z_][\w.-]*\s*:.*$", re.MULTILINE)
# ponder's own control tools named in prose ("the think_and_reason function"): never the
# user's business, and a sign the model talks about its instructions instead of answering.
_CONTROL_NAME = re.compile(r"\b(?:" + "|".join(sorted(CONTROL_TOOLS)) + r")\b")
_PHRASES = tuple(p.lower() for p in CONTROL_PHRASES)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_CLAUSE = re.compile(r"(?<=[.!?:])\s+")
_FENCE = re.compile(r"^\s*(```|~~~)")
_REPEAT_WORDS = 3
"""Words a line or sentence needs before saying it again counts as a loop ("OK." may be meant)."""

# A line that opens a JSON object with a key ('{ "celsius": 10.5}', '{ "text&##10;The…').
_OBJECT_LINE = re.compile(r'^\s*\{\s*"([A-Za-z_][\w-]*)')
_MAX_RESULTS = 12
_RESULT_CHARS = 400


def _visible(text: str) -> str:
    """``text`` with HTML entities decoded when that reveals markup.

    Small models escape markup, sometimes twice (``&lt;BEGIN_OF_X&amp;gt;``), so entities
    are decoded until nothing changes (at most a few rounds).
    """
    shown = decoded(text)
    if shown != text and (_MARKER.search(shown) or _TAG.search(shown)):
        return shown
    return text


def answer_problem(text: str, said: Said | None = None) -> str | None:
    """Why ``text`` cannot be the answer as it is, phrased for the model; None if it can.

    With ``said`` (the instructions the run sent), an answer echoes them only when nothing
    substantive is left without the echoed sentences; without it, any control phrase counts.
    """
    text = _visible(text)
    if not text.strip():
        return "was empty"
    if _MARKER.search(text) or _TAG.search(text) or _CALL_SYNTAX.search(text):
        return "contained markup that is not meant for the user"
    if _CONTROL_NAME.search(decoded(text)):
        return "named the runtime's internal tools"
    if said is not None:
        kept, echoed = without_echo(text, said)
        echo = echoed and not substantive(kept)
    else:
        echo = any(phrase in text.lower() for phrase in _PHRASES)
    return "repeated the runtime's instructions instead of answering" if echo else None


def strip_markup(text: str) -> str:
    """``text`` without echoed instruction blocks, tool-call markup, tags and phrases."""
    text = _BLOCK.sub(" ", _visible(text))
    text = _PAIRED.sub(" ", text)
    text = _TAG.sub("", _MARKER.sub("", _CALL_SYNTAX.sub("", text)))
    return "\n".join(_without_phrases(line) for line in text.splitlines()).strip()


def without_repeats(text: str) -> str:
    """``text`` without the sentences and lines it already said, and a cut-off repeat at its end.

    Small models fall into loops ("The result is:", again and again, then "The res") until
    ``max_tokens`` cuts them off. Only what has three words or more counts, and code
    fences are left as they are (code repeats lines on purpose).
    """
    seen: set[str] = set()
    lines: list[str] = []
    dropped = fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        if fenced or _FENCE.match(line):
            lines.append(line)
            continue
        parts = _CLAUSE.split(line)
        kept = []
        for part in parts:
            key = " ".join(part.split()).lower()
            if len(key.split()) >= _REPEAT_WORDS and key in seen:
                continue
            seen.add(key)
            kept.append(part)
        dropped = dropped or len(kept) < len(parts)
        lines.append(line if len(kept) == len(parts) else " ".join(kept))
    if not dropped:
        return text
    while lines and not lines[-1].strip():
        lines.pop()
    if lines:
        tail = " ".join(lines[-1].split()).lower()
        if len(tail.split()) >= 2 and any(k.startswith(tail) and k != tail for k in seen):
            lines.pop()  # the loop, cut off by the token limit
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def without_call_text(text: str, messages: Sequence[Message]) -> str:
    """``text`` without the lines that are a call's arguments written as text.

    Asked for an answer, small models on servers that render calls as ``functions.NAME:``
    then the arguments (the stock llama.cpp server) write the arguments alone:
    ``{ &#34;a&#34;:1, &#34;b&#34;:2 }``. A JSON object that opens a line is dropped when
    its every key is an argument name of a call the run made (what follows it on the line
    stays), and so is a line with such an object cut off, when its first key is one; a JSON
    answer about other things is left alone.
    """
    if "{" not in text:
        return text
    names = {key for call in _calls(messages) for key in call.args or ()}
    if not names:
        return text
    kept: list[str] = []
    changed = False
    for line in text.split("\n"):
        rest = _without_call(decoded(line), names)
        if rest is None:
            kept.append(line)
            continue
        changed = True
        if rest:
            kept.append(rest)
    return "\n".join(kept).strip() if changed else text


def _calls(messages: Sequence[Message]) -> list[ToolCallPart]:
    return [c for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]


_OBJECT = json.JSONDecoder()


def _without_call(line: str, names: set[str]) -> str | None:
    """``line`` (entities decoded) less the call's arguments it opens with; None if none."""
    opened = _OBJECT_LINE.match(line)
    if opened is None:
        return None
    try:
        found, end = _OBJECT.raw_decode(line, line.index("{"))
    except ValueError:  # cut off: its first key decides, and the line goes
        return "" if opened.group(1) in names else None
    if isinstance(found, dict) and found and set(found) <= names:
        return line[end:].strip()
    return None


def _without_phrases(line: str) -> str:
    """``line`` without the sentences that repeat ponder's instructions or name its tools."""
    if not _instructional(line):
        return line
    return " ".join(s for s in _SENTENCE.split(line) if not _instructional(s)).strip()


def _instructional(text: str) -> bool:
    lowered = text.lower()
    return any(p in lowered for p in _PHRASES) or bool(_CONTROL_NAME.search(decoded(text)))


def _call_text(call: ToolCallPart) -> str:
    if call.args is None:
        return f"{call.name}({call.arguments.strip()})"
    shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in call.args.items())
    return f"{call.name}({shown})"


def gathered_results(messages: Sequence[Message]) -> str:
    """The latest successful action results as ``- call → output`` lines (bounded, each once)."""
    calls: dict[str, ToolCallPart] = {}
    lines: list[str] = []
    skip = CONTROL_TOOLS | {PROCESSING_MESSAGE}
    for message in messages:
        if isinstance(message, AssistantMessage):
            calls.update((c.id, c) for c in message.tool_calls)
        elif isinstance(message, ToolMessage) and not message.is_error:
            call = calls.get(message.call_id)
            if call is None or call.name in skip:
                continue
            output = " ".join(message.content.split())
            if len(output) > _RESULT_CHARS:
                output = output[:_RESULT_CHARS] + " [...]"
            lines.append(f"- {_call_text(call)} → {output}")
    # a call repeated with the same result says it once, where it was last made
    once = list(reversed(dict.fromkeys(reversed(lines))))
    return "\n".join(once[-_MAX_RESULTS:])


_SHORT_RESULT = 60
"""A result this short is a value an answer states (a number, a name, a word)."""
_ACKNOWLEDGEMENTS = frozenset(
    {"", "ok", "okay", "done", "success", "succeeded", "true", "false", "none", "null", "saved"}
)
"""Results that say only that a call worked: an answer need not repeat them."""


def lost_results(answer: str, messages: Sequence[Message]) -> str:
    """The gathered results when ``answer`` states none of the tools' short results, else "".

    A small model's answer can talk about the request instead of answering it ("The user
    requested a response…") after its tools found the answer: the results are then listed
    after it, so a correct result never becomes a wrong answer. Results longer than
    `_SHORT_RESULT` characters (a page, a file) are summarised in words, not quoted, and
    bare acknowledgements ("ok") need no repeating: neither counts.
    """
    calls: dict[str, str] = {}
    values: list[str] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            calls.update((c.id, c.name) for c in message.tool_calls)
        elif isinstance(message, ToolMessage) and not message.is_error:
            name = calls.get(message.call_id)
            if name is None or name in CONTROL_TOOLS or name == PROCESSING_MESSAGE:
                continue
            value = " ".join(message.content.split())
            if len(value) <= _SHORT_RESULT and value.lower().strip(".") not in _ACKNOWLEDGEMENTS:
                values.append(value.lower())
    if not values:
        return ""
    said = " ".join(decoded(answer).lower().split())
    if any(_states(said, value) for value in values):
        return ""
    return gathered_results(messages)


def _states(said: str, value: str) -> bool:
    """Whether ``said`` has ``value`` on its own: "391" is not in "1391", "3.91" or "&#34;"."""
    found = re.search(rf"(?<!\w)(?<!\d\.){re.escape(value)}(?!\w)(?!\.\d)", said)
    return found is not None
