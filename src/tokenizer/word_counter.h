// Counts the pre-tokens ("words") of a text corpus for BPE training: each document is cut at
// occurrences of the given special-token strings (they are not text to learn merges from), the
// pieces between them are split by a pre-tokenizer regex, and every distinct piece is counted.
//
// Contract: documents are whole texts (a file is one document); the counts are exactly those
// of pre-tokenizing each document in one piece, whatever `threads` and `chunk_bytes` are
// (documents are cut into chunks only at places where the supported regexes cannot match
// across, see safe_chunk_end). Throws Error(kFormat) for a regex that does not compile and
// Error(kInvalidArgument) for an empty cut string. Runs its own threads; the progress
// callback is only called on the calling thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace afm::tokenizer {

struct WordCount {
  std::string_view word;  // raw bytes of the pre-token
  uint64_t count;
};

struct WordCountOptions {
  std::string pre_regex;                 // the Split regex (Isolated behaviour)
  std::vector<std::string> cut_strings;  // special tokens: removed from the text
  int threads = 1;
  size_t chunk_bytes = size_t{1} << 20;  // work unit for the counting threads
  uint64_t total_bytes = 0;              // for progress; 0: the bytes given so far
  // Called on the calling thread with the bytes counted so far and the total.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

struct WordCounts {
  std::vector<WordCount> words;                  // distinct pre-tokens, in no particular order
  uint64_t total = 0;                            // pre-tokens counted, with repetitions
  std::vector<std::unique_ptr<char[]>> storage;  // holds the bytes `words` point to
};

// Counts documents given in batches (so that a corpus of any number of files can be mapped a
// batch at a time): the words are copied, the documents need not outlive add().
class WordCounter {
 public:
  explicit WordCounter(WordCountOptions options);
  ~WordCounter();
  WordCounter(const WordCounter&) = delete;
  WordCounter& operator=(const WordCounter&) = delete;

  void add(std::span<const std::string_view> documents);
  // The counts of everything added; the counter is left empty.
  WordCounts finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// One batch: WordCounter(options).add(documents), then finish().
WordCounts count_words(std::span<const std::string_view> documents,
                       const WordCountOptions& options);

// The end of the chunk of `text` that starts at `begin` and should hold about `target` bytes:
// the first position p >= begin + target with text[p-1] == '\n' and both text[p-2] and text[p]
// printable ASCII other than space; text.size() when there is none. At such a p no match of
// the GPT-2, Llama-3 or Qwen2 pre-tokenizer regex spans p, and none depends on what follows p,
// so splitting text[..p) and text[p..) separately gives the same pre-tokens as the whole.
size_t safe_chunk_end(std::string_view text, size_t begin, size_t target);

}  // namespace afm::tokenizer
