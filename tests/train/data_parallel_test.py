"""Data parallelism: `afm-train pretrain --nproc 2` with one micro-batch per rank computes the
same steps as one process accumulating two micro-batches (rank r's micro-batch m is global
micro-batch m * world + r), so the two runs' losses agree up to float summation order.

Two local ranks over Gloo on the CPU. Needs numpy."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from resume_after_kill_test import TRAINER, losses, write_config, write_shards  # noqa: E402


def set_accum(config, accum):
    with open(config) as f:
        c = json.load(f)
    c["optim"]["grad_accum"] = accum
    with open(config, "w") as f:
        json.dump(c, f)


def run(config, out, nproc):
    cmd = [TRAINER, "pretrain", "--config", config, "--out", out, "--device", "cpu", "-t", "1",
           "--nproc", str(nproc)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        shards = os.path.join(tmp, "shards")
        write_shards(shards)
        one, two = os.path.join(tmp, "one.json"), os.path.join(tmp, "two.json")
        write_config(one, shards, steps=20)
        write_config(two, shards, steps=20)
        set_accum(one, 2)
        set_accum(two, 1)
        run(one, os.path.join(tmp, "one"), 1)
        run(two, os.path.join(tmp, "two"), 2)
        a, b = losses(os.path.join(tmp, "one")), losses(os.path.join(tmp, "two"))
        assert sorted(a) == sorted(b) == list(range(1, 21)), (sorted(a), sorted(b))
        worst = max(abs(a[s] - b[s]) / abs(a[s]) for s in a)
        assert worst < 1e-4, f"relative loss difference {worst:.2e}"
        assert a[20] < 0.8 * a[1], "the runs did not learn"
        print(f"20 steps, 2 ranks vs 1 rank x 2 micro-batches: max relative difference "
              f"{worst:.1e}")


if __name__ == "__main__":
    main()
