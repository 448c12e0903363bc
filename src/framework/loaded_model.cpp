#include "framework/loaded_model.h"

#include <filesystem>
#include <map>
#include <mutex>

#include "base/error.h"
#include "guided/vocabulary_warmup.h"
#include "model/registry.h"

namespace afm {

class LoadedModel::VocabularyCache {
 public:
  std::mutex mutex;
  std::map<int32_t, std::shared_ptr<const guided::TokenVocabulary>> by_end_id;
};

std::shared_ptr<const guided::TokenVocabulary> make_token_vocabulary(
    const tokenizer::Tokenizer& tokenizer, std::optional<int32_t> end_id) {
  std::vector<std::string> bytes(static_cast<size_t>(tokenizer.vocab_size()));
  std::vector<bool> special(bytes.size());
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    bytes[static_cast<size_t>(id)] = tokenizer.token_bytes(id);
    special[static_cast<size_t>(id)] = tokenizer.is_special(id);
  }
  auto vocabulary =
      std::make_shared<const guided::TokenVocabulary>(std::move(bytes), std::move(special), end_id);
  guided::prepare_json_loop_indexes(vocabulary);
  return vocabulary;
}

std::unique_ptr<tokenizer::Tokenizer> load_model_tokenizer(const model::Model& model,
                                                           const std::string& path) {
  auto tok = std::make_unique<tokenizer::Tokenizer>(tokenizer::Tokenizer::from_gguf(model.file()));
  if (tok->vocab_size() > model.hparams().n_vocab) {
    throw_error(ErrorCode::kFormat, path + ": the tokenizer has " +
                                        std::to_string(tok->vocab_size()) +
                                        " tokens but the model only " +
                                        std::to_string(model.hparams().n_vocab));
  }
  return tok;
}

LoadedModel::~LoadedModel() = default;

std::shared_ptr<const LoadedModel> LoadedModel::load(const std::string& path) {
  std::shared_ptr<LoadedModel> m(new LoadedModel());
  m->path_ = path;
  m->id_ = std::filesystem::path(path).stem().string();
  m->model_ = model::load_model(path);
  m->tokenizer_ = load_model_tokenizer(*m->model_, path);
  try {
    m->template_ = ChatTemplate::from_jinja(m->tokenizer_->chat_template());
  } catch (const Error& e) {
    m->unavailable_reason_ = e.what();
  }
  m->vocabularies_ = std::make_unique<VocabularyCache>();
  return m;
}

int64_t LoadedModel::training_context() const { return model_->hparams().n_ctx_train; }

std::shared_ptr<const guided::TokenVocabulary> LoadedModel::vocabulary(int32_t end_id) const {
  std::lock_guard<std::mutex> lock(vocabularies_->mutex);
  auto& slot = vocabularies_->by_end_id[end_id];
  if (!slot) slot = make_token_vocabulary(*tokenizer_, end_id);
  return slot;
}

size_t LoadedModel::loop_index_bytes() const {
  std::lock_guard<std::mutex> lock(vocabularies_->mutex);
  size_t bytes = 0;
  for (const auto& [end_id, vocabulary] : vocabularies_->by_end_id) {
    if (vocabulary) bytes += vocabulary->loop_index_bytes();
  }
  return bytes;
}

}  // namespace afm
