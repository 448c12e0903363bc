"""CLI contract tests (ARCHITECTURE.md section 6) for the commands that run a model:
generate (--json, --stream, seeds, threads), chat (template from metadata, prefix reuse),
bench (--json), eval, and their errors. Models are the converted tiny fixtures. AFM_BIN is set
by CTest.
"""
import json
import os
import subprocess
import tempfile

AFM = os.environ["AFM_BIN"]
FIXTURES = "tests/data/hf"


def run(*args, stdin=None):
    # Random models emit arbitrary bytes: decode leniently (the JSON output is always valid).
    return subprocess.run([AFM, *args], capture_output=True, text=True, input=stdin,
                          errors="replace")


def convert(tmp, arch, wtype="q8_0"):
    path = os.path.join(tmp, f"{arch}-{wtype}.gguf")
    r = run("convert", os.path.join(FIXTURES, arch), path, "--type", wtype)
    assert r.returncode == 0, r.stderr
    return path


def generate_json(model, *extra):
    r = run("generate", "-m", model, "-p", "Hello, world", "-n", "24", "--json", *extra)
    assert r.returncode == 0, r.stderr
    assert "prompt eval" in r.stderr and "eval" in r.stderr  # timings on stderr
    return json.loads(r.stdout)


def test_generate(tmp):
    model = convert(tmp, "qwen2")
    greedy = generate_json(model, "--temp", "0", "--ignore-eos")
    assert len(greedy["tokens"]) == 24 and greedy["prompt_tokens"] > 0
    assert set(greedy["timings"]) == {"prefill_ms", "decode_ms"}
    # A seed gives the same tokens on every run and thread count (llama: the least peaked).
    model = convert(tmp, "llama")
    a = generate_json(model, "--seed", "7", "--temp", "1.0", "-t", "1", "--ignore-eos")
    b = generate_json(model, "--seed", "7", "--temp", "1.0", "-t", "2", "--ignore-eos")
    c = generate_json(model, "--seed", "8", "--temp", "1.0", "-t", "2", "--ignore-eos")
    assert a["tokens"] == b["tokens"]
    assert a["tokens"] != c["tokens"]
    args = ("generate", "-m", model, "-p", "Hello, world", "-n", "24", "--temp", "0", "--ignore-eos")
    whole, stream = run(*args), run(*args, "--stream")
    assert stream.returncode == 0 and whole.returncode == 0
    assert stream.stdout == whole.stdout and len(whole.stdout) > 1


def test_generate_errors(tmp):
    model = convert(tmp, "llama")
    r = run("generate", "-m", model, "-p", "word " * 300, "-c", "64")
    assert r.returncode == 1 and "do not fit the context" in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1
    r = run("generate", "-m", model, "-p", "x", "--top-p", "1.5")
    assert r.returncode == 2 and "--top-p must be in (0, 1], got 1.5" in r.stderr, r.stderr
    r = run("generate", "-m", os.path.join(tmp, "nope.gguf"), "-p", "x")
    assert r.returncode == 1 and "nope.gguf" in r.stderr
    r = run("generate", "-p", "x")
    assert r.returncode == 2 and "model" in r.stderr.lower()


def test_chat(tmp):
    for arch in ("qwen2", "llama"):  # ChatML and Llama-3 templates from the metadata
        model = convert(tmp, arch)
        r = run("chat", "-m", model, "-n", "8", "--temp", "0", stdin="hi\nhow are you?\n")
        assert r.returncode == 0, r.stderr
        assert len(r.stdout.splitlines()) >= 2


def test_chat_unknown_template(tmp):
    model = convert(tmp, "qwen3", "f32")
    # qwen3's fixture carries a ChatML template; a model without one must be refused clearly.
    import gguf
    import numpy as np
    reader = gguf.GGUFReader(model)
    out = os.path.join(tmp, "notemplate.gguf")
    w = gguf.GGUFWriter(out, "qwen3")
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key in ("general.architecture", "tokenizer.chat_template"):
            continue
        vt = field.types[0]
        if vt == gguf.GGUFValueType.ARRAY:
            w.add_key_value(key, field.contents(), vt, sub_type=field.types[-1])
        else:
            w.add_key_value(key, field.contents(), vt)
    w.add_chat_template("{{ messages[0]['content'] }} [INST]")
    for t in reader.tensors:
        w.add_tensor(t.name, np.array(t.data))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    r = run("chat", "-m", out, stdin="hi\n")
    assert r.returncode == 1 and "unknown chat template" in r.stderr, r.stderr


def test_bench_and_eval(tmp):
    model = convert(tmp, "qwen3", "q4_0")
    r = run("bench", "-m", model, "-p", "16", "-n", "4", "-r", "1", "-t", "2", "--json")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert [x["test"] for x in j["results"]] == ["pp16", "tg4"]
    assert all(x["tokens_per_second"] > 0 for x in j["results"])
    assert j["type"] == "q4_0" and j["threads"] == min(2, len(os.sched_getaffinity(0)))
    # -d: the tests start with 40 tokens in the cache, named as llama-bench names them
    r = run("bench", "-m", model, "-p", "8", "-n", "2", "-d", "40", "-r", "2", "--verify", "2", "--json")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert [x["test"] for x in j["results"]] == ["pp8 @ d40", "tg2 @ d40", "verify2 @ d40"], j["results"]
    assert j["depth"] == 40 and j["n_ctx"] >= 40 + 8 + 2
    r = run("logits", "-m", model, "--tokens", "1,2,3", "--json")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert len(j["argmax"]) == 3
    r = run("logits", "-m", model, "--tokens", "1,99999")
    assert r.returncode == 1 and "99999" in r.stderr, r.stderr


def test_help():
    for cmd in ("generate", "chat", "bench", "logits"):
        r = run(cmd, "--help")
        assert r.returncode == 0 and "--model" in r.stdout, (cmd, r.stdout)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_generate(tmp)
        test_generate_errors(tmp)
        test_chat(tmp)
        test_chat_unknown_template(tmp)
        test_bench_and_eval(tmp)
        test_help()


if __name__ == "__main__":
    main()
