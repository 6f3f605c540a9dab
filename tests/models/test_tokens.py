from ponder.messages import AssistantMessage, Message, TextPart, ToolCallPart, UserMessage
from ponder.models import estimate_messages_tokens, estimate_tokens


def test_ascii_is_about_four_characters_per_token() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("x" * 400) == 100


def test_cjk_counts_one_token_per_character() -> None:
    assert estimate_tokens("你好世界") == 4
    assert estimate_tokens("こんにちは") == 5
    assert estimate_tokens("안녕하세요") == 5
    assert estimate_tokens("你好 abcd") == 2 + 2
    assert estimate_tokens("你好世界" * 100) > estimate_tokens("abcd" * 100) * 3


def test_messages_include_tool_calls_and_overhead() -> None:
    plain = [UserMessage(content="hello world")]
    with_call: list[Message] = [
        *plain,
        AssistantMessage(
            parts=(TextPart(text="ok"), ToolCallPart.from_args("c1", "add", {"a": 1, "b": 2}))
        ),
    ]
    assert estimate_messages_tokens([]) == 0
    assert estimate_messages_tokens(plain) == 4 + 3
    assert estimate_messages_tokens(with_call) > estimate_messages_tokens(plain) + 4
