"""Independent numpy reference for the `afm-server` architecture (Parallel-Track Mixture of
Experts), written from docs/gguf.md section "afm architectures" alone: it shares no code with the
C++ runtime, keeps no KV cache (every call recomputes the whole sequence) and computes in float64
unless asked otherwise.

    cfg, weights = load_gguf("tests/data/afm_server/tiny.gguf")
    logits = AfmServer(cfg, weights).forward(token_ids)   # (len(token_ids), n_vocab)

Weights are numpy arrays in numpy orientation, the reverse of the GGUF shape (a GGUF tensor of
shape [n_embd, n_ff_exp, E] is the array (E, n_ff_exp, n_embd): expert e is `w[e]`).
"""
from dataclasses import dataclass

import numpy as np

ARCH = "afm-server"


@dataclass
class Config:
    n_vocab: int
    n_embd: int
    n_head: int
    n_head_kv: int
    head_dim: int
    n_ff: int                # dense SwiGLU width (feed_forward_length)
    n_layer: int             # L, layers per track (block_count)
    n_track: int             # T
    track_block_depth: int   # D
    n_expert: int            # E (0: no MoE layers)
    n_expert_used: int       # top-k
    n_ff_exp: int            # width of one expert
    moe_every: int
    global_every: int
    sliding_window: int      # W
    rms_eps: float
    qk_norm_eps: float
    rope_theta: float
    context_length: int
    track_merge: str = "mean"


def load_gguf(path):
    """Reads an afm-server GGUF file: (Config, {tensor name: numpy array})."""
    import gguf  # only needed here, so the model itself depends on numpy alone

    r = gguf.GGUFReader(path)

    def get(key, default=None):
        f = r.fields.get(key)
        if f is None:
            if default is None:
                raise KeyError(key)
            return default
        return f.contents()

    a = ARCH + "."
    assert get("general.architecture") == ARCH
    weights = {t.name: np.array(t.data) for t in r.tensors}
    n_embd, n_head = get(a + "embedding_length"), get(a + "attention.head_count")
    rms_eps = get(a + "attention.layer_norm_rms_epsilon")
    cfg = Config(
        n_vocab=weights["token_embd.weight"].shape[0], n_embd=n_embd, n_head=n_head,
        n_head_kv=get(a + "attention.head_count_kv"),
        head_dim=get(a + "attention.key_length", n_embd // n_head),
        n_ff=get(a + "feed_forward_length"), n_layer=get(a + "block_count"),
        n_track=get(a + "tracks"), track_block_depth=get(a + "track_block_depth"),
        n_expert=get(a + "expert_count"), n_expert_used=get(a + "expert_used_count"),
        n_ff_exp=get(a + "expert_feed_forward_length"), moe_every=get(a + "moe_every"),
        global_every=get(a + "attention.global_every"),
        sliding_window=get(a + "attention.sliding_window", 4096), rms_eps=rms_eps,
        qk_norm_eps=get(a + "attention.qk_norm_epsilon", rms_eps),
        rope_theta=get(a + "rope.freq_base"), context_length=get(a + "context_length"),
        track_merge=get(a + "track_merge"))
    return cfg, weights


class AfmServer:
    """The forward pass, one method per concept. `trace`, when a dict, collects what the fixture
    script checks: router probabilities and choices, and K/V values before fake quantisation."""

    def __init__(self, cfg, weights, dtype=np.float64, trace=None):
        assert cfg.track_merge == "mean"
        assert cfg.n_layer % cfg.track_block_depth == 0
        assert cfg.n_head % cfg.n_head_kv == 0
        self.cfg, self.dtype, self.trace = cfg, dtype, trace
        self.w = {k: np.asarray(v, dtype=dtype) for k, v in weights.items()}

    # ---- layer kinds (n is the layer's index within its track, 0 .. L-1) ----

    def is_global(self, n):
        return (n + 1) % self.cfg.global_every == 0

    def is_moe(self, n):
        return self.cfg.n_expert > 0 and (n + 1) % self.cfg.moe_every == 0

    # ---- building blocks ----

    def rms_norm(self, x, weight, eps):
        """Normalises over the last axis: x / sqrt(mean(x^2) + eps) * weight."""
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight

    def rope(self, x, positions):
        """Rotates consecutive pairs (2i, 2i+1) of each head by pos / theta^(2i / head_dim).
        x: (tokens, heads, head_dim)."""
        hd = x.shape[-1]
        inv_freq = self.cfg.rope_theta ** (-np.arange(0, hd, 2, dtype=np.float64) / hd)
        angle = np.asarray(positions, dtype=np.float64)[:, None] * inv_freq[None, :]
        cos = np.cos(angle).astype(self.dtype)[:, None, :]
        sin = np.sin(angle).astype(self.dtype)[:, None, :]
        x0, x1 = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = x0 * cos - x1 * sin
        out[..., 1::2] = x0 * sin + x1 * cos
        return out

    def fake_quant(self, x, scale):
        """8-bit fake quantisation: clamp(round_half_even(x / s), -128, 127) * s."""
        return np.clip(np.round(x / scale), -128, 127) * scale  # np.round rounds half to even

    def kv_quant(self, x, scale_name):
        """K (after RoPE and k-norm) and V are fake-quantised when the layer has a scale."""
        if scale_name not in self.w:
            return x
        scale = self.w[scale_name][0]
        if self.trace is not None:
            self.trace.setdefault("kv_over_scale", []).append((scale_name, x / scale))
        return self.fake_quant(x, scale)

    def attention_mask(self, positions, local):
        """mask[i, j]: query i may see key j. Causal; a local layer's query at position p sees
        positions max(0, p - W + 1) .. p only."""
        q, k = np.asarray(positions)[:, None], np.asarray(positions)[None, :]
        mask = k <= q
        if local:
            mask &= k >= q - self.cfg.sliding_window + 1
        return mask

    def softmax(self, x, axis=-1):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)

    def kv_head_of(self, h):
        """Grouped-query attention: query heads h*G .. h*G+G-1 share kv head h (G = n_head /
        n_head_kv), as llama.cpp and mlx group them."""
        return h // (self.cfg.n_head // self.cfg.n_head_kv)

    def attention(self, x, p, n, positions):
        """Self-attention of layer prefix p (index n in its track) on normed input x."""
        c, seq = self.cfg, x.shape[0]
        local = not self.is_global(n)
        q = (x @ self.w[p + "attn_q.weight"].T).reshape(seq, c.n_head, c.head_dim)
        k = (x @ self.w[p + "attn_k.weight"].T).reshape(seq, c.n_head_kv, c.head_dim)
        v = (x @ self.w[p + "attn_v.weight"].T).reshape(seq, c.n_head_kv, c.head_dim)
        if local:  # global layers have no positional embedding (NoPE)
            q, k = self.rope(q, positions), self.rope(k, positions)
        q = self.rms_norm(q, self.w[p + "attn_q_norm.weight"], c.qk_norm_eps)
        k = self.rms_norm(k, self.w[p + "attn_k_norm.weight"], c.qk_norm_eps)
        k = self.kv_quant(k, p + "attn_k_scale.weight")
        v = self.kv_quant(v, p + "attn_v_scale.weight")
        mask = self.attention_mask(positions, local)
        out = np.empty((seq, c.n_head, c.head_dim), dtype=self.dtype)
        for h in range(c.n_head):
            kh = self.kv_head_of(h)
            scores = (q[:, h, :] @ k[:, kh, :].T) * c.head_dim ** -0.5
            scores = np.where(mask, scores, -np.inf)
            out[:, h, :] = self.softmax(scores) @ v[:, kh, :]
        return out.reshape(seq, c.n_head * c.head_dim) @ self.w[p + "attn_output.weight"].T

    def swiglu(self, x, gate, up, down):
        """down(silu(gate x) * up x); gate, up: (width, n_embd), down: (n_embd, width)."""
        g = x @ gate.T
        return (g / (1 + np.exp(-g)) * (x @ up.T)) @ down.T

    def moe(self, x, p):
        """Top-k routed experts: softmax over all E router logits, the k most probable experts
        (ties: lower index), their probabilities renormalised to sum 1."""
        c = self.cfg
        probs = self.softmax(x @ self.w[p + "ffn_gate_inp.weight"].T)  # (tokens, E)
        gate, up = self.w[p + "ffn_gate_exps.weight"], self.w[p + "ffn_up_exps.weight"]
        down = self.w[p + "ffn_down_exps.weight"]
        out = np.zeros_like(x)
        chosen_all = []
        for i in range(x.shape[0]):
            chosen = np.argsort(-probs[i], kind="stable")[: c.n_expert_used]
            weights = probs[i, chosen] / np.sum(probs[i, chosen])
            for e, wt in zip(chosen, weights):
                out[i] += wt * self.swiglu(x[i], gate[e], up[e], down[e])
            chosen_all.append(chosen)
        if self.trace is not None:
            self.trace.setdefault("router", []).append((p, probs, np.array(chosen_all)))
        return out

    def ffn(self, x, p, n):
        if self.is_moe(n):
            return self.moe(x, p)
        return self.swiglu(x, self.w[p + "ffn_gate.weight"], self.w[p + "ffn_up.weight"],
                           self.w[p + "ffn_down.weight"])

    def layer(self, x, t, n, positions):
        """Pre-norm residual layer n of track t."""
        p, eps = f"trk.{t}.blk.{n}.", self.cfg.rms_eps
        h = x + self.attention(self.rms_norm(x, self.w[p + "attn_norm.weight"], eps), p, n,
                               positions)
        return h + self.ffn(self.rms_norm(h, self.w[p + "ffn_norm.weight"], eps), p, n)

    def track_block(self, x, b, positions):
        """Every track runs layers b*D .. b*D+D-1 from the same x; the results are averaged."""
        c = self.cfg
        outs = []
        for t in range(c.n_track):
            y = x
            for n in range(b * c.track_block_depth, (b + 1) * c.track_block_depth):
                y = self.layer(y, t, n, positions)
            outs.append(y)
        return np.mean(outs, axis=0)

    def forward(self, tokens):
        """Logits (len(tokens), n_vocab) at every position of `tokens` (positions 0, 1, ...)."""
        c = self.cfg
        positions = np.arange(len(tokens))
        x = self.w["token_embd.weight"][np.asarray(tokens)]
        for b in range(c.n_layer // c.track_block_depth):
            x = self.track_block(x, b, positions)
        x = self.rms_norm(x, self.w["output_norm.weight"], c.rms_eps)
        return x @ self.w["token_embd.weight"].T  # tied embeddings
