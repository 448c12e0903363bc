"""The GGUF files people download, made by llama.cpp's own quantizer, run in afm as in llama.cpp.

A small random Llama (256 wide, FFN 768: every row a whole number of 256-value super-blocks; the
tokenizer of tests/data/hf/llama) is written in f32 with the `gguf` package, then quantized by
llama.cpp's `llama_model_quantize` (the function behind llama-quantize, in the pinned
llama-cpp-python) to each file type below. For each file, on one teacher-forced sequence:
- the types llama.cpp chose (Q4_K_M mixes q4_k with q6_k, ...) are the ones afm reads;
- afm's logits on the file are within 3% of the logits' spread (RMS) of afm's logits on its
  "dequantized twin", an f32 file holding the values the `gguf` package decodes from it: what is
  left is afm's rounding of activations to int8, where a misread block would move them by about
  the quantization's own effect (8-85% of the spread here). The K-quants' activations are
  rounded in 32-value blocks by the AVX-512 and scalar kernels (measured 1.9-2.0%) and in
  256-value blocks by the AVX2 ones, as llama.cpp does everywhere (2.8-2.9%);
- afm's logits are within 5% of the spread of llama.cpp's on the same file (llama.cpp rounds
  activations in 256-value blocks: 3.3-3.4% apart with 32-value blocks, 2.4-2.6% with 256), and
  the most likely next token agrees at >= 90% of positions (random weights leave many near ties);
- `afm quantize` reads the Q4_K_M file and re-encodes it as q8_0: that file's logits are within
  5% of the spread of the twin's (q8_0's own weight rounding adds about as much again as the
  activation rounding: 2.7% measured).
Prints one line per file type.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import gguf
import llama_cpp

AFM = os.environ["AFM_BIN"]
SHAPE = dict(n_embd=256, n_ff=768, n_layer=2, n_head=4, n_head_kv=2)
FTYPES = {  # llama.cpp's LLAMA_FTYPE_MOSTLY_* -> the tensor types its files must hold
    "Q4_K_M": (15, {"q4_k", "q6_k"}), "Q5_K_M": (17, {"q5_k", "q6_k"}), "Q6_K": (18, {"q6_k"}),
    "Q3_K_M": (12, {"q3_k"}), "Q2_K": (10, {"q2_k"}), "Q4_1": (3, {"q4_1"}),
    "Q5_0": (8, {"q5_0"}), "Q5_1": (9, {"q5_1"}),
}
SKIP_KEYS = {"general.architecture", "general.file_type", "llama.embedding_length",
             "llama.feed_forward_length", "llama.block_count", "llama.attention.head_count",
             "llama.attention.head_count_kv", "llama.rope.dimension_count", "GGUF.version",
             "GGUF.tensor_count", "GGUF.kv_count"}


def copy_metadata(reader, writer, skip):
    """Every key of `reader` but those in `skip` (and the header's own GGUF.* fields)."""
    for key, field in reader.fields.items():
        if key in skip or key.startswith("GGUF."):
            continue
        vtype = field.types[0]
        if vtype == gguf.GGUFValueType.ARRAY:
            writer.add_key_value(key, field.contents(), vtype, sub_type=field.types[-1])
        else:
            writer.add_key_value(key, field.contents(), vtype)


def write_model(path, source):
    """A random f32 Llama of SHAPE with the metadata (tokenizer, norms, rope) of `source`."""
    reader = gguf.GGUFReader(source)
    writer = gguf.GGUFWriter(path, "llama")
    copy_metadata(reader, writer, SKIP_KEYS)
    s = SHAPE
    e, hd = s["n_embd"], s["n_embd"] // s["n_head"]
    writer.add_embedding_length(e)
    writer.add_feed_forward_length(s["n_ff"])
    writer.add_block_count(s["n_layer"])
    writer.add_head_count(s["n_head"])
    writer.add_head_count_kv(s["n_head_kv"])
    writer.add_rope_dimension_count(hd)
    n_vocab = len(reader.fields["tokenizer.ggml.tokens"].data)
    rng = np.random.default_rng(5)
    w = lambda *shape, std=0.08: (rng.standard_normal(shape) * std).astype(np.float32)
    kv = s["n_head_kv"] * hd
    writer.add_tensor("token_embd.weight", w(n_vocab, e, std=1.0))
    writer.add_tensor("output_norm.weight", np.ones(e, np.float32))
    writer.add_tensor("output.weight", w(n_vocab, e, std=0.15))
    for i in range(s["n_layer"]):
        p = f"blk.{i}."
        writer.add_tensor(p + "attn_norm.weight", np.ones(e, np.float32))
        writer.add_tensor(p + "ffn_norm.weight", np.ones(e, np.float32))
        writer.add_tensor(p + "attn_q.weight", w(e, e))
        writer.add_tensor(p + "attn_k.weight", w(kv, e))
        writer.add_tensor(p + "attn_v.weight", w(kv, e))
        writer.add_tensor(p + "attn_output.weight", w(e, e))
        writer.add_tensor(p + "ffn_gate.weight", w(s["n_ff"], e))
        writer.add_tensor(p + "ffn_up.weight", w(s["n_ff"], e))
        writer.add_tensor(p + "ffn_down.weight", w(e, s["n_ff"]))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file(progress=False)
    writer.close()
    return n_vocab


def llama_cpp_quantize(src, dst, ftype):
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = 2
    rc = llama_cpp.llama_model_quantize(src.encode(), dst.encode(), params)
    assert rc == 0, f"llama_model_quantize({ftype}) returned {rc}"


def llama_cpp_logits(path, tokens):
    llm = llama_cpp.Llama(model_path=path, n_ctx=256, n_batch=256, n_threads=2, verbose=False,
                          logits_all=True)
    llm.eval(tokens)
    return np.array(llm.scores[:len(tokens)], dtype=np.float64)


def afm_logits(path, tokens):
    out = subprocess.run([AFM, "logits", "-m", path, "--tokens", ",".join(map(str, tokens)), "-t", "2",
                          "--logits", "--json"], check=True, capture_output=True, text=True)
    return np.array(json.loads(out.stdout)["logits"], dtype=np.float64)


def write_dequantized(src, dst):
    """src with every tensor replaced by its values as the `gguf` package dequantizes them."""
    reader = gguf.GGUFReader(src)
    writer = gguf.GGUFWriter(dst, "llama")
    copy_metadata(reader, writer, {"general.architecture"})
    for t in reader.tensors:
        values = gguf.quants.dequantize(t.data, gguf.GGMLQuantizationType(t.tensor_type))
        writer.add_tensor(t.name, values.astype(np.float32).reshape(tuple(reversed(t.shape.tolist()))))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file(progress=False)
    writer.close()


def tensor_types(path):
    return {gguf.GGMLQuantizationType(t.tensor_type).name.lower() for t in gguf.GGUFReader(path).tensors}


def rms(a):
    return float(np.sqrt(np.mean(a * a)))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        vocab = os.path.join(tmp, "vocab.gguf")
        subprocess.run([AFM, "convert", "tests/data/hf/llama", vocab, "--type", "f32"], check=True,
                       capture_output=True)
        f32 = os.path.join(tmp, "f32.gguf")
        n_vocab = write_model(f32, vocab)
        tokens = [int(t) for t in np.random.default_rng(1).integers(5, n_vocab, 96)]
        reference = llama_cpp_logits(f32, tokens)
        assert rms(afm_logits(f32, tokens) - reference) < 1e-3 * rms(reference)
        for name, (ftype, want_types) in FTYPES.items():
            path = os.path.join(tmp, f"{name}.gguf")
            llama_cpp_quantize(f32, path, ftype)
            have = tensor_types(path)
            assert want_types <= have, (name, have)
            theirs, ours = llama_cpp_logits(path, tokens), afm_logits(path, tokens)
            twin = os.path.join(tmp, f"{name}-dequantized.gguf")
            write_dequantized(path, twin)
            exact = afm_logits(twin, tokens)
            spread = rms(theirs - theirs.mean(1, keepdims=True))
            quant_effect = rms(theirs - reference)
            vs_llama, vs_exact = rms(ours - theirs), rms(ours - exact)
            agree = float(np.mean(np.argmax(ours, 1) == np.argmax(theirs, 1)))
            print(f"{name}: types {sorted(have)}; logit spread {spread:.3f}, quantization effect "
                  f"{quant_effect:.4f}; afm vs dequantized twin {vs_exact:.4f}, vs llama.cpp "
                  f"{vs_llama:.4f}; top-1 agreement with llama.cpp {agree:.3f}")
            assert vs_exact < 0.03 * spread, (name, vs_exact, spread)
            assert vs_llama < 0.05 * spread, (name, vs_llama, spread)
            assert agree >= 0.9, (name, agree)
            if name == "Q4_K_M":
                requantized = os.path.join(tmp, "Q4_K_M-to-q8_0.gguf")
                subprocess.run([AFM, "quantize", path, requantized, "--type", "q8_0"], check=True,
                               capture_output=True)
                gap = rms(afm_logits(requantized, tokens) - exact)
                print(f"Q4_K_M re-encoded as q8_0 by afm quantize: vs the twin {gap:.4f}")
                assert gap < 0.05 * spread, gap

if __name__ == "__main__":
    main()
    sys.exit(0)
