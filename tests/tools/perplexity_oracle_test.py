"""`afm perplexity` against llama.cpp (llama-cpp-python, PyPI) on the same GGUF: the tiny random
Qwen2 fixture converted to f32, a text tokenized the same way by both, cut into the same
chunks, each evaluated from an empty cache with its second half scored (llama-perplexity's
rule). The perplexities agree to 1e-4 relative; the chunk count, token count and --chunks
limit are what the command reports. AFM_BIN is set by CTest.
"""
import json
import math
import os
import subprocess
import tempfile

import numpy as np
import llama_cpp

AFM = os.environ["AFM_BIN"]
FIXTURE = "tests/data/hf/qwen2"
CHUNK = 64
TEXT = ("The quick brown fox jumps over the lazy dog while the river runs past the old mill. "
        "Numbers such as 12, 345 and 6789 appear beside words in other languages: café, naïve, "
        "Straße. ") * 12


def afm_perplexity(model, text_path, *extra):
    out = subprocess.run([AFM, "perplexity", "-m", model, "-f", text_path, "--chunk", str(CHUNK),
                          "-t", "2", "--json", *extra],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def log_softmax(row):
    row = row.astype(np.float64)
    m = row.max()
    return row - m - math.log(np.exp(row - m).sum())


def llama_cpp_perplexity(model, text):
    llm = llama_cpp.Llama(model_path=model, n_ctx=CHUNK, n_batch=CHUNK, n_threads=2,
                          verbose=False, logits_all=True)
    tokens = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    chunks = len(tokens) // CHUNK
    nll, scored = 0.0, 0
    for c in range(chunks):
        part = tokens[c * CHUNK:(c + 1) * CHUNK]
        llm.reset()
        llm.eval(part)
        for t in range(CHUNK // 2, CHUNK - 1):
            nll -= log_softmax(llm.scores[t])[part[t + 1]]
            scored += 1
    return len(tokens), chunks, math.exp(nll / scored)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "qwen2-f32.gguf")
        subprocess.run([AFM, "convert", FIXTURE, model, "--type", "f32"], check=True,
                       capture_output=True)
        text_path = os.path.join(tmp, "text.txt")
        with open(text_path, "w", encoding="utf-8") as f:
            f.write(TEXT)
        n_tokens, chunks, want = llama_cpp_perplexity(model, TEXT)
        got = afm_perplexity(model, text_path)
        assert got["tokens"] == n_tokens, (got["tokens"], n_tokens)
        assert got["chunks"] == chunks >= 2, (got["chunks"], chunks)
        assert got["scored_tokens"] == chunks * (CHUNK - 1 - CHUNK // 2), got
        assert abs(got["perplexity"] - want) <= 1e-4 * want, (got["perplexity"], want)
        one = afm_perplexity(model, text_path, "--chunks", "1")
        assert one["chunks"] == 1 and one["chunk_perplexity"][0] == got["chunk_perplexity"][0]
        short = subprocess.run([AFM, "perplexity", "-m", model, "-f", text_path, "--chunk",
                                str(n_tokens + 1)], capture_output=True, text=True)
        assert short.returncode == 1 and "fewer than one chunk" in short.stderr, short.stderr
        print(f"ok: perplexity {got['perplexity']:.4f} vs llama.cpp {want:.4f} "
              f"over {got['scored_tokens']} tokens")


if __name__ == "__main__":
    main()
