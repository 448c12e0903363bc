"""afm's balanced 2-bit type (q2_b) against afm q8_0 / q4_0 and llama.cpp's TQ2_0, on the
Qwen2-0.5B-shaped random model, in one run (issue: compression, section 1).

Files (cached under build/bench-cache/models/):
  q8_0, q4_0       bench/make_bench_model.py (every matrix in the type, embedding included);
  q2_b             `afm quantize` of the q8_0 file: every matrix q2_b, the tied embedding q4_0
                   (--embedding-type q4_0, the report keeps embeddings at 4 bits);
  tq2_0            llama.cpp's llama-quantize (pinned sdist) of the q8_0 file with
                   --allow-requantize: TQ2_0 needs rows of 256 values, so on this shape only
                   ffn_down (rows of 4,864) takes it and the rest falls back to llama.cpp's
                   own choice (q4_0 here) - what a user of llama.cpp gets for "2-bit" on it.
afm runs its three files and llama.cpp its q8_0, q4_0 and TQ2_0 files, interleaved one
repetition at a time (engine_bench.py explains why); the table gives tokens/s (median and
range), the file's bits per weight, afm's decode as a share of the bandwidth roofline (every
byte of the file read once per token, at the best read rate measured in the run) and the
ratios the issue names.

    .venv/bin/python bench/two_bit_bench.py [--threads 2] [-p 64] [-n 64] [-r 5]
"""
import argparse
import os
import subprocess
import sys

from engine_bench import afm_bench, bandwidth, fmt, llama_bench, summary
from host_info import cpu_name
from llama_cpp_build import CACHE, build, log

MODELS = os.path.join(CACHE, "models")


def path(kind):
    return os.path.join(MODELS, f"qwen2-0.5b-{kind}.gguf")


def make_files():
    subprocess.run([sys.executable, "bench/make_bench_model.py", MODELS, "--types", "q8_0,q4_0"],
                   check=True, stdout=subprocess.DEVNULL)
    if not os.path.exists(path("q2_b")):
        log("writing the q2_b file with afm quantize")
        subprocess.run(["build/afm", "quantize", path("q8_0"), path("q2_b"), "--type", "q2_b",
                        "--embedding-type", "q4_0", "--json"], check=True, stdout=subprocess.DEVNULL)
    if not os.path.exists(path("tq2_0")):
        log("writing the TQ2_0 file with llama-quantize")
        quantize = build("llama-quantize")
        subprocess.run([quantize, "--allow-requantize", path("q8_0"), path("tq2_0"), "TQ2_0"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env={**os.environ, "LD_LIBRARY_PATH": os.path.dirname(quantize)})


def main():
    ap = argparse.ArgumentParser(description="afm q2_b vs q8_0 / q4_0 and llama.cpp TQ2_0")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("-p", type=int, default=64)
    ap.add_argument("-n", type=int, default=64)
    ap.add_argument("-r", type=int, default=5)
    a = ap.parse_args()
    llama = build("llama-bench")
    make_files()
    pairs = [("q8_0", "q8_0"), ("q4_0", "q4_0"), ("q2_b", "tq2_0")]
    mine = {m: {"pp": [], "tg": []} for m, _ in pairs}
    theirs = {t: {"pp": [], "tg": []} for _, t in pairs}
    sizes, params, bws = {}, {}, []
    for rep in range(a.r):
        log(f"repetition {rep + 1} of {a.r}")
        bws.append(bandwidth(a))
        for m, t in pairs:
            got, info = afm_bench(path(m), a)
            sizes[m], params[m] = info["size_bytes"], info["params"]
            other = llama_bench(llama, path(t), a)
            for k in ("pp", "tg"):
                mine[m][k].append(got[k])
                theirs[t][k].append(other[k])
    bw = summary(bws)[2]
    print(f"CPU: {cpu_name()}, {a.threads} threads; "
          f"pp{a.p} / tg{a.n} tokens/s, median (range) of {a.r} interleaved runs; "
          f"best read bandwidth {bw:.1f} GB/s\n")
    print(f"| afm file | bits/weight | afm pp{a.p} | afm tg{a.n} | % of roofline | "
          f"llama.cpp file | llama.cpp pp{a.p} | llama.cpp tg{a.n} | tg ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m, t in pairs:
        roof = bw * 1e9 / sizes[m]
        tg = summary(mine[m]["tg"])[0]
        ratio = tg / summary(theirs[t]["tg"])[0]
        print(f"| {m} | {8 * sizes[m] / params[m]:.2f} | {fmt(mine[m]['pp'])} | {fmt(mine[m]['tg'])} | "
              f"{100 * tg / roof:.0f}% | {t} | {fmt(theirs[t]['pp'])} | {fmt(theirs[t]['tg'])} | "
              f"{ratio:.2f}x |", flush=True)
    q8 = summary(mine["q8_0"]["tg"])[0]
    print(f"\nafm q2_b decode = {summary(mine['q2_b']['tg'])[0] / q8:.2f}x afm q8_0")


if __name__ == "__main__":
    main()
