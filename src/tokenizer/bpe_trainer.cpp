#include "tokenizer/bpe_trainer.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/mapped_file.h"
#include "tokenizer/bpe_merger.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer_json_writer.h"
#include "tokenizer/word_counter.h"

namespace afm::tokenizer {

namespace {

constexpr int64_t kByteSymbols = 256;

[[noreturn]] void invalid(const std::string& message) {
  throw_error(ErrorCode::kInvalidArgument, message);
}

bool is_byte_symbol(const std::string& s) {
  for (int b = 0; b < 256; ++b) {
    if (s == byte_to_unicode(static_cast<uint8_t>(b))) return true;
  }
  return false;
}

void validate(const BpeTrainerOptions& o) {
  std::set<std::string> seen;
  for (const std::string& s : o.special_tokens) {
    if (s.empty()) invalid("special tokens must not be empty");
    if (s.find('\n') != std::string::npos) invalid("special token '" + s + "' holds a newline");
    if (!seen.insert(s).second) invalid("special token '" + s + "' is given twice");
    if (is_byte_symbol(s)) invalid("special token '" + s + "' is one of the 256 byte symbols");
  }
  const int64_t minimum = static_cast<int64_t>(o.special_tokens.size()) + kByteSymbols;
  if (o.vocab_size < minimum) {
    invalid("vocab size " + std::to_string(o.vocab_size) + " is below " + std::to_string(minimum) +
            " (" + std::to_string(o.special_tokens.size()) + " special tokens + 256 byte symbols)");
  }
  if (o.min_frequency < 1) invalid("min frequency must be at least 1");
}

// Specials first, then the byte symbols in code-point order; UTF-8 byte order is code-point
// order, so comparing the symbols' UTF-8 strings sorts them.
std::vector<std::string> starting_vocabulary(const std::vector<std::string>& specials,
                                             int32_t (&byte_ids)[256]) {
  std::vector<int> bytes(256);
  for (int b = 0; b < 256; ++b) bytes[static_cast<size_t>(b)] = b;
  std::sort(bytes.begin(), bytes.end(), [](int x, int y) {
    return byte_to_unicode(static_cast<uint8_t>(x)) < byte_to_unicode(static_cast<uint8_t>(y));
  });
  std::vector<std::string> tokens = specials;
  for (int b : bytes) {
    byte_ids[b] = static_cast<int32_t>(tokens.size());
    tokens.push_back(byte_to_unicode(static_cast<uint8_t>(b)));
  }
  return tokens;
}

VocabSpec make_spec(const BpeMerger& merger, const BpeTrainerOptions& o) {
  VocabSpec spec;
  spec.kind = ModelKind::kByteLevelBpe;
  spec.tokens = merger.tokens();
  for (const auto& [left, right] : merger.merges()) {
    spec.merges.emplace_back(spec.tokens[static_cast<size_t>(left)],
                             spec.tokens[static_cast<size_t>(right)]);
  }
  for (size_t i = 0; i < o.special_tokens.size(); ++i) {
    spec.added.push_back({static_cast<int32_t>(i), o.special_tokens[i], true});
    if (o.special_tokens[i] == "<|endoftext|>") spec.eos_id = static_cast<int32_t>(i);
  }
  // With the afm specials the vocabulary speaks the afm chat template (ARCHITECTURE.md section
  // 5), so tokenizer_config.json carries it and `afm chat` / exported models can use it.
  if (std::find(o.special_tokens.begin(), o.special_tokens.end(), "<turn_start>") !=
      o.special_tokens.end())
    spec.chat_template = afm_chat_template_jinja();
  spec.pre_regex = trainer_pre_regex(o.pre_tokenizer);
  spec.pre_name = pre_name_for_regex(spec.pre_regex);
  // Llama-3 tokenizers use a pre-token that is itself a token whole; llama.cpp assumes so.
  spec.ignore_merges = spec.pre_name == "llama-bpe";
  return spec;
}

WordCountOptions count_options(const BpeTrainerOptions& o, uint64_t total_bytes) {
  WordCountOptions c;
  c.pre_regex = trainer_pre_regex(o.pre_tokenizer);
  c.cut_strings = o.special_tokens;
  c.threads = o.threads;
  c.chunk_bytes = o.chunk_bytes;
  c.total_bytes = total_bytes;
  if (o.progress) {
    c.progress = [&o](uint64_t done, uint64_t total) {
      o.progress(BpeTrainStage::kCounting, done, total);
    };
  }
  return c;
}

BpeTrainResult train_on_counts(const WordCounts& counts, const BpeTrainerOptions& o) {
  int32_t byte_ids[256];
  BpeMerger merger(starting_vocabulary(o.special_tokens, byte_ids), byte_ids, counts.words);
  merger.run(o.vocab_size, o.min_frequency, [&o](uint64_t done, uint64_t total) {
    if (o.progress) o.progress(BpeTrainStage::kMerging, done, total);
  });
  BpeTrainResult result;
  result.spec = make_spec(merger, o);
  result.distinct_words = counts.words.size();
  result.total_words = counts.total;
  return result;
}

// Size of a file that must be readable; checked for every input before any work starts.
uint64_t input_file_size(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw_error(ErrorCode::kIo, "cannot read input '" + path + "': " +
                                    (ec ? ec.message() : std::string("not a regular file")));
  }
  uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw_error(ErrorCode::kIo, "cannot read input '" + path + "': " + ec.message());
  return size;
}

}  // namespace

const std::string& afm_chat_template_jinja() {
  static const std::string kTemplate =
      "{% for message in messages %}<turn_start> {{ message['role'] }}\n"
      "{{ message['content'] }}<turn_end>{% endfor %}"
      "{% if add_generation_prompt %}<turn_start> assistant\n{% endif %}";
  return kTemplate;
}

const std::vector<std::string>& afm_special_tokens() {
  static const std::vector<std::string> kTokens = {"<|endoftext|>", "<turn_start>", "<turn_end>",
                                                   "<executable_start>", "<executable_end>"};
  return kTokens;
}

std::string trainer_pre_regex(const std::string& name) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"qwen2", "qwen2"},      {"gpt2", "gpt-2"},          {"gpt-2", "gpt-2"},
      {"llama3", "llama-bpe"}, {"llama-bpe", "llama-bpe"},
  };
  for (const auto& [alias, llama_cpp_name] : kNames) {
    if (name == alias) return pre_regex_for_name(llama_cpp_name);
  }
  invalid("unknown pre-tokenizer '" + name + "' (qwen2, gpt2, llama3)");
}

BpeTrainResult train_bpe_from_texts(const std::vector<std::string_view>& documents,
                                    const BpeTrainerOptions& options) {
  validate(options);
  return train_on_counts(count_words(documents, count_options(options, 0)), options);
}

BpeTrainResult train_bpe_from_files(const std::vector<std::string>& paths,
                                    const BpeTrainerOptions& options) {
  // Files are mapped a batch at a time: the number of mappings a process may hold is limited.
  constexpr size_t kBatchFiles = 1024;
  constexpr uint64_t kBatchBytes = uint64_t{1} << 30;
  validate(options);
  if (paths.empty()) invalid("no input files");
  uint64_t total = 0;
  for (const std::string& path : paths) total += input_file_size(path);
  WordCounter counter(count_options(options, total));
  for (size_t next = 0; next < paths.size();) {
    std::vector<MappedFile> files;
    std::vector<std::string_view> documents;
    uint64_t bytes = 0;
    for (; next < paths.size() && files.size() < kBatchFiles && bytes < kBatchBytes; ++next) {
      files.push_back(MappedFile::open(paths[next]));
      documents.emplace_back(reinterpret_cast<const char*>(files.back().data()),
                             files.back().size());
      bytes += files.back().size();
    }
    counter.add(documents);
  }
  return train_on_counts(counter.finish(), options);
}

void write_trained_tokenizer(const VocabSpec& spec, const std::string& out_dir) {
  std::string json = to_tokenizer_json(spec);
  std::string config = to_tokenizer_config_json(spec);
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw_error(ErrorCode::kIo, "cannot create directory " + out_dir + ": " + ec.message());
  std::filesystem::path dir(out_dir);
  write_file_atomic((dir / "tokenizer.json").string(), json);
  write_file_atomic((dir / "tokenizer_config.json").string(), config);
}

}  // namespace afm::tokenizer
