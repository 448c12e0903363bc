"""Regenerates tests/data/model/fuzz_corpus/: tiny but complete models (qwen2 with biases,
qwen3 with QK-norm; f32, f16 and q8_0 weights) written with ggml's `gguf` package, the seeds
of fuzz/model_load_fuzz.cpp. Run from the repository root:
    .venv/bin/python tests/oracle/make_model_fuzz_corpus.py
"""
import os

import numpy as np
import gguf

OUT = "tests/data/model/fuzz_corpus"


def write(path, arch, wtype):
    rng = np.random.default_rng(1)
    e, ff, heads, kv_heads, hd, vocab = 32, 64, 2, 1, 16, 6
    w = gguf.GGUFWriter(path, arch)
    w.add_block_count(1)
    w.add_embedding_length(e)
    w.add_feed_forward_length(ff)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_context_length(64)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(["a", "b", "c", "ab", "<|endoftext|>", "<|im_end|>"])
    w.add_token_types([1, 1, 1, 1, 3, 3])
    w.add_token_merges(["a b"])
    w.add_eos_token_id(5)

    def mat(name, rows, cols):
        data = rng.standard_normal((rows, cols)).astype(np.float32)
        if wtype == "q8_0":
            w.add_tensor(name, gguf.quants.quantize(data, gguf.GGMLQuantizationType.Q8_0),
                         raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        else:
            w.add_tensor(name, data.astype(np.float16 if wtype == "f16" else np.float32))

    vec = lambda name, n: w.add_tensor(name, np.ones(n, np.float32))
    mat("token_embd.weight", vocab, e)
    vec("output_norm.weight", e)
    vec("blk.0.attn_norm.weight", e)
    vec("blk.0.ffn_norm.weight", e)
    mat("blk.0.attn_q.weight", heads * hd, e)
    mat("blk.0.attn_k.weight", kv_heads * hd, e)
    mat("blk.0.attn_v.weight", kv_heads * hd, e)
    mat("blk.0.attn_output.weight", e, heads * hd)
    mat("blk.0.ffn_gate.weight", ff, e)
    mat("blk.0.ffn_up.weight", ff, e)
    mat("blk.0.ffn_down.weight", e, ff)
    if arch == "qwen2":
        vec("blk.0.attn_q.bias", heads * hd)
        vec("blk.0.attn_k.bias", kv_heads * hd)
        vec("blk.0.attn_v.bias", kv_heads * hd)
    else:
        vec("blk.0.attn_q_norm.weight", hd)
        vec("blk.0.attn_k_norm.weight", hd)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    os.makedirs(OUT, exist_ok=True)
    for arch, wtype in (("qwen2", "f32"), ("qwen3", "f16"), ("qwen2", "q8_0")):
        write(os.path.join(OUT, f"{arch}-{wtype}.gguf"), arch, wtype)


if __name__ == "__main__":
    main()
