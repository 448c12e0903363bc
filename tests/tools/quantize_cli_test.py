"""`afm quantize` on the shipped model: which tensors take which type (matrices the --type,
the embedding its own type, norms kept, --keep honoured), the JSON summary agrees with
`afm info --json` of the output, a q8_0 model re-encoded through f32 comes back byte for byte,
the quantized file runs (q2_b and astc6x6 too, scoring what their decoded weights score), and bad input is a one-line error that leaves an existing output
untouched. AFM_BIN is set by CTest.
"""
import hashlib
import json
import os
import subprocess
import tempfile

AFM = os.environ["AFM_BIN"]
MODEL = "models/afm-device-21m.gguf"


def run(*args, timeout=300):
    return subprocess.run([AFM, *args], capture_output=True, text=True, errors="replace",
                          timeout=timeout)


def ok(*args):
    r = run(*args)
    assert r.returncode == 0, (args, r.returncode, r.stderr)
    return r.stdout


def one_line_error(r, code, *needles):
    assert r.returncode == code, (r.returncode, r.stderr)
    assert r.stderr.count("\n") == 1, r.stderr
    for n in needles:
        assert n in r.stderr, (n, r.stderr)


def quantize(src, dst, *options):
    return json.loads(ok("quantize", src, dst, "--json", *options))


def tensor_types(path):
    """name -> type of every tensor, read with the project's GGUF reader through `afm info`."""
    info = json.loads(ok("info", path, "--json"))
    return info["tensor_types"]


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_types_per_tensor(tmp):
    out = os.path.join(tmp, "q4.gguf")
    s = quantize(MODEL, out, "--type", "q4_0")
    types = tensor_types(out)
    assert set(types) == {"f32", "q4_0"}, types  # norms stay f32, every matrix is q4_0
    assert types["q4_0"]["count"] == s["tensor_types"]["q4_0"]["tensors"], (types, s)
    assert types["q4_0"]["bytes"] == s["tensor_types"]["q4_0"]["bytes"], (types, s)
    assert s["f16_fallbacks"] == 0 and s["converted"] == types["q4_0"]["count"], s
    assert os.path.getsize(out) < 0.6 * os.path.getsize(MODEL)

    mixed = os.path.join(tmp, "mixed.gguf")
    s = quantize(MODEL, mixed, "--type", "q4_0", "--embedding-type", "q8_0", "--keep", "attn_q.")
    types = tensor_types(mixed)
    layers = json.loads(ok("info", MODEL, "--json"))["hyperparameters"]["block_count"]
    # The embedding (its own type, q8_0 already) and every attn_q matrix stay q8_0, copied.
    assert types["q8_0"]["count"] == 1 + layers, types
    assert s["kept"] == types["f32"]["count"] + layers + 1, s


def test_round_trip_through_f32(tmp):
    wide = os.path.join(tmp, "f32.gguf")
    back = os.path.join(tmp, "back.gguf")
    quantize(MODEL, wide, "--type", "f32")
    assert set(tensor_types(wide)) == {"f32"}
    quantize(wide, back, "--type", "q8_0")
    assert sha256(back) == sha256(MODEL), "q8_0 -> f32 -> q8_0 changed the file"


def test_quantized_model_runs(tmp):
    out = os.path.join(tmp, "emb4.gguf")
    quantize(MODEL, out, "--type", "q8_0", "--embedding-type", "q4_0")
    got = json.loads(ok("generate", "-m", out, "-p", "Hello", "-n", "4", "--temp", "0",
                        "--ignore-eos", "--json"))
    assert len(got["tokens"]) == 4, got


def perplexity(model, text, chunks=8):
    got = json.loads(ok("perplexity", "-m", model, "-f", text, "--chunk", "256", "--chunks",
                        str(chunks), "--json"))
    return got["perplexity"]


def test_two_bit_model(tmp):
    """q2_b (balanced 2-bit): every matrix takes 34 bytes per 128 weights, the file runs, and
    its kernels compute what its decoded values do: the model read back as f32 (afm quantize
    decodes q2_b with the reference codec) scores the same perplexity within the int8
    activation rounding of the quantized path."""
    q2 = os.path.join(tmp, "q2.gguf")
    s = quantize(MODEL, q2, "--type", "q2_b")
    types = tensor_types(q2)
    assert set(types) == {"f32", "q2_b"}, types
    t = s["tensor_types"]["q2_b"]
    assert t["bytes"] * 128 == t["elements"] * 34, t  # 2.125 bits per weight
    assert s["f16_fallbacks"] == 0, s
    decoded = os.path.join(tmp, "q2-f32.gguf")
    quantize(q2, decoded, "--type", "f32")
    text = "/usr/share/common-licenses/GPL-3"
    want, got = perplexity(decoded, text), perplexity(q2, text)
    assert abs(got / want - 1) < 0.01, (got, want)
    # Sanity of the scale: 2-bit rounding costs the 21.6M model quality, but not everything.
    assert got < 10 * perplexity(MODEL, text), got
    out = json.loads(ok("generate", "-m", q2, "-p", "Hello", "-n", "4", "--temp", "0",
                        "--ignore-eos", "--json"))
    assert len(out["tokens"]) == 4, out


def test_astc_model(tmp):
    """astc6x6: every matrix takes one 16-byte block and one f16 offset per 6 x 6 tile, the
    embedding keeps its type, the file runs, and the fused kernels compute what the decoded
    weights do (the model read back as f32 through afm's decoder scores the same perplexity;
    the float path has no activation rounding, so the match is tight). The report's
    minimum shift is kept as an option and costs far more than the power-of-two one."""
    astc = os.path.join(tmp, "astc.gguf")
    s = quantize(MODEL, astc, "--type", "astc6x6", "--threads", "2")
    types = tensor_types(astc)
    assert set(types) == {"f32", "q8_0", "astc6x6"}, types  # the embedding stays q8_0
    assert types["q8_0"]["count"] == 1, types
    t = s["tensor_types"]["astc6x6"]
    # 384- and 1024-wide matrices: 64 and 171 (padded) tiles a row, 18 bytes a tile.
    assert 4.0 <= t["bytes"] * 8 / t["elements"] < 4.05, t
    decoded = os.path.join(tmp, "astc-f32.gguf")
    quantize(astc, decoded, "--type", "f32")
    text = "/usr/share/common-licenses/GPL-3"
    want, got = perplexity(decoded, text), perplexity(astc, text)
    assert abs(got / want - 1) < 1e-3, (got, want)
    base = perplexity(MODEL, text)
    assert got < 1.5 * base, (got, base)
    low = os.path.join(tmp, "astc-min.gguf")
    quantize(MODEL, low, "--type", "astc6x6", "--astc-offset", "min", "--threads", "2")
    assert perplexity(low, text) > 2 * got
    one_line_error(run("quantize", MODEL, os.path.join(tmp, "x.gguf"), "--type", "astc6x6",
                       "--astc-offset", "middle"), 2, "--astc-offset")


def test_errors_leave_the_output_untouched(tmp):
    out = os.path.join(tmp, "keep.gguf")
    with open(out, "wb") as f:
        f.write(b"previous contents")
    one_line_error(run("quantize", MODEL, out, "--type", "q5_k"), 1, "--type", "q5_k")
    one_line_error(run("quantize", MODEL, out, "--type", "q4_0", "--embedding-type", "x"), 1,
                   "--embedding-type")
    one_line_error(run("quantize", os.path.join(tmp, "absent.gguf"), out, "--type", "q4_0"), 1,
                   "absent.gguf")
    cut = os.path.join(tmp, "cut.gguf")
    with open(MODEL, "rb") as src, open(cut, "wb") as dst:
        dst.write(src.read(4096))
    one_line_error(run("quantize", cut, out, "--type", "q4_0"), 1, "cut.gguf")
    with open(out, "rb") as f:
        assert f.read() == b"previous contents"
    assert sorted(os.listdir(tmp)) == ["cut.gguf", "keep.gguf"], os.listdir(tmp)
    one_line_error(run("quantize", MODEL, out), 2, "--type")
    assert "--embedding-type" in ok("quantize", "--help")


def main():
    for test in (test_types_per_tensor, test_round_trip_through_f32, test_quantized_model_runs,
                 test_two_bit_model, test_astc_model, test_errors_leave_the_output_untouched):
        with tempfile.TemporaryDirectory() as tmp:
            test(tmp)
        print(f"ok {test.__name__}")


if __name__ == "__main__":
    main()
