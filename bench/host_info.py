"""What the benchmark tables name beside their numbers: the CPU model and the vector
instructions the kernels can pick from (a VM's model name, "AMD EPYC", says neither which
generation it is nor whether it has AVX-512)."""
import platform


def cpu_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def vector_isa():
    """'AVX-512 (VNNI, BF16)', 'AVX2' or 'no AVX2': what runtime dispatch chooses between."""
    flags = cpu_flags()
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        extras = [name for flag, name in (("avx512_vnni", "VNNI"), ("avx512_bf16", "BF16"),
                                          ("amx_tile", "AMX")) if flag in flags]
        return "AVX-512" + (f" ({', '.join(extras)})" if extras else "")
    return "AVX2" if "avx2" in flags else "no AVX2"


def cpu_name():
    name = platform.processor()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    return f"{name}, {vector_isa()}"
