"""Regenerates tests/data/afm7/: a tiny random afm7 model folder as mlx-lm saves Apple's
on-device model (config.json with "model_type": "afm7", model.safetensors named by mlx's
tree_flatten, float32), with the tokenizer of tests/data/hf/qwen2, and reference.json: Apple's
reference implementation's (mlx_lm/models/afm7.py) own logits, the oracle for `afm convert`'s
afm7 import and the afm-device engine.

Shape: hidden_dim 32, 4 heads of 8, 2 KV heads, 8 layers of which the last 3 reuse the K/V of
layer 4 (Block 1 = 5 layers, the report's 62.5%), MLP width int(32 * 3.25) = 104, vocabulary 400.
Weights are seeded normals (see SEED below for the scales: greedy decoding has clear winners and
does not just repeat a token); norm weights are 1 + small noise.
Each Block-1 layer's learned int8 K/V scales are calibrated: the prompt runs once with the fake
quantizer off, and quant_key_scale / quant_value_scale = absmax(K after k_norm) / 127 and
absmax(V) / 127 of that layer, so the fake quantizer is active but not destructive (decoded
tokens may exceed the prompt's absmax and clip). Each scale is then raised by at most 2% so that
no quantised value of the prompt and greedy continuation lies within 1e-3 steps of a rounding
tie (see widen_tie_margins: otherwise float noise decides the rounding in another engine).

reference.json (float32 logits written as the shortest decimals that round-trip in float32):
- prompt, prompt_ids: the fixed prompt and its token ids (no special tokens);
- prompt_logits[p]: logits at prompt position p, from one forward over the whole prompt
  without a cache (afm7's cache=None path);
- greedy_tokens, decode_logits: mlx's cache path: model.make_cache(), the prompt prefilled in
  one call, then one token per call. greedy_tokens[0] = argmax of the prefill's last row;
  decode_logits[i] = logits after feeding greedy_tokens[i] at position len(prompt_ids) + i;
  greedy_tokens[i + 1] = argmax(decode_logits[i]). 32 of each (the last decode row predicts a
  33rd token that is not listed);
- min_top2_gap: the smallest top-1 minus top-2 logit over the 32 greedy choices;
- min_tie_margin: the smallest distance, in quantisation steps, of any K/V value the cached
  run quantises from a rounding tie k + 0.5 (afm7 rounds half to even, mx.round);
- kv_scales[l] = [quant_key_scale, quant_value_scale] of Block-1 layer l;
- mlx_version, mlx_lm_version.

Needs mlx and mlx-lm, which are not in requirements.txt (CI only reads the committed files):
    pip install "mlx[cpu]" mlx-lm
Run from the repository root:
    .venv/bin/python tests/oracle/make_afm_device_fixture.py
"""
import contextlib
import json
import os
import shutil

import mlx.core as mx
import mlx_lm
import numpy as np
from mlx.utils import tree_flatten, tree_unflatten
from mlx_lm.models import afm7
from tokenizers import Tokenizer

OUT = "tests/data/afm7"
TOKENIZER_FROM = "tests/data/hf/qwen2"
PROMPT = "The quick brown fox jumps over the lazy dog. Hello, world!"
STEPS = 32
# With tied embeddings the current token's own embedding dominates the last hidden state unless
# the layers add more than it: a small-weight model just repeats the prompt's last token. So the
# matrices are large (each layer's input is RMS-normed, so nothing blows up) and the embedding
# (std 2: logits spread over ~10 units) only 4x larger; the seed was picked among 1..24 for a
# wide top-2 gap over the greedy steps.
SEED = 3
QUANTIZER = afm7.fake_8bit_quant
WEIGHT_STD = 0.5  # projection and MLP matrices
EMBED_STD = 2.0  # the embedding, also the output head
NORM_STD = 0.1  # norm weights are 1 + this noise


def make_config(vocab_size):
    return {"model_type": "afm7", "vocab_size": vocab_size, "hidden_dim": 32, "num_layers": 8,
            "num_kv_reuse_layers": 3, "num_heads": 4, "num_kv_heads": 2,
            "hidden_dim_scale_factor": 3.25, "rope_theta": 50000.0, "rms_norm_eps": 1e-5}


def randomize(model):
    """Seeded weights in tree_flatten order; the K/V scales stay 1 until calibrate()."""
    mx.random.seed(SEED)
    params = []
    for name, p in tree_flatten(model.parameters()):
        noise = mx.random.normal(p.shape) * WEIGHT_STD
        if name.endswith(("quant_key_scale", "quant_value_scale")):
            params.append((name, p))
        elif "norm" in name:
            params.append((name, 1 + NORM_STD / WEIGHT_STD * noise))
        elif name == "model.embedding.weight":
            params.append((name, EMBED_STD / WEIGHT_STD * noise))
        else:
            params.append((name, noise))
    model.update(tree_unflatten(params))


@contextlib.contextmanager
def hooked_quantizer(fn):
    """Routes afm7.py's fake_8bit_quant(x, scale) calls (made through the module global, Block-1
    layer 0 K, layer 0 V, layer 1 K, ... in each forward) to fn while active."""
    afm7.fake_8bit_quant = fn
    try:
        yield
    finally:
        afm7.fake_8bit_quant = QUANTIZER


def kv_values(model, tokens, quantize=True):
    """The values the fake quantizer sees in one forward over tokens, in call order."""
    seen = []

    def record(x, scale):
        seen.append(np.array(x.astype(mx.float32)))
        return QUANTIZER(x, scale) if quantize else x

    with hooked_quantizer(record):
        mx.eval(model(mx.array(tokens)[None]))
    return seen


def tie_margin(x, scale):
    """Smallest distance, in quantisation steps, of x / scale (float32, as afm7 divides) from a
    rounding tie k + 0.5 that the clamp to [-128, 127] does not hide."""
    y = (x.astype(np.float32) / np.float32(scale)).astype(np.float64).ravel()
    y = y[(y > -128.5) & (y < 127.5)]
    return float(np.min(np.abs(y - np.floor(y) - 0.5), initial=0.5))


def set_scales(model, scales):
    for layer, (k, v) in zip(model.model.layers, scales):
        layer.self_attn.quant_key_scale = mx.array(k, mx.float32)
        layer.self_attn.quant_value_scale = mx.array(v, mx.float32)
    mx.eval(model.parameters())


def calibrate(model, ids):
    """[k, v] scale per Block-1 layer: absmax / 127 of that layer's K (after k_norm) and V over
    the prompt, from one forward with the fake quantizer off."""
    x = kv_values(model, ids.tolist(), quantize=False)
    absmax = [float(np.float32(np.abs(v).max()) / np.float32(127)) for v in x]
    return [absmax[i:i + 2] for i in range(0, len(absmax), 2)]


def widen_tie_margins(model, base, tokens):
    """Raises each calibrated scale by at most 2% to the float32 value whose grid keeps every
    value quantised over tokens farthest from a rounding tie, layer by layer (a layer's scales
    change the next layer's inputs). Without this some K/V value sits ~1e-5 steps from a tie,
    float noise in any other engine rounds it the other way, and every later logit moves by
    ~1e-3: the fixture would test rounding luck, not the engine."""
    scales = [list(kv) for kv in base]
    steps = 1 + np.arange(2001) * 1e-5
    for i in range(len(scales)):
        set_scales(model, scales)
        x = kv_values(model, tokens)
        for j in range(2):
            candidates = (scales[i][j] * steps).astype(np.float32)
            scales[i][j] = float(max(candidates, key=lambda s: tie_margin(x[2 * i + j], s)))
    set_scales(model, scales)
    return scales


def f32_list(row):
    """Shortest decimals that round-trip in float32 (keeps the JSON small and exact)."""
    return [float(str(v)) for v in np.array(row, dtype=np.float32)]


def top2_gap(row):
    top = np.sort(np.array(row, dtype=np.float32))[-2:]
    return float(top[1] - top[0])


def reference(model, ids):
    prompt_logits = model(ids[None])[0]  # no cache: one causal forward
    margins = []

    def checked(x, scale):
        margins.append(tie_margin(np.array(x.astype(mx.float32)), scale.item()))
        return QUANTIZER(x, scale)

    with hooked_quantizer(checked):
        cache = model.make_cache()
        last = model(ids[None], cache=cache)[0, -1]
        tokens, decode_logits, gaps = [], [], []
        for _ in range(STEPS):
            gaps.append(top2_gap(last))
            tokens.append(int(mx.argmax(last).item()))
            last = model(mx.array([[tokens[-1]]]), cache=cache)[0, -1]
            decode_logits.append(last)
        mx.eval(decode_logits)
    return {"prompt": PROMPT, "prompt_ids": ids.tolist(),
            "prompt_logits": [f32_list(r) for r in prompt_logits],
            "greedy_tokens": tokens, "decode_logits": [f32_list(r) for r in decode_logits],
            "min_top2_gap": min(gaps), "min_tie_margin": min(margins),
            "kv_scales": [[a.self_attn.quant_key_scale.item(), a.self_attn.quant_value_scale.item()]
                          for a in model.model.layers],
            "mlx_version": mx.__version__, "mlx_lm_version": mlx_lm.__version__}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(TOKENIZER_FROM, name), os.path.join(OUT, name))
    tok = Tokenizer.from_file(os.path.join(OUT, "tokenizer.json"))
    cfg = make_config(tok.get_vocab_size())
    with open(os.path.join(OUT, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)

    model = afm7.Model(afm7.ModelArgs.from_dict(cfg))
    randomize(model)
    ids = mx.array(tok.encode(PROMPT, add_special_tokens=False).ids)
    base = calibrate(model, ids)
    set_scales(model, base)
    tokens = ids.tolist() + reference(model, ids)["greedy_tokens"]
    for _ in range(5):  # the scales change the greedy continuation a little: iterate to a fixpoint
        widen_tie_margins(model, base, tokens)
        ref = reference(model, ids)
        if ref["prompt_ids"] + ref["greedy_tokens"] == tokens:
            break
        tokens = ref["prompt_ids"] + ref["greedy_tokens"]
    # As mlx_lm.utils.save_model writes it (one shard: model.safetensors).
    mx.save_safetensors(os.path.join(OUT, "model.safetensors"),
                        dict(tree_flatten(model.parameters())), metadata={"format": "mlx"})

    with open(os.path.join(OUT, "reference.json"), "w") as f:
        json.dump(ref, f, separators=(",", ":"))
    print(f"{OUT}: {len(ref['prompt_ids'])} prompt tokens, greedy {ref['greedy_tokens']}, "
          f"min top-2 gap {ref['min_top2_gap']:.3f}, min K/V distance from a rounding tie "
          f"{ref['min_tie_margin']:.2e} steps")
    assert ref["min_top2_gap"] > 1e-2, "near tie in the greedy steps: change SEED or scales"
    assert ref["min_tie_margin"] > 1e-3, "K/V value near a rounding tie: change SEED"


if __name__ == "__main__":
    main()
