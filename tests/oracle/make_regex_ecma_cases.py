"""Writes tests/data/guided/regex_ecma_cases.json: search-semantics verdicts of `regress` (an
ECMA-262 engine, flag `u`) for patterns with Unicode property escapes, lookaheads and closing
lookbehinds,
on probe strings. tests/guided/regex_compiler_test.cpp checks afm's grammar and automaton
against them. Probes are only code points assigned in Unicode 14 (the version of afm's table,
src/guided/unicode_categories.inc) or plain ASCII, so the verdicts do not depend on which
later Unicode version regress carries.

Usage: .venv/bin/python tests/oracle/make_regex_ecma_cases.py   (from the repository root)
"""
import json
import os
import random
import unicodedata

import regress

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "guided", "regex_ecma_cases.json")

PATTERNS = [
    r"^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$",
    r"^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$",
    r"^[\p{L}\p{M}\p{S}\p{N}\p{P}]+$",
    r"^\P{C}+$",
    r"^[^\p{L}]{1,3}$",
    r"^\P{L}+$",
    r"\p{Lu}\p{Ll}",
    r"^\p{Nd}+$",
    r"^[\p{Zs}]$",
    r"\p{Sc}",
    r"^\p{Letter}+$",
    r"^\p{gc=Lu}\p{General_Category=Lowercase_Letter}*$",
    r"^\p{ASCII}+$",
    r"^(?!aws:)[a-zA-Z+-=._:/]+$",
    r"^(?!aws:)[\p{L}\p{Z}\p{N}_.:/=+\-@]*$",
    r"^(?=.*[a-z])(?=.*[0-9])[a-z0-9]{4,8}$",
    r"^(?=^[a-z0-9-]+$).{3,10}$",
    r"^(?![0-9])(?!.*--)[a-z0-9-]+$",
    r"^(?!(?=a)..)\w+",
    r"^(?=a|b$).+|^c$",
    r"^(?!$)x?",
    r"^[a-z](?!.*--)[a-z0-9-]*$",
    r"^[A-Za-z](?!.*--)[0-9A-Za-z-]*[^-]|^default(?!.*--)(?!.*\.\.)[0-9A-Za-z-.]*[^-]$",
    r"^(ab|cd)(?=x)..$",
    r"^(?!a(?!b))\w+",
    r"^a(?=^a)|^b",
    r"^[^\u0000-\u001F\u007F-\u009F\u2028\u2029]*(?![\s\S])",
    # Searched branches opening with lookaheads that look only at position 0 (their ^).
    r"(?!^[0-9]+$)([a-zA-Z0-9-_' ']+)",
    r"(?=^.{3,10}$)(?!^(\d+\.)+\d+$)(^(([a-z0-9]|[a-z0-9][a-z0-9\-]*[a-z0-9])\.)*([a-z0-9]|[a-z0-9][a-z0-9\-]*[a-z0-9])$)",
    r"(?!^ab)b",
    r"(?=^a)\w",
    r"(?!^a)(?!^b$)c|z",
    r"(?!^x)",
    # Lookbehinds right before the closing $ (or at the end of the branch's match).
    r"^[0-9a-z\.\-]*(?<!\.)$",
    r"^[a-zA-Z0-9._\-]+(?<!\.git)$",
    r"^(?! )[\p{L}\p{N}\p{Z}\-_]*(?<! )$",
    r"a(?<=^ba|ca)$|^x$",
    r"(?<=b)(?<!ab)$",
    r"^\w+(?<=^a\w)$",
]

ALPHABET = list("abcxzAZ019:-_ /@.+=$%") + ["aws:", "é", "ß", "Ω", "٣", "中", "\u00a0", "\u3000",
                                             "\u0301", "€", "😀", "\u200b", "\n", "\t", "\x7f"]


def probes(rng, count):
    out = ["", "aws:", "aws:x", "awsx", "ab12", "a1", "abcd1234", "--a", "a--b", "x", "c", "a", "b",
           "123", "1.2.3", "a.b", "ab", "abb", "bc", "ac", "xa", "10.0.0.1", "a-b.c9", "a.", "x.git",
           "x.gi", " a", "a ", "ba", "ca", "bca", "cb", "xab", "ab_"]
    while len(out) < count:
        n = rng.randrange(1, 9)
        out.append("".join(rng.choice(ALPHABET) for _ in range(n)))
    for s in out:  # every probe character assigned in Unicode 14
        assert all(unicodedata.category(c) != "Cn" for c in s), s
    return out


def main():
    rng = random.Random(5)
    strings = probes(rng, 300)
    cases = []
    for pattern in PATTERNS:
        r = regress.Regex(pattern, "u")
        cases.append({"pattern": pattern,
                      "matches": [s for s in strings if r.find(s) is not None],
                      "rejects": [s for s in strings if r.find(s) is None]})
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"engine": "regress (ECMA-262, flag u)", "cases": cases}, f, ensure_ascii=False,
                  indent=0)
        f.write("\n")
    os.replace(tmp, OUT)
    print(f"wrote {OUT}: {len(cases)} patterns x {len(strings)} strings")


if __name__ == "__main__":
    main()
