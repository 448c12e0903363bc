#include "data/shard_builder.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/mapped_file.h"
#include "base/progress.h"
#include "base/thread_pool.h"
#include "data/document_io.h"
#include "data/file_digest.h"
#include "data/hash_mix.h"
#include "data/shard_format.h"
#include "data/shard_writer.h"

namespace afm::data {
namespace {

constexpr size_t kBatchBytes = 8u << 20;  // text encoded per parallel step
constexpr int kMaxThreads = 1024;

void check_options(const ShardOptions& o) {
  auto bad = [](const std::string& what) { throw_error(ErrorCode::kInvalidArgument, what); };
  if (o.inputs.empty()) bad("shards needs at least one --input file");
  if (!std::isfinite(o.val_fraction) || o.val_fraction < 0 || o.val_fraction > 1) {
    bad("--val-fraction must be between 0 and 1, got " + std::to_string(o.val_fraction));
  }
  if (o.shard_tokens == 0) bad("--shard-tokens must be positive");
  if (o.threads < 1 || o.threads > kMaxThreads) {
    bad("-t must be between 1 and " + std::to_string(kMaxThreads));
  }
}

struct EncodeFailure {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

// Encodes docs[i] into out[i] on the pool, thread t with tokenizers[t]; the first failure is
// rethrown on this thread, naming the input and the document's global index.
void encode_batch(ThreadPool& pool, const std::vector<tokenizer::Tokenizer>& tokenizers,
                  std::span<const std::string_view> docs, std::vector<std::vector<int32_t>>& out,
                  const std::string& input, uint64_t first_index) {
  out.assign(docs.size(), {});
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::optional<EncodeFailure> failure;
  pool.run([&](int thread, int) {
    const tokenizer::Tokenizer& tok = tokenizers[static_cast<size_t>(thread)];
    for (size_t i = next++; i < docs.size(); i = next++) {
      try {
        out[i] = tok.encode(docs[i]);
      } catch (const std::exception& e) {
        const auto* err = dynamic_cast<const Error*>(&e);
        std::lock_guard<std::mutex> lock(mu);
        if (!failure) {
          failure = EncodeFailure{
              err ? err->code() : ErrorCode::kInternal,
              input + " document " + std::to_string(first_index + i) + ": " + e.what()};
        }
      }
    }
  });
  if (failure) throw_error(failure->code, failure->message);
}

// Document ranges of about kBatchBytes (at least one document each).
size_t batch_end(std::span<const std::string_view> docs, size_t begin) {
  size_t end = begin, bytes = 0;
  while (end < docs.size() && (end == begin || bytes + docs[end].size() <= kBatchBytes)) {
    bytes += docs[end++].size();
  }
  return end;
}

// "1.2M tok/s" for the progress bar.
std::string tokens_per_second(uint64_t tokens, std::chrono::steady_clock::time_point start) {
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fM tok/s", secs > 0 ? tokens / secs / 1e6 : 0.0);
  return buf;
}

}  // namespace

bool is_validation_document(uint64_t seed, uint64_t index, double val_fraction) {
  return unit_interval(mix64(seed, index)) < val_fraction;
}

int32_t choose_eos_id(const tokenizer::Tokenizer& tok, const std::string& eos_token,
                      const std::string& tokenizer_name) {
  if (!eos_token.empty()) {
    if (auto id = tok.added_token_id(eos_token)) return *id;
    throw_error(ErrorCode::kInvalidArgument,
                "--eos " + eos_token + " is not an added token of " + tokenizer_name);
  }
  if (auto id = tok.added_token_id("<|endoftext|>")) return *id;
  if (auto id = tok.eos_id()) return *id;
  throw_error(ErrorCode::kInvalidArgument,
              tokenizer_name +
                  " has no <|endoftext|> token and no eos token; name the document "
                  "separator with --eos TOKEN");
}

ShardResult build_shards(const ShardOptions& o) {
  check_options(o);
  const auto start = std::chrono::steady_clock::now();
  // One tokenizer per thread: each keeps its own word cache, which threads would otherwise
  // take turns to lock.
  std::vector<tokenizer::Tokenizer> tokenizers;
  for (int t = 0; t < o.threads; ++t) {
    tokenizers.push_back(tokenizer::Tokenizer::from_json_file(o.tokenizer_path));
  }
  const tokenizer::Tokenizer& tok = tokenizers[0];
  ShardResult result;
  ShardMeta& meta = result.meta;
  meta.tokenizer_sha256 = sha256_file(o.tokenizer_path);
  meta.vocab_size = static_cast<uint32_t>(tok.vocab_size());
  meta.eos_id = choose_eos_id(tok, o.eos_token, o.tokenizer_path);
  meta.token_bytes = token_bytes_for_vocab(meta.vocab_size);
  meta.seed = o.seed;
  meta.val_fraction = o.val_fraction;

  std::vector<MappedFile> files;
  for (const std::string& path : o.inputs) {
    files.push_back(MappedFile::open(path));
    result.input_bytes += files.back().size();
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) throw_error(ErrorCode::kIo, "cannot create " + o.out_dir.string() + ": " + ec.message());

  std::unique_ptr<ProgressBar> bar;
  if (o.progress) bar = std::make_unique<ProgressBar>("shards", result.input_bytes);
  ThreadPool pool(o.threads);
  SplitWriter train(o.out_dir, "train", meta.vocab_size, o.shard_tokens);
  SplitWriter val(o.out_dir, "val", meta.vocab_size, o.shard_tokens);
  uint64_t index = 0, done_before = 0;
  std::vector<std::vector<int32_t>> encoded;
  for (size_t f = 0; f < files.size(); ++f) {
    const std::string_view text(reinterpret_cast<const char*>(files[f].data()), files[f].size());
    const std::vector<std::string_view> docs = split_documents(text);
    meta.inputs.push_back({o.inputs[f], files[f].size(), docs.size()});
    for (size_t begin = 0; begin < docs.size();) {
      const size_t end = batch_end(docs, begin);
      const std::span<const std::string_view> batch(docs.data() + begin, end - begin);
      encode_batch(pool, tokenizers, batch, encoded, o.inputs[f], index);
      for (std::vector<int32_t>& ids : encoded) {
        ids.push_back(meta.eos_id);
        (is_validation_document(o.seed, index++, o.val_fraction) ? val : train).add_document(ids);
      }
      if (bar) {
        bar->set_detail(tokens_per_second(train.tokens() + val.tokens(), start));
        bar->update(done_before + (docs[end - 1].data() + docs[end - 1].size() - text.data()));
      }
      begin = end;
    }
    done_before += files[f].size();
  }
  meta.train = {train.finish(), train.tokens(), train.documents()};
  meta.val = {val.finish(), val.tokens(), val.documents()};
  write_file_atomic((o.out_dir / "meta.json").string(), meta.to_json().dump(2) + "\n");
  if (bar) {
    bar->update(result.input_bytes);
    bar->finish();
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace afm::data
