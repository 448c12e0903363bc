"""CLI contract tests (ARCHITECTURE.md section 6) for `afm info` and the shared error policy.

A model file is made with ggml's own `gguf` package, so `afm info` is checked against an
outside writer. Run by CTest with AFM_BIN set.
"""
import json
import os
import subprocess
import tempfile

import numpy as np
import gguf

AFM = os.environ["AFM_BIN"]


def run(*args):
    return subprocess.run([AFM, *args], capture_output=True, text=True)


def make_model(path):
    w = gguf.GGUFWriter(path, "qwen2")
    w.add_name("tiny")
    w.add_block_count(2)
    w.add_embedding_length(64)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_rope_freq_base(1e6)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(["a", "b", "<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    w.add_token_merges(["a b"])
    w.add_eos_token_id(4)
    w.add_chat_template("{% for m in messages %}<|im_start|>{{ m.role }}\n{% endfor %}")
    w.add_tensor("token_embd.weight", np.zeros((5, 64), np.float32))
    w.add_tensor("blk.0.attn_q.weight", np.zeros((64, 64), np.float16))
    w.add_tensor("blk.0.attn_k.weight",
                 gguf.quants.quantize(np.ones((32, 64), np.float32), gguf.GGMLQuantizationType.Q8_0),
                 raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def test_info(tmp):
    path = os.path.join(tmp, "tiny.gguf")
    make_model(path)
    r = run("info", path, "--json")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["architecture"] == "qwen2"
    assert j["name"] == "tiny"
    assert j["hyperparameters"]["block_count"] == 2
    assert j["hyperparameters"]["attention.head_count_kv"] == 2
    assert j["hyperparameters"]["rope.freq_base"] == 1e6
    assert j["tensor_count"] == 3
    assert j["tensor_types"]["f32"] == {"count": 1, "elements": 320, "bytes": 1280}
    assert j["tensor_types"]["f16"]["bytes"] == 64 * 64 * 2
    assert j["tensor_types"]["q8_0"]["bytes"] == 32 * 2 * 34
    assert j["tensor_bytes"] == 1280 + 8192 + 2176
    assert j["tokenizer"]["model"] == "gpt2" and j["tokenizer"]["pre"] == "qwen2"
    assert j["tokenizer"]["vocab_size"] == 5 and j["tokenizer"]["merges"] == 1
    assert j["tokenizer"]["eos"] == {"id": 4, "text": "<|im_end|>"}
    assert j["chat_template"] == "chatml"
    text = run("info", path)
    assert text.returncode == 0 and "qwen2" in text.stdout and "chatml" in text.stdout


def test_errors(tmp):
    missing = run("info", os.path.join(tmp, "missing.gguf"))
    assert missing.returncode == 1
    assert missing.stderr.count("\n") == 1 and "missing.gguf" in missing.stderr, missing.stderr
    bad = os.path.join(tmp, "bad.gguf")
    with open(bad, "wb") as f:
        f.write(b"GGUF\x03\x00\x00\x00" + b"\xff" * 16)
    r = run("info", bad)
    assert r.returncode == 1 and "byte offset" in r.stderr, r.stderr
    usage = run("info")
    assert usage.returncode == 2 and "required" in usage.stderr.lower(), usage.stderr
    assert usage.stderr.count("\n") == 1, usage.stderr


def test_tokenize(tmp):
    tok = "tests/data/tokenizer/qwen2/tokenizer.json"
    r = run("tokenize", "--tokenizer", tok, "-p", "hi<|im_end|>", "--json")
    assert r.returncode == 0, r.stderr
    ids = json.loads(r.stdout)["tokens"]
    assert ids[-1] == 2, ids  # <|im_end|> is one special token
    text = os.path.join(tmp, "lines.txt")
    with open(text, "w") as f:
        f.write("a b\n\nc\n")
    r = run("tokenize", "--tokenizer", tok, "-f", text, "--json", "--lines")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 3 and r.stdout.splitlines()[1] == "[]"
    bad = run("tokenize", "-p", "x")
    assert bad.returncode == 2 and "needs -m MODEL or --tokenizer" in bad.stderr, bad.stderr
    worse = run("tokenize", "--tokenizer", os.path.join(tmp, "nope.json"), "-p", "x")
    assert worse.returncode == 1 and "nope.json" in worse.stderr, worse.stderr


def test_help():
    top = run("--help")
    assert top.returncode == 0
    for c in ("info", "convert", "tokenize"):
        assert f"  {c}" in top.stdout, (c, top.stdout)
        r = run(c, "--help")  # every subcommand documents itself
        assert r.returncode == 0 and "Usage" in r.stdout, (c, r.stdout)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_info(tmp)
        test_errors(tmp)
        test_tokenize(tmp)
    test_help()
    print("cli: ok")


if __name__ == "__main__":
    main()
