// The training-side models: one torch::nn::Module per architecture family, all behind
// LanguageModel. Each parameter is registered under its GGUF tensor name (docs/gguf.md), in
// the runtime's orientation (rows = outputs), so export is a rename-free copy.
//
// Contract: forward() takes token ids (B, T) int64 on the model's device and returns logits
// (B, T, vocab) in float32; positions are 0 .. T-1, or with `packing` (torch_ops.h) each
// packed document's own, attention kept inside documents. aux_loss() is the load-balancing loss of
// the last forward (a zero scalar for models without experts). Not thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "train/decoder_layer.h"
#include "train/model_config.h"

namespace afm::train {

struct NamedParameter {
  std::string gguf_name;
  torch::Tensor tensor;
  bool decay;  // AdamW weight decay applies (matrices and embeddings, not norms)
};

struct LoraSpec {
  int64_t rank = 32;
  double alpha = 16;   // the branch's scale is alpha / rank
  double dropout = 0;  // on the branch's input, while training
  // Weight kinds, the GGUF tensor name without layer prefix and ".weight" ("attn_q",
  // "ffn_up_exps" ...); empty: default_lora_targets().
  std::vector<std::string> targets;
};

// Quantization-aware training (the report's section 6; fake_quant.h).
struct QatSpec {
  bool weights_2bit = true;     // every projection matrix as q2_b, with a learnable factor f
  bool embedding_4bit = true;   // the tied embedding (and output head) as q4_0
  double ema_decay = 0.999;     // EMA of the weights for evaluation and export (0: none)
};

// The report's adapter toolkit's choice: every attention projection and feed-forward matrix
// (afm-device's Block-2 layers have no K/V, so q, output and the FFN there), not the routers.
std::vector<std::string> default_lora_targets(const std::string& arch);

// One adapted weight: its GGUF name and the branch's factors (lora_weight.h shapes).
struct LoraPair {
  std::string base_name;
  torch::Tensor a, b;
};

class LanguageModel : public torch::nn::Module {
 public:
  explicit LanguageModel(ModelConfig config) : config_(std::move(config)) {}

  torch::Tensor forward(const torch::Tensor& tokens, const Packing& packing = {}) {
    return head(hidden(tokens, packing));
  }
  // The last layer's output before the final norm and the tied head: (B, T, d).
  virtual torch::Tensor hidden(const torch::Tensor& tokens, const Packing& packing = {}) = 0;
  // Final norm and tied head on states (..., d): logits (..., vocab) in float32.
  torch::Tensor head(const torch::Tensor& x) const;
  virtual torch::Tensor aux_loss() const;

  const ModelConfig& config() const { return config_; }
  const std::vector<NamedParameter>& gguf_parameters() const { return params_; }

  // Throws afm::Error(kInvalidArgument) for a rank below 1, a dropout outside [0, 1), a kind
  // the model has no weight of (naming the kinds it has), or a second call. A starts uniform in
  // +-1/sqrt(in) from torch's generator, B at zero, so the function is unchanged.
  void attach_lora(const LoraSpec& spec);
  bool has_lora() const { return !lora_params_.empty(); }
  const LoraSpec& lora_spec() const { return lora_spec_; }
  std::vector<LoraPair> lora_pairs() const;
  // The weights attach_lora(spec) would adapt, by GGUF name, without attaching anything (the
  // same errors for unknown kinds).
  std::vector<std::pair<std::string, torch::Tensor>> lora_targets(const LoraSpec& spec) const;
  // Folds every branch into its weight (W += s B A) and removes the branches.
  void merge_lora();
  // false: forward() computes the base model alone (the branches stay, untouched).
  void set_lora_enabled(bool enabled);
  // QAT: fake-quantizes every projection matrix whose rows split into 128-value blocks (each
  // with its factor f, initialised by initial_q2b_factor, gradient scaled by 1 / sqrt(rows))
  // and the embedding; turns weight decay off (the report: decay would pull weights to the
  // zero the balanced grid does not have). Throws afm::Error(kInvalidArgument) after LoRA or a
  // second call. The factors are trainable parameters named "<tensor>.qat_f" (never exported).
  void attach_qat(const QatSpec& spec);
  bool has_qat() const { return qat_.has_value(); }
  const std::optional<QatSpec>& qat_spec() const { return qat_; }
  // GGUF tensor name -> its learned factor f, for the export.
  std::vector<std::pair<std::string, double>> qat_factors() const;
  // Called by the training loop after each optimiser step: updates the EMA (QAT) with the
  // decay min(ema_decay, (1 + t) / (10 + t)) at update t (TensorFlow's EMA with num_updates).
  void after_optimizer_step();
  // Copies the EMA into the weights (QAT with ema_decay > 0; no-op otherwise): before the
  // final evaluation and the export.
  void load_ema_weights();
  // Training state that is not optimised but must survive a resume (the EMA of every
  // parameter, then its update count), saved by the checkpoint under its own names.
  const std::vector<NamedParameter>& extra_state() const { return ema_; }
  // What the optimiser updates and checkpoints hold: the LoRA factors once attached, otherwise
  // every parameter (and the QAT factors).
  const std::vector<NamedParameter>& trainable_parameters() const {
    return has_lora() ? lora_params_ : (has_qat() ? qat_trainable_ : params_);
  }
  std::vector<torch::Tensor> trainable_tensors() const;
  int64_t trainable_count() const;  // values in trainable_tensors()

 protected:
  // Registers a trainable tensor under `gguf_name` ('.' becomes '_' in torch's own name).
  torch::Tensor add(const std::string& gguf_name, torch::Tensor init, bool decay);
  // A projection matrix (or stacked experts) that LoRA can adapt.
  Weight add_weight(const std::string& gguf_name, torch::Tensor init, bool decay);
  std::set<std::string> lora_target_kinds(const LoraSpec& spec) const;
  void add_lora_branch(const std::string& name, const Weight& w, const LoraSpec& spec);
  torch::Tensor normal(std::vector<int64_t> shape, double std) const;
  torch::Tensor ones(std::vector<int64_t> shape) const;

  // x (B, T) ids -> (B, T, d) rows of the tied embedding.
  torch::Tensor embed(const torch::Tensor& tokens) const;
  // The embedding the forward pass uses: token_embd_, or its fake-quantized values under QAT.
  torch::Tensor embedding_table() const;
  void add_embedding_and_output_norm();
  // `prefix` is the GGUF layer prefix ("blk.3." or "trk.1.blk.3.").
  AttentionParams add_attention(const std::string& prefix, bool with_kv, bool qk_norm);
  FfnParams add_ffn(const std::string& prefix);
  double residual_std() const;  // init std of output projections
  // `packing`: the mask of packed rows is set on the spec (undefined tensors when not packed).
  AttentionSpec attention_spec(const RopeTable* rope, int64_t window,
                               const torch::Tensor& same_segment = {}) const;

  ModelConfig config_;
  std::vector<NamedParameter> params_;
  std::vector<std::pair<std::string, Weight>> weights_;  // the adaptable ones, by GGUF name
  std::vector<NamedParameter> lora_params_;
  LoraSpec lora_spec_;
  std::optional<QatSpec> qat_;
  std::vector<NamedParameter> qat_factors_, qat_trainable_, ema_;
  torch::Tensor token_embd_, output_norm_;
};

// Builds the model for config.arch with seeded random initialisation (normal 0.02; residual
// output projections scaled by 1/sqrt(2 x layers), norms 1).
std::shared_ptr<LanguageModel> make_language_model(const ModelConfig& config, uint64_t seed);

}  // namespace afm::train
