"""Speculative decoding through the CLI and the server on the shipped model: `afm generate` and
`afm respond --schema` and `afm chat` (context shift too) with --lookup and --draft print exactly
what they print without, and
report drafted/accepted counts in --json; `afm serve --lookup N --model-draft M` answers through
the official openai client exactly as `afm respond` does (streamed too) and exports the
afm_speculative_* counters on /metrics; a draft with another vocabulary and out-of-range
values are clear errors. AFM_BIN is set by CTest.
"""
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import urllib.request

import openai

AFM = os.environ["AFM_BIN"]
MODEL = "models/afm-device-21m.gguf"
COPY = ("Repeat this sentence exactly: the quick brown fox jumps over the lazy dog near the "
        "river bank on a sunny afternoon in early spring.")
SCHEMA = {"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 40}, "city": {"type": "string", "maxLength": 40},
    "age": {"type": "integer", "minimum": 0, "maximum": 120}},
    "required": ["name", "city", "age"], "additionalProperties": False}
EXTRACT = "Extract the person: Marta Kowalczyk, 41, moved from Gdansk to Porto last year."


def afm_json(*args):
    r = subprocess.run([AFM, *args, "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def check_generate():
    # --ignore-eos: 40 tokens whatever the model makes of the request (the shipped chat model
    # may end a bare continuation at once), so there is always something to draft.
    base = ["generate", "-m", MODEL, "-p", COPY, "-n", "40", "-t", "2", "--ignore-eos"]
    plain = afm_json(*base, "--temp", "0")
    for extra in (["--lookup", "3"], ["--draft", MODEL], ["--lookup", "2", "--draft", MODEL]):
        spec = afm_json(*base, "--temp", "0", *extra)
        assert spec["tokens"] == plain["tokens"], (extra, spec["text"], plain["text"])
        assert spec["speculation"]["drafted"] >= spec["speculation"]["accepted"] >= 0
    self_draft = afm_json(*base, "--temp", "0", "--draft", MODEL)["speculation"]
    assert self_draft["accepted"] >= 0.9 * self_draft["drafted"] > 0, self_draft
    sampled = ["--temp", "0.8", "--seed", "11"]
    assert afm_json(*base, *sampled, "--lookup", "3")["tokens"] == afm_json(*base, *sampled)["tokens"]


def check_chat():
    turns = "Tell me a story about a fox.\nAnd then?\n"
    outputs = []
    for extra in ([], ["--lookup", "3"], ["--draft", MODEL, "--lookup", "2"]):
        r = subprocess.run([AFM, "chat", "-m", MODEL, "-n", "40", "--temp", "0", "-t", "2", *extra],
                           input=turns, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        outputs.append(r.stdout)
    assert outputs[0] and all(o == outputs[0] for o in outputs), outputs
    # A context that fills: the oldest turns are dropped the same way.
    shifted = []
    for extra in ([], ["--lookup", "2"]):
        r = subprocess.run([AFM, "chat", "-m", MODEL, "-c", "80", "--context-shift", "--temp", "0",
                            "-t", "2", *extra], input="Tell me a story.\nMore.\n",
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        shifted.append(r.stdout)
    assert shifted[0] == shifted[1], shifted


def check_respond(schema_path):
    base = ["respond", "-m", MODEL, "-p", EXTRACT, "--schema", schema_path, "-t", "2"]
    plain = afm_json(*base)
    spec = afm_json(*base, "--lookup", "3")
    assert spec["text"] == plain["text"], (spec["text"], plain["text"])
    assert spec["speculation"]["forced"] > 0, spec
    assert "speculation" not in plain
    json.loads(spec["text"])
    return plain["text"]


def check_errors(tmp):
    other = os.path.join(tmp, "tiny-llama.gguf")
    subprocess.run([AFM, "convert", "tests/data/hf/llama", other], check=True, capture_output=True)
    r = subprocess.run([AFM, "generate", "-m", MODEL, "-p", "hi", "--draft", other],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "has another vocabulary" in r.stderr, r.stderr
    r = subprocess.run([AFM, "serve", "-m", MODEL, "--port", "0", "--model-draft", other],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "has another vocabulary" in r.stderr, r.stderr
    for bad in (["--lookup", "17"], ["--draft-max", "0"], ["--draft", os.path.join(tmp, "none.gguf")]):
        r = subprocess.run([AFM, "respond", "-m", MODEL, "-p", "hi", *bad],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2, (bad, r.stderr)


class Server:
    def __init__(self, *extra):
        self.proc = subprocess.Popen([AFM, "serve", "-m", MODEL, "--port", "0", "-t", "2", *extra],
                                     stderr=subprocess.PIPE, text=True, errors="replace")
        self.lines, ready = [], threading.Event()

        def drain():
            for line in self.proc.stderr:
                self.lines.append(line)
                m = re.match(r"listening on (http://[\d.]+:\d+)", line)
                if m:
                    self.url = m.group(1)
                    ready.set()
            ready.set()

        threading.Thread(target=drain, daemon=True).start()
        assert ready.wait(120) and self.proc.poll() is None, "".join(self.lines)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(60) == 0, "".join(self.lines)


def check_server(expected_json):
    server = Server("--lookup", "3", "--model-draft", MODEL)
    try:
        assert any("speculative decoding" in line for line in server.lines), server.lines
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0, timeout=120)
        fmt = {"type": "json_schema", "json_schema": {"name": "person", "schema": SCHEMA}}
        messages = [{"role": "user", "content": EXTRACT}]
        got = client.chat.completions.create(model="afm-device-21m", messages=messages,
                                             temperature=0, response_format=fmt)
        assert got.choices[0].message.content == expected_json, got.choices[0].message.content
        streamed = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(
            model="afm-device-21m", messages=messages, temperature=0, response_format=fmt,
            stream=True) if c.choices)
        assert streamed == expected_json, streamed
        metrics = urllib.request.urlopen(server.url + "/metrics", timeout=30).read().decode()
        values = dict(re.findall(r"^(afm_speculative_\w+) (\S+)$", metrics, re.M))
        assert float(values["afm_speculative_passes_total"]) > 0, values
        assert float(values["afm_speculative_forced_tokens_total"]) > 0, values
        assert "afm_speculative_accepted_tokens_total" in values, values
    finally:
        server.stop()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        schema_path = os.path.join(tmp, "person.json")
        with open(schema_path, "w") as f:
            json.dump(SCHEMA, f)
        check_generate()
        check_chat()
        expected = check_respond(schema_path)
        check_errors(tmp)
        check_server(expected)
    print("speculative CLI and server: same outputs, counters, errors")


if __name__ == "__main__":
    main()
