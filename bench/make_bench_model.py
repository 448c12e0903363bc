"""Writes a Qwen2-0.5B-shaped model with random weights as GGUF, in f16, q8_0 and q4_0, for
the side-by-side engine benchmark (bench/engine_bench.py). The vocabulary is llama.cpp's own
Qwen2 test vocabulary (151,936 tokens, extracted by scripts/setup), so both runtimes load the
same file. Every 2-D weight is stored in the target type (no mixed-type recipe), as
`afm convert` would.

    .venv/bin/python bench/make_bench_model.py OUT_DIR [--types f16,q8_0,q4_0]
"""
import argparse
import os

import numpy as np
import gguf

VOCAB = ".venv/llama-vocab/ggml-vocab-qwen2.gguf"
SHAPE = dict(n_embd=896, n_layer=24, n_head=14, n_head_kv=2, n_ff=4864, ctx=32768)
TYPES = {"f16": gguf.GGMLQuantizationType.F16, "q8_0": gguf.GGMLQuantizationType.Q8_0,
         "q4_0": gguf.GGMLQuantizationType.Q4_0}


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


def tensors(n_vocab, rng):
    s = SHAPE
    e, hd = s["n_embd"], s["n_embd"] // s["n_head"]
    kv = s["n_head_kv"] * hd
    w = lambda *shape: (rng.standard_normal(shape, dtype=np.float32) * 0.02)
    yield "token_embd.weight", w(n_vocab, e)
    yield "output_norm.weight", np.ones(e, np.float32)
    for i in range(s["n_layer"]):
        p = f"blk.{i}."
        yield p + "attn_norm.weight", np.ones(e, np.float32)
        yield p + "ffn_norm.weight", np.ones(e, np.float32)
        yield p + "attn_q.weight", w(e, e)
        yield p + "attn_q.bias", w(e)
        yield p + "attn_k.weight", w(kv, e)
        yield p + "attn_k.bias", w(kv)
        yield p + "attn_v.weight", w(kv, e)
        yield p + "attn_v.bias", w(kv)
        yield p + "attn_output.weight", w(e, e)
        yield p + "ffn_gate.weight", w(s["n_ff"], e)
        yield p + "ffn_up.weight", w(s["n_ff"], e)
        yield p + "ffn_down.weight", w(e, s["n_ff"])


def write(path, type_name):
    s = SHAPE
    writer = gguf.GGUFWriter(path, "qwen2")
    writer.add_name(f"qwen2-0.5b-shaped-random-{type_name}")
    writer.add_block_count(s["n_layer"])
    writer.add_context_length(s["ctx"])
    writer.add_embedding_length(s["n_embd"])
    writer.add_feed_forward_length(s["n_ff"])
    writer.add_head_count(s["n_head"])
    writer.add_head_count_kv(s["n_head_kv"])
    writer.add_rope_freq_base(1000000.0)
    writer.add_layer_norm_rms_eps(1e-6)
    n_vocab = copy_tokenizer(writer)
    qtype = TYPES[type_name]
    for name, data in tensors(n_vocab, np.random.default_rng(0)):
        if data.ndim == 2:
            data = gguf.quants.quantize(data, qtype) if type_name != "f16" else data.astype(np.float16)
            writer.add_tensor(name, data, raw_dtype=qtype)
        else:
            writer.add_tensor(name, data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file(progress=False)
    writer.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--types", default="f16,q8_0,q4_0")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for t in args.types.split(","):
        path = os.path.join(args.out_dir, f"qwen2-0.5b-{t}.gguf")
        if not os.path.exists(path):
            write(path + ".tmp", t)
            os.replace(path + ".tmp", path)
        print(path)


if __name__ == "__main__":
    main()
