"""What a failure notice says about the server (issue 26 §5): a context overflow names the tokens the
conversation needs and the llama-server settings that fit; a server that answered is never called down.

Real Conversation over the real OpenAIBackend and the scripted OpenAI-compatible server (its errors in the
shapes llama.cpp and OpenAI send).
"""

from __future__ import annotations

from openai_server import ScriptedOpenAI, completion, refuse
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.events import BackendFailed

LLAMA_OVERFLOW = refuse(400, "request (4476 tokens) exceeds the available context size (4096 tokens)",
                        {"type": "exceed_context_size_error", "n_prompt_tokens": 4476, "n_ctx": 4096})


def failure(events) -> BackendFailed:
    (failed,) = [e for e in events if isinstance(e, BackendFailed)]
    return failed


def test_a_llama_server_context_overflow_says_how_many_tokens_the_conversation_needs(conversation):
    convo, _ = conversation([LLAMA_OVERFLOW])
    failed = failure(convo.send("profile the penguins"))
    # the prompt's 4476 tokens and room for a reply of max_tokens (768)
    assert failed.message.startswith("the server's context is too small for this conversation (5244 tokens "
                                     "needed; it has 4096)")
    assert "-c 7168" in failed.message and "-np 1" in failed.message
    assert failed.reached is True and "running" not in failed.message


def test_an_openai_style_overflow_is_read_from_its_sentence(conversation):
    convo, _ = conversation([refuse(400, "This model's maximum context length is 8192 tokens. However, your "
                                         "messages resulted in 9000 tokens. Please reduce the length.")])
    failed = failure(convo.send("profile the penguins"))
    assert failed.message.startswith("the server's context is too small for this conversation (9768 tokens "
                                     "needed; it has 8192)")


def test_a_server_that_answered_with_an_error_or_a_cut_reply_is_known_to_run(conversation):
    convo, _ = conversation([refuse(500, "slot unavailable"), completion("abc", finish_reason="length")])
    for text in ("profile the penguins", "profile the penguins"):
        failed = failure(convo.send(text))
        assert failed.reached is True
        assert "running" not in failed.message and "start the server" not in failed.message


def test_a_server_that_is_down_is_said_to_be_unreachable(make_conversation):
    server = ScriptedOpenAI([])
    base_url = server.bind()   # the port is taken, nothing listens
    try:
        convo = make_conversation(OpenAIBackend(base_url, "scripted-model", timeout=5, tool_mode="native"))
        failed = failure(convo.send("profile the penguins"))
    finally:
        server.stop()
    assert failed.reached is False and failed.message.startswith(f"cannot reach the model server at {base_url}")


def test_auto_mode_says_which_mode_it_picked_and_why(openai_server):
    server = openai_server(['{"say": "Hello."}'], props={"chat_template_caps": {"supports_tool_calls": False}})
    backend = OpenAIBackend(server.base_url, "scripted-model", timeout=10)
    backend.request([{"role": "user", "content": "hi"}], [])
    assert backend.mode == "json"
    assert backend.mode_why == "the server says it cannot call tools (/props)"
