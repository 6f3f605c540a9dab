import pytest

from ponder.exceptions import LedgerError
from ponder.messages import (
    AssistantMessage,
    Ledger,
    Message,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCallPart,
    ToolMessage,
    UserMessage,
)


def _call(id: str, name: str = "add") -> ToolCallPart:
    return ToolCallPart.from_args(id, name, {"a": 1})


def test_ledger_pairs_calls_with_results() -> None:
    ledger = Ledger([SystemMessage(content="s"), UserMessage(content="u")])
    ledger.append(AssistantMessage(parts=(TextPart(text="x"), _call("c1"), _call("c2"))))
    with pytest.raises(LedgerError, match="c1, c2"):
        ledger.ensure_sendable()
    with pytest.raises(LedgerError, match="cannot append a user message"):
        ledger.append(UserMessage(content="too early"))
    ledger.append(ToolMessage(call_id="c2", name="add", content="2"))
    ledger.append(ToolMessage(call_id="c1", name="add", content="1"))
    ledger.ensure_sendable()
    with pytest.raises(LedgerError, match="answers no open call"):
        ledger.append(ToolMessage(call_id="c1", name="add", content="again"))


def test_ledger_rejects_duplicate_call_ids_and_unknown_results() -> None:
    ledger = Ledger()
    with pytest.raises(LedgerError, match="repeats tool call id"):
        ledger.append(AssistantMessage(parts=(_call("c1"), _call("c1"))))
    with pytest.raises(LedgerError, match="'nope'"):
        ledger.append(ToolMessage(call_id="nope", name="add", content=""))


def test_ledger_json_round_trip_keeps_reasoning_and_parse_errors() -> None:
    bad = ToolCallPart.from_raw("c9", "add", '{"a": 1,')
    assert bad.args is None and bad.args_error and "not valid JSON" in bad.args_error
    ledger = Ledger(
        [
            UserMessage(content="hi"),
            AssistantMessage(
                parts=(ReasoningPart(text="hmm", signature="sig"), bad),
                provider_extras={"reasoning_content": "hmm"},
            ),
            ToolMessage(call_id="c9", name="add", content="Error: bad", is_error=True),
        ]
    )
    again = Ledger.from_json(ledger.to_json())
    assert again.to_json() == ledger.to_json()
    assert isinstance(again[1], AssistantMessage)
    assert again[1].reasoning == "hmm"
    assert again[1].tool_calls[0].args_error == bad.args_error


def test_non_object_arguments_are_a_parse_error() -> None:
    call = ToolCallPart.from_raw("c1", "add", "[1, 2]")
    assert call.args is None
    assert call.args_error == "arguments must be a JSON object, got list"
    assert ToolCallPart.from_raw("c2", "add", "  ").args == {}


def test_result_must_name_the_called_tool() -> None:
    ledger = Ledger([AssistantMessage(parts=(_call("c1", "add"),))])
    with pytest.raises(LedgerError, match="names tool 'mul', but the call was to 'add'"):
        ledger.append(ToolMessage(call_id="c1", name="mul", content="x"))
    assert ledger.open_calls == {"c1": "add"}


def test_ensure_sendable_checks_plain_lists_and_ledgers() -> None:
    from ponder.messages import ensure_sendable

    call = AssistantMessage(parts=(_call("c7"),))
    with pytest.raises(LedgerError, match="c7"):
        ensure_sendable([UserMessage(content="u"), call])
    with pytest.raises(LedgerError, match="'c8'"):
        ensure_sendable([UserMessage(content="u"), ToolMessage(call_id="c8", name="x", content="")])
    done: list[Message] = [
        call,
        ToolMessage(call_id="c7", name="add", content="1"),
        UserMessage(content="ok"),
    ]
    ensure_sendable(done)
    ensure_sendable(Ledger(done))


def test_replace_refuses_a_compaction_that_splits_a_pair() -> None:
    call = AssistantMessage(parts=(_call("c1"),))
    result = ToolMessage(call_id="c1", name="add", content="1")
    ledger = Ledger([UserMessage(content="u"), call, result])
    with pytest.raises(LedgerError, match="'c1'"):
        ledger.replace([UserMessage(content="summary"), result])
    assert len(ledger) == 3


def test_malformed_json_is_rejected_on_load() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        Ledger.from_json([{"kind": "assistant", "parts": [{"kind": "tool_call"}]}])
    with pytest.raises(ValidationError):
        Ledger.from_json([{"role": "user", "content": "no kind"}])
