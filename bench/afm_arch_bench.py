"""The afm architectures' savings, each measured against the same model with the saving
switched off, in one run (issue: AFM architectures). Prints a markdown table for
docs/benchmarks.md.

  afm-device  KV bytes per token with KV sharing vs all 16 layers owning K/V (expected -37.5%);
              time to first token for a 2,048-token prompt with the Block-2 skip vs
              --full-prefill (goal: at least 30% less).
  afm-server  KV cache bytes at 8k / 32k / 64k context vs every layer global; prompt and decode
              speed with tracks on concurrent thread teams vs --sequential-tracks.
  int8 KV     bytes per token of --kv-type q8 vs f16 on both.

Runs alternate between the two variants one repetition at a time (this machine's speed drifts)
and report medians with the range.

    .venv/bin/python bench/afm_arch_bench.py [-r 5] [--threads 2]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

AFM = os.environ.get("AFM_BIN", "build/afm")
MODELS = "build/bench-cache/afm"


def bench(model, *args):
    cmd = [AFM, "bench", "-m", os.path.join(MODELS, model), "--json", "-r", "1", *args]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def seconds(result, test):
    return next(r["seconds"][0] for r in result["results"] if r["test"] == test)


def interleaved(reps, variants):
    """variants: {label: (model, args, test)} -> {label: [seconds per repetition]}"""
    out = {label: [] for label in variants}
    for _ in range(reps):
        for label, (model, args, test) in variants.items():
            out[label].append(seconds(bench(model, *args), test))
    return out


def fmt(values):
    return f"{statistics.median(values):.3f} s ({min(values):.3f}-{max(values):.3f})"


def kv(model, ctx, kv_type="f16"):
    j = bench(model, "-p", "0", "-n", "1", "-c", str(ctx), "--kv-type", kv_type)
    return j["kv_bytes"], j["kv_bytes_per_token"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-r", "--repetitions", type=int, default=5)
    ap.add_argument("--threads", default="2")
    a = ap.parse_args()
    subprocess.run([sys.executable, "bench/make_afm_bench_models.py", MODELS], check=True,
                   stdout=subprocess.DEVNULL)
    t = ["-t", a.threads]
    rows = []

    shared, normal = kv("afm-device.gguf", 4096)[1], kv("afm-device-nokvshare.gguf", 4096)[1]
    rows.append(("afm-device KV bytes/token (f16)", f"{shared}", f"{normal} (no sharing)",
                 f"{shared / normal - 1:+.1%}"))
    ttft = interleaved(a.repetitions, {
        "skip": ("afm-device.gguf", ["-p", "2048", "-n", "0", *t], "pp2048"),
        "full": ("afm-device.gguf", ["-p", "2048", "-n", "0", "--full-prefill", *t], "pp2048")})
    rows.append(("afm-device TTFT, 2,048-token prompt", fmt(ttft["skip"]),
                 fmt(ttft["full"]) + " (--full-prefill)",
                 f"{statistics.median(ttft['skip']) / statistics.median(ttft['full']) - 1:+.1%}"))

    for ctx in (8192, 32768, 65536):
        local, full = kv("afm-server.gguf", ctx)[0], kv("afm-server-allglobal.gguf", ctx)[0]
        rows.append((f"afm-server KV cache at {ctx // 1024}k (f16)", f"{local / 2**20:.0f} MiB",
                     f"{full / 2**20:.0f} MiB (all global)", f"{local / full - 1:+.1%}"))
    for test, args in (("pp512", ["-p", "512", "-n", "0"]), ("tg64", ["-p", "0", "-n", "64"])):
        r = interleaved(a.repetitions, {
            "teams": ("afm-server.gguf", [*args, *t], test),
            "seq": ("afm-server.gguf", [*args, "--sequential-tracks", *t], test)})
        speedup = statistics.median(r["seq"]) / statistics.median(r["teams"])
        rows.append((f"afm-server {test}, tracks concurrent", fmt(r["teams"]),
                     fmt(r["seq"]) + " (sequential)", f"{speedup:.2f}x faster"))

    for model in ("afm-device.gguf", "afm-server.gguf"):
        q8, f16 = kv(model, 4096, "q8")[1], kv(model, 4096, "f16")[1]
        rows.append((f"{model[:-5]} KV bytes/token, q8 vs f16", f"{q8}", f"{f16}", f"{q8 / f16 - 1:+.1%}"))

    print(f"| measure ({a.threads} threads) | afm | baseline | change |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
