"""afm vs llama.cpp on the same GGUF files, in one run (ARCHITECTURE.md section 9).

Builds llama.cpp's llama-bench from the source inside the pinned llama-cpp-python sdist (PyPI;
AVX2/AVX-512/VNNI as the CPU reports, never AMX), writes a Qwen2-0.5B-shaped random model in
f16 / q8_0 / q4_0 (bench/make_bench_model.py), measures the memory read bandwidth, then runs
`afm bench` and `llama-bench` with the same prompt/generation lengths and threads and prints a
Markdown table: tokens/s, afm/llama.cpp ratios, and afm's decode speed as a share of the
bandwidth roofline (every weight byte read once per generated token).

    .venv/bin/python bench/engine_bench.py [--threads 2] [-p 512] [-n 128] [-r 3]
Caches the llama.cpp build and the models under build/bench-cache/.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tarfile

CACHE = "build/bench-cache"
SDIST = "llama-cpp-python==0.3.36"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def cpu_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def build_llama_bench():
    binary = os.path.join(CACHE, "llama-build", "bin", "llama-bench")
    if os.path.exists(binary):
        return binary
    os.makedirs(CACHE, exist_ok=True)
    version = SDIST.split("==")[1]
    src = os.path.join(CACHE, f"llama_cpp_python-{version}")
    if not os.path.isdir(src):
        log("downloading the llama-cpp-python sdist (llama.cpp source) from PyPI")
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
                        SDIST, "-d", CACHE, "-q"], check=True)
        with tarfile.open(os.path.join(CACHE, f"llama_cpp_python-{version}.tar.gz")) as tar:
            tar.extractall(CACHE, filter="data")
    flags = cpu_flags()
    opts = {"GGML_AVX": "avx" in flags, "GGML_AVX2": "avx2" in flags, "GGML_FMA": "fma" in flags,
            "GGML_F16C": "f16c" in flags, "GGML_AVX512": "avx512f" in flags,
            "GGML_AVX512_VNNI": "avx512_vnni" in flags, "GGML_AVX512_BF16": "avx512_bf16" in flags}
    cmake = ["cmake", "-S", os.path.join(src, "vendor", "llama.cpp"), "-B",
             os.path.join(CACHE, "llama-build"), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
             "-DGGML_NATIVE=OFF", "-DLLAMA_CURL=OFF", "-DLLAMA_BUILD_TESTS=OFF",
             "-DLLAMA_BUILD_SERVER=OFF"] + [f"-D{k}={'ON' if v else 'OFF'}" for k, v in opts.items()]
    log("building llama-bench (several minutes, once)")
    subprocess.run(cmake, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", os.path.join(CACHE, "llama-build"), "llama-bench"], check=True,
                   stdout=subprocess.DEVNULL)
    return binary


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def afm_bench(model, a):
    j = run_json(["build/afm", "bench", "-m", model, "-p", str(a.p), "-n", str(a.n), "-t",
                  str(a.threads), "-r", str(a.r), "--json"])
    return {r["test"][:2]: (r["tokens_per_second"], r["stddev"]) for r in j["results"]}, j


def llama_bench(binary, model, a):
    rows = run_json([binary, "-m", model, "-p", str(a.p), "-n", str(a.n), "-t", str(a.threads),
                     "-r", str(a.r), "-o", "json"])
    out = {}
    for row in rows:
        out["pp" if row["n_prompt"] > 0 else "tg"] = (row["avg_ts"], row["stddev_ts"])
    return out


def main():
    ap = argparse.ArgumentParser(description="afm vs llama.cpp, side by side")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("-p", type=int, default=512)
    ap.add_argument("-n", type=int, default=128)
    ap.add_argument("-r", type=int, default=3)
    ap.add_argument("--types", default="f16,q8_0,q4_0")
    a = ap.parse_args()
    binary = build_llama_bench()
    types = a.types.split(",")
    subprocess.run([sys.executable, "bench/make_bench_model.py", os.path.join(CACHE, "models"),
                    "--types", a.types], check=True, stdout=subprocess.DEVNULL)
    bw = run_json(["build/bench/membw_bench", "--threads", str(a.threads), "--json"])["read_gb_per_s"]
    print(f"CPU: {platform.processor() or platform.machine()}, {a.threads} threads, "
          f"read bandwidth {bw:.1f} GB/s\n")
    print(f"| type | size MiB | afm pp{a.p} | llama.cpp pp{a.p} | ratio | afm tg{a.n} | "
          f"llama.cpp tg{a.n} | ratio | roofline tg | afm % of roofline |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for t in types:
        model = os.path.join(CACHE, "models", f"qwen2-0.5b-{t}.gguf")
        log(f"benchmarking {t}")
        mine, info = afm_bench(model, a)
        theirs = llama_bench(binary, model, a)
        size = info["size_bytes"]
        roof = bw * 1e9 / size
        print(f"| {t} | {size / 2**20:.0f} | {mine['pp'][0]:.1f} ± {mine['pp'][1]:.1f} | "
              f"{theirs['pp'][0]:.1f} ± {theirs['pp'][1]:.1f} | {mine['pp'][0] / theirs['pp'][0]:.2f}x | "
              f"{mine['tg'][0]:.2f} ± {mine['tg'][1]:.2f} | {theirs['tg'][0]:.2f} ± {theirs['tg'][1]:.2f} | "
              f"{mine['tg'][0] / theirs['tg'][0]:.2f}x | {roof:.1f} | {100 * mine['tg'][0] / roof:.0f}% |",
              flush=True)


if __name__ == "__main__":
    main()
