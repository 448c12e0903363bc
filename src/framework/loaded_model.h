// A model ready for chat: weights, tokenizer, chat template and the token vocabularies the
// guided engine needs, loaded once and shared (read-only) by sessions and the server.
//
// Errors: load() throws afm::Error naming the file (kIo, kFormat) or the unsupported chat
// template (kUnsupported); a model without a chat template loads, and chat_template() throws
// when first needed, so `availability()` can report the reason instead.
// Thread safety: immutable after load; share it through std::shared_ptr<const LoadedModel>.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "framework/chat_template.h"
#include "guided/token_vocabulary.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace afm {

// The guided engine's view of a tokenizer: every token's bytes, special flags, and `end_id` as
// the token allowed exactly when a grammar is complete (nullopt: none). Its JSON loop indexes
// are prepared (guided/vocabulary_warmup.h), so the first guided request does not build them.
std::shared_ptr<const guided::TokenVocabulary> make_token_vocabulary(
    const tokenizer::Tokenizer& tokenizer, std::optional<int32_t> end_id);

// The tokenizer stored in a model's GGUF; Error(kFormat) naming `path` when it has more tokens
// than the model has embeddings.
std::unique_ptr<tokenizer::Tokenizer> load_model_tokenizer(const model::Model& model,
                                                           const std::string& path);

class LoadedModel {
 public:
  static std::shared_ptr<const LoadedModel> load(const std::string& path);

  const std::string& path() const { return path_; }
  // The id clients use: the file name without ".gguf".
  const std::string& id() const { return id_; }
  std::shared_ptr<const model::Model> weights() const { return model_; }
  const tokenizer::Tokenizer& tokenizer() const { return *tokenizer_; }
  // nullopt when the model has no chat template afm implements; unavailable_reason() says why.
  const std::optional<ChatTemplate>& chat_template() const { return template_; }
  const std::string& unavailable_reason() const { return unavailable_reason_; }
  int64_t training_context() const;

  // Vocabulary whose "end" token (allowed exactly when a grammar is complete) is `end_id`;
  // built on first use per id and cached.
  std::shared_ptr<const guided::TokenVocabulary> vocabulary(int32_t end_id) const;
  // Heap bytes of the loop indexes the vocabularies built so far (bounded; for metrics).
  size_t loop_index_bytes() const;

  ~LoadedModel();

 private:
  LoadedModel() = default;
  class VocabularyCache;

  std::string path_, id_;
  std::shared_ptr<const model::Model> model_;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
  std::optional<ChatTemplate> template_;
  std::string unavailable_reason_;
  std::unique_ptr<VocabularyCache> vocabularies_;
};

}  // namespace afm
