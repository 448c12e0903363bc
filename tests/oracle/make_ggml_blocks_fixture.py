"""Writes tests/data/quant/ggml_blocks.gguf: random blocks of each read-only ggml type afm runs
(q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k) and their values as the `gguf` package
dequantizes them (the oracle; tests/quant/ggml_blocks_test.cpp wants afm's decoding bit-equal).

Every byte of a block is random except its f16 scales, drawn finite: normal magnitudes of
either sign, with a few zeros and subnormals among them.

    .venv/bin/python tests/oracle/make_ggml_blocks_fixture.py
"""
import os

import numpy as np
import gguf

OUT = "tests/data/quant/ggml_blocks.gguf"
Q = gguf.GGMLQuantizationType
# type -> byte offsets of its f16 fields inside one block
F16_FIELDS = {Q.Q4_1: [0, 2], Q.Q5_0: [0], Q.Q5_1: [0, 2], Q.Q2_K: [80, 82], Q.Q3_K: [108],
              Q.Q4_K: [0, 2], Q.Q5_K: [0, 2], Q.Q6_K: [208]}
VALUES = 4096  # per type: 16 super-blocks or 128 blocks of 32


def random_f16(rng, n):
    mag = np.exp2(rng.uniform(-12, 3, n)).astype(np.float16)
    mag[rng.random(n) < 0.03] = np.float16(0)
    mag[rng.random(n) < 0.03] = np.float16(2.0 ** -20)  # subnormal
    return np.where(rng.random(n) < 0.5, -mag, mag).astype(np.float16)


def random_blocks(qtype, rng):
    block_size, type_size = gguf.GGML_QUANT_SIZES[qtype]
    n_blocks = VALUES // block_size
    raw = rng.integers(0, 256, (n_blocks, type_size), dtype=np.uint8)
    for off in F16_FIELDS[qtype]:
        raw[:, off:off + 2] = random_f16(rng, n_blocks).view(np.uint8).reshape(n_blocks, 2)
    return raw.reshape(1, -1)


def main():
    rng = np.random.default_rng(20261126)
    tmp = OUT + ".tmp"
    writer = gguf.GGUFWriter(tmp, "blocks")
    for qtype in F16_FIELDS:
        name = qtype.name.lower()
        raw = random_blocks(qtype, rng)
        want = gguf.quants.dequantize(raw, qtype).astype(np.float32)
        assert want.shape == (1, VALUES) and np.isfinite(want).all()
        writer.add_tensor(f"blocks.{name}", raw, raw_dtype=qtype)
        writer.add_tensor(f"values.{name}", want)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file(progress=False)
    writer.close()
    os.replace(tmp, OUT)
    print(OUT, os.path.getsize(OUT), "bytes")


if __name__ == "__main__":
    main()
