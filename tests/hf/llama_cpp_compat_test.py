"""Files `afm convert` writes load and run in llama.cpp (llama-cpp-python, PyPI), and llama.cpp
tokenizes them exactly as Hugging Face `tokenizers` does with the source tokenizer.json.
Engine-level agreement (logits, greedy tokens) is the inference engine's test; this one checks
the file format contract.
"""
import os
import subprocess
import tempfile

import numpy as np
import llama_cpp
from tokenizers import Tokenizer

AFM = os.environ["AFM_BIN"]
FIXTURES = "tests/data/hf"
TEXTS = [
    "Hello, world! It's 2025; we're testing 1234567 tokens.",
    "Grüß Gott, ça va? Привет мир. 你好，世界 🙂👍🏽 \t\n\n  spaces   and\ttabs",
    "def f(x):\n    return x ** 2  # square\n",
    "<|im_start|>user\nhi<|im_end|> <|eot_id|>",
]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("llama", "qwen2", "qwen3", "mistral", "phi3", "smollm3", "gemma2", "gemma3"):
            hf_tok = Tokenizer.from_file(os.path.join(FIXTURES, name, "tokenizer.json"))
            for tname in ("f32", "f16", "bf16", "q8_0", "q4_0"):
                out = os.path.join(tmp, f"{name}-{tname}.gguf")
                subprocess.run([AFM, "convert", os.path.join(FIXTURES, name), out, "--type", tname],
                               check=True, capture_output=True)
                llm = llama_cpp.Llama(model_path=out, n_ctx=64, n_threads=1, verbose=False,
                                      logits_all=True)
                for text in TEXTS:
                    want = hf_tok.encode(text, add_special_tokens=False).ids
                    got = llm.tokenize(text.encode(), add_bos=False, special=True)
                    assert got == want, (name, tname, text, got, want)
                ids = llm.tokenize(TEXTS[0].encode(), add_bos=False, special=True)
                llm.eval(ids)
                logits = np.array(llm.eval_logits[-1])
                assert logits.shape == (hf_tok.get_vocab_size(),), logits.shape
                assert np.all(np.isfinite(logits)) and np.std(logits) > 0, (name, tname)
                del llm
    print("llama.cpp compat: ok")


if __name__ == "__main__":
    main()
