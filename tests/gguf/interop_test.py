"""GGUF interoperability with ggml's own Python package (`gguf`, PyPI).

1. Files afm's writer makes are read by `gguf.GGUFReader` with identical metadata (keys, order,
   types, values) and tensor bytes.
2. Files `gguf.GGUFWriter` makes are read by afm's reader with identical metadata and bytes.
3. Re-writing a `gguf`-made file with afm's writer reproduces it byte for byte.

Usage: interop_test.py PATH_TO_gguf_tool (CTest passes it).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import gguf
from gguf import GGUFValueType as VT, GGMLQuantizationType as QT

TOOL = sys.argv[1]
TYPE_NAMES = {VT.UINT8: "u8", VT.INT8: "i8", VT.UINT16: "u16", VT.INT16: "i16", VT.UINT32: "u32",
              VT.INT32: "i32", VT.FLOAT32: "f32", VT.BOOL: "bool", VT.STRING: "string",
              VT.ARRAY: "array", VT.UINT64: "u64", VT.INT64: "i64", VT.FLOAT64: "f64"}
TENSOR_TYPES = {"f32": QT.F32, "f16": QT.F16, "bf16": QT.BF16, "q8_0": QT.Q8_0, "q4_0": QT.Q4_0}
BLOCK = {"f32": (1, 4), "f16": (1, 2), "bf16": (1, 2), "q8_0": (32, 34), "q4_0": (32, 18)}


def typed(t, v):
    return {"type": t, "value": v}


def typed_array(elem, items):
    return {"type": "array", "element_type": elem, "items": items}


def sample_spec(rng):
    f32 = lambda x: float(np.float32(x))
    meta = [
        ("general.architecture", typed("string", "llama")),
        ("t.u8", typed("u8", 255)), ("t.i8", typed("i8", -128)),
        ("t.u16", typed("u16", 65535)), ("t.i16", typed("i16", -32768)),
        ("t.u32", typed("u32", 4294967295)), ("t.i32", typed("i32", -2147483648)),
        ("t.f32", typed("f32", f32(0.1))), ("t.bool", typed("bool", True)),
        ("t.false", typed("bool", False)),
        ("t.string", typed("string", "héllo wörld ✓ 你好 🙂")), ("t.empty_string", typed("string", "")),
        ("t.u64", typed("u64", 2**64 - 1)), ("t.i64", typed("i64", -2**63)),
        ("t.f64", typed("f64", 1.0 / 3.0)),
        ("t.strings", typed_array("string", [typed("string", s) for s in ["a", "", "ß", "<|im_end|>"]])),
        ("t.floats", typed_array("f32", [typed("f32", f32(x)) for x in rng.standard_normal(50)])),
        ("t.ints", typed_array("i32", [typed("i32", int(x)) for x in rng.integers(-1000, 1000, 20)])),
        ("t.nested", typed_array("array", [
            typed_array("i32", [typed("i32", 1), typed("i32", 2)]),
            typed_array("i32", [typed("i32", 3)])])),
    ]
    tensors = []
    for i, (tname, shape) in enumerate([("f32", [7, 3]), ("f16", [64]), ("bf16", [5, 2, 2]),
                                        ("q8_0", [64, 3]), ("q4_0", [32, 2, 2])]):
        per, nbytes = BLOCK[tname]
        n = int(np.prod(shape)) // per * nbytes
        data = rng.integers(0, 256, n, dtype=np.uint8)
        if tname in ("f32", "f16", "bf16"):  # finite values so float views compare cleanly
            data = {"f32": rng.standard_normal(n // 4).astype(np.float32).view(np.uint8),
                    "f16": rng.standard_normal(n // 2).astype(np.float16).view(np.uint8),
                    "bf16": (rng.standard_normal(n // 2).astype(np.float32).view(np.uint32) >> 16)
                    .astype(np.uint16).view(np.uint8)}[tname]
        tensors.append({"name": f"blk.{i}.{tname}", "shape": shape, "type": tname,
                        "data": data.tobytes().hex()})
    return {"metadata": [{"key": k, "value": v} for k, v in meta], "tensors": tensors}


def field_value(field, parts_index=None):
    """Decodes a ReaderField (including nested arrays) into our typed-JSON shape."""
    # Walk the raw parts the way the format is laid out: [len, key, type, value...]
    parts = field.parts[3:]
    pos = [0]

    def take():
        p = parts[pos[0]]
        pos[0] += 1
        return p

    def read(vtype):
        if vtype == VT.STRING:
            take()  # length
            return typed("string", bytes(take()).decode("utf-8"))
        if vtype == VT.ARRAY:
            elem = VT(int(take()[0]))
            count = int(take()[0])
            return typed_array(TYPE_NAMES[elem], [read(elem) for _ in range(count)])
        v = take()[0]
        name = TYPE_NAMES[vtype]
        if vtype == VT.BOOL:
            return typed(name, bool(v))
        if vtype in (VT.FLOAT32, VT.FLOAT64):
            return typed(name, float(v))
        return typed(name, int(v))

    return read(VT(field.types[0]))


def ours_to_gguf(tmp, rng):
    spec = sample_spec(rng)
    spec_path = os.path.join(tmp, "spec.json")
    out = os.path.join(tmp, "ours.gguf")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    subprocess.run([TOOL, "write", spec_path, out], check=True)
    reader = gguf.GGUFReader(out)
    fields = [(name, f) for name, f in reader.fields.items() if not name.startswith("GGUF.")]
    assert [name for name, _ in fields] == [kv["key"] for kv in spec["metadata"]], "key order"
    for (name, field), kv in zip(fields, spec["metadata"]):
        assert field_value(field) == kv["value"], (name, field_value(field), kv["value"])
    assert len(reader.tensors) == len(spec["tensors"])
    for t, s in zip(reader.tensors, spec["tensors"]):
        assert t.name == s["name"], (t.name, s["name"])
        assert list(map(int, t.shape)) == s["shape"], (t.name, t.shape, s["shape"])
        assert t.tensor_type == TENSOR_TYPES[s["type"]], (t.name, t.tensor_type)
        assert t.data.tobytes() == bytes.fromhex(s["data"]), t.name
    return spec


def gguf_to_ours(tmp, rng, alignment):
    path = os.path.join(tmp, f"theirs_{alignment}.gguf")
    w = gguf.GGUFWriter(path, "qwen2")
    if alignment != 32:
        w.add_custom_alignment(alignment)
    w.add_uint8("t.u8", 7)
    w.add_int16("t.i16", -5)
    w.add_uint32("t.u32", 123456)
    w.add_int64("t.i64", -(2**40))
    w.add_float32("t.f32", 0.25)
    w.add_float64("t.f64", 2.5e-300)
    w.add_bool("t.bool", True)
    w.add_string("t.string", "ünïcødé ✓")
    w.add_array("t.tokens", ["<s>", "</s>", "hello", "▁world"])
    w.add_key_value("t.nested", [[1, 2, 3], [4]], VT.ARRAY, sub_type=VT.ARRAY)
    x = rng.standard_normal((3, 64)).astype(np.float32)
    w.add_tensor("a.f32", x)
    w.add_tensor("b.f16", x.astype(np.float16))
    bf16 = (x.view(np.uint32) >> 16).astype(np.uint16)
    w.add_tensor("c.bf16", bf16, raw_dtype=QT.BF16)
    q8 = gguf.quants.quantize(x, QT.Q8_0)
    w.add_tensor("d.q8_0", q8, raw_dtype=QT.Q8_0)  # q8 is (rows, bytes)
    q4 = gguf.quants.quantize(x, QT.Q4_0)
    w.add_tensor("e.q4_0", q4, raw_dtype=QT.Q4_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    dump = json.loads(subprocess.run([TOOL, "dump", path], check=True, capture_output=True).stdout)
    assert dump["alignment"] == alignment
    got = {kv["key"]: kv["value"] for kv in dump["metadata"]}
    reader = gguf.GGUFReader(path)
    for name, field in reader.fields.items():
        if name.startswith("GGUF."):
            continue
        assert got[name] == field_value(field), (name, got[name], field_value(field))
    assert got["t.nested"]["items"][0]["items"][2]["value"] == 3
    assert got["t.string"]["value"] == "ünïcødé ✓"
    expected = {"a.f32": x.tobytes(), "b.f16": x.astype(np.float16).tobytes(),
                "c.bf16": bf16.tobytes(), "d.q8_0": q8.tobytes(), "e.q4_0": q4.tobytes()}
    assert [t["name"] for t in dump["tensors"]] == list(expected)
    for t in dump["tensors"]:
        assert bytes.fromhex(t["data"]) == expected[t["name"]], t["name"]
        assert t["shape"] == [64, 3], t["shape"]  # ggml order: innermost first
    return path, dump


def rewrite_is_byte_identical(tmp, path, dump):
    spec = {"metadata": dump["metadata"], "tensors": dump["tensors"]}
    spec_path = os.path.join(tmp, "rewrite.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    out = os.path.join(tmp, "rewrite.gguf")
    subprocess.run([TOOL, "write", spec_path, out], check=True)
    theirs = open(path, "rb").read()
    ours = open(out, "rb").read()
    assert ours == theirs, f"rewrite differs: {len(ours)} vs {len(theirs)} bytes"


def main():
    rng = np.random.default_rng(20251122)
    with tempfile.TemporaryDirectory() as tmp:
        ours_to_gguf(tmp, rng)
        for alignment in (32, 64):
            path, dump = gguf_to_ours(tmp, rng, alignment)
            rewrite_is_byte_identical(tmp, path, dump)
    print("gguf interop: ok")


if __name__ == "__main__":
    main()
