"""Training throughput of `afm-train` against PyTorch on the same model, in one run.

The model is a dense decoder (llama layout: RMSNorm, RoPE on adjacent pairs, causal attention,
SwiGLU, tied embeddings); the default shape is the ~124M GPT-2-small class: 12 layers, 768
wide, 12 heads, SwiGLU width 2048, vocabulary 50304, sequence 1024. Data are random tokens
(throughput does not depend on them). Reports tokens/s and MFU = tokens/s x FLOPs per token /
peak, with the FLOPs per token afm-train's own log uses (6 x matrix parameters + attention).

    python3 bench/train_bench.py --afm-train build/afm-train --device cuda --steps 30

Peers: PyTorch eager and torch.compile on an equivalent Python model (same shapes, bf16
autocast, fused AdamW where available). Needs torch; numpy for the shards.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def write_random_shards(folder, vocab, tokens, seed=0):
    rng = np.random.default_rng(seed)
    os.makedirs(folder, exist_ok=True)
    names = {"train": "train-00000.bin", "val": "val-00000.bin"}
    sizes = {"train": tokens, "val": max(tokens // 100, 1 << 16)}
    for split, name in names.items():
        data = rng.integers(0, vocab, sizes[split], dtype=np.uint32)
        width = 2 if vocab <= 65536 else 4
        header = b"AFMTOK01" + np.array([1, width], "<u4").tobytes() + \
            np.array([sizes[split]], "<u8").tobytes() + np.array([vocab, 0], "<u4").tobytes()
        with open(os.path.join(folder, name), "wb") as f:
            f.write(header + data.astype("<u2" if width == 2 else "<u4").tobytes())
    meta = {"format": "afm-shards", "version": 1, "tokenizer_sha256": "0" * 64,
            "vocab_size": vocab, "eos_id": 0, "token_bytes": 2 if vocab <= 65536 else 4,
            "seed": seed, "val_fraction": 0.01,
            "train": {"shards": [names["train"]], "tokens": sizes["train"], "documents": 1},
            "val": {"shards": [names["val"]], "tokens": sizes["val"], "documents": 1},
            "inputs": []}
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f)


def model_config(a):
    return {"arch": "llama", "vocab_size": a.vocab, "context_length": a.seq,
            "embedding_length": a.width, "block_count": a.layers,
            "feed_forward_length": a.ffn, "head_count": a.heads, "head_count_kv": a.heads}


def flops_per_token(a):
    d, f, v, L, s = a.width, a.ffn, a.vocab, a.layers, a.seq
    matrix = v * d + L * (4 * d * d + 3 * d * f)
    return 6 * matrix + L * 12 * d * (s + 1) / 2


def run_afm(a, shards, out):
    config = {"model": model_config(a), "data": {"shards": shards, "seq_len": a.seq},
              "optim": {"lr": 6e-4, "min_lr": 6e-5, "warmup_steps": 10, "steps": a.steps,
                        "batch_size": a.batch, "grad_accum": 1},
              "eval": {"every": 0, "batches": 1}, "log": {"every": 1},
              "checkpoint": {"dir": out, "every": 0}, "seed": 1}
    path = os.path.join(out, "config.json")
    os.makedirs(out, exist_ok=True)
    with open(path, "w") as f:
        json.dump(config, f)
    proc = subprocess.run([a.afm_train, "pretrain", "--config", path, "--device", a.device,
                           "--json", "--fresh", "--peak-tflops", str(a.peak_tflops)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("afm-train failed:\n" + proc.stderr[-3000:])
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    steps = [r for r in records if "loss" in r]
    # steady state: time between the first `skip` steps and the last
    skip = min(a.warmup, len(steps) - 2)
    t0, t1 = steps[skip - 1]["elapsed_s"], steps[-1]["elapsed_s"]
    tokens = (len(steps) - skip) * a.batch * a.seq
    return tokens / (t1 - t0), steps[-1]["loss"]


def torch_model(a, torch):
    nn, F = torch.nn, torch.nn.functional
    d, h = a.width, a.heads
    hd = d // h

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1, self.n2 = nn.RMSNorm(d), nn.RMSNorm(d)
            self.qkv = nn.Linear(d, 3 * d, bias=False)
            self.o = nn.Linear(d, d, bias=False)
            self.gu = nn.Linear(d, 2 * a.ffn, bias=False)
            self.down = nn.Linear(a.ffn, d, bias=False)

        def forward(self, x, cos, sin):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.n1(x)).view(b, t, 3, h, hd).permute(2, 0, 3, 1, 4)

            def rope(z):
                z0, z1 = z[..., 0::2], z[..., 1::2]
                return torch.stack([z0 * cos - z1 * sin, z0 * sin + z1 * cos], -1).flatten(-2)
            y = F.scaled_dot_product_attention(rope(q), rope(k), v, is_causal=True)
            x = x + self.o(y.transpose(1, 2).reshape(b, t, d))
            g, u = self.gu(self.n2(x)).chunk(2, -1)
            return x + self.down(F.silu(g) * u)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(a.vocab, d)
            self.layers = nn.ModuleList(Layer() for _ in range(a.layers))
            self.norm = nn.RMSNorm(d)
            inv = 10000.0 ** (-torch.arange(0, hd, 2).float() / hd)
            ang = torch.outer(torch.arange(a.seq).float(), inv)
            self.register_buffer("cos", ang.cos(), persistent=False)
            self.register_buffer("sin", ang.sin(), persistent=False)

        def forward(self, idx):
            x = self.emb(idx)
            for layer in self.layers:
                x = layer(x, self.cos, self.sin)
            return self.norm(x) @ self.emb.weight.t()

    return Model()


def run_torch(a, compiled):
    import torch
    torch.manual_seed(0)
    dev = torch.device(a.device)
    model = torch_model(a, torch).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1,
                            fused=dev.type == "cuda")
    step_model = torch.compile(model) if compiled else model
    data = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device=dev)

    def step():
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=dev.type == "cuda"):
            logits = step_model(data[:, :-1])
            loss = torch.nn.functional.cross_entropy(logits.float().flatten(0, 1),
                                                     data[:, 1:].flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(a.warmup):
        step()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(a.steps - a.warmup):
        loss = step()
    loss.item()
    return (a.steps - a.warmup) * a.batch * a.seq / (time.perf_counter() - t0)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--afm-train", default="build/afm-train")
    p.add_argument("--device", default="cuda")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=8)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--width", type=int, default=768)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--ffn", type=int, default=2048)
    p.add_argument("--vocab", type=int, default=50304)
    p.add_argument("--peak-tflops", type=float, default=989.0)
    p.add_argument("--peers", default="eager,compile", help="comma list; empty for none")
    a = p.parse_args()
    fpt = flops_per_token(a)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        shards = os.path.join(tmp, "shards")
        write_random_shards(shards, a.vocab, max(4 * a.batch * (a.seq + 1), 1 << 22))
        tps, loss = run_afm(a, shards, os.path.join(tmp, "run"))
        rows.append(("afm-train (libtorch C++)", tps))
    for peer in filter(None, a.peers.split(",")):
        try:
            rows.append((f"PyTorch {peer}", run_torch(a, peer == "compile")))
        except Exception as e:  # a peer that cannot run here is reported, not fatal
            print(f"PyTorch {peer}: failed: {e}", file=sys.stderr)
    params = a.vocab * a.width + a.layers * (4 * a.width ** 2 + 3 * a.width * a.ffn)
    print(f"\nmodel: {params / 1e6:.1f}M matrix parameters, batch {a.batch} x {a.seq}, "
          f"{fpt / 1e9:.3f} GFLOP/token, peak {a.peak_tflops:g} TFLOP/s, device {a.device}\n")
    print("| trainer | tokens/s | MFU | vs afm-train |")
    print("|---|---|---|---|")
    base = rows[0][1]
    for name, tps in rows:
        print(f"| {name} | {tps:,.0f} | {100 * tps * fpt / (a.peak_tflops * 1e12):.1f}% | "
              f"{tps / base:.2f}x |")


if __name__ == "__main__":
    main()
