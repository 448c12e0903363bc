"""afm vs llama.cpp on the same GGUF files, in one run (ARCHITECTURE.md section 9).

Runs are interleaved (afm, llama.cpp, afm, ...) one repetition at a time and the median is
reported with the range, because a shared VM's speed drifts over minutes: back-to-back blocks
of repetitions would credit one side with the other's quiet period.

Builds llama.cpp's llama-bench from the source inside the pinned llama-cpp-python sdist (PyPI;
AVX2/AVX-512/VNNI as the CPU reports, never AMX), writes a Qwen2-0.5B-shaped random model in
f16 / q8_0 / q4_0 (bench/make_bench_model.py), measures the memory read bandwidth, then runs
`afm bench` and `llama-bench` with the same prompt/generation lengths and threads and prints a
Markdown table: tokens/s, afm/llama.cpp ratios, and afm's decode speed as a share of the
bandwidth roofline (every weight byte read once per generated token).

    .venv/bin/python bench/engine_bench.py [--threads 2] [-p 512] [-n 128] [-r 5] [-d 4096]
`-d` puts that many tokens in the cache before each test, untimed (llama-bench's -d), for
both engines.
Caches the llama.cpp build and the models under build/bench-cache/.
"""
import argparse
import json
import os
import subprocess
import sys

from host_info import cpu_name
from llama_cpp_build import CACHE, build, log  # bench/ is on sys.path when run as a script


def run_json(cmd, env=None):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                         env=None if env is None else {**os.environ, **env}).stdout
    return json.loads(out)


def afm_bench(model, a, env=None):
    """One `afm bench` run; `env` adds environment variables (e.g. AFM_ASTC_LANES=0)."""
    j = run_json(["build/afm", "bench", "-m", model, "-p", str(a.p), "-n", str(a.n), "-t",
                  str(a.threads), "-r", "1", "-d", str(getattr(a, "d", 0)), "--json"], env)
    return {r["test"][:2]: r["tokens_per_second"] for r in j["results"]}, j


def llama_bench(binary, model, a):
    rows = run_json([binary, "-m", model, "-p", str(a.p), "-n", str(a.n), "-t", str(a.threads),
                     "-r", "1", "-d", str(getattr(a, "d", 0)), "-o", "json"])
    return {("pp" if row["n_prompt"] > 0 else "tg"): row["avg_ts"] for row in rows}


def bandwidth(a):
    return run_json(["build/bench/membw_bench", "--threads", str(a.threads), "--json"])["read_gb_per_s"]


def summary(values):
    v = sorted(values)
    return v[len(v) // 2], v[0], v[-1]


def fmt(values):
    med, lo, hi = summary(values)
    return f"{med:.1f} ({lo:.1f}-{hi:.1f})"


def main():
    ap = argparse.ArgumentParser(description="afm vs llama.cpp, side by side")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("-p", type=int, default=512)
    ap.add_argument("-n", type=int, default=128)
    ap.add_argument("-r", type=int, default=5)
    ap.add_argument("--types", default="f16,q8_0,q4_0")
    ap.add_argument("--shape", default="qwen2-0.5b", help="qwen2-0.5b or qwen3-0.6b (make_bench_model.py)")
    ap.add_argument("-d", type=int, default=0, help="tokens in the cache before each test (untimed)")
    a = ap.parse_args()
    binary = build("llama-bench")
    types = a.types.split(",")
    subprocess.run([sys.executable, "bench/make_bench_model.py", os.path.join(CACHE, "models"),
                    "--types", a.types, "--shape", a.shape], check=True, stdout=subprocess.DEVNULL)
    at = f" @ d{a.d}" if a.d else ""
    print(f"{a.shape} shape; CPU: {cpu_name()}, {a.threads} threads; "
          f"pp{a.p}{at} / tg{a.n}{at} tokens/s, median (range) of {a.r} interleaved runs\n")
    print(f"| type | size MiB | afm pp{a.p}{at} | llama.cpp pp{a.p}{at} | ratio | afm tg{a.n}{at} | "
          f"llama.cpp tg{a.n}{at} | ratio | read GB/s | roofline tg | afm % of roofline |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for t in types:
        model = os.path.join(CACHE, "models", f"{a.shape}-{t}.gguf")
        log(f"benchmarking {t}")
        mine = {"pp": [], "tg": []}
        theirs = {"pp": [], "tg": []}
        bws = []
        for _ in range(a.r):
            bws.append(bandwidth(a))
            m, info = afm_bench(model, a)
            o = llama_bench(binary, model, a)
            for k in ("pp", "tg"):
                mine[k].append(m[k])
                theirs[k].append(o[k])
        size = info["size_bytes"]
        bw = summary(bws)[2]  # the best read rate seen: the hardware's limit, not its noise
        roof = bw * 1e9 / size
        ratio = lambda k: summary(mine[k])[0] / summary(theirs[k])[0]
        print(f"| {t} | {size / 2**20:.0f} | {fmt(mine['pp'])} | {fmt(theirs['pp'])} | "
              f"{ratio('pp'):.2f}x | {fmt(mine['tg'])} | {fmt(theirs['tg'])} | {ratio('tg'):.2f}x | "
              f"{bw:.1f} | {roof:.1f} | {100 * summary(mine['tg'])[0] / roof:.0f}% |", flush=True)


if __name__ == "__main__":
    main()
