"""Builds llama.cpp tools (llama-bench, llama-server) from the source inside the pinned
llama-cpp-python sdist (PyPI), once, under build/bench-cache/, for the side-by-side benchmarks.
Instruction sets follow /proc/cpuinfo (GGML_NATIVE would also enable AMX where present).
"""
import os
import subprocess
import sys
import tarfile

from host_info import cpu_flags

CACHE = "build/bench-cache"
SDIST = "llama-cpp-python==0.3.36"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def source_dir():
    version = SDIST.split("==")[1]
    src = os.path.join(CACHE, f"llama_cpp_python-{version}")
    if not os.path.isdir(src):
        os.makedirs(CACHE, exist_ok=True)
        log("downloading the llama-cpp-python sdist (llama.cpp source) from PyPI")
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
                        SDIST, "-d", CACHE, "-q"], check=True)
        with tarfile.open(os.path.join(CACHE, f"llama_cpp_python-{version}.tar.gz")) as tar:
            tar.extractall(CACHE, filter="data")
    return src


def build(target):
    """Path of the built llama.cpp binary `target` ("llama-bench", "llama-server")."""
    build_dir = os.path.join(CACHE, "llama-build")
    binary = os.path.join(build_dir, "bin", target)
    if os.path.exists(binary):
        return binary
    flags = cpu_flags()
    opts = {"GGML_AVX": "avx" in flags, "GGML_AVX2": "avx2" in flags, "GGML_FMA": "fma" in flags,
            "GGML_F16C": "f16c" in flags, "GGML_AVX512": "avx512f" in flags,
            "GGML_AVX512_VNNI": "avx512_vnni" in flags, "GGML_AVX512_BF16": "avx512_bf16" in flags}
    cmake = ["cmake", "-S", os.path.join(source_dir(), "vendor", "llama.cpp"), "-B", build_dir,
             "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DGGML_NATIVE=OFF", "-DLLAMA_CURL=OFF",
             "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_SERVER=ON"]
    cmake += [f"-D{k}={'ON' if v else 'OFF'}" for k, v in opts.items()]
    log(f"building {target} (several minutes, once)")
    subprocess.run(cmake, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", build_dir, target], check=True, stdout=subprocess.DEVNULL)
    return binary
