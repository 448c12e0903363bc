"""The GPU scripts, dry-run on the CPU (docs/compression.md, "Against twins trained the same
way"; docs/models.md): a GPU is lent for minutes, so `scripts/gpu_qat`, `scripts/gpu_recovery`
and `scripts/gpu_sft` must work the first time there. Here each runs one step per run on the
shipped model with the CPU trainer, from .tar.xz archives as they travel: gpu_qat writes the
2-bit model and its float twin in both types; gpu_recovery unpacks an .xz residual and writes
both adapters, which the engine loads; run again on the same folder (a GPU run's checkpoints
brought back), it resumes, trains nothing and writes the adapters again; gpu_sft trains one run
with pretraining text mixed in and its control on conversations alone, and exports both."""
import json
import lzma
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qat_cli_test import tensor_types, write_conversations, write_shards  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(os.environ.get("AFM_BUILD_DIR", os.path.join(ROOT, "build")))
AFM = os.path.join(BUILD, "afm")
TRAIN = os.path.join(BUILD, "afm-train")
BASE = os.path.join(ROOT, "models", "afm-device-21m.gguf")
DRY_RUN = ["--steps", "1", "--batch-size", "2", "--device", "cpu", "--threads", "1",
           "--trainer", TRAIN]


def run(args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        raise AssertionError(f"{args} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p.stdout


def archive(folder):
    """folder.tar.xz holding the folder, as the scripts' callers send data to a GPU machine."""
    path = folder + ".tar.xz"
    with tarfile.open(path, "w:xz") as tar:
        tar.add(folder, arcname=os.path.basename(folder))
    return path


def inputs(tmp):
    jsonl = os.path.join(tmp, "sft.jsonl")
    write_conversations(jsonl, 60)
    sft = os.path.join(tmp, "sft")
    run([AFM, "data", "sft", "--model", BASE, "--input", jsonl, "--out", sft,
         "--val-fraction", "0.1"])
    shards = os.path.join(tmp, "shards")
    write_shards(shards, 20000)
    return archive(sft), archive(shards)


def trained_steps(log):
    with open(log) as f:
        return [r["step"] for r in map(json.loads, f) if "loss" in r]


def test_gpu_qat(tmp, sft, shards):
    out = os.path.join(tmp, "qat")
    run([os.path.join(ROOT, "scripts", "gpu_qat"), "--base", BASE, "--data", sft,
         "--shards", shards, "--out", out, *DRY_RUN])
    assert set(tensor_types(os.path.join(out, "qat.gguf"))) == {"f32", "q2_b", "q4_0"}
    assert set(tensor_types(os.path.join(out, "float.gguf"))) == {"f32"}
    assert set(tensor_types(os.path.join(out, "float.q8_0.gguf"))) == {"f32", "q8_0"}
    for name in ("qat", "float"):
        assert trained_steps(os.path.join(out, name, "log.jsonl")) == [1], name


def test_gpu_recovery(tmp, sft, shards):
    residual = os.path.join(tmp, "residual.gguf")
    run([TRAIN, "svd-split", "--base", BASE, "--rank", "4", "--out", residual])
    compressed = os.path.join(tmp, "residual-astc.gguf")
    run([AFM, "quantize", residual, compressed, "--type", "astc6x6", "--embedding-type", "q8_0",
         "--threads", "2", "--json"])
    with open(compressed, "rb") as f_in, lzma.open(compressed + ".xz", "wb") as f_out:
        shutil.copyfileobj(f_in, f_out)
    out = os.path.join(tmp, "recovery")
    args = [os.path.join(ROOT, "scripts", "gpu_recovery"), "--base", BASE,
            "--compressed", compressed + ".xz", "--data", sft, "--shards", shards,
            "--out", out, "--rank", "4", *DRY_RUN]
    run(args)
    for name, base in (("recovery", compressed), ("twin", BASE)):
        assert trained_steps(os.path.join(out, name, "log.jsonl")) == [1], name
        gen = run([AFM, "generate", "-m", base, "--adapter", os.path.join(out, name + ".gguf"),
                   "-p", "What is 12 plus 30?", "-n", "2", "--ignore-eos", "-t", "1", "--json"])
        assert len(json.loads(gen)["tokens"]) == 2, name
    # As after a GPU run: the adapters are gone, the checkpoints stay; the same command resumes.
    for name in ("recovery", "twin"):
        os.remove(os.path.join(out, name + ".gguf"))
        os.remove(os.path.join(out, name, "adapter.gguf"))
    run(args)
    for name in ("recovery", "twin"):
        assert os.path.exists(os.path.join(out, name + ".gguf")), name
        assert trained_steps(os.path.join(out, name, "log.jsonl")) == [1], name


def start_record(log):
    with open(log) as f:
        return next(r for r in map(json.loads, f) if r.get("event") == "start")


def test_gpu_sft(tmp, sft, shards):
    out = os.path.join(tmp, "sft_runs")
    run([os.path.join(ROOT, "scripts", "gpu_sft"), "--base", BASE, "--data", sft,
         "--shards", shards, "--out", out, *DRY_RUN, "mixed:1e-4:1e-5", "alone:1e-4:1e-5:::1"])
    for name in ("mixed", "alone"):
        assert trained_steps(os.path.join(out, name, "log.jsonl")) == [1], name
        assert set(tensor_types(os.path.join(out, name + ".gguf"))) == {"f32", "q8_0"}, name
    # Only the mixed run reads the text windows (their tokens are counted at the start).
    assert start_record(os.path.join(out, "mixed", "log.jsonl")).get("train_tokens") == 20000
    assert "train_tokens" not in start_record(os.path.join(out, "alone", "log.jsonl"))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        sft, shards = inputs(tmp)
        for test in (test_gpu_qat, test_gpu_recovery, test_gpu_sft):
            test(tmp, sft, shards)
            print(f"ok {test.__name__}")
    return True


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
