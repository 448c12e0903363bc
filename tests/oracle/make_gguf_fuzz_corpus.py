"""Regenerates tests/data/gguf/fuzz_corpus/small.gguf with ggml's own `gguf` package.

Run from the repository root: .venv/bin/python tests/oracle/make_gguf_fuzz_corpus.py
"""
import os

import numpy as np
import gguf

OUT = "tests/data/gguf/fuzz_corpus/small.gguf"
os.makedirs(os.path.dirname(OUT), exist_ok=True)
w = gguf.GGUFWriter(OUT, "llama")
w.add_uint32("llama.block_count", 2)
w.add_array("tokenizer.ggml.tokens", ["a", "b", "<s>"])
w.add_key_value("t.nested", [[1, 2], [3]], gguf.GGUFValueType.ARRAY,
                sub_type=gguf.GGUFValueType.ARRAY)
w.add_tensor("x", np.arange(64, dtype=np.float32).reshape(2, 32))
q4 = gguf.quants.quantize(np.ones((1, 32), np.float32), gguf.GGMLQuantizationType.Q4_0)
w.add_tensor("q", q4, raw_dtype=gguf.GGMLQuantizationType.Q4_0)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
