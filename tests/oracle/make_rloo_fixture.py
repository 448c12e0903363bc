#!/usr/bin/env python3
"""Writes tests/data/rl/rloo_fixture.json: a fixed RLOO batch and the loss, advantages,
per-sample KL and the gradient of the loss with respect to the policy log-probabilities,
computed here with NumPy in float64 from the formulas of src/train/rloo.h, independently of
libtorch. tests/train/rloo_test.cpp checks src/train/rloo.cpp against it.

Usage: python3 tests/oracle/make_rloo_fixture.py [--out tests/data/rl/rloo_fixture.json]
"""
import argparse
import json
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rloo(lp, ref, behaviour, mask, rewards, groups, beta, max_ratio):
    b = lp.shape[0]
    kl = ((lp - ref) * mask).sum(1)
    shaped = rewards - beta * kl
    adv = np.zeros(b)
    for i in range(b):
        others = [j for j in range(b) if j != i and groups[j] == groups[i]]
        adv[i] = shaped[i] - np.mean(shaped[others]) if others else 0.0
    weight = np.minimum(np.exp(lp - behaviour), max_ratio)
    loss = -(adv * (mask * weight * lp).sum(1)).sum() / b
    grad = -(adv[:, None] * mask * weight) / b  # the weight is treated as a constant
    return loss, adv, kl, grad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "rl", "rloo_fixture.json"))
    args = ap.parse_args()
    rng = np.random.default_rng(20261125)
    b, t = 7, 6
    groups = np.array([0, 0, 0, 1, 1, 1, 2])  # the last sample is alone in its group
    lp = -rng.uniform(0.05, 3.0, (b, t))
    ref = lp + rng.normal(0, 0.3, (b, t))
    behaviour = lp + rng.normal(0, 0.6, (b, t))  # some ratios above the truncation
    mask = (rng.uniform(size=(b, t)) < 0.75).astype(float)
    mask[:, 0] = 0  # prompt positions
    rewards = rng.uniform(0, 1, b).round(3)
    beta, max_ratio = 0.1, 1.5
    loss, adv, kl, grad = rloo(lp, ref, behaviour, mask, rewards, groups, beta, max_ratio)
    out = {"kl_beta": beta, "max_ratio": max_ratio, "groups": groups.tolist(),
           "logprobs": lp.tolist(), "ref_logprobs": ref.tolist(),
           "behaviour_logprobs": behaviour.tolist(), "mask": mask.tolist(),
           "rewards": rewards.tolist(), "loss": loss, "advantages": adv.tolist(),
           "kl": kl.tolist(), "grad_logprobs": grad.tolist()}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out + ".tmp", "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    os.replace(args.out + ".tmp", args.out)
    print(f"wrote {args.out}: loss {loss:.6f}")


if __name__ == "__main__":
    main()
