"""Regenerates tests/data/afm_server/{tiny.gguf, reference.json}: a tiny random-weight
`afm-server` model (Parallel-Track Mixture of Experts, docs/gguf.md "afm architectures") and the
logits of the independent numpy float64 reference in afm_server_reference.py, the oracle the C++
runtime is tested against (logits within 1e-3).

tiny.gguf: all tensors f32; keys under `afm-server.` (CONFIG below); the byte-level BPE
vocabulary of tests/data/hf/qwen2 (400 tokens) as `tokenizer.ggml.*` keys written exactly as
`afm convert` writes them, so the file also runs in `afm generate`.

reference.json (logits are float32 values, every row has n_vocab entries):
- prompt, prompt_ids: PROMPT and its ids under that tokenizer (longer than the sliding window).
- prompt_logits[p]: logits at position p of prompt_ids, p = 0 .. len(prompt_ids)-1.
- greedy_tokens[i], i = 0 .. 31: argmax of the logits at the last position of a full recompute of
  prompt_ids + greedy_tokens[0 .. i-1] (no EOS stop; greedy_tokens[0] = argmax prompt_logits[-1]).
- decode_logits[i], i = 0 .. 31: logits at the last position (len(prompt_ids) + i) of a full
  recompute of prompt_ids + greedy_tokens[0 .. i], i.e. what a runtime returns after prefilling
  the prompt and decoding greedy_tokens[0 .. i] one at a time. argmax decode_logits[i] =
  greedy_tokens[i + 1] for i < 31; the last row predicts one token past the list.
- min_top2_gap: the smallest top-1 minus top-2 logit over prompt_logits[-1] and every
  decode_logits row (all greedy decisions, the last one included).
- min_router_margin: over every token, track and MoE layer of the full sequence, the smallest
  difference between the k-th and (k+1)-th router probability (a runtime whose probabilities
  are off by less than this picks the same experts).
- min_kv_round_margin: over every fake-quantised K/V element, the smallest distance of x / s
  from a rounding boundary (n + 0.5), in quantisation steps.
- seed: the weight seed the checks below accepted.

Self-checks (the script re-draws the weights until all hold, then prints them): the greedy
decisions have top-2 gaps >= MIN_TOP2_GAP; every routing decision has a margin >= MIN_MARGIN;
every MoE layer sends the prompt's tokens to at least 3 of its 4 experts; greedy decoding
produces at least MIN_DISTINCT_GREEDY different tokens; the K/V
rounding margin is >= MIN_ROUND_MARGIN; a float32 run of the reference agrees with float64; and
each of a list of plausible misreadings of the spec (MUTATIONS) moves some logit by more than
10x the test tolerance, so the fixture would catch it.

Needs numpy, gguf and tokenizers. Run from the repository root:
    .venv/bin/python tests/oracle/make_afm_server_fixture.py
"""
import json
import os
import sys
from dataclasses import replace

import gguf
import numpy as np
from tokenizers import Tokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from afm_server_reference import ARCH, AfmServer, Config, load_gguf  # noqa: E402
from make_tokenizer_fixtures import QWEN2 as QWEN2_REGEX  # noqa: E402

OUT = "tests/data/afm_server"
TOKENIZER = "tests/data/hf/qwen2"
PROMPT = "The quick brown fox jumps over the lazy dog. Hello, world!"
STEPS = 32
FIRST_SEED = 1
TOLERANCE = 1e-3          # what the C++ test allows on a logit
MIN_TOP2_GAP = 1e-2
MIN_MARGIN = 1e-5         # router probabilities (f32 error on them ~1e-7)
MIN_ROUND_MARGIN = 1e-4   # K/V fake quantisation, in steps (f32 error on x / s <= ~1e-5)
MIN_DISTINCT_GREEDY = 4   # a decode that repeats one token would test little
QUANT_LAYERS = [(0, 0), (1, 2)]  # (track, layer) with attn_k_scale / attn_v_scale

CONFIG = dict(n_embd=32, n_head=4, n_head_kv=2, head_dim=8, n_ff=64, n_layer=8, n_track=2,
              track_block_depth=4, n_expert=4, n_expert_used=2, n_ff_exp=16, moe_every=2,
              global_every=3, sliding_window=6, rms_eps=float(np.float32(1e-6)),
              qk_norm_eps=float(np.float32(1e-4)),
              rope_theta=10000.0, context_length=128)


# ---- tokenizer: tokenizer.ggml.* exactly as src/tokenizer/gguf_vocab.cpp writes them ----

def tokenizer_keys():
    tj = json.load(open(os.path.join(TOKENIZER, "tokenizer.json"), encoding="utf-8"))
    tc = json.load(open(os.path.join(TOKENIZER, "tokenizer_config.json"), encoding="utf-8"))
    split = tj["pre_tokenizer"]["pretokenizers"][0]
    assert split["pattern"]["Regex"] == QWEN2_REGEX  # llama.cpp's name for it is "qwen2"
    assert not tj["model"].get("ignore_merges", False)
    vocab = dict(tj["model"]["vocab"])
    for a in tj["added_tokens"]:
        vocab[a["content"]] = a["id"]
    tokens = [None] * len(vocab)
    for text, i in vocab.items():
        tokens[i] = text
    assert None not in tokens
    types = [1] * len(tokens)  # llama.cpp: 1 normal, 3 control, 4 user-defined
    for a in tj["added_tokens"]:
        types[a["id"]] = 3 if a["special"] else 4
    merges = [m if isinstance(m, str) else f"{m[0]} {m[1]}" for m in tj["model"]["merges"]]
    assert "bos_token" not in tc and "pad_token" not in tc and "unk_token" not in tc
    return tokens, types, merges, vocab[tc["eos_token"]], tc["chat_template"]


# ---- weights ----

def draw_weights(cfg, rng):
    """Seeded random weights in numpy orientation (the reverse of the GGUF shape). The embedding
    (which is also the head) is 10x the rest so greedy decoding has clear winners; the output
    projections (attn_output, ffn_down, experts' down) are 10x too, so each layer's update is
    as large as the embedding it is added to: with small updates the last state stays close
    to the current token's embedding and the tied head just repeats that token. Norms are
    1 + noise."""
    w = lambda *s: rng.standard_normal(s) * 0.1
    out = lambda *s: rng.standard_normal(s)
    d, hd = cfg.n_embd, cfg.head_dim
    t = {"token_embd.weight": 10 * w(cfg.n_vocab, d), "output_norm.weight": 1 + w(d)}
    for tr in range(cfg.n_track):
        for n in range(cfg.n_layer):
            p = f"trk.{tr}.blk.{n}."
            t.update({p + "attn_norm.weight": 1 + w(d),
                      p + "attn_q.weight": w(cfg.n_head * hd, d),
                      p + "attn_k.weight": w(cfg.n_head_kv * hd, d),
                      p + "attn_v.weight": w(cfg.n_head_kv * hd, d),
                      p + "attn_q_norm.weight": 1 + w(hd),
                      p + "attn_k_norm.weight": 1 + w(hd),
                      p + "attn_output.weight": out(d, cfg.n_head * hd),
                      p + "ffn_norm.weight": 1 + w(d)})
            if cfg.n_expert > 0 and (n + 1) % cfg.moe_every == 0:
                t.update({p + "ffn_gate_inp.weight": 5 * w(cfg.n_expert, d),
                          p + "ffn_gate_exps.weight": w(cfg.n_expert, cfg.n_ff_exp, d),
                          p + "ffn_up_exps.weight": w(cfg.n_expert, cfg.n_ff_exp, d),
                          p + "ffn_down_exps.weight": out(cfg.n_expert, d, cfg.n_ff_exp)})
            else:
                t.update({p + "ffn_gate.weight": w(cfg.n_ff, d),
                          p + "ffn_up.weight": w(cfg.n_ff, d),
                          p + "ffn_down.weight": out(d, cfg.n_ff)})
    return {k: v.astype(np.float32) for k, v in t.items()}


def calibrate_kv_scales(cfg, weights, prompt_ids):
    """attn_k_scale / attn_v_scale on MIN_DISTINCT_GREEDY = 4   # a decode that repeats one token would test little
QUANT_LAYERS = absmax / 127 of that layer's K (after RoPE
    and k-norm) and V over the prompt: the quantisation is active but not destructive."""
    for tr, n in QUANT_LAYERS:  # each K/V depends on earlier layers only: calibrate in order
        raw = {}
        Probe(cfg, weights, raw).forward(prompt_ids)
        for name in ("k", "v"):
            s = np.float32(np.max(np.abs(raw[(tr, n, name)])) / 127)
            weights[f"trk.{tr}.blk.{n}.attn_{name}_scale.weight"] = np.array([s], np.float32)
    return weights


class Probe(AfmServer):
    """Records each layer's K and V as they would enter the quantiser (scale 1 = none)."""

    def __init__(self, cfg, weights, out):
        super().__init__(cfg, weights)
        self.out = out

    def kv_quant(self, x, scale_name):
        tr, _, n = scale_name.split(".")[1:4]
        self.out[(int(tr), int(n), scale_name.split(".")[4][5])] = x
        return super().kv_quant(x, scale_name)


# ---- mutations: plausible misreadings of the spec that the fixture must catch ----

class NoWindow(AfmServer):
    def attention_mask(self, positions, local):
        return super().attention_mask(positions, False)


class WindowOneWider(AfmServer):
    def attention_mask(self, positions, local):
        q, k = np.asarray(positions)[:, None], np.asarray(positions)[None, :]
        return (k <= q) & (~local | (k >= q - self.cfg.sliding_window))


class RopeEverywhere(AfmServer):
    def is_global(self, n):  # used for both RoPE and the window: restore the window below
        return False

    def attention_mask(self, positions, local):
        return super().attention_mask(positions, local and not self._global)

    def layer(self, x, t, n, positions):
        self._global = (n + 1) % self.cfg.global_every == 0
        return super().layer(x, t, n, positions)


class NeoxRope(AfmServer):
    def rope(self, x, positions):
        hd = x.shape[-1]
        perm = np.concatenate([np.arange(0, hd, 2), np.arange(1, hd, 2)])
        inv = np.argsort(perm)
        # rotating (i, i + hd/2) pairs = consecutive pairs on a permuted layout
        return super().rope(x[..., inv], positions)[..., perm]


class NormBeforeRope(AfmServer):
    def attention(self, x, p, n, positions):
        self._pos = positions
        return super().attention(x, p, n, positions)

    def rope(self, x, positions):
        return x  # applied after the norm instead, below

    def rms_norm(self, x, weight, eps):
        y = super().rms_norm(x, weight, eps)
        if x.ndim == 3 and self._local:
            y = AfmServer.rope(self, y, self._pos)
        return y

    def layer(self, x, t, n, positions):
        self._local = not self.is_global(n)
        return super().layer(x, t, n, positions)


class QkEpsIsLayerEps(AfmServer):
    def __init__(self, cfg, weights):
        super().__init__(replace(cfg, qk_norm_eps=cfg.rms_eps), weights)


class NoKvQuant(AfmServer):
    def kv_quant(self, x, scale_name):
        return x


class InterleavedGqa(AfmServer):
    def kv_head_of(self, h):
        return h % self.cfg.n_head_kv


class GlobalWithinBlock(AfmServer):
    def is_global(self, n):
        return super().is_global(n % self.cfg.track_block_depth)


class NoRenormalise(AfmServer):
    def moe(self, x, p):
        c = self.cfg
        probs = self.softmax(x @ self.w[p + "ffn_gate_inp.weight"].T)
        out = np.zeros_like(x)
        for i in range(x.shape[0]):
            for e in np.argsort(-probs[i], kind="stable")[: c.n_expert_used]:
                out[i] += probs[i, e] * self.swiglu(x[i], self.w[p + "ffn_gate_exps.weight"][e],
                                                    self.w[p + "ffn_up_exps.weight"][e],
                                                    self.w[p + "ffn_down_exps.weight"][e])
        return out


class RouterOnResidual(AfmServer):
    def layer(self, x, t, n, positions):
        p, eps = f"trk.{t}.blk.{n}.", self.cfg.rms_eps
        h = x + self.attention(self.rms_norm(x, self.w[p + "attn_norm.weight"], eps), p, n,
                               positions)
        self._residual = h
        return h + self.ffn(self.rms_norm(h, self.w[p + "ffn_norm.weight"], eps), p, n)

    def moe(self, x, p):
        saved = self.w[p + "ffn_gate_inp.weight"]
        # router logits from the un-normed residual: fold it in by routing on _residual
        probs = self.softmax(self._residual @ saved.T)
        c, out = self.cfg, np.zeros_like(x)
        for i in range(x.shape[0]):
            chosen = np.argsort(-probs[i], kind="stable")[: c.n_expert_used]
            wts = probs[i, chosen] / probs[i, chosen].sum()
            for e, wt in zip(chosen, wts):
                out[i] += wt * self.swiglu(x[i], self.w[p + "ffn_gate_exps.weight"][e],
                                           self.w[p + "ffn_up_exps.weight"][e],
                                           self.w[p + "ffn_down_exps.weight"][e])
        return out


class MergeOnlyAtEnd(AfmServer):
    def forward(self, tokens):
        c = self.cfg
        positions = np.arange(len(tokens))
        x0 = self.w["token_embd.weight"][np.asarray(tokens)]
        outs = []
        for t in range(c.n_track):
            y = x0
            for n in range(c.n_layer):
                y = self.layer(y, t, n, positions)
            outs.append(y)
        x = self.rms_norm(np.mean(outs, axis=0), self.w["output_norm.weight"], c.rms_eps)
        return x @ self.w["token_embd.weight"].T


MUTATIONS = {
    "no sliding window": NoWindow,
    "window one key wider": WindowOneWider,
    "RoPE on global layers too": RopeEverywhere,
    "RoPE on (i, i + head_dim/2) pairs": NeoxRope,
    "QK norm before RoPE": NormBeforeRope,
    "QK norm epsilon = layer epsilon": QkEpsIsLayerEps,
    "no K/V fake quantisation": NoKvQuant,
    "GQA kv head = h % n_head_kv": InterleavedGqa,
    "global layers counted within the track block": GlobalWithinBlock,
    "top-k weights not renormalised": NoRenormalise,
    "router on the un-normed residual": RouterOnResidual,
    "tracks merged only after all L layers": MergeOnlyAtEnd,
}


# ---- the reference run and its checks ----

def greedy(model, prompt_ids):
    prompt_logits = model.forward(prompt_ids)
    seq, tokens, decode_logits = list(prompt_ids), [], []
    logits = prompt_logits[-1]
    for _ in range(STEPS):
        tokens.append(int(np.argmax(logits)))
        seq.append(tokens[-1])
        logits = model.forward(seq)[-1]
        decode_logits.append(logits)
    return prompt_logits, tokens, np.array(decode_logits)


def top2_gap(rows):
    s = np.sort(np.atleast_2d(rows), axis=-1)
    return float(np.min(s[:, -1] - s[:, -2]))


def evaluate(cfg, weights, prompt_ids):
    """Everything the checks need, for one set of weights."""
    model = AfmServer(cfg, weights)
    prompt_logits, tokens, decode_logits = greedy(model, prompt_ids)
    full = list(prompt_ids) + tokens
    trace = {}
    full_logits = AfmServer(cfg, weights, trace=trace).forward(full)
    causal = max(np.max(np.abs(full_logits[: len(prompt_ids)] - prompt_logits)),
                 np.max(np.abs(full_logits[len(prompt_ids):] - decode_logits)))
    k = cfg.n_expert_used
    margins, hist = [], {}
    for name, probs, chosen in trace["router"]:
        s = np.sort(probs, axis=-1)[:, ::-1]
        margins.append(np.min(s[:, k - 1] - s[:, k]))
        counts = np.bincount(chosen[: len(prompt_ids)].ravel(), minlength=cfg.n_expert)
        hist[name] = counts.tolist()
    rounding = []
    for name, q in trace["kv_over_scale"]:
        inside = np.abs(q) < 127.5
        frac = q[inside] - np.floor(q[inside])
        rounding.append(np.min(np.abs(frac - 0.5)) if inside.any() else 1.0)
        if (~inside).any():
            rounding.append(np.min(np.abs(np.abs(q[~inside]) - 127.5)))
    return dict(prompt_logits=prompt_logits, greedy_tokens=tokens, decode_logits=decode_logits,
                full_logits=full_logits, causal_diff=float(causal),
                min_top2_gap=top2_gap(np.vstack([prompt_logits[-1:], decode_logits])),
                min_router_margin=float(np.min(margins)), histogram=hist,
                min_kv_round_margin=float(np.min(rounding)))


def acceptable(r, cfg):
    return (r["min_top2_gap"] >= MIN_TOP2_GAP and r["min_router_margin"] >= MIN_MARGIN
            and r["min_kv_round_margin"] >= MIN_ROUND_MARGIN
            and all(sum(c > 0 for c in h) >= 3 for h in r["histogram"].values())
            and len(set(r["greedy_tokens"])) >= MIN_DISTINCT_GREEDY)


def write_gguf(path, cfg, weights, tok):
    tokens, types, merges, eos_id, chat_template = tok
    w = gguf.GGUFWriter(path, ARCH)  # writes general.architecture
    a = ARCH + "."
    w.add_string("general.name", "afm-server-tiny")
    w.add_uint32("general.file_type", 0)  # all f32
    w.add_uint32(a + "vocab_size", cfg.n_vocab)
    w.add_uint32(a + "context_length", cfg.context_length)
    w.add_uint32(a + "embedding_length", cfg.n_embd)
    w.add_uint32(a + "block_count", cfg.n_layer)
    w.add_uint32(a + "feed_forward_length", cfg.n_ff)
    w.add_uint32(a + "attention.head_count", cfg.n_head)
    w.add_uint32(a + "attention.head_count_kv", cfg.n_head_kv)
    w.add_float32(a + "rope.freq_base", cfg.rope_theta)
    w.add_float32(a + "attention.layer_norm_rms_epsilon", cfg.rms_eps)
    w.add_float32(a + "attention.qk_norm_epsilon", cfg.qk_norm_eps)
    w.add_uint32(a + "tracks", cfg.n_track)
    w.add_uint32(a + "track_block_depth", cfg.track_block_depth)
    w.add_uint32(a + "expert_count", cfg.n_expert)
    w.add_uint32(a + "expert_used_count", cfg.n_expert_used)
    w.add_uint32(a + "expert_feed_forward_length", cfg.n_ff_exp)
    w.add_uint32(a + "moe_every", cfg.moe_every)
    w.add_uint32(a + "attention.sliding_window", cfg.sliding_window)
    w.add_uint32(a + "attention.global_every", cfg.global_every)
    w.add_string(a + "track_merge", cfg.track_merge)
    w.add_string("tokenizer.ggml.model", "gpt2")
    w.add_string("tokenizer.ggml.pre", "qwen2")
    w.add_array("tokenizer.ggml.tokens", tokens)
    w.add_array("tokenizer.ggml.token_type", types)
    w.add_array("tokenizer.ggml.merges", merges)
    w.add_uint32("tokenizer.ggml.eos_token_id", eos_id)
    w.add_bool("tokenizer.ggml.add_bos_token", False)
    w.add_bool("tokenizer.ggml.add_eos_token", False)
    w.add_string("tokenizer.chat_template", chat_template)
    for name, t in weights.items():
        w.add_tensor(name, t)  # takes the numpy shape, writes it reversed
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    tok = tokenizer_keys()
    prompt_ids = Tokenizer.from_file(os.path.join(TOKENIZER, "tokenizer.json")).encode(
        PROMPT, add_special_tokens=False).ids
    cfg = Config(n_vocab=len(tok[0]), **CONFIG)
    assert len(prompt_ids) > cfg.sliding_window
    assert len(prompt_ids) + STEPS <= cfg.context_length
    seed = FIRST_SEED
    while True:
        weights = draw_weights(cfg, np.random.default_rng(seed))
        weights = calibrate_kv_scales(cfg, weights, prompt_ids)
        r = evaluate(cfg, weights, prompt_ids)
        print(f"seed {seed}: min top-2 gap {r['min_top2_gap']:.3e}, router margin "
              f"{r['min_router_margin']:.3e}, K/V rounding margin {r['min_kv_round_margin']:.3e}, "
              f"{len(set(r['greedy_tokens']))} distinct greedy tokens")
        if acceptable(r, cfg):
            break
        seed += 1

    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "tiny.gguf")
    write_gguf(path, cfg, weights, tok)

    # The file is the oracle's input: read it back and check it says what we meant.
    cfg2, weights2 = load_gguf(path)
    assert cfg2 == cfg, (cfg2, cfg)
    assert weights2.keys() == weights.keys()
    for name, t in weights.items():
        assert weights2[name].dtype == np.float32 and np.array_equal(weights2[name], t), name
    reader = gguf.GGUFReader(path)
    shapes = {t.name: [int(v) for v in t.shape] for t in reader.tensors}
    d, e = cfg.n_embd, cfg.n_expert
    assert shapes["trk.0.blk.1.ffn_gate_inp.weight"] == [d, e]
    assert shapes["trk.0.blk.1.ffn_gate_exps.weight"] == [d, cfg.n_ff_exp, e]
    assert shapes["trk.0.blk.1.ffn_down_exps.weight"] == [cfg.n_ff_exp, d, e]
    assert shapes["trk.0.blk.0.attn_k_scale.weight"] == [1]
    r2 = evaluate(cfg2, weights2, prompt_ids)
    assert r2["greedy_tokens"] == r["greedy_tokens"]

    ref = {"prompt": PROMPT, "prompt_ids": prompt_ids,
           "prompt_logits": [[float(np.float32(v)) for v in row] for row in r["prompt_logits"]],
           "greedy_tokens": r["greedy_tokens"],
           "decode_logits": [[float(np.float32(v)) for v in row] for row in r["decode_logits"]],
           "min_top2_gap": r["min_top2_gap"], "min_router_margin": r["min_router_margin"],
           "min_kv_round_margin": r["min_kv_round_margin"], "seed": seed}
    with open(os.path.join(OUT, "reference.json"), "w") as f:
        json.dump(ref, f, separators=(",", ":"))

    # ---- report ----
    print(f"\n{path}: {os.path.getsize(path)} bytes, {len(weights)} tensors; "
          f"reference.json: {os.path.getsize(os.path.join(OUT, 'reference.json'))} bytes")
    print(f"config: {cfg}")
    print(f"seed {seed}; prompt {len(prompt_ids)} ids; greedy {r['greedy_tokens']}")
    print(f"min top-2 gap over the greedy decisions: {r['min_top2_gap']:.4e} "
          f"(over every prompt position: {top2_gap(r['prompt_logits']):.4e})")
    print(f"min router margin (k-th - (k+1)-th probability): {r['min_router_margin']:.4e}")
    print(f"min K/V rounding margin (steps from a .5 boundary): {r['min_kv_round_margin']:.4e}")
    print("K/V scales: " + ", ".join(f"{n} = {float(t[0]):.5g}" for n, t in weights.items()
                                      if n.endswith("_scale.weight")))
    print(f"causality: full-sequence logits vs step-by-step recompute: {r['causal_diff']:.2e}")
    print("experts chosen over the prompt (tokens per expert, k per token):")
    for name, h in r["histogram"].items():
        print(f"  {name:14s} {h}")
    f32 = AfmServer(cfg, weights, dtype=np.float32).forward(
        list(prompt_ids) + r["greedy_tokens"])
    print(f"float32 run of the reference vs float64, max |logit diff|: "
          f"{np.max(np.abs(f32 - r['full_logits'])):.2e}")
    print("mutations (max |logit diff| over prompt + greedy sequence; must exceed "
          f"{10 * TOLERANCE:g}):")
    full = list(prompt_ids) + r["greedy_tokens"]
    for label, cls in MUTATIONS.items():
        diff = float(np.max(np.abs(cls(cfg, weights).forward(full) - r["full_logits"])))
        print(f"  {label:45s} {diff:.3e}")
        assert diff > 10 * TOLERANCE, label


if __name__ == "__main__":
    main()
