"""`afm schema compile|sample` against the `jsonschema` package (the oracle).

(a) Hand-written schemas: every walk must end, and every sampled instance must validate.
(b) The first FILES_PER_FOLDER schemas of each jsonschemabench folder (shared data next to the
    repository; skipped with a printed reason when absent): each schema either compiles or
    fails with an error naming a keyword; instances sampled from the ones that compile must
    parse as JSON and validate (formats asserted). Walks that reach --max-tokens are counted,
    never printed as instances. Zero invalid instances are allowed.
(c) The same for every jsonschemabench schema (up to NARROWED_PER_FOLDER per folder) that uses
    a keyword the compiler narrows or expands rather than translates one to one (oneOf with
    overlapping branches, property dependencies, `not`, patternProperties, the legacy tuple
    form of items with additionalItems): the oracle for
    those rules.
(d) The same for every jsonschemabench schema (up to REGULAR_PER_FOLDER per folder) that goes
    through the regular layer: propertyNames, a pattern or format with length bounds, or a
    format the layer added (ipv6, uri-reference, iri, duration, json-pointer...).
Prints the compile coverage per folder (docs/guided.md quotes it).
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema

AFM = os.environ["AFM_BIN"]
ROOT = Path(os.environ.get("AFM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(ROOT / "bench"))
import schema_oracle  # noqa: E402  (exact decimals: multipleOf 0.01 is not a float question)
BIG_VOCAB = ROOT / "tests/data/tokenizer/qwen2/tokenizer.json"  # 4000 tokens
SMALL_VOCAB = ROOT / "tests/data/hf/qwen2/tokenizer.json"  # 400 tokens: cheaper masks
BENCH = ROOT.parent / "shared/data/jsonschemabench/data"
FILES_PER_FOLDER = 30
BENCH_SAMPLED_PER_FOLDER = 30
NARROWED_PER_FOLDER = 60
NARROWED_KEYWORDS = ('"oneOf"', '"dependencies"', '"dependentRequired"', '"dependentSchemas"',
                     '"not"', '"patternProperties"', '"additionalItems"')
REGULAR_PER_FOLDER = 30
REGULAR_TEXT = re.compile(r'"propertyNames"|"format"\s*:\s*"(ipv6|uri-reference|iri|iri-reference|'
                          r'duration|json-pointer|relative-json-pointer|url|byte)"')

HAND_WRITTEN = [
    {"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 6},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "é"]}, "maxItems": 3}},
     "required": ["name", "age"], "additionalProperties": False},
    {"type": "array", "prefixItems": [{"type": "boolean"}, {"type": "null"}],
     "items": {"type": "number", "minimum": -1.5, "maximum": 2.25}, "maxItems": 4},
    {"type": "array", "maxItems": 4, "items": {"anyOf": [
        {"type": "number", "multipleOf": 0.01, "minimum": 0, "maximum": 20},
        {"type": "integer", "multipleOf": 4, "minimum": 16, "maximum": 100},
        {"type": "number", "multipleOf": 0.25, "exclusiveMinimum": -3.5}]}},
    {"type": "array", "maxItems": 4, "items": {
        "type": "object", "properties": {"kind": {"enum": ["a", "b", 3]}, "x": {"type": "integer"}},
        "required": ["kind"], "additionalProperties": False,
        "if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["x"]},
        "else": {"not": {"required": ["x"]}, "properties": {"kind": {"not": {"const": 3}}}}}},
    {"anyOf": [{"type": "integer", "multipleOf": 7},
               {"const": {"k": [1, "x"]}}, {"type": "string", "format": "date"}]},
    {"type": "string", "pattern": "^[a-c]{2,4}-[0-9]{1,3}$"},
    {"type": "string", "format": "uuid"},
    {"$defs": {"node": {"type": "object", "properties": {
        "v": {"type": "integer", "minimum": 0, "maximum": 9},
        "next": {"$ref": "#/$defs/node"}}, "required": ["v"], "additionalProperties": False}},
     "$ref": "#/$defs/node"},
    {"type": "object", "properties": {"id": {"type": "string", "format": "uuid"},
                                      "when": {"type": "string", "format": "date-time"}},
     "required": ["id", "when"], "additionalProperties": False},
    # The regular layer: key regions, key schemas, intersections, the added formats.
    {"type": "object", "properties": {"x-id": {"type": "string", "maxLength": 3}},
     "patternProperties": {"^x-": {"type": "string"}, "[0-9]": {"type": "integer"}},
     "additionalProperties": {"type": "boolean"}, "maxProperties": 4},
    {"type": "object", "propertyNames": {"pattern": "^[a-z]{1,4}$"},
     "additionalProperties": {"type": "string", "pattern": "[0-9]", "maxLength": 3}},
    {"type": "array", "maxItems": 4, "items": {"anyOf": [
        {"type": "string", "format": "ipv6"}, {"type": "string", "format": "uri-reference"},
        {"type": "string", "format": "duration"}, {"type": "string", "format": "json-pointer"},
        {"type": "string", "format": "relative-json-pointer"},
        {"type": "string", "format": "date-time", "maxLength": 22}]}},
    # `not` as a union of complements.
    {"type": "object", "properties": {"a": {"type": "integer", "not": {"minimum": 5}},
                                      "b": {"type": "string", "not": {"pattern": "^[a-m]"}},
                                      "c": {"not": {"type": ["string", "object", "array"]}}},
     "additionalProperties": False, "not": {"required": ["a", "b"]}},
    # allOf branches with their own anyOf / oneOf / if / not (merged as a conjunction).
    {"type": "object", "additionalProperties": False, "properties": {
        "k": {"enum": ["a", "b", "c", 1, 2]}, "n": {"type": "integer", "minimum": 0, "maximum": 9}},
     "allOf": [{"anyOf": [{"required": ["k"]}, {"required": ["n"]}]},
               {"anyOf": [{"properties": {"k": {"type": "string"}}}, {"maxProperties": 1}]}]},
    {"type": "object", "additionalProperties": False, "properties": {
        "a": {"type": "integer", "minimum": 0, "maximum": 9}, "b": {"type": "boolean"},
        "c": {"const": "x"}, "d": {"const": "y"}},
     "allOf": [{"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
               {"oneOf": [{"required": ["c"]}, {"required": ["d"]}]}]},
    {"type": "object", "additionalProperties": False, "properties": {
        "k": {"enum": ["a", "b"]}, "n": {"type": "integer", "minimum": 0, "maximum": 9},
        "m": {"type": "boolean"}},
     "allOf": [{"if": {"required": ["n"]}, "then": {"properties": {"n": {"not": {"const": 3}}}}},
               {"if": {"required": ["k"]}, "then": {"properties": {"n": {"maximum": 5}}},
                "else": {"required": ["n"]}},
               {"not": {"required": ["k", "m"]}},
               {"not": {"anyOf": [{"required": ["m", "n"]},
                                  {"properties": {"k": {"const": "b"}}, "required": ["k"]}]}}]},
    # uniqueItems (unique_items.h): a finite item language that runs out, tag objects, texts
    # that are prefixes of each other, minItems over an enum, arrays as elements, numbers.
    {"type": "object", "additionalProperties": False, "required": ["tags", "ids", "codes", "sets"],
     "properties": {
        "tags": {"type": "array", "uniqueItems": True, "items": {
            "type": "object", "additionalProperties": False, "required": ["Key", "Value"],
            "properties": {"Key": {"enum": ["env", "team"]}, "Value": {"type": "boolean"}}}},
        "ids": {"type": "array", "uniqueItems": True, "maxItems": 6,
                "items": {"type": "string", "pattern": "^[ab]{1,2}$"}},
        "codes": {"type": "array", "uniqueItems": True, "minItems": 2,
                  "items": {"enum": [1, 2, 3]}},
        "sets": {"type": "array", "uniqueItems": True, "items": {
            "type": "array", "maxItems": 2, "items": {"type": "boolean"}}},
        "weights": {"type": "array", "uniqueItems": True, "items": {"type": "number", "minimum": 0}},
        "deltas": {"type": "array", "uniqueItems": True, "items": {"type": "number"}}}},
]


def run(args, timeout=60):
    return subprocess.run([AFM, "schema", *args], capture_output=True, timeout=timeout)


def check_instances(schema, stdout, where, failures):
    validator = schema_oracle.validator(schema)
    lines = stdout.decode("utf-8").split("\n")[:-1]
    for line in lines:
        try:
            instance = schema_oracle.loads(line)
        except json.JSONDecodeError as e:
            failures.append(f"{where}: not JSON ({e}): {line[:200]}")
            continue
        error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
        if error is not None:
            failures.append(f"{where}: invalid instance ({error.message[:200]}): {line[:200]}")
    return len(lines)


def hand_written(failures, tmp):
    for i, schema in enumerate(HAND_WRITTEN):
        path = tmp / f"hand{i}.json"
        path.write_text(json.dumps(schema))
        r = run(["sample", "--schema", str(path), "--tokenizer", str(BIG_VOCAB), "--n", "8",
                 "--seed", str(i), "--max-tokens", "4000"])
        if r.returncode != 0:
            failures.append(f"hand-written {i}: exit {r.returncode}: {r.stderr.decode()[-300:]}")
        if check_instances(schema, r.stdout, f"hand-written {i}", failures) != 8 and not failures:
            failures.append(f"hand-written {i}: expected 8 instances")
    bad = tmp / "bad.json"
    bad.write_text('{"properties": {"a": {"not": {"multipleOf": 2}}}}')
    r = run(["compile", "--schema", str(bad)])
    if r.returncode != 1 or b"'not'" not in r.stderr or b"#/properties/a" not in r.stderr:
        failures.append(f"unsupported keyword: exit {r.returncode}: {r.stderr.decode()}")


def bench_files(files, failures, sample_cap):
    """Returns (files, compiled, sampled schemas, instances, walks that reached the limit)."""
    compiled, sampled, instances, unfinished = 0, 0, 0, 0
    for path in files:
        r = run(["compile", "--schema", str(path), "--json"])
        if r.returncode != 0:
            message = r.stderr.decode("utf-8", "replace")
            if r.returncode != 1 or "keyword '" not in message:
                failures.append(f"{path.name}: exit {r.returncode} without a keyword: {message}")
            continue
        compiled += 1
        if sampled >= sample_cap:
            continue
        schema = json.loads(path.read_text())
        r = run(["sample", "--schema", str(path), "--tokenizer", str(SMALL_VOCAB), "--n", "2",
                 "--seed", "1", "--max-tokens", "1500"])
        stderr = r.stderr.decode("utf-8", "replace")
        if r.returncode == 1 and "admits no instance" in stderr:
            check_empty(path, schema, failures)
            continue
        if r.returncode not in (0, 1) or (r.returncode == 1 and "--max-tokens" not in stderr):
            failures.append(f"{path.name}: sample exit {r.returncode}: {stderr[-300:]}")
        sampled += 1
        instances += check_instances(schema, r.stdout, path.name, failures)
        unfinished += stderr.count("reached --max-tokens") - (1 if r.returncode == 1 else 0)
    return len(files), compiled, sampled, instances, unfinished


def check_empty(path, schema, failures):
    """afm found no instance. Where a oneOf makes it so (branches that always match together),
    the schema with anyOf instead is sampled: each of its instances must be invalid for the
    original, or afm's grammar lost valid instances. Other empty languages fail the test."""
    text = path.read_text()
    if '"oneOf"' not in text:
        failures.append(f"{path.name}: the grammar is empty and no oneOf explains it")
        return
    with tempfile.TemporaryDirectory() as tmp:
        relaxed = Path(tmp) / "relaxed.json"
        relaxed.write_text(text.replace('"oneOf"', '"anyOf"'))
        r = run(["sample", "--schema", str(relaxed), "--tokenizer", str(SMALL_VOCAB), "--n", "4",
                 "--seed", "1", "--max-tokens", "1500"])
    validator = schema_oracle.validator(text)
    for line in r.stdout.decode("utf-8").split("\n")[:-1]:
        if validator.is_valid(schema_oracle.loads(line)):
            failures.append(f"{path.name}: empty grammar, but valid instance {line[:200]}")


def narrowed_files(folder):
    """Schemas after the first FILES_PER_FOLDER that use a NARROWED_KEYWORDS keyword."""
    files = [p for p in sorted(folder.glob("*.json"))[FILES_PER_FOLDER:]
             if any(k in p.read_text() for k in NARROWED_KEYWORDS)]
    return files[:NARROWED_PER_FOLDER]


def regular_files(folder):
    """Schemas after the first FILES_PER_FOLDER that go through the regular layer."""
    def uses(p):
        text = p.read_text()
        bounded = ('"pattern"' in text or '"format"' in text) and (
            '"maxLength"' in text or '"minLength"' in text)
        return bounded or REGULAR_TEXT.search(text) is not None
    files = [p for p in sorted(folder.glob("*.json"))[FILES_PER_FOLDER:] if uses(p)]
    return files[:REGULAR_PER_FOLDER]


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        hand_written(failures, Path(tmp))
    if not BENCH.is_dir():
        print(f"skipping jsonschemabench: {BENCH} not found")
    else:
        print("| folder | schemas | compile | sampled schemas | instances | walks at limit |")
        print("|---|---|---|---|---|---|")
        folders = sorted(p for p in BENCH.iterdir() if p.is_dir())
        first = lambda f: sorted(f.glob("*.json"))[:FILES_PER_FOLDER]  # noqa: E731
        for label, pick, cap in (("", first, BENCH_SAMPLED_PER_FOLDER),
                                 (" (oneOf, dependencies, not, patternProperties, additionalItems)", narrowed_files, NARROWED_PER_FOLDER),
                                 (" (regular layer)", regular_files, REGULAR_PER_FOLDER)):
            for folder in folders:
                n, ok, sampled, instances, unfinished = bench_files(pick(folder), failures, cap)
                print(f"| {folder.name}{label} | {n} | {ok} ({100.0 * ok / max(n, 1):.0f}%) "
                      f"| {sampled} | {instances} | {unfinished} |")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
