import gc

import pytest

from ponder.exceptions import LedgerError
from ponder.media import File, Image
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
    ensure_sendable,
    messages_to_json,
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


def _every_field() -> list[Message]:
    """One message of every kind, every optional field set (args that JSON reads back
    exactly, args that differ from ``arguments``, args JSON cannot hold, a parse error)."""
    image = Image(b"\x89PNG\r\n\x1a\n" + b"0" * 8, name="dot.png")
    document = File(media_type="application/pdf", url="https://example.com/a.pdf", name="a")
    return [
        SystemMessage(content="be brief"),
        UserMessage(content="héllo", name="ann", attachments=(image, document)),
        AssistantMessage(
            parts=(
                TextPart(text="let me add"),
                ReasoningPart(text="r", signature="sig", redacted="xx", provider="anthropic"),
                ToolCallPart.from_args("c1", "add", {"a": {"b": [1, 2.5, None, True]}, "c": "é"}),
                ToolCallPart.from_raw("c2", "add", "{not json"),
                ToolCallPart(id="c3", name="add", arguments='{"a": 1}', args={"a": 1.0}),
                ToolCallPart(id="c4", name="add", arguments="{}", args={"a": (1, 2)}),
                ToolCallPart(id="c5", name="add", arguments="", args={}, provider_id="c1"),
            ),
            model_name="m-1",
            provider_extras={"id": "resp_1", "items": [{"type": "reasoning"}]},
        ),
        ToolMessage(
            call_id="c1",
            name="add",
            content="3",
            data={"sum": [3], "ok": True},
            is_error=True,
            attachments=(image,),
        ),
        ToolMessage(call_id="c2", name="add", content="bad", data="text", is_error=True),
        ToolMessage(call_id="c3", name="add", content="1", data=(1, 2)),
        ToolMessage(call_id="c4", name="add", content="1", data=1.5),
        ToolMessage(call_id="c5", name="add", content="0", data={1: "int key"}),
        UserMessage(content="next"),
    ]


def test_a_ledger_gives_back_every_message_and_field_as_appended() -> None:
    messages = _every_field()
    dumped = [m.model_dump(mode="json") for m in messages]
    ledger = Ledger(messages)
    for views in (list(ledger), [ledger[i] for i in range(len(ledger))], ledger.messages):
        assert list(views) == messages
        for view, original in zip(views, messages, strict=True):
            assert type(view) is type(original)
            assert view.__dict__ == original.__dict__
            assert view.model_fields_set == original.model_fields_set
    assistant, original = ledger[2], messages[2]
    assert isinstance(assistant, AssistantMessage) and isinstance(original, AssistantMessage)
    call = assistant.tool_calls
    assert [c.args for c in call] == [c.args for c in original.tool_calls]
    assert call[2].args == {"a": 1.0} and type(call[2].args["a"]) is float
    assert call[3].args == {"a": (1, 2)}
    assert call[1].args is None and call[1].args_error
    assert ledger[5].data == (1, 2) and ledger[7].data == {1: "int key"}  # type: ignore[union-attr]
    assert ledger.to_json() == dumped == messages_to_json(messages)
    assert [m.model_dump(mode="json") for m in ledger.messages[3:]] == dumped[3:]
    assert Ledger.from_json(ledger.to_json()).to_json() == dumped
    assert list(reversed(ledger.messages)) == messages[::-1]
    assert ledger.messages[-2:] == messages[-2:] and ledger.messages == tuple(messages)


def test_views_copy_dump_and_compare_like_models() -> None:
    ledger = Ledger(_every_field())
    view = ledger[2]
    assert isinstance(view, AssistantMessage)
    copied = view.model_copy(update={"model_name": "m-2"})
    assert copied.model_name == "m-2" and copied.parts == view.parts
    assert "model_name" in copied.model_fields_set
    assert view.model_dump_json() == _every_field()[2].model_dump_json()
    view.tool_calls[0].args["a"] = "changed"  # type: ignore[index]
    assert ledger[2] == _every_field()[2]  # a view is the ledger's own copy
    assert hash(ledger[0]) == hash(SystemMessage(content="be brief"))


def test_a_ledger_keeps_messages_the_collector_does_not_track() -> None:
    ledger = Ledger([SystemMessage(content="s"), UserMessage(content="u")])
    nested = {"query": {"terms": ["a", "b"], "where": [{"k": 1}]}, "n": 2}
    ledger.append(AssistantMessage(parts=(TextPart(text="t"), _call("c1"))))
    ledger.append(ToolMessage(call_id="c1", name="add", content="1", data={"n": [1]}))
    ledger.append(AssistantMessage(parts=(ToolCallPart.from_args("c2", "find", nested),)))
    ledger.append(ToolMessage(call_id="c2", name="find", content="2", data={"tags": {"a"}}))
    gc.collect()
    (records,) = [r for r in gc.get_referents(ledger) if type(r) is tuple]
    assert len(records) == len(ledger) == 6
    assert not any(gc.is_tracked(r) for r in records[:5])
    assert ledger[4].tool_calls[0].args == nested  # type: ignore[union-attr]
    assert gc.is_tracked(records[5])  # data JSON cannot hold is kept as it is
    assert ledger[5].data == {"tags": {"a"}}  # type: ignore[union-attr]


def test_messages_is_a_snapshot_that_builds_what_is_read() -> None:
    ledger = Ledger([SystemMessage(content="s"), UserMessage(content="u")])
    before = ledger.messages
    ledger.append(AssistantMessage(parts=(TextPart(text="a"),)))
    assert len(before) == 2 and len(ledger.messages) == 3
    assert before != ledger.messages and before == ledger.messages[:2]
    assert ledger.messages[1:] == [
        UserMessage(content="u"),
        AssistantMessage(parts=(TextPart(text="a"),)),
    ]
    assert ledger[-1] == AssistantMessage(parts=(TextPart(text="a"),))
    assert UserMessage(content="u") in ledger.messages
    assert ledger.messages.index(UserMessage(content="u")) == 1
    with pytest.raises(IndexError):
        ledger.messages[3]


def test_a_subclassed_message_is_kept_as_it_is() -> None:
    class Noted(UserMessage):
        pass

    message = Noted(content="n")
    ledger = Ledger([message])
    assert ledger[0] is message and ledger.to_json() == [message.model_dump(mode="json")]


def test_the_open_assistant_message_and_a_tail_of_the_json() -> None:
    ledger = Ledger([UserMessage(content="u")])
    asked = AssistantMessage(parts=(_call("c1"), _call("c2")))
    ledger.append(asked)
    assert ledger[ledger.assistant_index] == asked == ledger[-1] == ledger.messages[-1]
    ledger.append(ToolMessage(call_id="c1", name="add", content="1"))
    assert ledger[1] == asked
    ledger.append(ToolMessage(call_id="c2", name="add", content="2"))
    assert ledger[1] == asked and ledger.open_calls == {}
    whole = ledger.to_json()
    assert ledger.to_json(2) == whole[2:] and ledger.to_json(-1) == whole[-1:]
    assert ledger.to_json(9) == []


def test_the_last_message_is_read_as_appended() -> None:
    ledger = Ledger([SystemMessage(content="s"), UserMessage(content="u")])
    answer = AssistantMessage(parts=(TextPart(text="a"),))
    ledger.append(answer)
    seq = ledger.messages
    assert seq[-1] is answer and seq[2] is answer and ledger[-1] is answer
    assert list(seq) == [SystemMessage(content="s"), UserMessage(content="u"), answer]
    assert next(reversed(seq)) is answer and list(reversed(seq))[1:] == list(seq)[:2][::-1]
    assert seq[1:][-1] is answer and seq[:2][-1] == UserMessage(content="u")
    assert seq[::2] == [SystemMessage(content="s"), answer] and seq[3:] == []


def test_ensure_sendable_reads_a_message_seq_without_building_it() -> None:
    ledger = Ledger([UserMessage(content="u")])
    ledger.append(
        AssistantMessage(
            parts=(
                TextPart(text="t"),
                ReasoningPart(text="r"),
                ToolCallPart.from_args("c1", "add", {"a": 1, "b": 2}),
                ToolCallPart.from_args("c2", "find", {"q": {"nested": [1]}}),
            )
        )
    )
    with pytest.raises(LedgerError, match="c1, c2"):
        ensure_sendable(ledger.messages)
    ledger.append(ToolMessage(call_id="c2", name="find", content="x"))
    ledger.append(ToolMessage(call_id="c1", name="add", content="3"))
    ensure_sendable(ledger.messages)
    with pytest.raises(LedgerError, match="answers no open call"):
        ensure_sendable(ledger.messages[2:])
    with pytest.raises(LedgerError, match="names tool 'add'"):
        ensure_sendable([*ledger.messages[:2], ToolMessage(call_id="c2", name="add", content="")])
