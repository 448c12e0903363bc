"""Regenerates tests/data/hf/<arch>/reference.json: Hugging Face transformers' own logits and
greedy continuation for the tiny random models in tests/data/hf/ (made by make_hf_fixtures.py),
the oracle for the engine's forward pass (tests/model/hf_parity_test.cpp).

For each model, in float32: the logits at every position of a fixed prompt, and 64 greedy
tokens (no EOS stop), with the smallest top-1/top-2 logit gap seen, so a reader can tell a
real mismatch from a near tie.

Needs torch and transformers, which are not in requirements.txt (CI only reads the committed
JSON). Run from the repository root in an environment that has them:
    python tests/oracle/make_engine_reference.py [ARCH ...]
(mistral's and phi3's references were made with transformers 4.47.1 on Debian's python3-torch 1.13: a
virtual environment with --system-site-packages and `pip install transformers==4.47.1`;
smollm3's, gemma2's and gemma3's with transformers 4.57.1 and torch 2.5.1 from PyPI, as each
reference.json records.)
"""
import json
import os
import sys

import torch
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM

ROOT = "tests/data/hf"
PROMPT = "The quick brown fox jumps over the lazy dog. Hello, world!"
STEPS = 64


@torch.no_grad()
def reference(arch):
    folder = os.path.join(ROOT, arch)
    tok = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    ids = tok.encode(PROMPT, add_special_tokens=False).ids
    model = AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.float32,
                                                 attn_implementation="eager")
    model.eval()
    out = model(torch.tensor([ids]), use_cache=True)
    prompt_logits = out.logits[0]
    past = out.past_key_values
    logits = prompt_logits[-1]
    generated, min_gap = [], float("inf")
    for _ in range(STEPS):
        top2 = torch.topk(logits, 2).values
        min_gap = min(min_gap, float(top2[0] - top2[1]))
        nxt = int(torch.argmax(logits))
        generated.append(nxt)
        out = model(torch.tensor([[nxt]]), past_key_values=past, use_cache=True)
        past, logits = out.past_key_values, out.logits[0, -1]
    return {"prompt": PROMPT, "prompt_ids": ids,
            "prompt_logits": [[round(float(v), 7) for v in row] for row in prompt_logits],
            "greedy_tokens": generated, "min_top2_gap": min_gap,
            "transformers_version": __import__("transformers").__version__,
            "torch_version": torch.__version__}


def main():
    torch.manual_seed(0)
    for arch in sys.argv[1:] or ("llama", "qwen2", "qwen3", "mistral", "phi3", "smollm3", "gemma2",
                                 "gemma3"):
        ref = reference(arch)
        path = os.path.join(ROOT, arch, "reference.json")
        with open(path, "w") as f:
            json.dump(ref, f, separators=(",", ":"))
        print(f"{path}: {len(ref['prompt_ids'])} prompt tokens, min top-2 gap "
              f"{ref['min_top2_gap']:.2e}")


if __name__ == "__main__":
    main()
