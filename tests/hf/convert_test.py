"""`afm convert` against independent references: ggml's `gguf` reader for the file, numpy for
every tensor's bytes (f32/f16/bf16 conversion, llama.cpp's q/k permutation) and `gguf.quants`
(ggml's reference quantizers, in numpy) for Q8_0/Q4_0. Also: error paths leave no output.
"""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np
import gguf
from gguf import GGMLQuantizationType as QT
from safetensors.numpy import load_file

AFM = os.environ["AFM_BIN"]
FIXTURES = "tests/data/hf"
TYPES = {"f32": QT.F32, "f16": QT.F16, "bf16": QT.BF16, "q8_0": QT.Q8_0, "q4_0": QT.Q4_0}
LAYER_MAP = {"input_layernorm.weight": "attn_norm.weight", "self_attn.q_proj.weight": "attn_q.weight",
             "self_attn.k_proj.weight": "attn_k.weight", "self_attn.v_proj.weight": "attn_v.weight",
             "self_attn.q_proj.bias": "attn_q.bias", "self_attn.k_proj.bias": "attn_k.bias",
             "self_attn.v_proj.bias": "attn_v.bias", "self_attn.o_proj.weight": "attn_output.weight",
             "self_attn.q_norm.weight": "attn_q_norm.weight", "self_attn.k_norm.weight": "attn_k_norm.weight",
             "post_attention_layernorm.weight": "ffn_norm.weight", "mlp.gate_proj.weight": "ffn_gate.weight",
             "mlp.up_proj.weight": "ffn_up.weight", "mlp.down_proj.weight": "ffn_down.weight",
             # Phi-3's fused tensors stay fused, as llama.cpp's converter writes them.
             "self_attn.qkv_proj.weight": "attn_qkv.weight", "mlp.gate_up_proj.weight": "ffn_up.weight"}


# Gemma's norms: post_attention_layernorm is a post-norm there, not the ffn's pre-norm.
GEMMA_MAP = {"post_attention_layernorm.weight": "post_attention_norm.weight",
             "pre_feedforward_layernorm.weight": "ffn_norm.weight",
             "post_feedforward_layernorm.weight": "post_ffw_norm.weight"}


def gguf_name(hf, arch=""):
    fixed = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
             "lm_head.weight": "output.weight"}
    if hf in fixed:
        return fixed[hf]
    _, _, i, rest = hf.split(".", 3)
    if arch.startswith("gemma") and rest in GEMMA_MAP:
        return f"blk.{i}.{GEMMA_MAP[rest]}"
    return f"blk.{i}.{LAYER_MAP[rest]}"


def load_hf(folder):
    """All tensors as float32, decoding BF16 by hand (numpy has no bfloat16)."""
    tensors = {}
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".safetensors"):
            continue
        path = os.path.join(folder, f)
        with open(path, "rb") as fh:
            n = int.from_bytes(fh.read(8), "little")
            header = json.loads(fh.read(n))
            data = fh.read()
        for name, e in header.items():
            if name == "__metadata__":
                continue
            b, end = e["data_offsets"]
            raw = data[b:end]
            arr = {"F32": lambda r: np.frombuffer(r, np.float32),
                   "F16": lambda r: np.frombuffer(r, np.float16).astype(np.float32),
                   "BF16": lambda r: (np.frombuffer(r, np.uint16).astype(np.uint32) << 16).view(np.float32),
                   }[e["dtype"]](raw)
            tensors[name] = arr.reshape(e["shape"])
    return tensors


def permute(w, n_head):  # llama.cpp's LlamaModel.permute, written from its definition
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def expected_bytes(arr, qtype):
    if arr.ndim == 1 or qtype == QT.F32:
        return arr.astype(np.float32).tobytes(), QT.F32 if arr.ndim == 1 else qtype
    if qtype in (QT.Q8_0, QT.Q4_0) and arr.shape[-1] % 32 != 0:
        qtype = QT.F16
    if qtype == QT.F16:
        return arr.astype(np.float16).tobytes(), qtype
    if qtype == QT.BF16:
        u = arr.astype(np.float32).view(np.uint32).astype(np.uint64)
        return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16).tobytes(), qtype
    return gguf.quants.quantize(arr.astype(np.float32), qtype).tobytes(), qtype


def check_model(name, tname, tmp):
    folder = os.path.join(FIXTURES, name)
    out = os.path.join(tmp, f"{name}-{tname}.gguf")
    r = subprocess.run([AFM, "convert", folder, out, "--type", tname], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    cfg = json.load(open(os.path.join(folder, "config.json")))
    reader = gguf.GGUFReader(out)
    f = lambda k: reader.fields[k].contents()
    arch = {"LlamaForCausalLM": "llama", "Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3",
            "MistralForCausalLM": "llama",  # llama.cpp writes Mistral as llama
            "Phi3ForCausalLM": "phi3", "SmolLM3ForCausalLM": "smollm3",
            "Gemma2ForCausalLM": "gemma2", "Gemma3ForCausalLM": "gemma3"}[cfg["architectures"][0]]
    assert f("general.architecture") == arch
    assert f(f"{arch}.block_count") == cfg["num_hidden_layers"]
    assert f(f"{arch}.embedding_length") == cfg["hidden_size"]
    assert f(f"{arch}.feed_forward_length") == cfg["intermediate_size"]
    assert f(f"{arch}.attention.head_count") == cfg["num_attention_heads"]
    assert f(f"{arch}.attention.head_count_kv") == cfg["num_key_value_heads"]
    assert f(f"{arch}.context_length") == cfg["max_position_embeddings"]
    assert np.isclose(f(f"{arch}.rope.freq_base"), cfg["rope_theta"])
    assert np.isclose(f(f"{arch}.attention.layer_norm_rms_epsilon"), cfg["rms_norm_eps"])
    head_dim = cfg.get("head_dim", cfg["hidden_size"] // cfg["num_attention_heads"])
    assert f(f"{arch}.rope.dimension_count") == head_dim
    if "head_dim" in cfg:
        assert f(f"{arch}.attention.key_length") == head_dim
    window_key = f"{arch}.attention.sliding_window"
    if arch.startswith("gemma"):
        assert np.isclose(f(f"{arch}.attention.scale"), cfg["query_pre_attn_scalar"] ** -0.5)
        for key in ("attn_logit_softcapping", "final_logit_softcapping"):
            assert (f"{arch}.{key}" in reader.fields) == (cfg.get(key) is not None), key
            if cfg.get(key) is not None:
                assert np.isclose(f(f"{arch}.{key}"), cfg[key])
        if arch == "gemma3":
            assert np.isclose(f("gemma3.rope.freq_base_swa"), cfg["rope_local_base_freq"])
    if cfg.get("sliding_window") is not None and cfg.get("model_type") in ("mistral", "phi3", "gemma2", "gemma3_text"):
        assert f(window_key) == cfg["sliding_window"]
    else:
        assert window_key not in reader.fields
    assert f("tokenizer.ggml.model") == "gpt2"
    assert len(reader.fields["tokenizer.ggml.tokens"].data) == cfg["vocab_size"]
    tcfg = json.load(open(os.path.join(folder, "tokenizer_config.json")))
    assert f("tokenizer.chat_template") == tcfg["chat_template"]

    hf = load_hf(folder)
    expected = {}
    for hname, arr in hf.items():
        gname = gguf_name(hname, arch)
        if arch.startswith("gemma") and gname.endswith("norm.weight"):
            arr = arr + np.float32(1)  # Gemma's RMSNorm multiplies by 1 + w
        if cfg["tie_word_embeddings"] and gname == "output.weight":
            continue
        if arch in ("llama", "smollm3") and gname.endswith(("attn_q.weight", "attn_q.bias")):
            arr = permute(arr, cfg["num_attention_heads"])
        if arch in ("llama", "smollm3") and gname.endswith(("attn_k.weight", "attn_k.bias")):
            arr = permute(arr, cfg["num_key_value_heads"])
        expected[gname] = (arr, *expected_bytes(arr, TYPES[tname]))
    got = {t.name: t for t in reader.tensors}
    assert set(got) == set(expected), set(got) ^ set(expected)
    assert ("output.weight" in got) == (not cfg["tie_word_embeddings"])
    for gname, (arr, data, qtype) in expected.items():
        t = got[gname]
        assert t.tensor_type == qtype, (gname, t.tensor_type, qtype)
        assert list(map(int, t.shape)) == list(reversed(arr.shape)), (gname, t.shape, arr.shape)
        assert t.data.tobytes() == data, f"{name} {tname} {gname}: bytes differ"
    return out


def check_errors(tmp):
    def convert_fails(folder, needle):
        out = os.path.join(tmp, "bad.gguf")
        r = subprocess.run([AFM, "convert", folder, out], capture_output=True, text=True)
        assert r.returncode == 1, (folder, r.returncode, r.stderr)
        assert needle in r.stderr and r.stderr.count("\n") == 1, r.stderr
        assert not os.path.exists(out)
        assert not [p for p in os.listdir(tmp) if ".tmp." in p], os.listdir(tmp)

    src = os.path.join(FIXTURES, "qwen3")
    bad = os.path.join(tmp, "unknown_arch")
    shutil.copytree(src, bad)
    cfg = json.load(open(os.path.join(bad, "config.json")))
    cfg["architectures"] = ["MambaForCausalLM"]
    json.dump(cfg, open(os.path.join(bad, "config.json"), "w"))
    convert_fails(bad, "unsupported architecture 'MambaForCausalLM'")

    missing = os.path.join(tmp, "missing_tensor")
    shutil.copytree(src, missing)
    t = load_file(os.path.join(missing, "model.safetensors"))
    del t["model.layers.1.mlp.up_proj.weight"]
    from safetensors.numpy import save_file
    save_file(t, os.path.join(missing, "model.safetensors"))
    convert_fails(missing, "blk.1.ffn_up.weight")

    corrupt = os.path.join(tmp, "corrupt")
    shutil.copytree(src, corrupt)
    path = os.path.join(corrupt, "model.safetensors")
    data = open(path, "rb").read()
    open(path, "wb").write(data[: len(data) // 2])  # truncated data section
    convert_fails(corrupt, "outside")

    convert_fails(os.path.join(tmp, "no_such_dir"), "not a directory")

    # Qwen2's own sliding window (later layers only) is refused, not silently dropped.
    windowed = os.path.join(tmp, "qwen2_window")
    shutil.copytree(os.path.join(FIXTURES, "qwen2"), windowed)
    cfg = json.load(open(os.path.join(windowed, "config.json")))
    cfg.update(use_sliding_window=True, sliding_window=16)
    json.dump(cfg, open(os.path.join(windowed, "config.json"), "w"))
    convert_fails(windowed, "use_sliding_window = true is not supported")

    # Phi-3's LongRoPE (the 128k variants) is refused by name, not converted wrongly.
    longrope = os.path.join(tmp, "phi3_longrope")
    shutil.copytree(os.path.join(FIXTURES, "phi3"), longrope)
    cfg = json.load(open(os.path.join(longrope, "config.json")))
    cfg["rope_scaling"] = {"type": "longrope", "long_factor": [1.0] * 8, "short_factor": [1.0] * 8}
    json.dump(cfg, open(os.path.join(longrope, "config.json"), "w"))
    convert_fails(longrope, "rope_scaling type 'longrope' is not supported")

    # SmolLM3 with another NoPE pattern than every 4th layer (llama.cpp's fixed one) is refused.
    nope = os.path.join(tmp, "smollm3_nope")
    shutil.copytree(os.path.join(FIXTURES, "smollm3"), nope)
    cfg = json.load(open(os.path.join(nope, "config.json")))
    cfg["no_rope_layers"] = [1, 0, 1, 0]
    json.dump(cfg, open(os.path.join(nope, "config.json"), "w"))
    convert_fails(nope, "no_rope_layers other than RoPE off in every 4th layer")

    # Gemma with another sliding / full layer pattern than the fixed one is refused.
    layers = os.path.join(tmp, "gemma3_layers")
    shutil.copytree(os.path.join(FIXTURES, "gemma3"), layers)
    cfg = json.load(open(os.path.join(layers, "config.json")))
    cfg["layer_types"] = ["full_attention"] * cfg["num_hidden_layers"]
    json.dump(cfg, open(os.path.join(layers, "config.json"), "w"))
    convert_fails(layers, "layer_types must be sliding attention in all but every 6th layer")

    # Gemma configs usually leave tie_word_embeddings out (true by default): still tied.
    untold = os.path.join(tmp, "gemma2_untold_tie")
    shutil.copytree(os.path.join(FIXTURES, "gemma2"), untold)
    cfg = json.load(open(os.path.join(untold, "config.json")))
    del cfg["tie_word_embeddings"]
    json.dump(cfg, open(os.path.join(untold, "config.json"), "w"))
    out = os.path.join(tmp, "gemma2_untold_tie.gguf")
    r = subprocess.run([AFM, "convert", untold, out], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "output.weight" not in {t.name for t in gguf.GGUFReader(out).tensors}


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("llama", "qwen2", "qwen3", "mistral", "phi3", "smollm3", "gemma2", "gemma3"):
            for tname in TYPES:
                check_model(name, tname, tmp)
        check_errors(tmp)
    print("convert: ok")


if __name__ == "__main__":
    main()
