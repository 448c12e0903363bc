"""The engine against llama.cpp (llama-cpp-python, PyPI) on the same GGUF files.

For the tiny random Llama / Qwen2 / Qwen3 fixtures converted by `afm convert`:
- f32 and f16: `afm generate --temp 0` produces exactly llama.cpp's 64 greedy tokens;
- q8_0 and q4_0: with teacher forcing on llama.cpp's greedy sequence, afm's most likely next
  token equals llama.cpp's at >= 99% of positions (activation rounding differs slightly).
Prints nothing on success; an assertion names the architecture, type and position.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import llama_cpp

AFM = os.environ["AFM_BIN"]
FIXTURES = "tests/data/hf"
STEPS = 64


def llama_cpp_run(path, prompt):
    llm = llama_cpp.Llama(model_path=path, n_ctx=256, n_batch=256, n_threads=2, verbose=False,
                          logits_all=True)
    llm.eval(prompt)
    tokens = []
    for _ in range(STEPS):
        nxt = int(np.argmax(llm.scores[llm.n_tokens - 1]))
        tokens.append(nxt)
        llm.eval([nxt])
    argmax = [int(np.argmax(llm.scores[i])) for i in range(llm.n_tokens)]
    return tokens, argmax


def afm_json(*args):
    out = subprocess.run([AFM, *args, "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main():
    agreement = {"q8_0": [0, 0], "q4_0": [0, 0]}
    with tempfile.TemporaryDirectory() as tmp:
        # smollm3: NoPE layers; mistral and phi3 stay out: llama.cpp ignores their windows.
        for arch in ("llama", "qwen2", "qwen3", "smollm3"):
            ref = json.load(open(os.path.join(FIXTURES, arch, "reference.json")))
            prompt = ref["prompt_ids"]
            for wtype in ("f32", "f16", "q8_0", "q4_0"):
                path = os.path.join(tmp, f"{arch}-{wtype}.gguf")
                subprocess.run([AFM, "convert", os.path.join(FIXTURES, arch), path, "--type", wtype],
                               check=True, capture_output=True)
                want_tokens, want_argmax = llama_cpp_run(path, prompt)
                if wtype in ("f32", "f16"):
                    got = afm_json("generate", "-m", path, "-p", ref["prompt"], "-n", str(STEPS),
                                   "--temp", "0", "--ignore-eos", "-t", "2")
                    assert got["prompt_tokens"] == len(prompt), (arch, got["prompt_tokens"])
                    assert got["tokens"] == want_tokens, (arch, wtype, got["tokens"], want_tokens)
                else:
                    seq = prompt + want_tokens
                    got = afm_json("logits", "-m", path, "--tokens", ",".join(map(str, seq)), "-t", "2")
                    same = sum(int(a == b) for a, b in zip(got["argmax"], want_argmax))
                    agreement[wtype][0] += same
                    agreement[wtype][1] += len(seq)
    for wtype, (same, total) in agreement.items():
        rate = same / total
        assert rate >= 0.99, f"{wtype}: top-1 agreement {rate:.4f} ({same}/{total}) < 0.99"


if __name__ == "__main__":
    main()
    sys.exit(0)
