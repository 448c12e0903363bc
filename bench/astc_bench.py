"""afm's astc6x6 weights against afm q4_0 (the issue's goal: decode >= 0.9x q4_0 on the same
model) and q8_0, on the default model and the Qwen2-0.5B-shaped random model, in one run
(issue: compression, section 3).

Files: the default model's as shipped (q8_0) and re-encoded by `afm quantize` (q4_0 with the
embedding kept q8_0, astc6x6 with the embedding kept q8_0), so the files differ only in their
matrices; the Qwen2-0.5B shape's from bench/make_bench_model.py (q8_0) and `afm quantize` of it,
cached under build/bench-cache/models/. Repetitions interleave the files (engine_bench.py
explains why; the astc6x6 file runs twice, from its lane form and, with AFM_ASTC_LANES=0, from
its blocks; three times where the CPU has the integer row path, AFM_ASTC_INT=0 giving the float
lanes); the table gives tokens/s (median and range), the matrices' bits per weight,
decode as a share of the bandwidth roofline of the file's bytes, the ratio to q4_0 and the
encoder's seconds per million weights.

    .venv/bin/python bench/astc_bench.py [--threads 2] [-p 64] [-n 32] [-r 3] [--skip-qwen]
"""
import argparse
import json
import os
import subprocess
import sys
import time

from engine_bench import afm_bench, bandwidth, fmt, summary
from host_info import cpu_flags, cpu_name
from llama_cpp_build import CACHE, log

MODELS = os.path.join(CACHE, "models")
# The astc6x6 file again with AFM_ASTC_LANES=0: each block parsed as the kernel meets it, what
# the runtime did before the lane form (quant/astc_lanes.h).
BLOCKS = "astc6x6, blocks parsed"
# And, where the CPU has AVX-512 VNNI (the integer row path, docs/compression.md), with
# AFM_ASTC_INT=0: the float lanes.
FLOAT_LANES = "astc6x6, float lanes"
VARIANTS = {BLOCKS: {"AFM_ASTC_LANES": "0"}, FLOAT_LANES: {"AFM_ASTC_INT": "0"}}


def has_integer_path():
    flags = cpu_flags()
    return {"avx512f", "avx512bw", "avx512vl", "avx512_vnni"} <= flags


def quantize(src, dst, *options):
    """`afm quantize` once (cached); returns the encoder's seconds and the matrices' totals."""
    stats = dst + ".json"
    if not os.path.exists(dst) or not os.path.exists(stats):
        log(f"writing {os.path.basename(dst)} with afm quantize")
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        start = time.time()
        out = subprocess.run(["build/afm", "quantize", src, dst, "--json", *options], check=True,
                             capture_output=True, text=True).stdout
        info = json.loads(out)
        info["seconds"] = time.time() - start
        with open(stats, "w") as f:
            json.dump(info, f)
    with open(stats) as f:
        return json.load(f)


def models(a):
    base = "models/afm-device-21m.gguf"
    out = {"device": {"q8_0": (base, None)}}
    for t in ("q4_0", "astc6x6"):
        dst = os.path.join(MODELS, f"afm-device-21m-{t}.gguf")
        out["device"][t] = (dst, quantize(base, dst, "--type", t, "--embedding-type", "q8_0",
                                          "--threads", str(a.threads)))
    out["device"][BLOCKS] = out["device"]["astc6x6"]
    if has_integer_path():
        out["device"][FLOAT_LANES] = out["device"]["astc6x6"]
    if not a.skip_qwen:
        subprocess.run([sys.executable, "bench/make_bench_model.py", MODELS, "--types", "q8_0"],
                       check=True, stdout=subprocess.DEVNULL)
        src = os.path.join(MODELS, "qwen2-0.5b-q8_0.gguf")
        out["qwen2-0.5b"] = {"q8_0": (src, None)}
        for t in ("q4_0", "astc6x6"):
            dst = os.path.join(MODELS, f"qwen2-0.5b-{t}-embq8.gguf")
            out["qwen2-0.5b"][t] = (dst, quantize(src, dst, "--type", t, "--embedding-type",
                                                  "q8_0", "--threads", str(a.threads)))
        out["qwen2-0.5b"][BLOCKS] = out["qwen2-0.5b"]["astc6x6"]
        if has_integer_path():
            out["qwen2-0.5b"][FLOAT_LANES] = out["qwen2-0.5b"]["astc6x6"]
    return out


def main():
    ap = argparse.ArgumentParser(description="afm astc6x6 vs q4_0 / q8_0")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("-p", type=int, default=64)
    ap.add_argument("-n", type=int, default=32)
    ap.add_argument("-r", type=int, default=3)
    ap.add_argument("--skip-qwen", action="store_true", help="only the default model")
    a = ap.parse_args()
    files = models(a)
    runs = {(m, t): {"pp": [], "tg": []} for m in files for t in files[m]}
    sizes, bws = {}, []
    for rep in range(a.r):
        log(f"repetition {rep + 1} of {a.r}")
        bws.append(bandwidth(a))
        for m in files:
            for t, (path, _) in files[m].items():
                got, info = afm_bench(path, a, VARIANTS.get(t))
                sizes[(m, t)] = info["size_bytes"]
                for k in ("pp", "tg"):
                    runs[(m, t)][k].append(got[k])
    bw = summary(bws)[2]
    print(f"CPU: {cpu_name()}, {a.threads} threads; pp{a.p} / tg{a.n} tokens/s, median (range) "
          f"of {a.r} interleaved runs; best read bandwidth {bw:.1f} GB/s\n")
    print(f"| model | matrices | bits/weight (matrices) | pp{a.p} | tg{a.n} | % of roofline | "
          f"tg vs q4_0 | encode s / M weights |")
    print("|---|---|---|---|---|---|---|---|")
    for m in files:
        q4 = summary(runs[(m, "q4_0")]["tg"])[0]
        for t, (_, q) in files[m].items():
            tg = summary(runs[(m, t)]["tg"])[0]
            roof = bw * 1e9 / sizes[(m, t)]
            bpw, enc = "-", "-"
            stored = "astc6x6" if t in VARIANTS else t
            if q and stored in q["tensor_types"]:
                tt = q["tensor_types"][stored]
                bpw = f"{8 * tt['bytes'] / tt['elements']:.2f}"
                enc = f"{q['seconds'] / (tt['elements'] / 1e6):.2f}" if stored == "astc6x6" else "-"
            print(f"| {m} | {t} | {bpw} | {fmt(runs[(m, t)]['pp'])} | {fmt(runs[(m, t)]['tg'])} | "
                  f"{100 * tg / roof:.0f}% | {tg / q4:.3f}x | {enc} |", flush=True)


if __name__ == "__main__":
    main()
