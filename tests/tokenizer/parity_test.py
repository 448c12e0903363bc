"""Tokenizer parity with Hugging Face `tokenizers` over >= 1 MB of mixed text, for four
vocabularies (GPT-2, Llama-3 and Qwen2 byte-level BPE, SentencePiece-style BPE with byte
fallback): every line must give identical ids through tokenizer.json, and (byte-level) through
the GGUF tokenizer.* keys afm writes. (Decoding is tested in tokenizer_test.cpp.)

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
    print("tokenizer parity: ok")


if __name__ == "__main__":
    main()
