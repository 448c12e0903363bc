"""Relative RMSE of astc6x6 on trained weights, for each tile offset (issue: compression,
section 3: "measure both on real trained weights and choose").

Encodes the default model with `afm quantize --type astc6x6` once per --astc-offset, decodes
each file back to f32 with afm's decoder (`afm quantize --type f32`), and compares named
matrices with the original's, read with ggml's `gguf` package:
||W~ - W|| / ||W||.

    .venv/bin/python bench/astc_error.py [--model models/afm-device-21m.gguf] [--threads 2]
"""
import argparse
import os
import subprocess
import tempfile

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize

MATRICES = ["blk.0.attn_q.weight", "blk.2.attn_v.weight", "blk.3.ffn_down.weight",
            "blk.5.ffn_up.weight"]


def matrices(path):
    r = GGUFReader(path)
    return {t.name: dequantize(t.data, t.tensor_type).astype(np.float64)
            for t in r.tensors if t.name in MATRICES}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="models/afm-device-21m.gguf")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    want = matrices(a.model)
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for offset in ("pow2", "min"):
            astc, back = os.path.join(tmp, "astc.gguf"), os.path.join(tmp, "back.gguf")
            subprocess.run(["build/afm", "quantize", a.model, astc, "--type", "astc6x6",
                            "--astc-offset", offset, "--threads", str(a.threads), "--json"],
                           check=True, stdout=subprocess.DEVNULL)
            subprocess.run(["build/afm", "quantize", astc, back, "--type", "f32", "--json"],
                           check=True, stdout=subprocess.DEVNULL)
            got = matrices(back)
            for name, w in want.items():
                err = np.linalg.norm(got[name] - w) / np.linalg.norm(w)
                rows.setdefault(name, {})[offset] = err
    print("| matrix | shape | min - B (pow2, default) | min (the report's) |")
    print("|---|---|---|---|")
    for name in MATRICES:
        shape = " x ".join(str(d) for d in want[name].shape)
        print(f"| {name} | {shape} | {rows[name]['pow2']:.3f} | {rows[name]['min']:.3f} |")


if __name__ == "__main__":
    main()
