"""Regenerates tests/data/model/fuzz_corpus/: tiny but complete models (qwen2 with biases,
qwen3 with QK-norm; f32, f16 and q8_0 weights; afm-device with KV sharing and learned int8
scales; afm-server with two tracks, a MoE layer and a sliding window; phi3 with fused
q/k/v and gate/up tensors and a window; gemma3 with post-norms, QK-norm, a local RoPE base and
a window) written with ggml's `gguf` package, the seeds of fuzz/model_load_fuzz.cpp. Run from the repository root:
    .venv/bin/python tests/oracle/make_model_fuzz_corpus.py
"""
import os

import numpy as np
import gguf

OUT = "tests/data/model/fuzz_corpus"


E, FF, HEADS, KV_HEADS, HD, VOCAB = 32, 64, 2, 1, 16, 6


def write(path, arch, wtype, layers=1):
    rng = np.random.default_rng(1)
    e, ff, heads, kv_heads, hd, vocab = E, FF, HEADS, KV_HEADS, HD, VOCAB
    w = gguf.GGUFWriter(path, arch)
    w.add_block_count(layers)
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
    if arch == "afm-device":
        afm_device_layers(w, mat, vec)
    elif arch == "afm-server":
        afm_server_layers(w, mat, vec, rng)
    elif arch == "phi3":
        phi3_layer(w, mat, vec)
    elif arch == "gemma3":
        gemma3_layer(w, mat, vec)
    else:
        dense_layer(arch, mat, vec)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def attention(mat, vec, p, with_kv=True):
    e, heads, kv_heads, hd = E, HEADS, KV_HEADS, HD
    vec(p + "attn_norm.weight", e)
    mat(p + "attn_q.weight", heads * hd, e)
    mat(p + "attn_output.weight", e, heads * hd)
    vec(p + "attn_q_norm.weight", hd)
    if with_kv:
        mat(p + "attn_k.weight", kv_heads * hd, e)
        mat(p + "attn_v.weight", kv_heads * hd, e)
        vec(p + "attn_k_norm.weight", hd)


def ffn(mat, vec, p):
    vec(p + "ffn_norm.weight", E)
    mat(p + "ffn_gate.weight", FF, E)
    mat(p + "ffn_up.weight", FF, E)
    mat(p + "ffn_down.weight", E, FF)


def afm_device_layers(w, mat, vec):
    w.add_uint32("afm-device.kv_share.block1_layers", 1)
    for i, with_kv in ((0, True), (1, False)):
        attention(mat, vec, f"blk.{i}.", with_kv)
        ffn(mat, vec, f"blk.{i}.")
    w.add_tensor("blk.0.attn_k_scale.weight", np.array([0.05], np.float32))
    w.add_tensor("blk.0.attn_v_scale.weight", np.array([0.02], np.float32))


def afm_server_layers(w, mat, vec, rng):
    for key, value in (("tracks", 2), ("track_block_depth", 1), ("expert_count", 2),
                       ("expert_used_count", 1), ("expert_feed_forward_length", 32),
                       ("moe_every", 2), ("attention.sliding_window", 2),
                       ("attention.global_every", 2)):
        w.add_uint32(f"afm-server.{key}", value)
    w.add_string("afm-server.track_merge", "mean")
    for t in range(2):
        for n in range(2):
            p = f"trk.{t}.blk.{n}."
            attention(mat, vec, p)
            if n == 1:
                vec(p + "ffn_norm.weight", E)
                w.add_tensor(p + "ffn_gate_inp.weight", rng.standard_normal((2, E)).astype(np.float32))
                for name, shape in (("ffn_gate_exps", (2, 32, E)), ("ffn_up_exps", (2, 32, E)),
                                    ("ffn_down_exps", (2, E, 32))):
                    w.add_tensor(p + name + ".weight", rng.standard_normal(shape).astype(np.float32))
            else:
                ffn(mat, vec, p)


def phi3_layer(w, mat, vec):
    w.add_uint32("phi3.attention.sliding_window", 3)
    vec("blk.0.attn_norm.weight", E)
    mat("blk.0.attn_qkv.weight", (HEADS + 2 * KV_HEADS) * HD, E)
    mat("blk.0.attn_output.weight", E, HEADS * HD)
    vec("blk.0.ffn_norm.weight", E)
    mat("blk.0.ffn_up.weight", 2 * FF, E)
    mat("blk.0.ffn_down.weight", E, FF)


def gemma3_layer(w, mat, vec):
    w.add_uint32("gemma3.attention.sliding_window", 3)
    w.add_float32("gemma3.rope.freq_base_swa", 10000.0)
    w.add_float32("gemma3.attention.scale", 0.25)
    for i in range(2):
        p = f"blk.{i}."
        attention(mat, vec, p)
        vec(p + "post_attention_norm.weight", E)
        ffn(mat, vec, p)
        vec(p + "post_ffw_norm.weight", E)


def dense_layer(arch, mat, vec):
    e, ff, heads, kv_heads, hd = E, FF, HEADS, KV_HEADS, HD
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


def main():
    os.makedirs(OUT, exist_ok=True)
    for arch, wtype in (("qwen2", "f32"), ("qwen3", "f16"), ("qwen2", "q8_0")):
        write(os.path.join(OUT, f"{arch}-{wtype}.gguf"), arch, wtype)
    write(os.path.join(OUT, "afm-device-q8_0.gguf"), "afm-device", "q8_0", layers=2)
    write(os.path.join(OUT, "afm-server-f32.gguf"), "afm-server", "f32", layers=2)
    write(os.path.join(OUT, "phi3-q8_0.gguf"), "phi3", "q8_0")
    write(os.path.join(OUT, "gemma3-f32.gguf"), "gemma3", "f32", layers=2)


if __name__ == "__main__":
    main()
