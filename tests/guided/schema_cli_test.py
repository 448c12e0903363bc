"""`afm schema compile` on schemas of extreme shapes: each compiles or exits 1 with one line
naming the budget; none may crash (exit 139 was a stack overflow) or take long. Also the
unknown-format policy and its flag.

Run by CTest with AFM_BIN set.
"""
import json
import os
import subprocess
import tempfile

AFM = os.environ["AFM_BIN"]


def compile_schema(tmp, name, text, *flags):
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        f.write(text)
    return subprocess.run([AFM, "schema", "compile", "--schema", path, *flags],
                          capture_output=True, text=True, timeout=60)


def nested(depth):  # as text: Python's json module recurses once per level
    return '{"type":"array","items":' * depth + "{}" + "}" * depth


def test_wide_shapes_compile(tmp):
    wide = {
        "prefix_items": {"type": "array", "prefixItems": [{}] * 20000},
        "properties": {"type": "object",
                       "properties": {f"p{i}": {"type": "string"} for i in range(20000)}},
        "required": {"required": [f"r{i}" for i in range(20000)]},
        "enum": {"enum": [f"value{i}" for i in range(10000)]},
        "pattern": {"type": "string", "pattern": "^" + "[a-c]x?" * 15000 + "$"},
        "tool_shaped": {"type": "object", "properties": {
            "args": {"type": "array", "prefixItems": [{"type": "integer"}] * 5000}}},
    }
    for name, schema in wide.items():
        r = compile_schema(tmp, name, json.dumps(schema))
        assert r.returncode == 0, (name, r.returncode, r.stderr)
        assert r.stdout.startswith("ok:"), (name, r.stdout)


def test_budgets_are_named(tmp):
    refused = {
        "deep_5000": (nested(5000), "nests deeper than 128 levels", "budget: schema depth"),
        "deep_20000": (nested(20000), "nests deeper than 128 levels", "budget: schema depth"),
        "values": (json.dumps({"enum": list(range(150000))}), "more than 100000 JSON values",
                   "budget: schema size"),
        "one_of": (json.dumps({"oneOf": [{"const": i} for i in range(1000)]}),
                   "oneOf has 1000 branches", "budget: oneOf branches"),
    }
    for name, (text, what, budget) in refused.items():
        r = compile_schema(tmp, name, text)
        assert r.returncode == 1, (name, r.returncode, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and what in lines[0] and budget in lines[0], (name, r.stderr)
        assert len(lines[0]) < 400, (name, len(lines[0]))
        assert r.stdout == "", (name, r.stdout)


def test_non_schemas_are_named(tmp):
    r = compile_schema(tmp, "array_root", "[]")
    assert r.returncode == 1 and "the schema at # is an array" in r.stderr, r.stderr
    r = compile_schema(tmp, "depth_130", nested(130))
    assert r.returncode == 1 and "'$ref'" not in r.stderr, r.stderr


def test_unknown_formats(tmp):
    """An unknown format name is an annotation unless --refuse-unknown-formats says otherwise."""
    schema = '{"type":"string","format":"semver"}'
    r = compile_schema(tmp, "semver", schema)
    assert r.returncode == 0, r.stderr
    r = compile_schema(tmp, "semver", schema, "--refuse-unknown-formats")
    assert r.returncode == 1 and "unknown format 'semver'" in r.stderr, r.stderr
    r = compile_schema(tmp, "regex", '{"type":"string","format":"regex"}')
    assert r.returncode == 1 and "'format'" in r.stderr, r.stderr


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_wide_shapes_compile(tmp)
        test_budgets_are_named(tmp)
        test_non_schemas_are_named(tmp)
        test_unknown_formats(tmp)
    print("schema cli: ok")


if __name__ == "__main__":
    main()
