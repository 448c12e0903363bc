"""`afm convert` of an mlx-lm afm7 folder (tests/data/afm7, made by
tests/oracle/make_afm_device_fixture.py) into GGUF "afm-device", read back with ggml's `gguf`
package: hyperparameters (feed_forward_length truncated as Python's int(), block split,
qk-norm epsilon), the exact tensor set (no K/V on Block-2 layers, K/V scales of shape [1]),
shapes, storage types, and every tensor's bytes against numpy (qkv_proj split by rows, no RoPE
permutation). Also: the model_type lookup, mlx's null safetensors metadata, and error paths.
"""
import json
import os
import shutil
import subprocess
import tempfile

import gguf
import numpy as np
from gguf import GGMLQuantizationType as QT

from convert_test import TYPES, expected_bytes, load_hf

AFM = os.environ["AFM_BIN"]
FIXTURE = "tests/data/afm7"
LAYER_MAP = {"input_layernorm.weight": "attn_norm.weight",
             "post_attention_layernorm.weight": "ffn_norm.weight",
             "self_attn.q_proj.weight": "attn_q.weight",
             "self_attn.out_proj.weight": "attn_output.weight",
             "self_attn.q_norm.weight": "attn_q_norm.weight",
             "self_attn.k_norm.weight": "attn_k_norm.weight",
             "self_attn.quant_key_scale": "attn_k_scale.weight",
             "self_attn.quant_value_scale": "attn_v_scale.weight",
             "mlp.gate_proj.weight": "ffn_gate.weight", "mlp.up_proj.weight": "ffn_up.weight",
             "mlp.down_proj.weight": "ffn_down.weight"}


def convert(folder, out, *args):
    return subprocess.run([AFM, "convert", folder, out, *args], capture_output=True, text=True)


def expected_tensors(cfg, src):
    """GGUF name -> float32 array in PyTorch order, written from afm7.py's parameter layout."""
    hd = cfg["hidden_dim"] // cfg["num_heads"]
    nq, nkv = cfg["num_heads"] * hd, cfg["num_kv_heads"] * hd
    b1 = cfg["num_layers"] - cfg["num_kv_reuse_layers"]
    out = {}
    for name, arr in src.items():
        arr = arr.reshape(1) if arr.ndim == 0 else arr  # 0-dim scalars become shape [1]
        if name == "model.embedding.weight":
            out["token_embd.weight"] = arr
            continue
        if name == "model.output_norm.weight":
            out["output_norm.weight"] = arr
            continue
        _, group, j, rest = name.split(".", 3)
        i = int(j) if group == "layers" else b1 + int(j)
        if rest == "self_attn.qkv_proj.weight":
            out[f"blk.{i}.attn_q.weight"] = arr[:nq]
            out[f"blk.{i}.attn_k.weight"] = arr[nq:nq + nkv]
            out[f"blk.{i}.attn_v.weight"] = arr[nq + nkv:]
        else:
            out[f"blk.{i}.{LAYER_MAP[rest]}"] = arr
    return out


def check_metadata(reader, cfg):
    f = lambda k: reader.fields[k].contents()
    a = "afm-device"
    assert f("general.architecture") == a
    assert f(f"{a}.block_count") == cfg["num_layers"]
    assert f(f"{a}.kv_share.block1_layers") == cfg["num_layers"] - cfg["num_kv_reuse_layers"]
    assert f(f"{a}.embedding_length") == cfg["hidden_dim"]
    assert f(f"{a}.feed_forward_length") == int(cfg["hidden_dim"] * cfg["hidden_dim_scale_factor"])
    assert f(f"{a}.attention.head_count") == cfg["num_heads"]
    assert f(f"{a}.attention.head_count_kv") == cfg["num_kv_heads"]
    assert f(f"{a}.context_length") == cfg.get("max_position_embeddings", 4096)
    assert f(f"{a}.vocab_size") == cfg["vocab_size"]
    assert f(f"{a}.rope.dimension_count") == cfg["hidden_dim"] // cfg["num_heads"]
    assert np.isclose(f(f"{a}.rope.freq_base"), cfg["rope_theta"])
    assert np.isclose(f(f"{a}.attention.layer_norm_rms_epsilon"), cfg["rms_norm_eps"])
    assert np.isclose(f(f"{a}.attention.qk_norm_epsilon"), 1e-5)  # mlx nn.RMSNorm's default
    assert f"{a}.attention.key_length" not in reader.fields
    assert len(reader.fields["tokenizer.ggml.tokens"].data) == cfg["vocab_size"]
    assert f("tokenizer.chat_template").startswith("{% for message in messages %}")


def check_layout(tensors, cfg):
    """The tensor set docs/gguf.md specifies for afm-device, independent of the source names."""
    b1 = cfg["num_layers"] - cfg["num_kv_reuse_layers"]
    common = ["attn_norm", "attn_q", "attn_q_norm", "attn_output", "ffn_norm", "ffn_gate",
              "ffn_up", "ffn_down"]
    want = {"token_embd.weight", "output_norm.weight"}
    for i in range(cfg["num_layers"]):
        parts = common + (["attn_k", "attn_v", "attn_k_norm", "attn_k_scale", "attn_v_scale"]
                          if i < b1 else [])
        want |= {f"blk.{i}.{p}.weight" for p in parts}
    assert set(tensors) == want, set(tensors) ^ want
    hd = cfg["hidden_dim"] // cfg["num_heads"]
    shape = lambda n: list(map(int, tensors[n].shape))  # ggml order: [cols, rows]
    assert shape("blk.0.attn_q.weight") == [cfg["hidden_dim"], cfg["num_heads"] * hd]
    assert shape("blk.0.attn_k.weight") == [cfg["hidden_dim"], cfg["num_kv_heads"] * hd]
    assert shape("blk.0.attn_v.weight") == [cfg["hidden_dim"], cfg["num_kv_heads"] * hd]
    assert shape(f"blk.{b1}.attn_q.weight") == [cfg["hidden_dim"], cfg["num_heads"] * hd]
    assert shape("blk.0.attn_k_scale.weight") == [1] and shape("blk.0.attn_v_scale.weight") == [1]
    assert shape("blk.0.attn_k_norm.weight") == [hd]
    assert "output.weight" not in tensors  # tied


def check_model(tname, tmp):
    out = os.path.join(tmp, f"afm7-{tname}.gguf")
    r = convert(FIXTURE, out, "--type", tname)
    assert r.returncode == 0, r.stderr
    cfg = json.load(open(os.path.join(FIXTURE, "config.json")))
    reader = gguf.GGUFReader(out)
    check_metadata(reader, cfg)
    got = {t.name: t for t in reader.tensors}
    check_layout(got, cfg)
    expected = expected_tensors(cfg, load_hf(FIXTURE))
    assert set(got) == set(expected), set(got) ^ set(expected)
    for name, arr in expected.items():
        data, qtype = expected_bytes(arr, TYPES[tname])
        t = got[name]
        assert t.tensor_type == qtype, (name, t.tensor_type, qtype)
        assert list(map(int, t.shape)) == list(reversed(arr.shape)), (name, t.shape, arr.shape)
        assert t.data.tobytes() == data, f"{tname} {name}: bytes differ"
    scale = got["blk.0.attn_k_scale.weight"]
    assert scale.tensor_type == QT.F32 and 0 < float(scale.data[0]) < 1, scale.data


def edited_copy(tmp, name, edit_config=None, edit_tensors=None, metadata="keep"):
    """A copy of the fixture with config.json and/or the safetensors header/tensors changed."""
    folder = os.path.join(tmp, name)
    shutil.copytree(FIXTURE, folder)
    if edit_config:
        path = os.path.join(folder, "config.json")
        cfg = json.load(open(path))
        edit_config(cfg)
        json.dump(cfg, open(path, "w"))
    if edit_tensors or metadata != "keep":
        path = os.path.join(folder, "model.safetensors")
        tensors = load_hf(folder)
        if edit_tensors:
            edit_tensors(tensors)
        write_safetensors(path, tensors, {"format": "mlx"} if metadata == "keep" else metadata)
    return folder


def write_safetensors(path, tensors, metadata):
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for name in sorted(tensors):
        b = np.ascontiguousarray(tensors[name], dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + b"".join(blobs))


def check_config_variants(tmp):
    # Python int() truncates 32 * 3.3 = 105.6 to 105; max_position_embeddings is used if given.
    def cfg_edit(c):
        c["hidden_dim_scale_factor"] = 3.3
        c["max_position_embeddings"] = 2048
    folder = edited_copy(tmp, "ff_trunc", edit_config=cfg_edit)
    out = os.path.join(tmp, "ff_trunc.gguf")
    r = convert(folder, out, "--type", "f32")
    assert r.returncode == 0, r.stderr
    reader = gguf.GGUFReader(out)
    assert reader.fields["afm-device.feed_forward_length"].contents() == 105
    assert reader.fields["afm-device.context_length"].contents() == 2048

    # mlx's own mx.save_safetensors without metadata writes "__metadata__": null.
    folder = edited_copy(tmp, "null_metadata", metadata=None)
    assert b'"__metadata__": null' in open(os.path.join(folder, "model.safetensors"), "rb").read(64)
    r = convert(folder, os.path.join(tmp, "null_metadata.gguf"), "--type", "f32")
    assert r.returncode == 0, r.stderr


def check_errors(tmp):
    def convert_fails(folder, needle):
        out = os.path.join(tmp, "bad.gguf")
        r = convert(folder, out)
        assert r.returncode == 1, (folder, r.returncode, r.stderr)
        assert needle in r.stderr and r.stderr.count("\n") == 1, r.stderr
        assert not os.path.exists(out)
        assert not [p for p in os.listdir(tmp) if ".tmp." in p], os.listdir(tmp)

    def set_key(key, value):
        def edit(c):
            if value is None:
                c.pop(key)
            else:
                c[key] = value
        return edit

    def drop(name):
        return lambda t: t.pop(name)

    def add(name):
        return lambda t: t.update({name: np.ones(4, np.float32)})

    convert_fails(edited_copy(tmp, "unknown_type", set_key("model_type", "afm9")),
                  "unsupported model_type 'afm9'")
    convert_fails(edited_copy(tmp, "no_type", set_key("model_type", None)),
                  "neither 'architectures' nor 'model_type'")
    convert_fails(edited_copy(tmp, "quantized", set_key("quantization", {"bits": 4})),
                  "mlx-quantized weights are not supported")
    convert_fails(edited_copy(tmp, "kv_heads", set_key("num_kv_heads", 1)),
                  "model.layers.0.self_attn.qkv_proj.weight' has 64 rows")
    convert_fails(edited_copy(tmp, "reuse_all", set_key("num_kv_reuse_layers", 8)),
                  "num_kv_reuse_layers must be less than num_layers")
    convert_fails(edited_copy(tmp, "missing_q", edit_tensors=drop(
        "model.kv_reuse_layers.0.self_attn.q_proj.weight")), "blk.5.attn_q.weight")
    convert_fails(edited_copy(tmp, "missing_qkv", edit_tensors=drop(
        "model.layers.4.self_attn.qkv_proj.weight")), "blk.4.attn_q.weight")
    # Block-2 layers have no K/V: a k_norm there is an unknown tensor, not silently dropped.
    convert_fails(edited_copy(tmp, "reuse_k_norm", edit_tensors=add(
        "model.kv_reuse_layers.1.self_attn.k_norm.weight")),
        "unexpected tensor 'model.kv_reuse_layers.1.self_attn.k_norm.weight'")
    convert_fails(edited_copy(tmp, "lora", edit_tensors=add(
        "model.layers.0.self_attn.qkv_proj.lora_a")), "model.layers.0.self_attn.qkv_proj.lora_a")
    convert_fails(edited_copy(tmp, "extra_layer", edit_tensors=add(
        "model.kv_reuse_layers.3.input_layernorm.weight")), "beyond the layers")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for tname in TYPES:
            check_model(tname, tmp)
        check_config_variants(tmp)
        check_errors(tmp)
    print("afm7 convert: ok")


if __name__ == "__main__":
    main()
