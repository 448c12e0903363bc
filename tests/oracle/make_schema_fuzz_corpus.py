#!/usr/bin/env python3
"""Writes tests/data/guided/schema_fuzz_corpus/: seed inputs for schema_compile_fuzz.

Extreme shapes a client may send (wide tuples, thousands of properties, deep nesting, long
enums, long patterns and names, wide oneOf, long $ref chains) next to ordinary schemas using
each supported keyword, so the fuzzer starts from both. Every seed stays under the 64 KiB the
CI fuzz runs allow (-max_len=65536). Deterministic: a rerun writes the same bytes.
"""
import json
import os

OUT = "tests/data/guided/schema_fuzz_corpus"


def nested(key, depth, leaf):
    """Schema text nested `depth` levels (as text: Python's json recurses per level)."""
    if key == "items":
        head, tail = '{"type":"array","items":', "}"
    else:
        head, tail = '{"type":"object","properties":{"a":', "}}"
    return head * depth + json.dumps(leaf) + tail * depth


def ref_chain(n):
    defs = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(n)}
    defs[f"d{n}"] = {"type": "integer"}
    return {"$defs": defs, "$ref": "#/$defs/d0"}


SEEDS = {
    "wide_prefix_items": {"type": "array", "prefixItems": [{}] * 10000},
    "many_properties": {"type": "object",
                        "properties": {f"p{i}": {"type": "string"} for i in range(2000)}},
    "many_required": {"required": [f"r{i}" for i in range(3000)]},
    "deep_items": nested("items", 2500, {}),
    "deep_properties": nested("properties", 1500, {"type": "null"}),
    "long_enum": {"enum": list(range(6000))},
    "long_pattern": {"type": "string", "pattern": "^" + "[a-c]x?" * 6000 + "$"},
    "long_name": {"properties": {"k" * 30000: {"type": "null"}},
                  "additionalProperties": {"type": "integer"}},
    "wide_one_of": {"oneOf": [{"const": i} for i in range(300)]},
    "ref_chain": ref_chain(300),
    "bounded_properties": {"properties": {f"p{i}": {} for i in range(500)},
                           "maxProperties": 400, "minProperties": 3},
    # The regular layer: key regions, key schemas, intersections, and shapes at its budgets.
    "regular_keys": {
        "type": "object",
        "properties": {"x-id": {"type": "string"}, "Name": {}},
        "required": ["x-id"],
        "patternProperties": {"^x-": {"maxLength": 4}, "[0-9]": {"type": "integer"},
                              "id$": {"type": "string"}},
        "propertyNames": {"pattern": "^[A-Za-z0-9-]+$", "maxLength": 8},
        "additionalProperties": {"type": "boolean"},
    },
    "pattern_with_length": {"type": "array", "items": [
        {"type": "string", "pattern": "[0-9]", "minLength": 2, "maxLength": 5},
        {"type": "string", "format": "ipv4", "pattern": "^10\\.", "maxLength": 12},
        {"type": "string", "format": "duration"}, {"type": "string", "format": "uri-reference"}]},
    "automaton_blowup": {"type": "string", "pattern": "^(a|b)*a(a|b){24}$", "maxLength": 60},
    "many_pattern_schemas": {"patternProperties": {f"k{i}": {"minimum": i} for i in range(12)}},
    "many_atoms": {"propertyNames": {"pattern": "".join(chr(0x4E00 + 2 * i) for i in range(3000)),
                                     "maxLength": 4000}},
    # not as a union of complements, and oneOf compiled with exact negations.
    "negations": {
        "oneOf": [{"required": ["a"]}, {"required": ["a"], "properties": {"a": {"minimum": 1}}}],
        "not": {"enum": ["x", 1, None], "pattern": "a", "maxLength": 3,
                "allOf": [{"type": "integer"}, {"required": ["z"]}]},
    },
    "ordinary_object": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 40},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "email": {"type": "string", "format": "email"},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 3},
            "score": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
        },
        "required": ["name"],
        "additionalProperties": False,
    },
    "combinators": {
        "anyOf": [{"type": "null"}, {"allOf": [{"minimum": 1}, {"type": "integer"}]}],
        "oneOf": [{"type": "integer"}, {"type": "null"}],
        "dependentRequired": {"a": ["b"]},
    },
    "pattern_properties": {"patternProperties": {"^x[0-9]+$": {"type": "boolean"}},
                           "additionalProperties": False},
    # Decimal multiples within bounds (a digit automaton), conditionals, negated numbers.
    "multiples_and_conditionals": {
        "type": "object",
        "properties": {"n": {"multipleOf": 0.25, "exclusiveMinimum": -3.5, "maximum": 120.75},
                       "k": {"type": "integer", "multipleOf": 12, "minimum": 0}},
        "if": {"properties": {"k": {"const": 0}}}, "then": {"required": ["n"]},
        "else": {"not": {"enum": [1, 2.5, "x"]}},
    },
    # Unicode property escapes, opening lookaheads, edge-group anchors, long bounds that
    # bound repetitions instead of intersecting, and allOf branches with their own combinators.
    "properties_and_lookaheads": {
        "type": "object",
        "properties": {
            "key": {"type": "string", "pattern": "^(?!aws:)[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*$",
                    "maxLength": 128},
            "pw": {"type": "string", "pattern": "^(?=.*[a-z])(?=.*\\d)(?!.*--)[\\w-]{8,}$"},
            "name": {"type": "string", "pattern": "(?!^[0-9]+$)([a-zA-Z0-9-_' ']+)"},
            "repo": {"type": "string", "pattern": "^[a-zA-Z0-9._\\-]+(?<!\\.git)$", "maxLength": 100},
            "arn": {"type": "string", "minLength": 20, "maxLength": 2048,
                    "pattern": "(^arn:aws[a-z-]*:kms:[a-z0-9-]+:\\d{12}:key/\\S+$)|(^alias/\\S+$)"},
            "doc": {"type": "string", "pattern": "[\\u0009\\u000A\\u0020-\\u007E\\P{C}]+",
                    "maxLength": 20480},
            "big": {"type": "string", "maxLength": 2147483647},
        },
    },
    "all_of_combinators": {
        "allOf": [{"anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
                  {"anyOf": [{"type": "object"}, {"type": "null"}]},
                  {"oneOf": [{"required": ["c"]}, {"required": ["d"]}]},
                  {"oneOf": [{"required": ["e"]}, {"required": ["f"]}]},
                  {"if": {"required": ["a"]}, "then": {"required": ["g"]}},
                  {"if": {"required": ["b"]}, "else": {"maxProperties": 6}},
                  {"not": {"required": ["h"]}}, {"not": {"anyOf": [{"required": ["i"]}]}}],
        "markdownDescription": "x",
    },
    # uniqueItems: nested unique arrays through $ref (a cycle), tag objects, minItems over an
    # enum, an allOf merging it; refusals (numbers, undeclared keys, too few values); a deep
    # inline nest just inside the depth budget (each level checks the items below it).
    "unique_items": {
        "$defs": {"tree": {"type": "array", "uniqueItems": True, "maxItems": 3,
                           "items": {"anyOf": [{"type": "integer"}, {"$ref": "#/$defs/tree"}]}}},
        "type": "object",
        "properties": {
            "tree": {"$ref": "#/$defs/tree"},
            "tags": {"type": "array", "uniqueItems": True, "items": {
                "type": "object", "additionalProperties": False,
                "properties": {"Key": {"type": "string"}, "Value": {"type": "string"}}}},
            "codes": {"type": "array", "uniqueItems": True, "minItems": 2, "items": {"enum": [1, 2]}},
            "merged": {"allOf": [{"uniqueItems": True}, {"type": "array", "items": {"enum": [1, 2]}}]},
        },
    },
    "unique_items_refused": {"type": "array", "items": {"anyOf": [
        {"type": "array", "uniqueItems": True, "items": {"type": "number"}},
        {"type": "array", "uniqueItems": True, "items": {"type": "object"}},
        {"type": "array", "uniqueItems": True, "minItems": 3, "items": {"enum": ["a", "b"]}}]}},
    "deep_unique_items": nested("items", 120, {"type": "null"}).replace(
        '"items"', '"uniqueItems":true,"items"'),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, schema in SEEDS.items():
        text = schema if isinstance(schema, str) else json.dumps(schema, separators=(",", ":"))
        assert len(text) <= 65536, (name, len(text))
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
