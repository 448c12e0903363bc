"""Independent numpy reference for the `afm-device` architecture (KV-cache sharing) with an
optional LoRA adapter, written from docs/gguf.md ("afm architectures") and docs/adapters.md
alone: it shares no code with the C++ runtime, keeps no KV cache (every call recomputes the
whole sequence) and computes in float64.

    cfg, weights = load_gguf("model.gguf")
    adapter = load_adapter("adapter.gguf")           # optional
    logits = AfmDevice(cfg, weights, adapter, scale=1.0).forward(token_ids)  # (T, n_vocab)

Weights are numpy arrays in numpy orientation, the reverse of the GGUF shape: a projection of
GGUF shape [in, out] is the array (out, in) and y = x @ W.T. An adapter pair for tensor W is
lora_a (rank, in) and lora_b (out, rank) in the same orientation; the adapted projection is
y = x @ W.T + s * (x @ A.T) @ B.T with s = alpha / rank * scale (alpha 0: s = scale).
"""
from dataclasses import dataclass

import numpy as np

ARCH = "afm-device"


@dataclass
class Config:
    n_embd: int
    n_head: int
    n_head_kv: int
    head_dim: int
    n_ff: int
    n_layer: int
    block1_layers: int   # layers 0 .. B1-1 own K/V; later layers read layer B1-1's
    rms_eps: float
    qk_norm_eps: float
    rope_theta: float


def _reader_fields(r):
    def get(key, default=None):
        f = r.fields.get(key)
        if f is None:
            if default is None:
                raise KeyError(key)
            return default
        return f.contents()
    return get


def load_gguf(path):
    """Reads an afm-device GGUF file: (Config, {tensor name: numpy array})."""
    import gguf

    r = gguf.GGUFReader(path)
    get = _reader_fields(r)
    a = ARCH + "."
    assert get("general.architecture") == ARCH
    weights = {t.name: np.array(t.data, dtype=np.float64) for t in r.tensors}
    n_embd, n_head = get(a + "embedding_length"), get(a + "attention.head_count")
    rms_eps = get(a + "attention.layer_norm_rms_epsilon")
    cfg = Config(n_embd=n_embd, n_head=n_head, n_head_kv=get(a + "attention.head_count_kv"),
                 head_dim=get(a + "attention.key_length", n_embd // n_head),
                 n_ff=get(a + "feed_forward_length"), n_layer=get(a + "block_count"),
                 block1_layers=get(a + "kv_share.block1_layers"), rms_eps=rms_eps,
                 qk_norm_eps=get(a + "attention.qk_norm_epsilon", rms_eps),
                 rope_theta=get(a + "rope.freq_base"))
    return cfg, weights


def load_adapter(path):
    """Reads a LoRA adapter GGUF: (alpha, {base tensor name: (A (rank, in), B (out, rank))})."""
    import gguf

    r = gguf.GGUFReader(path)
    get = _reader_fields(r)
    assert get("general.type") == "adapter" and get("adapter.type") == "lora"
    alpha = float(get("adapter.lora.alpha", 0.0))
    tensors = {t.name: np.array(t.data, dtype=np.float64) for t in r.tensors}
    pairs = {}
    for name, a in tensors.items():
        if name.endswith(".lora_a"):
            base = name[: -len(".lora_a")]
            pairs[base] = (a, tensors[base + ".lora_b"])
    return alpha, pairs


class AfmDevice:
    def __init__(self, cfg, weights, adapter=None, scale=1.0):
        self.cfg, self.w = cfg, weights
        self.alpha, self.pairs = adapter if adapter else (0.0, {})
        self.scale = scale

    def proj(self, x, name):
        """x @ W.T, plus the adapter's low-rank update when it adapts `name`."""
        y = x @ self.w[name].T
        if name in self.pairs:
            a, b = self.pairs[name]
            s = self.alpha / a.shape[0] * self.scale if self.alpha else self.scale
            y = y + s * ((x @ a.T) @ b.T)
        return y

    def rms_norm(self, x, weight, eps):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight

    def rope(self, x, positions):
        """Rotates consecutive pairs (2i, 2i+1) by pos / theta^(2i / head_dim)."""
        hd = x.shape[-1]
        inv_freq = self.cfg.rope_theta ** (-np.arange(0, hd, 2, dtype=np.float64) / hd)
        angle = np.asarray(positions, dtype=np.float64)[:, None] * inv_freq[None, :]
        cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
        x0, x1 = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = x0 * cos - x1 * sin
        out[..., 1::2] = x0 * sin + x1 * cos
        return out

    def kv_quant(self, x, name):
        if name not in self.w:
            return x
        s = self.w[name].reshape(-1)[0]
        return np.clip(np.round(x / s), -128, 127) * s

    def attend(self, q, k, v):
        """Causal grouped-query attention; q (T, H, d), k/v (T, Hkv, d)."""
        c, seq = self.cfg, q.shape[0]
        mask = np.tril(np.ones((seq, seq), dtype=bool))
        out = np.empty_like(q)
        group = c.n_head // c.n_head_kv
        for h in range(c.n_head):
            scores = (q[:, h, :] @ k[:, h // group, :].T) * c.head_dim ** -0.5
            scores = np.where(mask, scores, -np.inf)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            out[:, h, :] = (e / e.sum(axis=-1, keepdims=True)) @ v[:, h // group, :]
        return out.reshape(seq, c.n_head * c.head_dim)

    def forward(self, tokens):
        c, w = self.cfg, self.w
        positions = np.arange(len(tokens))
        x = w["token_embd.weight"][np.asarray(tokens)]
        shared_kv = None
        for i in range(c.n_layer):
            p = f"blk.{i}."
            h = self.rms_norm(x, w[p + "attn_norm.weight"], c.rms_eps)
            q = self.proj(h, p + "attn_q.weight").reshape(len(tokens), c.n_head, c.head_dim)
            q = self.rms_norm(self.rope(q, positions), w[p + "attn_q_norm.weight"], c.qk_norm_eps)
            if i < c.block1_layers:
                k = self.proj(h, p + "attn_k.weight").reshape(len(tokens), c.n_head_kv, c.head_dim)
                v = self.proj(h, p + "attn_v.weight").reshape(len(tokens), c.n_head_kv, c.head_dim)
                k = self.rms_norm(self.rope(k, positions), w[p + "attn_k_norm.weight"],
                                  c.qk_norm_eps)
                k = self.kv_quant(k, p + "attn_k_scale.weight")
                v = self.kv_quant(v, p + "attn_v_scale.weight")
                shared_kv = (k, v)  # Block 2 reads the last Block-1 layer's K/V
            else:
                k, v = shared_kv
            x = x + self.proj(self.attend(q, k, v), p + "attn_output.weight")
            h = self.rms_norm(x, w[p + "ffn_norm.weight"], c.rms_eps)
            g = self.proj(h, p + "ffn_gate.weight")
            x = x + self.proj(g / (1 + np.exp(-g)) * self.proj(h, p + "ffn_up.weight"),
                              p + "ffn_down.weight")
        x = self.rms_norm(x, w["output_norm.weight"], c.rms_eps)
        return x @ w["token_embd.weight"].T
