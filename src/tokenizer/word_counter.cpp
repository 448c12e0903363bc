#include "tokenizer/word_counter.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "base/error.h"
#include "base/thread_pool.h"
#include "tokenizer/regex_splitter.h"

namespace afm::tokenizer {

namespace {

uint64_t mix(uint64_t x) {
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  return x;
}

// A fast non-cryptographic hash of a short byte string (pre-tokens are mostly under 16 bytes).
uint64_t hash_bytes(std::string_view s) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t v;
    std::memcpy(&v, s.data() + i, 8);
    h = mix(h ^ v) * 0x9e3779b97f4a7c15ull;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, s.data() + i, s.size() - i);
  return mix(h ^ tail ^ (tail << 29));
}

// Bump allocator for word bytes; blocks never move, so views into them stay valid.
class Arena {
 public:
  const char* copy(std::string_view s) {
    if (s.size() > left_) {
      size_t n = std::max(kBlockBytes, s.size());
      blocks_.push_back(std::make_unique<char[]>(n));
      next_ = blocks_.back().get();
      left_ = n;
    }
    char* p = next_;
    std::memcpy(p, s.data(), s.size());
    next_ += s.size();
    left_ -= s.size();
    return p;
  }
  // Takes over other's blocks (other then allocates afresh).
  void adopt(Arena& other) {
    for (auto& b : other.blocks_) blocks_.push_back(std::move(b));
    other.blocks_.clear();
    other.left_ = 0;
  }
  std::vector<std::unique_ptr<char[]>> release() {
    left_ = 0;
    return std::move(blocks_);
  }

 private:
  static constexpr size_t kBlockBytes = size_t{1} << 20;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* next_ = nullptr;
  size_t left_ = 0;
};

// Open-addressing table word -> count; keys are copied into the table's arena.
class WordTable {
 public:
  WordTable() { rehash(1 << 14); }

  // `stored`: the bytes already live in this table's arena (rehash, absorb).
  void add(std::string_view word, uint64_t hash, uint64_t n, bool stored = false) {
    if ((used_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    const uint64_t head = prefix(word);
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.data == nullptr) {
        s = Slot{hash, head, stored ? word.data() : arena_.copy(word), word.size(), n};
        ++used_;
        return;
      }
      // Most words fit in the 8-byte prefix: no access to the bytes stored elsewhere.
      if (s.hash == hash && s.head == head && s.size == word.size() &&
          (word.size() <= 8 || std::memcmp(s.data + 8, word.data() + 8, word.size() - 8) == 0)) {
        s.count += n;
        return;
      }
    }
  }

  // Adds every entry of `other` to this table and takes over its bytes; other is left empty.
  void absorb(WordTable& other) {
    arena_.adopt(other.arena_);
    for (const Slot& s : other.slots_) {
      if (s.data != nullptr) add(std::string_view(s.data, s.size), s.hash, s.count, true);
    }
    other = WordTable();
  }

  void export_to(WordCounts& out) {
    out.words.reserve(used_);
    for (const Slot& s : slots_) {
      if (s.data != nullptr) out.words.push_back({std::string_view(s.data, s.size), s.count});
    }
    out.storage = arena_.release();
    *this = WordTable();
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint64_t head = 0;  // the word's first 8 bytes, zero-padded
    const char* data = nullptr;
    size_t size = 0;
    uint64_t count = 0;
  };

  static uint64_t prefix(std::string_view word) {
    uint64_t v = 0;
    std::memcpy(&v, word.data(), std::min<size_t>(word.size(), 8));
    return v;
  }

  void rehash(size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    used_ = 0;
    for (const Slot& s : old) {
      if (s.data != nullptr) add(std::string_view(s.data, s.size), s.hash, s.count, true);
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t used_ = 0;
  Arena arena_;
};

struct Chunk {
  size_t document;
  size_t begin, end;
};

std::vector<Chunk> make_chunks(std::span<const std::string_view> documents, size_t chunk_bytes) {
  std::vector<Chunk> chunks;
  for (size_t d = 0; d < documents.size(); ++d) {
    std::string_view text = documents[d];
    for (size_t begin = 0; begin < text.size();) {
      size_t end = safe_chunk_end(text, begin, std::max<size_t>(chunk_bytes, 1));
      chunks.push_back({d, begin, end});
      begin = end;
    }
  }
  return chunks;
}

// Calls fn(segment) for the pieces of `text` between occurrences of the cut strings (the
// earliest occurrence first; the longest one among those starting at the same place).
template <typename Fn>
void for_each_segment(std::string_view text, const std::vector<std::string>& cuts, Fn&& fn) {
  constexpr size_t kNone = std::string_view::npos;
  std::vector<size_t> next(cuts.size(), 0);  // next occurrence of each cut at or after `pos`
  for (size_t i = 0; i < cuts.size(); ++i) next[i] = text.find(cuts[i]);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t best = kNone, best_len = 0;
    for (size_t i = 0; i < cuts.size(); ++i) {
      if (next[i] != kNone && next[i] < pos) next[i] = text.find(cuts[i], pos);
      if (next[i] < best || (next[i] == best && next[i] != kNone && cuts[i].size() > best_len)) {
        best = next[i];
        best_len = cuts[i].size();
      }
    }
    if (best == kNone) break;
    if (best > pos) fn(text.substr(pos, best - pos));
    pos = best + best_len;
  }
  if (pos < text.size()) fn(text.substr(pos));
}

bool is_printable_ascii(char c) { return c > 0x20 && c < 0x7f; }

}  // namespace

size_t safe_chunk_end(std::string_view text, size_t begin, size_t target) {
  size_t from = begin + std::max<size_t>(target, 2);
  if (from >= text.size()) return text.size();
  for (size_t nl = text.find('\n', from - 1); nl != std::string_view::npos;
       nl = text.find('\n', nl + 1)) {
    size_t p = nl + 1;
    if (p >= text.size()) break;
    if (nl >= 1 && is_printable_ascii(text[nl - 1]) && is_printable_ascii(text[p])) return p;
  }
  return text.size();
}

struct WordCounter::State {
  explicit State(WordCountOptions o)
      : options(std::move(o)),
        threads(std::max(1, options.threads)),
        splitter(options.pre_regex),
        pool(threads),
        tables(static_cast<size_t>(threads)),
        totals(static_cast<size_t>(threads), 0) {}

  WordCountOptions options;
  int threads;
  RegexSplitter splitter;
  ThreadPool pool;
  std::vector<WordTable> tables;  // one per thread
  std::vector<uint64_t> totals;   // pre-tokens counted by each thread
  uint64_t bytes_given = 0, bytes_done = 0;
};

WordCounter::WordCounter(WordCountOptions options) {
  for (const std::string& c : options.cut_strings) {
    if (c.empty()) throw_error(ErrorCode::kInvalidArgument, "a special token is empty");
  }
  state_ = std::make_unique<State>(std::move(options));
}

WordCounter::~WordCounter() = default;

void WordCounter::add(std::span<const std::string_view> documents) {
  State& st = *state_;
  const std::vector<Chunk> chunks = make_chunks(documents, st.options.chunk_bytes);
  for (std::string_view d : documents) st.bytes_given += d.size();
  const uint64_t total = std::max(st.options.total_bytes, st.bytes_given);
  std::atomic<size_t> next_chunk{0};
  std::atomic<uint64_t> bytes_done{st.bytes_done};
  st.pool.run([&](int t, int) {
    WordTable& table = st.tables[static_cast<size_t>(t)];
    std::vector<std::string_view> pieces;
    uint64_t counted = 0;
    for (size_t c = next_chunk++; c < chunks.size(); c = next_chunk++) {
      const Chunk& chunk = chunks[c];
      std::string_view text =
          documents[chunk.document].substr(chunk.begin, chunk.end - chunk.begin);
      for_each_segment(text, st.options.cut_strings, [&](std::string_view segment) {
        pieces.clear();
        st.splitter.split(segment, pieces);
        for (std::string_view p : pieces) table.add(p, hash_bytes(p), 1);
        counted += pieces.size();
      });
      uint64_t done = bytes_done += text.size();
      if (t == 0 && st.options.progress) st.options.progress(done, total);
    }
    st.totals[static_cast<size_t>(t)] += counted;
  });
  st.bytes_done = bytes_done;
  if (st.options.progress) st.options.progress(st.bytes_done, total);
}

WordCounts WordCounter::finish() {
  State& st = *state_;
  WordCounts out;
  for (size_t t = 1; t < st.tables.size(); ++t) st.tables[0].absorb(st.tables[t]);
  st.tables[0].export_to(out);
  for (uint64_t& n : st.totals) {
    out.total += n;
    n = 0;
  }
  st.bytes_given = st.bytes_done = 0;
  return out;
}

WordCounts count_words(std::span<const std::string_view> documents,
                       const WordCountOptions& options) {
  WordCounter counter(options);
  counter.add(documents);
  return counter.finish();
}

}  // namespace afm::tokenizer
