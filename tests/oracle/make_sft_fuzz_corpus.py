"""Writes the seed corpus of fuzz/sft_records_fuzz.cpp: small valid AFMSFT01 record files
(docs/data.md "Fine-tuning records") and a few near misses. Run from the repository root:
    python3 tests/oracle/make_sft_fuzz_corpus.py"""
import os
import struct

OUT = "tests/data/sft/fuzz_corpus"


def record_file(vocab, records):
    out = b"AFMSFT01" + struct.pack("<IIQ", 1, vocab, len(records))
    for tokens, trained in records:
        out += struct.pack("<I", len(tokens)) + struct.pack(f"<{len(tokens)}I", *tokens)
        out += bytes(trained)
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    seeds = {
        "empty": record_file(8192, []),
        "one": record_file(100, [([1, 2, 3], [0, 1, 1])]),
        "three": record_file(64, [([5, 6], [0, 1]), ([7, 8, 9, 10], [0, 0, 1, 1]),
                                  ([63, 0, 1], [1, 1, 1])]),
        "id_out_of_range": record_file(10, [([1, 12], [0, 1])]),
        "bad_flag": record_file(10, [([1, 2], [0, 2])]),
        "truncated": record_file(100, [([1, 2, 3], [0, 1, 1])])[:-2],
        # Found by the fuzzer: ids at or above 2^31 under a vocab_size above it turned negative.
        "huge_vocab": record_file(0xE4000064, [([1, 0x80000002], [0, 1])]),
    }
    for name, data in seeds.items():
        with open(os.path.join(OUT, name + ".sft"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
