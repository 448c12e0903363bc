"""Writes random-weight afm-device and afm-server models (q8_0 matrices, f32 norms) as GGUF for
bench/afm_arch_bench.py, each with a variant that switches the architecture's saving off:
  afm-device.gguf          16 layers, Block 1 = 10 (62.5%, the report's split)
  afm-device-nokvshare.gguf  the same shape with all 16 layers owning K/V
  afm-server.gguf          2 tracks x 8 layers, track blocks of 4, local:global 3:1, window 4096,
                           8 experts top-2 on every other layer
  afm-server-allglobal.gguf  the same with every layer global (full-length caches)
The tokenizer is the small one of tests/data/hf/qwen2 (converted with `afm convert`), so the
head is negligible and `afm bench` can load the files.

    .venv/bin/python bench/make_afm_bench_models.py OUT_DIR [--afm build/afm]
"""
import argparse
import os
import subprocess
import tempfile

import gguf
import numpy as np

DEVICE = dict(n_embd=768, n_layer=16, block1=10, n_head=12, n_head_kv=3, n_ff=2496)
SERVER = dict(n_embd=512, n_layer=8, tracks=2, depth=4, n_head=8, n_head_kv=2, n_ff=1536,
              experts=8, used=2, n_ff_exp=768, window=4096)
Q8 = gguf.GGMLQuantizationType.Q8_0


def tokenizer_fields(afm):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "tok.gguf")
        subprocess.run([afm, "convert", "tests/data/hf/qwen2", path, "--type", "f32"],
                       check=True, stdout=subprocess.DEVNULL)
        reader = gguf.GGUFReader(path)
        fields = [(k, f.contents(), f.types) for k, f in reader.fields.items()
                  if k.startswith("tokenizer.")]
        return fields, len(reader.fields["tokenizer.ggml.tokens"].data)


def add_tokenizer(writer, fields):
    for key, value, types in fields:
        if types[0] == gguf.GGUFValueType.ARRAY:
            writer.add_key_value(key, value, types[0], sub_type=types[-1])
        else:
            writer.add_key_value(key, value, types[0])


def common_keys(w, arch, s, n_vocab):
    w.add_uint32(f"{arch}.block_count", s["n_layer"])
    w.add_uint32(f"{arch}.context_length", 65536)
    w.add_uint32(f"{arch}.embedding_length", s["n_embd"])
    w.add_uint32(f"{arch}.feed_forward_length", s["n_ff"])
    w.add_uint32(f"{arch}.attention.head_count", s["n_head"])
    w.add_uint32(f"{arch}.attention.head_count_kv", s["n_head_kv"])
    w.add_float32(f"{arch}.attention.layer_norm_rms_epsilon", 1e-5)
    w.add_float32(f"{arch}.rope.freq_base", 50000.0)


class Tensors:
    def __init__(self, writer, seed):
        self.w, self.rng = writer, np.random.default_rng(seed)

    def matrix(self, name, *shape):
        data = (self.rng.standard_normal(shape, dtype=np.float32) * 0.02)
        self.w.add_tensor(name, gguf.quants.quantize(data, Q8), raw_dtype=Q8)

    def norm(self, name, n):
        self.w.add_tensor(name, np.ones(n, np.float32))

    def attention(self, p, s, with_kv):
        e, hd = s["n_embd"], s["n_embd"] // s["n_head"]
        self.norm(p + "attn_norm.weight", e)
        self.matrix(p + "attn_q.weight", e, e)
        self.matrix(p + "attn_output.weight", e, e)
        self.norm(p + "attn_q_norm.weight", hd)
        if with_kv:
            self.matrix(p + "attn_k.weight", s["n_head_kv"] * hd, e)
            self.matrix(p + "attn_v.weight", s["n_head_kv"] * hd, e)
            self.norm(p + "attn_k_norm.weight", hd)

    def ffn(self, p, s):
        self.norm(p + "ffn_norm.weight", s["n_embd"])
        self.matrix(p + "ffn_gate.weight", s["n_ff"], s["n_embd"])
        self.matrix(p + "ffn_up.weight", s["n_ff"], s["n_embd"])
        self.matrix(p + "ffn_down.weight", s["n_embd"], s["n_ff"])

    def moe(self, p, s):
        e, f, x = s["n_embd"], s["n_ff_exp"], s["experts"]
        self.norm(p + "ffn_norm.weight", e)
        self.w.add_tensor(p + "ffn_gate_inp.weight",
                          self.rng.standard_normal((x, e), dtype=np.float32) * 0.02)
        self.matrix(p + "ffn_gate_exps.weight", x, f, e)
        self.matrix(p + "ffn_up_exps.weight", x, f, e)
        self.matrix(p + "ffn_down_exps.weight", x, e, f)


def finish(writer):
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file(progress=False)
    writer.close()


def write_device(path, tok, n_vocab, block1):
    s = DEVICE
    w = gguf.GGUFWriter(path, "afm-device")
    common_keys(w, "afm-device", s, n_vocab)
    w.add_uint32("afm-device.kv_share.block1_layers", block1)
    add_tokenizer(w, tok)
    t = Tensors(w, 0)
    t.w.add_tensor("token_embd.weight",
                   gguf.quants.quantize(t.rng.standard_normal((n_vocab, s["n_embd"]), dtype=np.float32), Q8),
                   raw_dtype=Q8)
    t.norm("output_norm.weight", s["n_embd"])
    for i in range(s["n_layer"]):
        t.attention(f"blk.{i}.", s, i < block1)
        t.ffn(f"blk.{i}.", s)
    finish(w)


def write_server(path, tok, n_vocab, global_every):
    s = SERVER
    w = gguf.GGUFWriter(path, "afm-server")
    common_keys(w, "afm-server", s, n_vocab)
    for key, value in [("tracks", s["tracks"]), ("track_block_depth", s["depth"]),
                       ("expert_count", s["experts"]), ("expert_used_count", s["used"]),
                       ("expert_feed_forward_length", s["n_ff_exp"]), ("moe_every", 2),
                       ("attention.sliding_window", s["window"]),
                       ("attention.global_every", global_every)]:
        w.add_uint32(f"afm-server.{key}", value)
    w.add_string("afm-server.track_merge", "mean")
    add_tokenizer(w, tok)
    t = Tensors(w, 1)
    t.w.add_tensor("token_embd.weight",
                   gguf.quants.quantize(t.rng.standard_normal((n_vocab, s["n_embd"]), dtype=np.float32), Q8),
                   raw_dtype=Q8)
    t.norm("output_norm.weight", s["n_embd"])
    for tr in range(s["tracks"]):
        for n in range(s["n_layer"]):
            p = f"trk.{tr}.blk.{n}."
            t.attention(p, s, True)
            t.moe(p, s) if (n + 1) % 2 == 0 else t.ffn(p, s)
    finish(w)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--afm", default=os.environ.get("AFM_BIN", "build/afm"))
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    tok, n_vocab = tokenizer_fields(a.afm)
    jobs = {"afm-device.gguf": lambda p: write_device(p, tok, n_vocab, DEVICE["block1"]),
            "afm-device-nokvshare.gguf": lambda p: write_device(p, tok, n_vocab, DEVICE["n_layer"]),
            "afm-server.gguf": lambda p: write_server(p, tok, n_vocab, 4),
            "afm-server-allglobal.gguf": lambda p: write_server(p, tok, n_vocab, 1)}
    for name, make in jobs.items():
        path = os.path.join(a.out_dir, name)
        if not os.path.exists(path):
            make(path + ".tmp")
            os.replace(path + ".tmp", path)
        print(path)


if __name__ == "__main__":
    main()
