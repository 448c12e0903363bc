#!/usr/bin/env python3
"""Writes tests/data/guided/mask_fuzz_corpus/: seed inputs for guided_mask_fuzz.

Each seed is a JSON Schema, a zero byte, then choice bytes (one per step: which allowed token
the walk takes; 0xff rolls one back). The schemas use what the mask layer treats specially:
string content and digit runs (loops), declared keys beside free ones (key entries), and
bounded repetitions (counted loops: maxLength with and without minLength, email and hostname
atoms, counted pattern classes), property escapes, lookaheads, allOf combinators, and
uniqueItems (finite item languages that run out, tag objects, unique arrays nested), and
patterns whose rules would be ambiguous (compiled through their automaton).
Deterministic: a rerun writes the same bytes.
"""
import base64
import json
import os
import random

OUT = "tests/data/guided/mask_fuzz_corpus"

SCHEMAS = {
    "email_hostname": {"type": "object",
                       "properties": {"to": {"type": "string", "format": "email"},
                                      "host": {"type": "string", "format": "hostname"}},
                       "required": ["to", "host"]},
    "max_length": {"type": "array", "items": {"type": "string", "maxLength": 5}},
    "min_max_length": {"type": "object",
                       "properties": {"a": {"type": "string", "minLength": 3, "maxLength": 40},
                                      "b": {"type": "string", "maxLength": 70}}},
    "counted_pattern": {"type": "string", "pattern": "^[a-z]{2,9}(-[a-z0-9]{1,5}){0,3}$"},
    "multi_byte_copies": {"type": "string", "pattern": "^([0-9]{3},){0,6}[0-9]{1,3}$"},
    "keys": {"type": "object",
             "properties": {"alpha": {"type": "integer"}, "al": {"type": "boolean"},
                            "beta": {"type": "string"}},
             "additionalProperties": {"type": "number"}},
    "any": True,
    # Property escapes and opening lookaheads (regular layer), bounded repetitions that
    # replace an automaton (counted repetition), an allOf of combinators.
    "properties_lookaheads": {"type": "object", "properties": {
        "k": {"type": "string", "pattern": "^(?!aws:)[\\p{L}\\p{N}_.:/=+\\-@ ]*$", "maxLength": 12},
        "t": {"type": "string", "pattern": "^[\\p{Lu}\\p{Nd}]+$", "maxLength": 9},
        "p": {"type": "string", "pattern": "^(?=.*[0-9])\\P{C}{3,6}$"},
        "b": {"type": "string", "pattern": "(?!^[0-9]+$)[a-z0-9.]+(?<!\\.)$", "maxLength": 8}}},
    "all_of": {"allOf": [{"anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
                         {"oneOf": [{"required": ["c"]}, {"required": ["d"]}]},
                         {"not": {"required": ["e"]}}, {"not": {"required": ["f"]}}],
               "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"},
                              "c": {"const": 1}, "d": {"const": 2}}},
    "unique_items": {"type": "object", "properties": {
        "e": {"type": "array", "uniqueItems": True, "items": {"enum": ["a", "ab", "b"]}},
        "i": {"type": "array", "uniqueItems": True, "items": {"type": "integer", "minimum": 0,
                                                             "maximum": 12}},
        "t": {"type": "array", "uniqueItems": True, "items": {
            "type": "object", "additionalProperties": False, "required": ["k"],
            "properties": {"k": {"type": "string", "maxLength": 2},
                           "v": {"type": "array", "uniqueItems": True, "maxItems": 2,
                                 "items": {"type": "boolean"}}}}}}},
    # Ambiguous rules (a loop inside a repetition, searched branches): through the automaton.
    "ambiguous_patterns": {"type": "object", "properties": {
        "a": {"type": "string", "pattern": "(.*a){3}"},
        "s": {"type": "string", "pattern": "ab|b.c"},
        "l": {"type": "string", "pattern": "^(x|xy|,)*(y|yx)*$", "maxLength": 9}}},
}


# Inputs the fuzzer found, kept as they were (base64 of the whole input).
FOUND = {
    # A counted loop whose check led along a path the matcher refuses (MaskCache::Walk::replay
    # must give the fill up to the exact walk instead of failing a check).
    "counted_loop_refused_path": "eyJ0eXBlIjoic3RyaW5nIiwicGF0dGVybiI6Il5bYS16XXsyLDl9KC1bYS16MC15XXsxLDV9KXswLDN9JiJ9AK4iOnsicmVxdWlyZWQiOlsiZSJdfX0seyJub3QiOnsicmVxdWlyZWQiOlvXU9bwtv8Q3lzBDA1JJkRQX23PZvA0DGnA3gyMeEi9p6d7ZKQ1zzhVc4wX",
    # Two repetitions with equal counts left but different bodies (the outer group in its first
    # copy, the inner class in the outer's last copy) had equal state keys, so the shared cache
    # reused one's successors at the other (ByteMatcher::state_key now names the body).
    "equal_counts_other_body": "eyJ0eXBlIjoic3RyaW5nIiwicGF0dGVybiI6Il5bYS16XXsyLDl9KC1bYS16MC15XXsxLDV9KXswLDN9JiJ9AK4iOnsicmVxdWlyZWQiOlthLXpdezIsOX0oLVthLXowLXldezEsNX0pezAsM30mIn0AriI6eyJyZWSkNc84VXOMFw==",
    "equal_counts_other_body_rollback": "eyJ0eXBlIjoic3RyaW5nIiwicGF0dGVybiI6Il5bYS16XXsyLDl9KC1bYS16MC15XXsxLDV9KXswLDN9JiJ9AK4iOnsccmVxdWlyZWQiOlv/////////JyJub3QiOnsicmVxdWlyZWQiOluSU9bwtv9AEC3eXMEMDUkmRFBfbc9m8DQMacDeDIx4SL2np3tkpDXPOFVzjBc=",
    # A hundred empty alternatives: each was a copy of "any characters" in every Earley set
    # (regex::parse now drops repeated alternatives; a searched branch found in every string
    # stands alone).
    "repeated_empty_alternatives": "eyJ0eXBlIjoic3RyaW5nIiwicGF0dGVybiI6Il58fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHx8fHxHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0dHR0d8fHx8fHx8fHx8fHx8fHx8W2Etel17NCw5fSgtW2Etel0wLXkxeyw1fSl7MCwzfSYifQCuIjr9////DAAAABkAAAAAAAAAFw==",
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, b64 in FOUND.items():
        with open(os.path.join(OUT, name + ".bin"), "wb") as f:
            f.write(base64.b64decode(b64))
    rng = random.Random(7)
    for name, schema in SCHEMAS.items():
        choices = bytes(rng.choice([rng.randrange(255), 0xff]) if rng.random() < 0.1
                        else rng.randrange(255) for _ in range(96))
        data = json.dumps(schema, separators=(",", ":")).encode() + b"\0" + choices
        with open(os.path.join(OUT, name + ".bin"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
