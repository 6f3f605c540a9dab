"""A task suite with known answers for a real local model, and its graders.

Each task is a question, the tools it offers (1–3 small deterministic functions: arithmetic,
unit conversion, dictionary look-ups, string operations; some tasks need none) and the
values the final answer must contain. The module imports nothing of ponder's runtime
beyond the prompt texts it grades against, so the peer environment imports it too
(`TASKS`, `make_tools`); ponder's side wraps the same functions with ``ponder.tools.tool``.

Grades, per answer: **correct**: every expected value appears in it (numbers compared as
numbers, with or without thousands separators; words as whole words, case-insensitive
unless the task says otherwise); **clean**: it holds none of ponder's instruction sentences
(`instruction_phrases`) nor markup (`MARKUP`), compared case-insensitively after HTML
unescaping; **result lost**: a tool returned every expected value, yet the answer is not
correct.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

__all__ = [
    "MARKUP",
    "TASKS",
    "Grade",
    "Task",
    "grade",
    "instruction_phrases",
    "is_clean",
    "is_correct",
    "make_tools",
]

CAPITALS = {"france": "Paris", "japan": "Tokyo", "australia": "Canberra", "canada": "Ottawa"}
SYMBOLS = {"gold": "Au", "sodium": "Na", "iron": "Fe", "silver": "Ag"}


def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return _number(a + b)


def subtract(a: float, b: float) -> float:
    """Subtract b from a.

    Args:
        a: The number to subtract from.
        b: The number to subtract.
    """
    return _number(a - b)


def multiply(a: float, b: float) -> float:
    """Multiply two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return _number(a * b)


def divide(a: float, b: float) -> float:
    """Divide a by b.

    Args:
        a: The dividend.
        b: The divisor (not zero).
    """
    return _number(a / b)


def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from degrees Celsius to degrees Fahrenheit.

    Args:
        celsius: The temperature in degrees Celsius.
    """
    return _number(celsius * 9 / 5 + 32)


def km_to_miles(km: float) -> float:
    """Convert a distance from kilometres to miles (two decimals).

    Args:
        km: The distance in kilometres.
    """
    return _number(round(km * 0.621371, 2))


def capital_of(country: str) -> str:
    """The capital city of a country.

    Args:
        country: The country's English name.
    """
    return CAPITALS.get(country.strip().lower(), f"unknown country {country!r}")


def element_symbol(element: str) -> str:
    """The chemical symbol of an element.

    Args:
        element: The element's English name.
    """
    return SYMBOLS.get(element.strip().lower(), f"unknown element {element!r}")


def reverse_text(text: str) -> str:
    """The text with its characters in reverse order.

    Args:
        text: The text to reverse.
    """
    return text[::-1]


def uppercase(text: str) -> str:
    """The text in upper case.

    Args:
        text: The text to convert.
    """
    return text.upper()


def word_count(text: str) -> int:
    """How many words the text has.

    Args:
        text: The text whose words are counted.
    """
    return len(text.split())


def letter_count(word: str) -> int:
    """How many letters a word has.

    Args:
        word: The word whose letters are counted.
    """
    return sum(c.isalpha() for c in word)


FUNCTIONS = (
    add,
    subtract,
    multiply,
    divide,
    celsius_to_fahrenheit,
    km_to_miles,
    capital_of,
    element_symbol,
    reverse_text,
    uppercase,
    word_count,
    letter_count,
)


def make_tools(record: list[Any]) -> dict[str, Callable[..., Any]]:
    """The suite's tools by name; each appends what it returns to ``record``."""
    return {f.__name__: _recorded(f, record) for f in FUNCTIONS}


def _recorded(function: Callable[..., Any], record: list[Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        value = function(*args, **kwargs)
        record.append(value)
        return value

    return call


def _number(value: float) -> float:
    """Whole results as ints (``391``, not ``391.0``), as a person would write them."""
    return int(value) if float(value).is_integer() else value


@dataclass(frozen=True, slots=True)
class Task:
    """One question, the tools offered, the values the answer must contain."""

    id: str
    prompt: str
    tools: tuple[str, ...]
    expected: tuple[str, ...]
    calls: int
    """Tool calls a careful agent makes (0: the answer needs no tool)."""
    case_sensitive: bool = False


def _t(id: str, prompt: str, tools: str, expected: str, calls: int, case: bool = False) -> Task:
    return Task(id, prompt, tuple(tools.split()), tuple(expected.split("|")), calls, case)


TASKS: tuple[Task, ...] = (
    _t("mul", "What is 17 times 23?", "multiply add", "391", 1),
    _t("add", "What is 1234 plus 5678?", "add multiply", "6912", 1),
    _t("sub", "What is 100 minus 37?", "subtract add", "63", 1),
    _t("div", "What is 144 divided by 16?", "divide multiply", "9", 1),
    _t(
        "c2f",
        "Convert 25 degrees Celsius to Fahrenheit.",
        "celsius_to_fahrenheit km_to_miles",
        "77",
        1,
    ),
    _t("km", "How many miles are 42 kilometres?", "km_to_miles celsius_to_fahrenheit", "26.1", 1),
    _t("cap-au", "What is the capital of Australia?", "capital_of element_symbol", "Canberra", 1),
    _t("cap-ca", "What is the capital of Canada?", "capital_of element_symbol", "Ottawa", 1),
    _t("sym-au", "What is the chemical symbol of gold?", "element_symbol capital_of", "Au", 1),
    _t("sym-na", "What is the chemical symbol of sodium?", "element_symbol capital_of", "Na", 1),
    _t("rev", "Reverse the text 'ponder'.", "reverse_text uppercase", "rednop", 1),
    _t(
        "upper",
        "Write 'hello world' in upper case.",
        "uppercase reverse_text",
        "HELLO WORLD",
        1,
        case=True,
    ),
    _t(
        "words",
        "How many words are in 'the quick brown fox jumps'?",
        "word_count letter_count",
        "5",
        1,
    ),
    _t(
        "letters", "How many letters are in the word 'elephant'?", "letter_count word_count", "8", 1
    ),
    _t("add-mul", "What is 12 plus 30, times 2?", "add multiply", "84", 2),
    _t("mul-sub", "What is 7 times 8, minus 6?", "multiply subtract", "50", 2),
    _t(
        "c2f-add",
        "Convert 100 degrees Celsius to Fahrenheit, then add 10.",
        "celsius_to_fahrenheit add",
        "222",
        2,
    ),
    _t("caps", "What are the capitals of France and Japan?", "capital_of", "Paris|Tokyo", 2),
    _t(
        "chain3",
        "Add 5 and 7, multiply the result by 3, then subtract 6.",
        "add multiply subtract",
        "30",
        3,
    ),
    _t("week", "How many days are in a week?", "add", "7", 0),
    _t("banana", "Say the word 'banana' and nothing else.", "uppercase", "banana", 0),
    _t("two", "What is 2 plus 2?", "add", "4", 0),
)


_NUMBER = re.compile(r"(?<![\w.])-?\d{1,3}(?:[,\u202f\u00a0 ]\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?")


def _numbers(text: str) -> list[float]:
    found = []
    for raw in _NUMBER.findall(text):
        cleaned = re.sub(r"[,\u202f\u00a0 ]", "", raw)
        found.append(float(cleaned))
    return found


def _contains(text: str, value: str, case_sensitive: bool) -> bool:
    if re.fullmatch(r"-?\d+(?:\.\d+)?", value):
        return any(abs(n - float(value)) < 1e-6 for n in _numbers(text))
    flags = 0 if case_sensitive else re.IGNORECASE
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, flags) is not None


def is_correct(answer: str, task: Task) -> bool:
    """Every expected value appears in ``answer``."""
    text = html.unescape(answer)
    return all(_contains(text, value, task.case_sensitive) for value in task.expected)


def _sentences(text: str) -> list[str]:
    text = re.sub(r"</?[A-Z_]+>", " ", text)
    parts = re.split(r"(?<=[.!?:])\s+|\n+", text)
    return [" ".join(p.split()).strip() for p in parts if len(p.split()) >= 4]


@cache
def instruction_phrases() -> tuple[str, ...]:
    """Sentences of ponder's prompts and built-in tool descriptions, lower-cased."""
    from ponder.agent.strategies import prompts
    from ponder.config import AgentConfig
    from ponder.tools import builtin

    config = AgentConfig(structured_reasoning=True, tool_prediction=True)
    texts = [
        prompts.FINAL_ANSWER_INSTRUCTION,
        prompts.COMPACTION_INSTRUCTION,
        prompts.STEP_SUMMARY_HEADER,
        prompts.reasoning_feedback("S", "L", "R", step_mode=False),
        prompts.reasoning_feedback("S", "L", "R", step_mode=True),
        prompts.limit_instruction("rounds", 2),
        prompts.loop_correction(3),
        prompts.loop_final_instruction(),
        prompts.overflow_instruction(),
        prompts.stop_protocol_reminder(),
        prompts.stop_protocol_reminder(step_mode=True),
        prompts.answer_correction("X"),
        prompts.reflection_request(),
        prompts.reflection_correction("X"),
        prompts.structured_guidance(config),
        prompts.structured_correction("X"),
        prompts.output_instruction("X"),
        *prompts.CONTROL_PHRASES,
    ]
    texts += _step_react_texts()
    for mode in ("reasoning-required", "reasoning", "inline"):
        offered = ("think_and_reason", "processing_message", "agent_stop")
        texts.append(prompts.agent_protocol(offered, mode, reflection=True))
    texts += [d.description for d in _builtin_definitions(builtin)]
    phrases = {s.lower() for t in texts for s in _sentences(t)}
    phrases |= {p.lower() for p in prompts.CONTROL_PHRASES}
    return tuple(sorted(phrases))


def _step_react_texts() -> list[str]:
    from ponder.agent.run.plan_state import PlanStep
    from ponder.agent.strategies.step_react import prompts

    step = PlanStep(id="s1", description="d")
    return [
        prompts.DECOMPOSE_INSTRUCTION,
        prompts.plan_status("P", step),
        prompts.step_stop_result("s1", 1),
        prompts.step_stop_result("s1", 0),
        prompts.step_summary_instruction(step),
        prompts.stall_correction("C", 3),
        prompts.replan_instruction(step, "C"),
        prompts.abandon_instruction(step, "C"),
        prompts.steps_final_instruction([step]),
    ]


def _builtin_definitions(builtin: Any) -> Iterable[Any]:
    for name in dir(builtin):
        value = getattr(builtin, name)
        if callable(value) and name.endswith("_definition"):
            try:
                yield value()
            except TypeError:
                continue


MARKUP = (
    "[step",
    "functions.",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "<tools>",
    "think_and_reason",
    "agent_stop",
    "processing_message",
    "verify_reasoning",
    "begin_of_",
    "end_of_",
    "[plan status]",
    "[current step]",
    "[summary of previous steps]",
    "<|im_start|>",
    "<|im_end|>",
    "<|endoftext|>",
    "[tool_prediction]",
)
"""Markup and wire names that never belong in an answer (lower case)."""


def is_clean(answer: str) -> bool:
    """``answer`` repeats none of ponder's instruction sentences and holds no markup."""
    text = " ".join(html.unescape(html.unescape(answer)).lower().split())
    return not any(m in text for m in MARKUP) and not any(p in text for p in instruction_phrases())


@dataclass(frozen=True, slots=True)
class Grade:
    """How one answer fared."""

    correct: bool
    clean: bool
    result_lost: bool


def grade(task: Task, answer: str, tool_results: Iterable[Any]) -> Grade:
    """Grade ``answer``; ``tool_results`` are what the run's tools returned."""
    correct = is_correct(answer, task)
    seen = " ".join(str(r) for r in tool_results)
    returned = task.calls > 0 and is_correct(seen, task)
    return Grade(correct, is_clean(answer), returned and not correct)
