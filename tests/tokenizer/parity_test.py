"""Tokenizer parity with Hugging Face `tokenizers` over >= 1 MB of mixed text, for four
vocabularies (GPT-2, Llama-3 and Qwen2 byte-level BPE, SentencePiece-style BPE with byte
fallback, also as a Prepend + Replace normalizer with user tokens matched before and after
normalization): every line must give identical ids through tokenizer.json, and (byte-level)
through the GGUF tokenizer.* keys afm writes. (Decoding is tested in tokenizer_test.cpp.)

Usage: parity_test.py PATH_TO_tokenizer_gguf_tool (CTest passes it); AFM_BIN is the CLI.
"""
import json
import os
import subprocess
import sys
import tempfile

from tokenizers import Tokenizer

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "oracle"))
from make_tokenizer_fixtures import mixed_text  # noqa: E402

AFM = os.environ["AFM_BIN"]
GGUF_TOOL = sys.argv[1]
ROOT = "tests/data/tokenizer"


def afm_lines(args, text_file):
    r = subprocess.run([AFM, "tokenize", *args, "-f", text_file, "--json", "--lines"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def compare(name, route, got, want, lines):
    assert len(got) == len(want), (name, route, len(got), len(want))
    bad = [i for i in range(len(want)) if got[i] != want[i]]
    assert not bad, (f"{name} via {route}: {len(bad)} of {len(want)} lines differ; first: "
                     f"{lines[bad[0]]!r}\n afm {got[bad[0]]}\n hf  {want[bad[0]]}")


def main():
    lines = mixed_text()
    total = sum(len(l.encode()) + 1 for l in lines)
    assert total >= 1_000_000, total
    with tempfile.TemporaryDirectory() as tmp:
        text_file = os.path.join(tmp, "text.txt")
        with open(text_file, "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(lines) + "\n")
        for name in ("gpt2", "llama3", "qwen2", "spm"):
            folder = os.path.join(ROOT, name)
            hf = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
            want = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
            compare(name, "tokenizer.json", afm_lines(["--tokenizer", os.path.join(folder, "tokenizer.json")], text_file), want, lines)
            if name == "spm":  # GGUF export of SentencePiece-style vocabularies: not yet
                print(f"{name}: {len(lines)} lines, {total} bytes identical (tokenizer.json)")
                continue
            gguf_path = os.path.join(tmp, name + ".gguf")
            subprocess.run([GGUF_TOOL, folder, gguf_path], check=True)
            compare(name, "gguf", afm_lines(["-m", gguf_path], text_file), want, lines)
            print(f"{name}: {len(lines)} lines, {total} bytes identical")
        check_normalizer_variant(tmp, lines, text_file)
    print("tokenizer parity: ok")


# Edge cases of HF's normalizer route: spaces before and after added tokens, and added tokens
# matched before (normalized: false) and after (normalized: true) normalization.
NORMALIZER_EDGES = ["<|im_end|> <s>", " leading", "  two", " ", "a</s> b", "x<unk>  y", "<s> a",
                    "zqx", " zqx", "azqx b", "a zqx b", "zqx zqx", "qjv a", "a qjv b", " qjv",
                    "<s> zqx", "zqxqjv zqx<s>zqx", "zq x", "\tzqx"]


def check_normalizer_variant(tmp, lines, text_file):
    """The SentencePiece vocabulary as Llama-2's HF conversions spell it: a Prepend("▁") +
    Replace(" ", "▁") normalizer and no pre-tokenizer (each segment between added tokens is
    normalized on its own, "▁" in front even of a leading space), with a user token matched
    after normalization and one before."""
    with open(os.path.join(ROOT, "spm", "tokenizer.json"), encoding="utf-8") as f:
        j = json.load(f)
    j["pre_tokenizer"] = None
    j["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "\u2581"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]}
    next_id = max(max(j["model"]["vocab"].values()), max(a["id"] for a in j["added_tokens"])) + 1
    for i, (content, normalized) in enumerate((("zqx", True), ("qjv", False))):
        j["added_tokens"].append({"id": next_id + i, "content": content, "single_word": False,
                                  "lstrip": False, "rstrip": False, "normalized": normalized,
                                  "special": False})
    path = os.path.join(tmp, "spm-normalizer.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(j, f)
    hf = Tokenizer.from_file(path)
    want = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
    compare("spm-normalizer", "tokenizer.json", afm_lines(["--tokenizer", path], text_file), want, lines)
    edges_file = os.path.join(tmp, "edges.txt")
    with open(edges_file, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(NORMALIZER_EDGES) + "\n")
    want = [e.ids for e in hf.encode_batch(NORMALIZER_EDGES, add_special_tokens=False)]
    compare("spm-normalizer", "edge cases", afm_lines(["--tokenizer", path], edges_file), want,
            NORMALIZER_EDGES)
    print(f"spm-normalizer: {len(lines)} lines and {len(NORMALIZER_EDGES)} edge cases identical")


if __name__ == "__main__":
    main()
