"""`afm serve`'s /v1/completions (OpenAI's legacy text completions) driven by the official
openai client: the prompt's log-probabilities with echo against Hugging Face transformers'
logits (the fixtures' reference.json), a greedy answer equal to `afm generate`'s, streaming equal
to the whole answer, text_offset consistent with the text, max_tokens 0, and the 400s.
AFM_BIN is set by CTest.
"""
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import numpy as np
import openai

sys.path.insert(0, os.path.dirname(__file__))
from openai_client_test import AFM, MODEL, MODEL_ID, Server  # noqa: E402

FIXTURES = "tests/data/hf"


def log_softmax(rows):
    """Log-softmax over the last axis (one row or a matrix of rows), in float64."""
    x = np.asarray(rows, dtype=np.float64)
    top = x.max(axis=-1, keepdims=True)
    return x - top - np.log(np.exp(x - top).sum(axis=-1, keepdims=True))


def check_prompt_scores(client, model_id, ref):
    """echo + logprobs on token ids: lm-eval's loglikelihood request, against transformers."""
    ids = ref["prompt_ids"]
    r = client.completions.create(model=model_id, prompt=ids, max_tokens=1, temperature=0,
                                  echo=True, logprobs=3)
    lp = r.choices[0].logprobs
    assert len(lp.tokens) == len(ids) + 1, (len(lp.tokens), len(ids))
    assert lp.token_logprobs[0] is None and lp.top_logprobs[0] is None  # no context
    for p in range(1, len(ids)):
        want = log_softmax(ref["prompt_logits"][p - 1])
        got = lp.token_logprobs[p]
        assert abs(got - want[ids[p]]) < 2e-3, (model_id, p, got, want[ids[p]])
        best = sorted(want, reverse=True)[:3]
        alts = sorted(lp.top_logprobs[p].values(), reverse=True)
        # Alternatives with equal spellings merge into one key, so compare what is there.
        assert all(abs(a - b) < 2e-3 for a, b in zip(alts, best)), (p, alts, best)
    # The answer token is the greedy one, and the most likely of its alternatives.
    last = log_softmax(ref["prompt_logits"][-1])
    assert abs(lp.token_logprobs[-1] - max(last)) < 2e-3
    assert r.usage.prompt_tokens == len(ids) and r.usage.completion_tokens == 1
    # Without echo only the answer is scored; max_tokens 0 scores the prompt alone.
    plain = client.completions.create(model=model_id, prompt=ids, max_tokens=1, temperature=0,
                                      logprobs=0)
    assert len(plain.choices[0].logprobs.tokens) == 1
    assert plain.choices[0].logprobs.top_logprobs[0] == {}
    only = client.completions.create(model=model_id, prompt=ids, max_tokens=0, echo=True,
                                     logprobs=1)
    assert only.choices[0].finish_reason == "length" and only.usage.completion_tokens == 0
    assert only.choices[0].logprobs.token_logprobs == lp.token_logprobs[:-1]


def test_oracle():
    with tempfile.TemporaryDirectory() as tmp:
        for arch in ("llama", "qwen2", "qwen3"):
            path = os.path.join(tmp, f"{arch}.gguf")
            subprocess.run([AFM, "convert", os.path.join(FIXTURES, arch), path, "--type", "f32"],
                           check=True, capture_output=True)
            ref = json.load(open(os.path.join(FIXTURES, arch, "reference.json")))
            s = Server(model=path)
            try:
                client = openai.OpenAI(base_url=s.url + "/v1", api_key="none", max_retries=0)
                check_prompt_scores(client, client.models.list().data[0].id, ref)
                client.close()
            finally:
                assert s.stop() == 0


def test_base_model():
    """A model without a chat template is served for text completions; chat is a 400."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "base")
        shutil.copytree(os.path.join(FIXTURES, "llama"), folder)
        config_path = os.path.join(folder, "tokenizer_config.json")
        config = json.load(open(config_path))
        config.pop("chat_template", None)
        json.dump(config, open(config_path, "w"))
        path = os.path.join(tmp, "base.gguf")
        subprocess.run([AFM, "convert", folder, path, "--type", "f32"], check=True,
                       capture_output=True)
        s = Server(model=path)
        try:
            client = openai.OpenAI(base_url=s.url + "/v1", api_key="none", max_retries=0)
            model_id = client.models.list().data[0].id
            r = client.completions.create(model=model_id, prompt="Hello", max_tokens=4,
                                          temperature=0)
            assert r.usage.completion_tokens >= 1
            try:
                client.chat.completions.create(model=model_id,
                                               messages=[{"role": "user", "content": "hi"}])
                raise AssertionError("chat without a template was accepted")
            except openai.BadRequestError as e:
                assert "chat template" in e.body["message"], e.body
            client.close()
        finally:
            assert s.stop() == 0
        assert any("/v1/completions works" in line for line in s.lines)


def test_prompt_shutdown():
    """SIGTERM with an idle keep-alive connection open: the server exits at once, not after the
    15 s keep-alive timeout (nginx keeps idle upstream connections: every restart waited)."""
    s = Server()
    conn = http.client.HTTPConnection(s.host, s.port, timeout=30)
    conn.request("GET", "/health")
    assert conn.getresponse().read()  # the connection stays open, idle
    s.proc.send_signal(signal.SIGTERM)
    assert s.proc.wait(10) == 0  # raises TimeoutExpired if the idle connection holds it
    conn.close()


def afm_generate(prompt, n):
    out = subprocess.run([AFM, "generate", "-m", MODEL, "-p", prompt, "-n", str(n), "--temp", "0",
                          "-t", "2", "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def test_text(s, client):
    prompt = "Once upon a time, in a small village by the sea,"
    r = client.completions.create(model=MODEL_ID, prompt=prompt, max_tokens=12, temperature=0,
                                  echo=True, logprobs=2)
    assert r.id.startswith("cmpl-") and r.object == "text_completion"
    choice = r.choices[0]
    want = afm_generate(prompt, 12)
    assert choice.text == prompt + want["text"], (choice.text, want["text"])
    assert r.usage.prompt_tokens == want["prompt_tokens"]
    # text_offset: each whole-UTF-8 token sits at its offset in the returned text.
    lp = choice.logprobs
    for tok, off in zip(lp.tokens, lp.text_offset):
        if not tok.startswith("bytes:"):
            assert choice.text[off:off + len(tok)] == tok, (tok, off)
    # Streamed (without echo): the same answer, and the same answer tokens' entries.
    whole = client.completions.create(model=MODEL_ID, prompt=prompt, max_tokens=12,
                                      temperature=0, logprobs=2)
    assert whole.choices[0].text == want["text"]
    chunks = list(client.completions.create(model=MODEL_ID, prompt=prompt, max_tokens=12,
                                            temperature=0, logprobs=2, stream=True,
                                            stream_options={"include_usage": True}))
    assert "".join(c.choices[0].text for c in chunks if c.choices) == want["text"]
    streamed = [t for c in chunks if c.choices and c.choices[0].logprobs
                for t in c.choices[0].logprobs.tokens]
    assert streamed == whole.choices[0].logprobs.tokens
    offsets = [o for c in chunks if c.choices and c.choices[0].logprobs
               for o in c.choices[0].logprobs.text_offset]
    assert offsets == whole.choices[0].logprobs.text_offset
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == [whole.choices[0].finish_reason]
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens
    # Stop sequences and the default max_tokens (16).
    default = client.completions.create(model=MODEL_ID, prompt=prompt, temperature=0)
    assert default.usage.completion_tokens <= 16
    # The batch form with one prompt is the same request.
    batch = client.completions.create(model=MODEL_ID, prompt=[prompt], max_tokens=12, temperature=0)
    assert batch.choices[0].text == want["text"]


def test_long_prompt(s, client):
    """A prompt scored in several chunks: each token's log-probability from the logits after
    the tokens before it, as `afm logits` computes them in one pass."""
    prompt = " ".join(f"Line {i}: the quick brown fox jumps over the lazy dog." for i in range(12))
    r = client.completions.create(model=MODEL_ID, prompt=prompt, max_tokens=0, echo=True,
                                  logprobs=0)
    lp = r.choices[0].logprobs
    assert r.choices[0].text == prompt and len(lp.tokens) == r.usage.prompt_tokens > 130
    out = subprocess.run([AFM, "logits", "-m", MODEL, "-p", prompt, "--logits", "--json", "-t", "2"],
                         check=True, capture_output=True, text=True)
    ref = json.loads(out.stdout)
    assert len(ref["tokens"]) == len(lp.tokens)
    logprobs = log_softmax(ref["logits"])
    for p in range(1, len(lp.tokens)):
        want = logprobs[p - 1, ref["tokens"][p]]
        assert abs(lp.token_logprobs[p] - want) < 2e-3, (p, lp.token_logprobs[p], want)


def expect_400(client, param, **kw):
    try:
        client.completions.create(model=MODEL_ID, **kw)
    except openai.BadRequestError as e:
        assert e.body["param"] == param, (e.body, param)
        return e.body
    raise AssertionError(f"accepted: {kw}")


def test_errors(s, client):
    expect_400(client, "prompt", prompt=["a", "b"])
    expect_400(client, "prompt", prompt=[])
    expect_400(client, "prompt[1]", prompt=[1, -2])
    expect_400(client, "prompt", prompt={"text": "x"})
    expect_400(client, "logprobs", prompt="x", logprobs=21)
    expect_400(client, "max_tokens", prompt="x", max_tokens=-1)
    expect_400(client, "echo", prompt="x", echo=True, stream=True)
    expect_400(client, "suffix", prompt="x", suffix="y")
    expect_400(client, "best_of", prompt="x", best_of=2)
    expect_400(client, "n", prompt="x", n=2)
    # A token id past the vocabulary is the engine's 400, naming the position.
    body = expect_400(client, None, prompt=[1, 10 ** 6])
    assert "prompt token 1" in body["message"], body
    status, data = s.raw("POST", "/v1/completions", body=b"{}",
                         headers={"Content-Type": "application/json"})
    assert status == 400 and json.loads(data)["error"]["code"] == "missing_required_parameter"


def main():
    test_oracle()
    test_base_model()
    test_prompt_shutdown()
    s = Server()
    try:
        client = openai.OpenAI(base_url=s.url + "/v1", api_key="none", max_retries=0, timeout=300)
        test_text(s, client)
        test_long_prompt(s, client)
        test_errors(s, client)
        client.close()
    finally:
        assert s.stop() == 0
    assert any("POST /v1/completions 200" in line for line in s.lines)


if __name__ == "__main__":
    main()
