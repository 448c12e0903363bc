"""Regenerates tests/data/hf/{llama,qwen2,qwen3,mistral,phi3,smollm3,gemma2,gemma3}: tiny random-weight Hugging Face model folders
laid out as transformers' save_pretrained writes them (config.json field names, safetensors
tensor names, tokenizer.json + tokenizer_config.json with a chat template). qwen2 is sharded
into two files with model.safetensors.index.json; llama is stored in bf16, qwen3 in f16.
mistral has a sliding window of 8 positions, far shorter than the prompt and continuation
that make_engine_reference.py runs, so a window applied wrongly (or not at all) shows; phi3 has
the same window and stores q/k/v as one qkv_proj and gate/up as one gate_up_proj, as Phi-3 does;
smollm3 has four layers, the last without RoPE (SmolLM3's every-4th-layer NoPE); gemma2 (4
layers) and gemma3 (6 layers) have Gemma's sandwich norms (stored as w for 1 + w), a head_dim
and query_pre_attn_scalar of their own, windows of 8 in the sliding layers, soft-capping small
enough to bite (gemma2) and QK-norms with a local RoPE base (gemma3).

Needs only numpy, safetensors and tokenizers. Run from the repository root:
    .venv/bin/python tests/oracle/make_hf_fixtures.py
"""
import json
import os

import numpy as np
from safetensors.numpy import save_file
from tokenizers import Tokenizer

from make_tokenizer_fixtures import LLAMA3 as LLAMA3_REGEX, QWEN2 as QWEN2_REGEX, byte_level

ROOT = "tests/data/hf"
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + "
          "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
          "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
LLAMA3 = ("{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + "
          "'<|end_header_id|>\n\n' + message['content'] + '<|eot_id|>' }}{% endfor %}"
          "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}")

MISTRAL = ("{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + "
           "message['content'] + ' [/INST]' }}{% else %}{{ message['content'] + '</s>' }}{% endif %}"
           "{% endfor %}")

PHI3 = ("{% for message in messages %}{{ '<|' + message['role'] + '|>\n' + message['content'] + "
        "'<|end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}")

GEMMA = ("{% for message in messages %}{{ '<start_of_turn>' + message['role'] + '\n' + "
         "message['content'] + '<end_of_turn>\n' }}{% endfor %}"
         "{% if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif %}")

CORPUS = [
    "The quick brown fox jumps over the lazy dog. It's 2025 and we're testing 12345 tokens!",
    "Grüß Gott, ça va? Привет мир. Γειά σου κόσμε. 你好，世界。 こんにちは 🙂👍",
    "def main():\n    return [x * 2 for x in range(10)]  # comment\n\tindent\n",
    "Hello, world! How are you doing today? I'll be fine, thanks.",
] * 50


def train_tokenizer(regex, specials):
    tok, trainer = byte_level(regex, specials, vocab_size=400)
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def weights(cfg, rng, tied, qk_norm, bias, dtype):
    h, inter, layers = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    hd = cfg.get("head_dim", h // cfg["num_attention_heads"])
    nq, nkv = cfg["num_attention_heads"] * hd, cfg["num_key_value_heads"] * hd
    w = lambda *s: (rng.standard_normal(s) * 0.05).astype(np.float32)
    # Embeddings and head 20x larger than the rest: logits spread over several units, so greedy
    # decoding has clear winners and engines can be compared token for token.
    t = {"model.embed_tokens.weight": 20 * w(cfg["vocab_size"], h),
         "model.norm.weight": 1 + w(h)}
    if not tied:
        t["lm_head.weight"] = 20 * w(cfg["vocab_size"], h)
    for i in range(layers):
        p = f"model.layers.{i}."
        t.update({p + "input_layernorm.weight": 1 + w(h),
                  p + "post_attention_layernorm.weight": 1 + w(h),
                  p + "self_attn.q_proj.weight": w(nq, h),
                  p + "self_attn.k_proj.weight": w(nkv, h),
                  p + "self_attn.v_proj.weight": w(nkv, h),
                  p + "self_attn.o_proj.weight": w(h, nq),
                  p + "mlp.gate_proj.weight": w(inter, h),
                  p + "mlp.up_proj.weight": w(inter, h),
                  p + "mlp.down_proj.weight": w(h, inter)})
        if bias:
            t.update({p + "self_attn.q_proj.bias": w(nq), p + "self_attn.k_proj.bias": w(nkv),
                      p + "self_attn.v_proj.bias": w(nkv)})
        if qk_norm:
            t.update({p + "self_attn.q_norm.weight": 1 + w(hd), p + "self_attn.k_norm.weight": 1 + w(hd)})
    if dtype == "bfloat16":  # stored as the upper 16 bits, round-to-nearest-even
        out = {}
        for k, v in t.items():
            u = v.view(np.uint32).astype(np.uint64)
            out[k] = (((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16))
        return out
    if dtype == "float16":
        return {k: v.astype(np.float16) for k, v in t.items()}
    return t


def fuse_phi3(t, layers):
    """Phi-3's layout: q | k | v rows in self_attn.qkv_proj, gate | up rows in mlp.gate_up_proj."""
    for i in range(layers):
        p = f"model.layers.{i}."
        t[p + "self_attn.qkv_proj.weight"] = np.concatenate(
            [t.pop(p + f"self_attn.{x}_proj.weight") for x in "qkv"], axis=0)
        t[p + "mlp.gate_up_proj.weight"] = np.concatenate(
            [t.pop(p + "mlp.gate_proj.weight"), t.pop(p + "mlp.up_proj.weight")], axis=0)
    return t


def gemma_norms(t, layers, rng):
    """Gemma's four norms per layer, stored as w for RMSNorm's 1 + w (so drawn around 0), and a
    tied embedding 4x smaller than the other fixtures' (Gemma multiplies it by sqrt(hidden) on
    the way in, and soft-capped logits must not saturate)."""
    w = lambda n: (rng.standard_normal(n) * 0.1).astype(np.float32)
    t["model.embed_tokens.weight"] = t["model.embed_tokens.weight"] / 4
    for name in [k for k in t if k.endswith("norm.weight")]:
        t[name] = w(t[name].shape[0])
    h = t["model.norm.weight"].shape[0]
    for i in range(layers):
        p = f"model.layers.{i}."
        t[p + "pre_feedforward_layernorm.weight"] = w(h)
        t[p + "post_feedforward_layernorm.weight"] = w(h)
    return t


def save_bf16(tensors, path):
    # safetensors.numpy has no bfloat16 dtype: write the file by hand (same layout).
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        b = tensors[name].tobytes()
        header[name] = {"dtype": "BF16", "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + b"".join(blobs))


def write_model(name, model_type, arch, regex, specials, eos, template, rng, *, tied, qk_norm,
                bias, dtype, shards, head_dim=None, extra=None):
    out = os.path.join(ROOT, name)
    os.makedirs(out, exist_ok=True)
    tok = train_tokenizer(regex, specials)
    tok_path = os.path.join(out, "tokenizer.json")
    tok.save(tok_path)
    if regex == LLAMA3_REGEX:  # Llama-3 ships ignore_merges=true (llama.cpp assumes it too)
        j = json.load(open(tok_path))
        j["model"]["ignore_merges"] = True
        json.dump(j, open(tok_path, "w"), ensure_ascii=False, indent=2)
        tok = Tokenizer.from_file(tok_path)
    cfg = {"architectures": [arch], "model_type": model_type, "hidden_size": 64,
           "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 2, "max_position_embeddings": 512, "rms_norm_eps": 1e-6,
           "rope_theta": 10000.0 if model_type in ("llama", "mistral", "phi3", "smollm3") else 1000000.0,
           "vocab_size": tok.get_vocab_size(), "tie_word_embeddings": tied, "torch_dtype": dtype,
           "hidden_act": "silu", "bos_token_id": None, "eos_token_id": tok.token_to_id(eos)}
    if head_dim:
        cfg["head_dim"] = head_dim
    if bias:
        cfg["attention_bias"] = True
    cfg.update(extra or {})
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"eos_token": eos, "chat_template": template, "add_bos_token": False,
                   "model_max_length": 512}, f, indent=2)
    t = weights(cfg, rng, tied, qk_norm, bias, dtype)
    if model_type == "phi3":
        t = fuse_phi3(t, cfg["num_hidden_layers"])
    if model_type.startswith("gemma"):
        t = gemma_norms(t, cfg["num_hidden_layers"], rng)
    for old in os.listdir(out):
        if old.startswith("model"):
            os.remove(os.path.join(out, old))
    if dtype == "bfloat16":
        save_bf16(t, os.path.join(out, "model.safetensors"))
    elif shards == 1:
        save_file(t, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    else:
        names = sorted(t)
        parts = [names[: len(names) // 2], names[len(names) // 2:]]
        weight_map = {}
        for i, part in enumerate(parts):
            fname = f"model-{i + 1:05d}-of-{len(parts):05d}.safetensors"
            save_file({n: t[n] for n in part}, os.path.join(out, fname), metadata={"format": "pt"})
            weight_map.update({n: fname for n in part})
        with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": sum(v.nbytes for v in t.values())},
                       "weight_map": weight_map}, f, indent=2)


def main():
    rng = np.random.default_rng(7)
    write_model("llama", "llama", "LlamaForCausalLM", LLAMA3_REGEX,
                ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
                 "<|eot_id|>"], "<|eot_id|>", LLAMA3, rng,
                tied=False, qk_norm=False, bias=False, dtype="bfloat16", shards=1)
    write_model("qwen2", "qwen2", "Qwen2ForCausalLM", QWEN2_REGEX,
                ["<|endoftext|>", "<|im_start|>", "<|im_end|>"], "<|im_end|>", CHATML, rng,
                tied=True, qk_norm=False, bias=True, dtype="float32", shards=2)
    write_model("qwen3", "qwen3", "Qwen3ForCausalLM", QWEN2_REGEX,
                ["<|endoftext|>", "<|im_start|>", "<|im_end|>"], "<|im_end|>", CHATML, rng,
                tied=False, qk_norm=True, bias=False, dtype="float16", shards=1, head_dim=32)
    # Drawn after the others, so adding it left their bytes unchanged.
    write_model("mistral", "mistral", "MistralForCausalLM", LLAMA3_REGEX,
                ["<s>", "</s>", "[INST]", "[/INST]"], "</s>", MISTRAL, rng,
                tied=False, qk_norm=False, bias=False, dtype="float32", shards=1,
                extra={"sliding_window": 8})
    write_model("phi3", "phi3", "Phi3ForCausalLM", LLAMA3_REGEX,
                # Phi-3's own specials: llama.cpp looks up <unk> and <|endoftext|> by name in
                # a vocabulary whose model name says phi3.
                ["<unk>", "<s>", "</s>", "<|endoftext|>", "<|user|>", "<|assistant|>", "<|end|>"],
                "<|end|>", PHI3, rng,
                tied=False, qk_norm=False, bias=False, dtype="float32", shards=1,
                extra={"sliding_window": 8, "pad_token_id": None})
    write_model("smollm3", "smollm3", "SmolLM3ForCausalLM", LLAMA3_REGEX,
                ["<|begin_of_text|>", "<|end_of_text|>", "<|im_start|>", "<|im_end|>"], "<|im_end|>",
                CHATML, rng, tied=False, qk_norm=False, bias=False, dtype="float32", shards=1,
                extra={"num_hidden_layers": 4, "no_rope_layers": [1, 1, 1, 0],
                       "no_rope_layer_interval": 4, "use_sliding_window": False,
                       "pad_token_id": None})
    gemma = dict(head_dim=32, query_pre_attn_scalar=24, sliding_window=8, pad_token_id=None,
                 hidden_activation="gelu_pytorch_tanh", hidden_act="gelu_pytorch_tanh",
                 bos_token_id=None)
    write_model("gemma2", "gemma2", "Gemma2ForCausalLM", LLAMA3_REGEX,
                ["<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>"], "<end_of_turn>", GEMMA, rng,
                tied=True, qk_norm=False, bias=False, dtype="float32", shards=1,
                extra=dict(gemma, num_hidden_layers=4, attn_logit_softcapping=1.0,
                           final_logit_softcapping=10.0, rope_theta=10000.0))
    write_model("gemma3", "gemma3_text", "Gemma3ForCausalLM", LLAMA3_REGEX,
                ["<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>"], "<end_of_turn>", GEMMA, rng,
                tied=True, qk_norm=True, bias=False, dtype="float32", shards=1,
                extra=dict(gemma, num_hidden_layers=6, rope_theta=1000000.0,
                           rope_local_base_freq=10000.0, attn_logit_softcapping=None,
                           final_logit_softcapping=None))


def make_fuzz_corpus():
    """tests/data/hf/fuzz_corpus/small.safetensors: the seed input of fuzz/safetensors_fuzz.cpp."""
    os.makedirs(os.path.join(ROOT, "fuzz_corpus"), exist_ok=True)
    save_file({"a": np.arange(4, dtype=np.float32).reshape(2, 2), "b": np.ones(3, np.float16)},
              os.path.join(ROOT, "fuzz_corpus", "small.safetensors"), metadata={"format": "pt"})


if __name__ == "__main__":
    main()
    make_fuzz_corpus()
