"""LoRA adapters (docs/adapters.md) against outside oracles.

1. llama.cpp (llama-cpp-python, PyPI) on the tiny random Llama and Qwen2 fixtures converted by
   `afm convert`, with a seeded random adapter written by `afm adapter random` (large enough to
   change the greedy continuation): llama.cpp loads afm's adapter file; with and without the
   adapter, afm's greedy tokens equal llama.cpp's and teacher-forced logits agree within
   2e-3 (f32 weights, f32 KV on both sides); `afm adapter merge` gives the same logits as the
   unmerged adapter (afm and llama.cpp, 2e-3). f16 weights and an f16 adapter: same greedy tokens.
2. afm-device: tests/oracle/afm_device_reference.py (independent numpy, float64) on the mlx
   afm7 fixture with an adapter on every projection, Block 2 (q and output only) included:
   logits within 1e-3, in one batch and in chunks of 4 (Block 2's prefill skip).
3. afm-server: tests/oracle/afm_server_reference.py with the adapter folded into its weights
   (W + s B A, per expert for stacked pairs; routers adapted too): logits within 1e-3.
Prints nothing on success; an assertion names the case and the difference.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import llama_cpp

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "oracle"))
import afm_device_reference  # noqa: E402
import afm_server_reference  # noqa: E402

AFM = os.environ["AFM_BIN"]
STEPS = 32
TOL = 2e-3


def afm(*args):
    return subprocess.run([AFM, *args], check=True, capture_output=True, text=True).stdout


def afm_logits(model, tokens, *extra):
    out = afm("logits", "-m", model, "--tokens", ",".join(map(str, tokens)), "--logits", "--json",
              "--kv-type", "f32", "-t", "2", *extra)
    return np.array(json.loads(out)["logits"])


def llama_cpp_run(model, prompt, adapter=None, scale=1.0, kv_f32=True):
    kw = {"lora_path": adapter, "lora_scale": scale} if adapter else {}
    if kv_f32:
        kw.update(type_k=0, type_v=0)  # GGML_TYPE_F32
    llm = llama_cpp.Llama(model_path=model, n_ctx=256, n_batch=256, n_threads=2, verbose=False,
                          logits_all=True, **kw)
    llm.eval(prompt)
    tokens = []
    for _ in range(STEPS):
        nxt = int(np.argmax(llm.scores[llm.n_tokens - 1]))
        tokens.append(nxt)
        llm.eval([nxt])
    return tokens, np.array(llm.scores[: llm.n_tokens])


def afm_greedy(model, prompt_text, *extra):
    out = afm("generate", "-m", model, "-p", prompt_text, "-n", str(STEPS), "--temp", "0",
              "--ignore-eos", "-t", "2", "--json", *extra)
    return json.loads(out)["tokens"]


def check_close(case, got, want, tol=TOL):
    diff = float(np.abs(got - want).max())
    assert diff <= tol, f"{case}: max |logit difference| {diff:.3g} > {tol}"


def llama_cpp_oracle(tmp):
    for arch in ("llama", "qwen2"):
        fixture = os.path.join("tests/data/hf", arch)
        ref = json.load(open(os.path.join(fixture, "reference.json")))
        prompt = ref["prompt_ids"]
        base = os.path.join(tmp, f"{arch}-f32.gguf")
        adapter = os.path.join(tmp, f"{arch}-lora.gguf")
        merged = os.path.join(tmp, f"{arch}-merged.gguf")
        afm("convert", fixture, base, "--type", "f32")
        afm("adapter", "random", "--base", base, "--out", adapter, "--rank", "8", "--alpha", "16",
            "--seed", "7", "--std", "0.4")
        base_tokens, base_scores = llama_cpp_run(base, prompt)
        assert afm_greedy(base, ref["prompt"], "--kv-type", "f32") == base_tokens, (arch, "base")
        check_close(f"{arch} base", afm_logits(base, prompt + base_tokens), base_scores)
        for scale in (1.0, 0.5):
            tokens, scores = llama_cpp_run(base, prompt, adapter, scale)
            if scale == 1.0:
                assert tokens != base_tokens, (arch, "the adapter does not change the tokens")
            extra = ("--adapter", adapter, "--adapter-scale", str(scale))
            got = afm_greedy(base, ref["prompt"], "--kv-type", "f32", *extra)
            assert got == tokens, (arch, scale, got, tokens)
            unmerged = afm_logits(base, prompt + tokens, *extra)
            check_close(f"{arch} adapter x{scale}", unmerged, scores)
            afm("adapter", "merge", "--base", base, "--adapter", adapter, "--out", merged,
                "--scale", str(scale))
            check_close(f"{arch} merged x{scale} (afm)", afm_logits(merged, prompt + tokens),
                        unmerged)
            merged_tokens, merged_scores = llama_cpp_run(merged, prompt)
            assert merged_tokens == tokens, (arch, scale, "llama.cpp merged", merged_tokens)
            check_close(f"{arch} merged x{scale} (llama.cpp)", merged_scores, scores)
        # f16 weights and an f16 adapter, default (f16) KV caches on both sides.
        base16, adapter16 = os.path.join(tmp, f"{arch}-f16.gguf"), os.path.join(tmp, "a16.gguf")
        afm("convert", fixture, base16, "--type", "f16")
        afm("adapter", "random", "--base", base16, "--out", adapter16, "--rank", "8", "--alpha",
            "16", "--seed", "7", "--std", "0.2", "--type", "f16")
        tokens, _ = llama_cpp_run(base16, prompt, adapter16, 1.0, kv_f32=False)
        got = afm_greedy(base16, ref["prompt"], "--adapter", adapter16)
        assert got == tokens, (arch, "f16", got, tokens)


def afm_device_oracle(tmp):
    ref = json.load(open("tests/data/afm7/reference.json"))
    base, adapter = os.path.join(tmp, "afm7.gguf"), os.path.join(tmp, "afm7-lora.gguf")
    afm("convert", "tests/data/afm7", base, "--type", "f32")
    afm("adapter", "random", "--base", base, "--out", adapter, "--rank", "4", "--alpha", "8",
        "--seed", "11", "--std", "0.1")
    info = json.loads(afm("adapter", "info", adapter, "--base", base, "--json"))
    names = {t["name"] for t in info["tensors"]}
    cfg, weights = afm_device_reference.load_gguf(base)
    block2 = {f"blk.{cfg.block1_layers}.attn_q.weight", f"blk.{cfg.n_layer - 1}.attn_output.weight"}
    assert block2 <= names, ("the adapter must touch Block 2", sorted(names))
    tokens = ref["prompt_ids"] + ref["greedy_tokens"]
    pairs = afm_device_reference.load_adapter(adapter)
    base_logits = afm_device_reference.AfmDevice(cfg, weights).forward(tokens)
    for scale in (1.0, 0.5):
        want = afm_device_reference.AfmDevice(cfg, weights, pairs, scale).forward(tokens)
        assert np.abs(want - base_logits).max() > 0.1, "the adapter changes nothing"
        for batch in ("512", "4"):
            got = afm_logits(base, tokens, "--adapter", adapter, "--adapter-scale", str(scale),
                             "-b", batch)
            check_close(f"afm-device x{scale} batch {batch}", got, want, 1e-3)


def fold(weights, alpha, pairs, scale):
    """W + s B A for every adapted tensor (numpy orientation; stacked pairs per expert)."""
    out = dict(weights)
    for name, (a, b) in pairs.items():
        rank = a.shape[-2]
        s = alpha / rank * scale if alpha else scale
        out[name] = np.asarray(weights[name], dtype=np.float64) + s * np.matmul(b, a)
    return out


def afm_server_oracle(tmp):
    base = "tests/data/afm_server/tiny.gguf"
    ref = json.load(open("tests/data/afm_server/reference.json"))
    adapter = os.path.join(tmp, "server-lora.gguf")
    afm("adapter", "random", "--base", base, "--out", adapter, "--rank", "4", "--alpha", "4",
        "--seed", "13", "--std", "0.02")
    names = {t["name"] for t in json.loads(afm("adapter", "info", adapter, "--json"))["tensors"]}
    assert any("ffn_gate_exps" in n for n in names) and any("ffn_gate_inp" in n for n in names)
    cfg, weights = afm_server_reference.load_gguf(base)
    alpha, pairs = afm_device_reference.load_adapter(adapter)
    tokens = ref["prompt_ids"] + ref["greedy_tokens"]
    base_logits = afm_server_reference.AfmServer(cfg, weights).forward(tokens)
    want = afm_server_reference.AfmServer(cfg, fold(weights, alpha, pairs, 1.0)).forward(tokens)
    assert np.abs(want - base_logits).max() > 0.05, "the adapter changes nothing"
    check_close("afm-server", afm_logits(base, tokens, "--adapter", adapter), want, 1e-3)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        afm_device_oracle(tmp)
        afm_server_oracle(tmp)
        llama_cpp_oracle(tmp)


if __name__ == "__main__":
    main()
    sys.exit(0)
