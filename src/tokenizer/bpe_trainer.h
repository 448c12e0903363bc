// Trains a byte-level BPE vocabulary (the GPT-2 / Llama-3 / Qwen2 kind) from UTF-8 text.
//
// Algorithm (the classic one, as Hugging Face's BpeTrainer runs it):
//  1. Each document is cut at special-token strings, split by the pre-tokenizer regex, and the
//     distinct pieces ("words") are counted (word_counter.h; several threads).
//  2. Ids: the special tokens 0..n-1 in the order given, then the 256 byte symbols of GPT-2's
//     byte-to-unicode map in code-point order ("!" first), then merged tokens as they appear.
//  3. Every word starts as its bytes. A pair's count is the number of times the two symbols
//     are adjacent, over all words, weighted by word count ("aaa" holds (a, a) twice).
//  4. Repeatedly the pair with the highest count is merged everywhere (left to right within a
//     word, non-overlapping); counts of the neighbouring pairs are updated incrementally, via a
//     pair -> words index and a lazily updated max-heap. Ties go to the pair with the smallest
//     (left id, right id), which with the id order above is HF's rule: with the same words and
//     options the vocabulary and merges equal HF's BpeTrainer's (tested). A merge whose result
//     string is already a token (rare) adds no token; its occurrences are merged all the same.
//  5. It stops when the vocabulary has vocab_size entries or no pair has min_frequency.
//
// Contract: results depend only on the text and the options, never on the thread count or
// chunk size. Throws Error(kInvalidArgument) for bad options (vocab_size below specials + 256,
// empty, duplicate or newline-containing special tokens, an unknown pre-tokenizer name) and
// Error(kIo) for unreadable files. The progress callback runs on the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab_spec.h"

namespace afm::tokenizer {

enum class BpeTrainStage { kCounting, kMerging };

struct BpeTrainerOptions {
  int64_t vocab_size = 32000;               // total, specials and the 256 byte symbols included
  int64_t min_frequency = 2;                // a pair must occur at least this often to be merged
  std::vector<std::string> special_tokens;  // ids 0..n-1; never split, not learned from
  std::string pre_tokenizer = "qwen2";      // qwen2 | gpt2 | llama3 (or llama.cpp's names)
  int threads = 1;                          // for counting words
  size_t chunk_bytes = size_t{1} << 20;     // counting work unit (results do not depend on it)
  // kCounting: bytes read of all bytes; kMerging: tokens added of tokens wanted.
  std::function<void(BpeTrainStage stage, uint64_t done, uint64_t total)> progress;
};

struct BpeTrainResult {
  VocabSpec spec;               // tokens, merges, special tokens as added tokens, pre-tokenizer
  uint64_t distinct_words = 0;  // distinct pre-tokens
  uint64_t total_words = 0;     // pre-tokens with repetitions
};

// The afm chat-template special tokens, in id order: <|endoftext|> (document separator and
// EOS), <turn_start>, <turn_end>, <executable_start>, <executable_end>.
const std::vector<std::string>& afm_special_tokens();
// The afm chat template (ARCHITECTURE.md section 5) as Jinja, written into tokenizer_config.json
// when the vocabulary has the afm specials.
const std::string& afm_chat_template_jinja();

// The pre-tokenizer regex of a trainer name (qwen2, gpt2, llama3, or llama.cpp's qwen2, gpt-2,
// llama-bpe); Error(kInvalidArgument) naming the choices otherwise.
std::string trainer_pre_regex(const std::string& name);

// Trains on files (each file one document, memory-mapped) or on in-memory documents.
BpeTrainResult train_bpe_from_files(const std::vector<std::string>& paths,
                                    const BpeTrainerOptions& options);
BpeTrainResult train_bpe_from_texts(const std::vector<std::string_view>& documents,
                                    const BpeTrainerOptions& options);

// Writes out_dir/tokenizer.json and out_dir/tokenizer_config.json (creating out_dir), each
// atomically. Error(kIo) naming the path on failure.
void write_trained_tokenizer(const VocabSpec& spec, const std::string& out_dir);

}  // namespace afm::tokenizer
