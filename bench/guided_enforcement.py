"""Coverage and enforcement for bench/guided_bench.py: does each engine's own output validate?

For every schema an engine compiles, one instance is sampled from that engine's own masks (a
seeded random walk: each step picks, with probability STRUCTURAL, among allowed tokens made only
of JSON punctuation and whitespace, else uniformly among all allowed tokens; EOS ends the walk
when allowed and picked), decoded with HF `tokenizers`, and checked with the `jsonschema`
package on exact decimals (bench/schema_oracle.py: the schema's own draft, formats asserted). A walk that reaches the token limit counts
as unfinished, not as an instance. The peers' engines are guided_bench's classes; afm's
instances are the ones its driver sampled for the timing tasks.
"""
import json
import random

import numpy as np

import schema_oracle

STRUCTURAL = 0.2
PUNCTUATION = set('"}],: \n\t')


def allowed_ids(mask):
    """Token ids set in a (1, words) int32 bitmask, bit t & 31 of word t >> 5."""
    bits = np.unpackbits(np.ascontiguousarray(mask).view(np.uint8), bitorder="little")
    return np.nonzero(bits)[0]


def structural_tokens(hf, vocab_size):
    """A boolean array over the vocabulary: tokens made only of JSON punctuation/whitespace."""
    out = np.zeros(vocab_size, dtype=bool)
    for t in range(vocab_size):
        piece = hf.decode([t])
        out[t] = bool(piece) and set(piece) <= PUNCTUATION
    return out


def walk(engine, compiled, rng, structural, eos, max_tokens):
    """Tokens of one sampled instance, or None when the walk reached max_tokens. Vectorised:
    inside a string most of a 150k vocabulary is allowed at every step."""
    m = engine.matcher(compiled)
    tokens = []
    for _ in range(max_tokens):
        engine.time_mask(m)
        ids = allowed_ids(engine.mask)
        ids = ids[ids < len(structural)]  # masks are padded to 32 bits; some set the padding
        eos_allowed = eos < len(structural) and bool(np.any(ids == eos))
        ids = ids[ids != eos]
        if eos_allowed and (len(ids) == 0 or rng.random() < STRUCTURAL):
            return tokens
        if len(ids) == 0:
            return tokens
        pool = ids[structural[ids]] if rng.random() < STRUCTURAL else ids[:0]
        candidates = pool if len(pool) else ids
        token = int(candidates[rng.randrange(len(candidates))])
        if not engine.allowed(m, token):
            return tokens
        tokens.append(token)
    return None


def verdict(schema_text, text):
    """'valid', 'invalid' or 'not JSON' for one instance."""
    try:
        instance = schema_oracle.loads(text)
    except json.JSONDecodeError:
        return "not JSON"
    return "valid" if schema_oracle.validator(schema_text).is_valid(instance) else "invalid"


def enforcement(engines, schemas, afm_texts, hf, eos, max_tokens, seed):
    """Per engine: compiled, instances, invalid (not JSON included), unfinished, examples."""
    vocab_size = hf.get_vocab_size(with_added_tokens=True)
    structural = structural_tokens(hf, vocab_size)
    rows = {"afm": {"compiled": 0, "instances": 0, "invalid": 0, "unfinished": 0, "examples": []}}
    for name, schema_text in schemas:
        text = afm_texts.get(name)
        if text is None:
            continue
        row = rows["afm"]
        row["compiled"] += 1
        row["instances"] += 1
        if verdict(schema_text, text) != "valid":
            row["invalid"] += 1
            row["examples"].append(f"{name}: {text[:120]}")
    for engine in engines:
        row = rows.setdefault(engine.name, {"compiled": 0, "instances": 0, "invalid": 0,
                                            "unfinished": 0, "examples": []})
        rng = random.Random(seed)
        for name, schema_text in schemas:
            try:
                compiled = engine.compile(schema_text)
            except Exception:  # noqa: BLE001 (peers raise several kinds)
                continue
            row["compiled"] += 1
            tokens = walk(engine, compiled, rng, structural, eos, max_tokens)
            if tokens is None:
                row["unfinished"] += 1
                continue
            text = hf.decode(tokens)
            row["instances"] += 1
            if verdict(schema_text, text) != "valid":
                row["invalid"] += 1
                row["examples"].append(f"{name}: {text[:120]}")
    return rows
