"""Training throughput of `afm-train` against PyTorch on the same model, in one run.

The model is a dense decoder (RMSNorm, RoPE on adjacent pairs, causal attention, SwiGLU, tied
embeddings). On CUDA the default shape is the ~124M GPT-2-small class (llama layout: 12 layers,
768 wide, 12 heads, SwiGLU width 2048, vocabulary 50304, sequence 1024, batch 16). On the CPU
it is the 21.6M default model of models/afm-device-21m.train.json (afm-device: GQA 6/2 heads,
QK norm, layers 8-11 reuse layer 7's K/V; 384 wide, 12 layers, vocabulary 8192) at batch
8 x 512. Data are random tokens (throughput does not depend on them). Reports tokens/s and
MFU = tokens/s x FLOPs per token / peak, with the FLOPs per token afm-train's own log uses
(6 x matrix parameters + attention).

    python3 bench/train_bench.py --afm-train build/afm-train --device cuda --steps 30
    python3 bench/train_bench.py --afm-train build/afm-train --device cpu --threads 2

On the CPU the peak is measured in the same run by build/bench/fma_peak_bench (register-only
FMA chains on every thread: FP32 with AVX2/AVX-512, BF16 with AVX512-BF16 where present);
afm-train runs in f32 and, where the CPU has AVX512-BF16, with bf16 autocast, each against
its own peak.

Peers: PyTorch eager (and torch.compile on CUDA) on an equivalent Python model (same shapes,
bf16 autocast where afm-train uses it, fused AdamW on CUDA). torch is optional (`pip install
torch` into .venv): without it the peers are skipped with a message. numpy for the shards.
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
    return {"arch": a.arch, "vocab_size": a.vocab, "context_length": a.seq,
            "embedding_length": a.width, "block_count": a.layers,
            "feed_forward_length": a.ffn, "head_count": a.heads, "head_count_kv": a.kv_heads}


def kv_owners(a):
    """Layers with their own K/V projections (afm-device: the first round(0.625 L))."""
    return int(math.floor(0.625 * a.layers + 0.5)) if a.arch == "afm-device" else a.layers


def matrix_params(a):
    d, hd = a.width, a.width // a.heads
    q, kv = a.heads * hd, a.kv_heads * hd
    return a.vocab * d + a.layers * (2 * d * q + 3 * d * a.ffn) + kv_owners(a) * 2 * d * kv


def flops_per_token(a):
    return 6 * matrix_params(a) + a.layers * 12 * a.width * (a.seq + 1) / 2


def run_afm(a, shards, out, extra=()):
    config = {"model": model_config(a), "data": {"shards": shards, "seq_len": a.seq},
              "optim": {"lr": 6e-4, "min_lr": 6e-5, "warmup_steps": 10, "steps": a.steps,
                        "batch_size": a.batch, "grad_accum": 1},
              "eval": {"every": 0, "batches": 1}, "log": {"every": 1},
              "checkpoint": {"dir": out, "every": 0}, "seed": 1}
    path = os.path.join(out, "config.json")
    os.makedirs(out, exist_ok=True)
    with open(path, "w") as f:
        json.dump(config, f)
    cmd = [a.afm_train, "pretrain", "--config", path, "--device", a.device, "--json",
           "--fresh", "--peak-tflops", str(a.peak_tflops), *extra]
    if a.threads:
        cmd += ["--threads", str(a.threads)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("afm-train failed:\n" + proc.stderr[-3000:])
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    steps = [r for r in records if "loss" in r]
    # steady state: time between the first `skip` steps and the last
    skip = min(a.warmup, len(steps) - 2)
    t0, t1 = steps[skip - 1]["elapsed_s"], steps[-1]["elapsed_s"]
    tokens = (len(steps) - skip) * a.batch * a.seq
    start = next((r for r in records if r.get("event") == "start"), {})
    return tokens / (t1 - t0), steps[-1]["loss"], start.get("cpu", "")


def torch_model(a, torch):
    nn, F = torch.nn, torch.nn.functional
    d, h, g = a.width, a.heads, a.kv_heads
    hd = d // h
    qk_norm = a.arch != "llama"

    class Layer(nn.Module):
        def __init__(self, owns_kv):
            super().__init__()
            self.owns_kv = owns_kv
            self.n1, self.n2 = nn.RMSNorm(d), nn.RMSNorm(d)
            self.qkv = nn.Linear(d, (h + 2 * g if owns_kv else h) * hd, bias=False)
            self.qn = nn.RMSNorm(hd) if qk_norm else nn.Identity()
            self.kn = nn.RMSNorm(hd) if qk_norm and owns_kv else nn.Identity()
            self.o = nn.Linear(d, d, bias=False)
            self.gu = nn.Linear(d, 2 * a.ffn, bias=False)
            self.down = nn.Linear(a.ffn, d, bias=False)

        def forward(self, x, cos, sin, kv):
            b, t, _ = x.shape

            def rope(z):
                z0, z1 = z[..., 0::2], z[..., 1::2]
                return torch.stack([z0 * cos - z1 * sin, z0 * sin + z1 * cos], -1).flatten(-2)
            proj = self.qkv(self.n1(x))
            q = proj[..., :h * hd].view(b, t, h, hd).transpose(1, 2)
            q = self.qn(rope(q))
            if self.owns_kv:
                k, v = proj[..., h * hd:].view(b, t, 2 * g, hd).transpose(1, 2).chunk(2, 1)
                kv = (self.kn(rope(k)), v)
            y = F.scaled_dot_product_attention(q, kv[0], kv[1], is_causal=True,
                                               enable_gqa=g != h)
            x = x + self.o(y.transpose(1, 2).reshape(b, t, d))
            gate, up = self.gu(self.n2(x)).chunk(2, -1)
            return x + self.down(F.silu(gate) * up), kv

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(a.vocab, d)
            self.layers = nn.ModuleList(Layer(n < kv_owners(a)) for n in range(a.layers))
            self.norm = nn.RMSNorm(d)
            inv = 10000.0 ** (-torch.arange(0, hd, 2).float() / hd)
            ang = torch.outer(torch.arange(a.seq).float(), inv)
            self.register_buffer("cos", ang.cos(), persistent=False)
            self.register_buffer("sin", ang.sin(), persistent=False)

        def forward(self, idx):
            x, kv = self.emb(idx), None
            for layer in self.layers:
                x, kv = layer(x, self.cos, self.sin, kv)
            return self.norm(x) @ self.emb.weight.t()

    return Model()


def run_torch(a, compiled, bf16):
    import torch
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    dev = torch.device(a.device)
    model = torch_model(a, torch).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1,
                            fused=dev.type == "cuda")
    step_model = torch.compile(model) if compiled else model
    data = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device=dev)

    def step():
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=bf16):
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


CPU_SHAPE = dict(arch="afm-device", batch=8, seq=512, width=384, layers=12, heads=6,
                 kv_heads=2, ffn=1024, vocab=8192, steps=12, warmup=3, peers="eager")
CUDA_SHAPE = dict(arch="llama", batch=16, seq=1024, width=768, layers=12, heads=12,
                  kv_heads=None, ffn=2048, vocab=50304, steps=30, warmup=8,
                  peers="eager,compile")


def physical_cores():
    cores = set()
    for cpu in os.sched_getaffinity(0):
        try:
            with open(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list") as f:
                cores.add(f.read().strip())
        except OSError:
            cores.add(str(cpu))
    return max(len(cores), 1)


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown CPU"


def measure_peak(a):
    """FP32 and BF16 GFLOP/s of a register-only FMA loop on a.threads threads (0: no BF16)."""
    out = subprocess.run([a.fma_peak, "--threads", str(a.threads), "--json"],
                         capture_output=True, text=True, check=True).stdout
    r = json.loads(out)
    return r["fp32_gflops"] * 1e9, r["bf16_gflops"] * 1e9


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--afm-train", default="build/afm-train")
    p.add_argument("--fma-peak", default="build/bench/fma_peak_bench",
                   help="peak FLOP/s microbenchmark (CPU)")
    p.add_argument("--device", default="cuda")
    p.add_argument("--threads", type=int, default=None,
                   help="CPU threads for every trainer (default on the CPU: physical cores)")
    p.add_argument("--arch", choices=["llama", "afm-device"])
    for name in ("steps", "warmup", "batch", "seq", "width", "layers", "heads", "kv-heads",
                 "ffn", "vocab"):
        p.add_argument("--" + name, type=int)
    p.add_argument("--peak-tflops", type=float, default=989.0, help="CUDA peak")
    p.add_argument("--peers", help="comma list of eager,compile; empty for none")
    a = p.parse_args()
    cpu = a.device == "cpu"
    for key, value in (CPU_SHAPE if cpu else CUDA_SHAPE).items():
        if getattr(a, key) is None:
            setattr(a, key, value)
    a.kv_heads = a.kv_heads or a.heads
    if cpu and a.threads is None:
        a.threads = physical_cores()
    fpt = flops_per_token(a)
    # (name, tokens/s); peaks: (label, FLOP/s) columns
    if cpu:
        fp32_peak, bf16_peak = measure_peak(a)
        a.peak_tflops = fp32_peak / 1e12
        peaks = [("FP32", fp32_peak)] + ([("BF16", bf16_peak)] if bf16_peak else [])
        variants = [("f32", ["--cpu-bf16", "off"], False)]
        if bf16_peak:
            variants.append(("bf16 autocast", ["--cpu-bf16", "on"], True))
    else:
        peaks = [("peak", a.peak_tflops * 1e12)]
        variants = [("", [], True)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        shards = os.path.join(tmp, "shards")
        write_random_shards(shards, a.vocab, max(4 * a.batch * (a.seq + 1), 1 << 22))
        for label, extra, _ in variants:
            tps, loss, setup = run_afm(a, shards, os.path.join(tmp, "run"), extra)
            name = "afm-train (libtorch C++)" + (f", {label}" if label else "")
            rows.append((name, tps))
            if setup:
                print(f"{name}: {setup}, last loss {loss:.3f}", file=sys.stderr)
    peers = list(filter(None, a.peers.split(",")))
    try:
        import torch  # noqa: F401  (optional peer)
    except ImportError:
        if peers:
            print("PyTorch peers skipped: torch is not installed (optional: "
                  ".venv/bin/pip install torch)", file=sys.stderr)
        peers = []
    for peer in peers:
        for label, _, bf16 in variants:
            name = f"PyTorch {peer}" + (f", {label}" if label else "")
            try:
                rows.append((name, run_torch(a, peer == "compile", bf16)))
            except Exception as e:  # a peer that cannot run here is reported, not fatal
                print(f"{name}: failed: {e}", file=sys.stderr)
    where = f"{cpu_model()}, {a.threads} threads" if cpu else a.device
    print(f"\nmodel: {a.arch}, {matrix_params(a) / 1e6:.1f}M matrix parameters, batch "
          f"{a.batch} x {a.seq}, {fpt / 1e9:.3f} GFLOP/token; {where}; peak "
          + ", ".join(f"{n} {f / 1e9:,.0f} GFLOP/s" for n, f in peaks) + "\n")
    head = "| trainer | tokens/s | GFLOP/s | " + " | ".join(
        f"% of {n} peak" if cpu else "MFU" for n, _ in peaks) + " | vs afm-train |"
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    base = rows[0][1]
    for name, tps in rows:
        pct = " | ".join(f"{100 * tps * fpt / f:.1f}%" for _, f in peaks)
        print(f"| {name} | {tps:,.0f} | {tps * fpt / 1e9:,.1f} | {pct} | {tps / base:.2f}x |")


if __name__ == "__main__":
    main()
