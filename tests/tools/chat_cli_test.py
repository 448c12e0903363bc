"""`afm chat` on the shipped model (greedy, so every run is the same): a full context is one
line on stderr and the conversation goes on, --context-shift drops the oldest turns instead,
commands are never sent to the model, tool-call blocks are shown as readable lines, and an
interactive chat opens with a banner. AFM_BIN is set by CTest.
"""
import os
import pty
import re
import subprocess

AFM = os.environ["AFM_BIN"]
MODEL = "models/afm-device-21m.gguf"
FULL = re.compile(r"^afm chat: context full: (\d+) of (\d+) tokens; /reset or raise --ctx-size")


def chat(lines, *args):
    return subprocess.run([AFM, "chat", "-m", MODEL, "--temp", "0", *args],
                          input="".join(line + "\n" for line in lines), capture_output=True,
                          text=True, errors="replace", timeout=120)


def full_lines(stderr):
    return [line for line in stderr.splitlines() if FULL.match(line)]


def test_a_reply_that_fills_the_context_leaves_the_conversation_usable():
    # A 16-token context holds the prompt of "hi" and only a few tokens of any reply: each reply
    # is cut, reported, and not added, so the same message fails at the same point again (not
    # sooner, as it would if the cut reply had been kept), and again after /reset; every turn
    # still shows what was generated. Once the context filled, an earlier build stopped on an
    # internal check. (Nothing here depends on what the model says, only that it says more
    # than a few tokens to "hi".)
    r = chat(["hi", "hi", "/reset", "hi"], "-c", "16")
    assert r.returncode == 0, r.stderr
    assert "internal" not in r.stderr, r.stderr
    full = full_lines(r.stderr)
    assert len(full) == 3 and full[0] == full[1] == full[2], r.stderr
    needed, n_ctx = map(int, FULL.match(full[0]).groups())
    assert n_ctx == 16 and needed > n_ctx
    assert "conversation cleared" in r.stderr
    shown = [line for line in r.stdout.splitlines() if line.strip()]
    assert len(shown) == 3 and shown[0] == shown[1] == shown[2], r.stdout  # each turn answered


def test_a_message_that_does_not_fit_is_refused_without_ending_the_chat():
    long_message = "word " * 100
    r = chat([long_message, long_message, "hi"], "-c", "64", "-n", "4")
    assert r.returncode == 0, r.stderr
    full = full_lines(r.stderr)
    assert len(full) == 2 and full[0] == full[1], r.stderr
    assert r.stdout.strip(), r.stdout  # "hi" still gets its reply


def test_context_shift_drops_the_oldest_turns():
    messages = ["hi", "What is 12 times 7?", "Classify the sentiment: I love it.",
                "Translate to French: good morning", "Explain photosynthesis in detail."] * 2
    # Replies capped so that every turn fits on its own, whatever the model answers; the ten
    # turns together do not.
    refused = chat(messages, "-c", "96", "-n", "16")
    assert refused.returncode == 0 and full_lines(refused.stderr), refused.stderr
    shifted = chat(messages, "-c", "96", "-n", "16", "--context-shift")
    assert shifted.returncode == 0, shifted.stderr
    assert "context full" not in shifted.stderr, shifted.stderr
    # A message whose own turn does not fit is still refused.
    r = chat(["word " * 100, "hi"], "-c", "64", "-n", "4", "--context-shift")
    assert r.returncode == 0 and len(full_lines(r.stderr)) == 1, r.stderr


def test_commands_are_never_sent_to_the_model():
    r = chat(["/help", "/bogus please", "/exit", "hi"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "", r.stdout  # nothing reached the model, and /exit ended the chat
    for command in ("/help", "/reset", "/exit"):
        assert command in r.stderr, r.stderr
    assert "unknown command '/bogus'" in r.stderr and "not sent" in r.stderr, r.stderr


# A tools list in the system turn, in the shape the afm template renders one (docs/data.md).
WEATHER_TOOLS = ('You are a helpful assistant. Use the tools when they help answer the user.\n\n'
                 'system tools: [{"name":"get_weather","description":"Current weather '
                 'conditions for a city.","parameters":{"type":"object","properties":'
                 '{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}]')


def test_tool_calls_are_shown_as_readable_lines():
    # afm chat sends no tools of its own; a model shown a tools list may still call one, and the
    # call block is printed as a readable line.
    r = chat(["What is the weather in Oslo?"], "--system", WEATHER_TOOLS)
    assert r.returncode == 0, r.stderr
    assert "<executable_start>" not in r.stdout and "```function" not in r.stdout, r.stdout
    assert re.search(r'^\[tool call\] get_weather\(\{"city":"Oslo"\}\)$', r.stdout, re.M), r.stdout


def test_an_interactive_chat_opens_with_a_banner():
    master, slave = pty.openpty()
    p = subprocess.Popen([AFM, "chat", "-m", MODEL], stdin=slave, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    os.close(slave)
    os.write(master, b"/exit\n")
    _, stderr = p.communicate(timeout=60)
    os.close(master)
    assert p.returncode == 0, stderr
    banner = stderr.splitlines()[0]
    assert "afm-device-21m.gguf" in banner and "context 1024 tokens" in banner, banner
    assert "/help for commands" in banner, banner
    # Piped input gets no banner (scripts read stderr for errors only).
    assert chat([]).stderr == ""


def main():
    test_a_reply_that_fills_the_context_leaves_the_conversation_usable()
    test_a_message_that_does_not_fit_is_refused_without_ending_the_chat()
    test_context_shift_drops_the_oldest_turns()
    test_commands_are_never_sent_to_the_model()
    test_tool_calls_are_shown_as_readable_lines()
    test_an_interactive_chat_opens_with_a_banner()


if __name__ == "__main__":
    main()
