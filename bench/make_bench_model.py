"""Writes a model with random weights as GGUF for the side-by-side engine benchmark
(bench/engine_bench.py): Qwen2-0.5B-shaped (default) or Qwen3-0.6B-shaped (`--shape
qwen3-0.6b`, whose rows are whole 256-value super-blocks, so K-quant files are K-quant
throughout). The vocabulary is llama.cpp's own Qwen2 test vocabulary (151,936 tokens, extracted
by scripts/setup --tests), so both runtimes load the same file.

f16, q8_0 and q4_0 store every 2-D weight in that type (no mixed-type recipe), as `afm convert`
would; q4_k_m, q5_k_m, q6_k, q3_k_m and q2_k are made from the f16 file by llama.cpp's own
quantizer (`llama_model_quantize` in the pinned llama-cpp-python, the function behind
llama-quantize), with its mixes: the files users download.

    .venv/bin/python bench/make_bench_model.py OUT_DIR [--types f16,q8_0,q4_0] [--shape qwen2-0.5b]
"""
import argparse
import os

import numpy as np
import gguf

VOCAB = ".venv/llama-vocab/ggml-vocab-qwen2.gguf"
SHAPES = {
    "qwen2-0.5b": dict(arch="qwen2", n_embd=896, n_layer=24, n_head=14, n_head_kv=2, head_dim=64,
                       n_ff=4864, ctx=32768),
    "qwen3-0.6b": dict(arch="qwen3", n_embd=1024, n_layer=28, n_head=16, n_head_kv=8, head_dim=128,
                       n_ff=3072, ctx=40960),
}
TYPES = {"f16": gguf.GGMLQuantizationType.F16, "q8_0": gguf.GGMLQuantizationType.Q8_0,
         "q4_0": gguf.GGMLQuantizationType.Q4_0}
LLAMA_FTYPES = {"q4_k_m": 15, "q5_k_m": 17, "q6_k": 18, "q3_k_m": 12, "q2_k": 10}


def copy_tokenizer(writer):
    reader = gguf.GGUFReader(VOCAB)
    for key, field in reader.fields.items():
        if not key.startswith("tokenizer."):
            continue
        value = field.contents()
        vtype = field.types[0]
        if vtype == gguf.GGUFValueType.ARRAY:
            writer.add_key_value(key, value, vtype, sub_type=field.types[-1])
        else:
            writer.add_key_value(key, value, vtype)
    return len(reader.fields["tokenizer.ggml.tokens"].data)


def tensors(s, n_vocab, rng):
    e, hd = s["n_embd"], s["head_dim"]
    q, kv = s["n_head"] * hd, s["n_head_kv"] * hd
    w = lambda *shape: (rng.standard_normal(shape, dtype=np.float32) * 0.02)
    yield "token_embd.weight", w(n_vocab, e)
    yield "output_norm.weight", np.ones(e, np.float32)
    for i in range(s["n_layer"]):
        p = f"blk.{i}."
        yield p + "attn_norm.weight", np.ones(e, np.float32)
        yield p + "ffn_norm.weight", np.ones(e, np.float32)
        yield p + "attn_q.weight", w(q, e)
        yield p + "attn_k.weight", w(kv, e)
        yield p + "attn_v.weight", w(kv, e)
        if s["arch"] == "qwen2":
            yield p + "attn_q.bias", w(q)
            yield p + "attn_k.bias", w(kv)
            yield p + "attn_v.bias", w(kv)
        else:  # qwen3: RMS norms of each head's q and k instead of biases
            yield p + "attn_q_norm.weight", np.ones(hd, np.float32)
            yield p + "attn_k_norm.weight", np.ones(hd, np.float32)
        yield p + "attn_output.weight", w(e, q)
        yield p + "ffn_gate.weight", w(s["n_ff"], e)
        yield p + "ffn_up.weight", w(s["n_ff"], e)
        yield p + "ffn_down.weight", w(e, s["n_ff"])


def write(path, shape, type_name):
    s = SHAPES[shape]
    writer = gguf.GGUFWriter(path, s["arch"])
    writer.add_name(f"{shape}-shaped-random-{type_name}")
    writer.add_block_count(s["n_layer"])
    writer.add_context_length(s["ctx"])
    writer.add_embedding_length(s["n_embd"])
    writer.add_feed_forward_length(s["n_ff"])
    writer.add_head_count(s["n_head"])
    writer.add_head_count_kv(s["n_head_kv"])
    writer.add_key_length(s["head_dim"])
    writer.add_value_length(s["head_dim"])
    writer.add_rope_freq_base(1000000.0)
    writer.add_layer_norm_rms_eps(1e-6)
    n_vocab = copy_tokenizer(writer)
    qtype = TYPES[type_name]
    for name, data in tensors(s, n_vocab, np.random.default_rng(0)):
        if data.ndim == 2:
            data = gguf.quants.quantize(data, qtype) if type_name != "f16" else data.astype(np.float16)
            writer.add_tensor(name, data, raw_dtype=qtype)
        else:
            writer.add_tensor(name, data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file(progress=False)
    writer.close()


def llama_cpp_quantize(src, dst, ftype):
    import llama_cpp  # only for the K-quant files
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = os.cpu_count() or 1
    if llama_cpp.llama_model_quantize(src.encode(), dst.encode(), params) != 0:
        raise SystemExit(f"llama.cpp could not quantize {src} to {dst}")


def model_path(out_dir, shape, type_name):
    """Writes the model once (atomically) and returns its path."""
    path = os.path.join(out_dir, f"{shape}-{type_name}.gguf")
    if not os.path.exists(path):
        if type_name in LLAMA_FTYPES:
            llama_cpp_quantize(model_path(out_dir, shape, "f16"), path + ".tmp", LLAMA_FTYPES[type_name])
        else:
            write(path + ".tmp", shape, type_name)
        os.replace(path + ".tmp", path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--types", default="f16,q8_0,q4_0")
    ap.add_argument("--shape", default="qwen2-0.5b", choices=sorted(SHAPES))
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for t in args.types.split(","):
        if t not in TYPES and t not in LLAMA_FTYPES:
            raise SystemExit(f"unknown type {t}: one of {', '.join([*TYPES, *LLAMA_FTYPES])}")
        print(model_path(args.out_dir, args.shape, t))


if __name__ == "__main__":
    main()
