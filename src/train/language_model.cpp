#include "train/language_model.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "base/error.h"

#include "train/dense_model.h"
#include "train/fake_quant.h"
#include "train/server_model.h"
#include "train/torch_ops.h"

namespace afm::train {

torch::Tensor LanguageModel::aux_loss() const {
  return torch::zeros({}, token_embd_.options());
}

namespace {

// torch's module names may not contain '.'.
std::string torch_name(std::string gguf_name) {
  std::replace(gguf_name.begin(), gguf_name.end(), '.', '_');
  return gguf_name;
}

}  // namespace

torch::Tensor LanguageModel::add(const std::string& gguf_name, torch::Tensor init, bool decay) {
  torch::Tensor t = register_parameter(torch_name(gguf_name), std::move(init));
  params_.push_back({gguf_name, t, decay});
  return t;
}

Weight LanguageModel::add_weight(const std::string& gguf_name, torch::Tensor init, bool decay) {
  Weight w(add(gguf_name, std::move(init), decay));
  weights_.emplace_back(gguf_name, w);
  return w;
}

namespace {

// "trk.1.blk.3.ffn_up_exps.weight" -> "ffn_up_exps"
std::string weight_kind(const std::string& gguf_name) {
  std::string s = gguf_name.substr(0, gguf_name.rfind(".weight"));
  return s.substr(s.rfind('.') + 1);
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::vector<std::string> default_lora_targets(const std::string& arch) {
  std::vector<std::string> t = {"attn_q", "attn_k", "attn_v", "attn_output",
                                "ffn_gate", "ffn_up", "ffn_down"};
  if (arch == "afm-server") t.insert(t.end(), {"ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"});
  return t;
}

// The kinds to adapt: the spec's, or the architecture's defaults; each must exist here.
std::set<std::string> LanguageModel::lora_target_kinds(const LoraSpec& spec) const {
  if (has_lora()) throw_error(ErrorCode::kInvalidArgument, "the model already has LoRA branches");
  if (spec.rank < 1)
    throw_error(ErrorCode::kInvalidArgument, "LoRA rank must be at least 1, got " +
                                                 std::to_string(spec.rank));
  if (!(spec.dropout >= 0 && spec.dropout < 1))
    throw_error(ErrorCode::kInvalidArgument, "LoRA dropout must be in [0, 1), got " +
                                                 std::to_string(spec.dropout));
  std::set<std::string> kinds;
  for (const auto& [name, w] : weights_) kinds.insert(weight_kind(name));
  const std::vector<std::string> targets =
      spec.targets.empty() ? default_lora_targets(config_.arch) : spec.targets;
  for (const std::string& t : targets) {
    if (!kinds.count(t))
      throw_error(ErrorCode::kInvalidArgument, "LoRA target " + t + ": " + config_.arch +
                                                   " has no such weight (it has " +
                                                   joined(kinds) + ")");
  }
  return {targets.begin(), targets.end()};
}

// A (rank x in, uniform in +-1/sqrt(in)) and B (out x rank, zero) for one weight; stacked
// experts get one pair per expert.
void LanguageModel::add_lora_branch(const std::string& name, const Weight& w,
                                    const LoraSpec& spec) {
  const torch::Tensor& base = w.tensor();
  const int64_t in = base.size(-1), out = base.size(-2);
  std::vector<int64_t> a_shape{spec.rank, in}, b_shape{out, spec.rank};
  if (base.dim() == 3) {
    a_shape.insert(a_shape.begin(), base.size(0));
    b_shape.insert(b_shape.begin(), base.size(0));
  }
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  const auto opts = base.options().requires_grad(false);
  LoraBranch& l = w.lora();
  l.a = add(name + ".lora_a", torch::empty(a_shape, opts).uniform_(-bound, bound), false);
  l.b = add(name + ".lora_b", torch::zeros(b_shape, opts), false);
  l.scale = spec.alpha / static_cast<double>(spec.rank);
  l.dropout = spec.dropout;
  l.owner = this;
  // add() put them with the base parameters; they belong to the trainable list instead.
  lora_params_.insert(lora_params_.end(), params_.end() - 2, params_.end());
  params_.resize(params_.size() - 2);
}

void LanguageModel::attach_lora(const LoraSpec& spec) {
  const std::set<std::string> wanted = lora_target_kinds(spec);
  for (const NamedParameter& p : params_) p.tensor.requires_grad_(false);
  torch::NoGradGuard no_grad;
  for (const auto& [name, w] : weights_) {
    if (wanted.count(weight_kind(name))) add_lora_branch(name, w, spec);
  }
  lora_spec_ = spec;
  lora_spec_.targets.assign(wanted.begin(), wanted.end());
}

std::vector<std::pair<std::string, torch::Tensor>> LanguageModel::lora_targets(
    const LoraSpec& spec) const {
  const std::set<std::string> wanted = lora_target_kinds(spec);
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& [name, w] : weights_) {
    if (wanted.count(weight_kind(name))) out.emplace_back(name, w.tensor());
  }
  return out;
}

std::vector<LoraPair> LanguageModel::lora_pairs() const {
  std::vector<LoraPair> pairs;
  for (const auto& [name, w] : weights_) {
    if (w.lora().attached()) pairs.push_back({name, w.lora().a, w.lora().b});
  }
  return pairs;
}

void LanguageModel::merge_lora() {
  torch::NoGradGuard no_grad;
  for (const auto& [name, w] : weights_) {
    LoraBranch& l = w.lora();
    if (!l.attached()) continue;
    w.tensor().add_(torch::matmul(l.b, l.a) * l.scale);
    l = LoraBranch{};
  }
  lora_params_.clear();
  for (const NamedParameter& p : params_) p.tensor.requires_grad_(true);
}

void LanguageModel::set_lora_enabled(bool enabled) {
  for (const auto& [name, w] : weights_) w.lora().enabled = enabled;
}

int64_t LanguageModel::trainable_count() const {
  int64_t n = 0;
  for (const NamedParameter& p : trainable_parameters()) n += p.tensor.numel();
  return n;
}

std::vector<torch::Tensor> LanguageModel::trainable_tensors() const {
  std::vector<torch::Tensor> out;
  for (const NamedParameter& p : trainable_parameters()) out.push_back(p.tensor);
  return out;
}

torch::Tensor LanguageModel::normal(std::vector<int64_t> shape, double std) const {
  return torch::randn(shape, torch::kFloat32) * std;
}

torch::Tensor LanguageModel::ones(std::vector<int64_t> shape) const {
  return torch::ones(shape, torch::kFloat32);
}

void LanguageModel::add_embedding_and_output_norm() {
  token_embd_ = add("token_embd.weight",
                    normal({config_.vocab_size, config_.embedding_length}, 0.02), true);
  output_norm_ = add("output_norm.weight", ones({config_.embedding_length}), false);
}

torch::Tensor LanguageModel::embedding_table() const {
  return qat_ && qat_->embedding_4bit ? fake_quant_q4_0(token_embd_) : token_embd_;
}

torch::Tensor LanguageModel::embed(const torch::Tensor& tokens) const {
  return torch::embedding(embedding_table(), tokens);
}

torch::Tensor LanguageModel::head(const torch::Tensor& x) const {
  return torch::matmul(rms_normalize(x, output_norm_, config_.rms_epsilon), embedding_table().t())
      .to(torch::kFloat32);
}

void LanguageModel::attach_qat(const QatSpec& spec) {
  if (has_lora() || qat_) {
    throw_error(ErrorCode::kInvalidArgument,
                "quantization-aware training attaches once, to a model without LoRA branches");
  }
  if (spec.ema_decay < 0 || spec.ema_decay >= 1) {
    throw_error(ErrorCode::kInvalidArgument, "the EMA decay must be in [0, 1)");
  }
  qat_ = spec;
  for (NamedParameter& p : params_) p.decay = false;
  if (spec.weights_2bit) {
    for (const auto& [name, w] : weights_) {
      if (w.tensor().size(-1) % 128 != 0) continue;  // stays as it is (the export keeps f16)
      QuantSlot& q = w.quant();
      q.factor = torch::tensor(initial_q2b_factor(w.tensor()), w.tensor().options());
      q.factor.set_requires_grad(true);
      q.gradient_scale = 1.0 / std::sqrt(static_cast<double>(w.tensor().numel() / w.tensor().size(-1)));
      q.factor = register_parameter(torch_name(name + ".qat_f"), q.factor);
      qat_factors_.push_back({name + ".qat_f", q.factor, false});
    }
  }
  qat_trainable_ = params_;
  qat_trainable_.insert(qat_trainable_.end(), qat_factors_.begin(), qat_factors_.end());
  if (spec.ema_decay > 0) {
    // Buffers, so that moving the model to a device moves them with the weights.
    torch::NoGradGuard no_grad;
    auto add_state = [&](const std::string& name, torch::Tensor init) {
      ema_.push_back({name, register_buffer(torch_name(name), std::move(init)), false});
    };
    for (const NamedParameter& p : params_) add_state(p.gguf_name + ".ema", p.tensor.detach().clone());
    add_state("qat.ema_updates", torch::zeros({}, torch::kFloat64));
  }
}

std::vector<std::pair<std::string, double>> LanguageModel::qat_factors() const {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [name, w] : weights_) {
    if (w.quant().attached()) out.emplace_back(name, w.quant().factor.item<double>());
  }
  return out;
}

void LanguageModel::after_optimizer_step() {
  if (ema_.empty()) return;
  torch::NoGradGuard no_grad;
  // The last entry counts the updates: the decay ramps up as (1 + t) / (10 + t) to its set
  // value, so a short run's EMA is not mostly its starting point (0.999^300 = 0.74).
  torch::Tensor& updates = ema_.back().tensor;
  const double t = updates.item<double>();
  const double decay = std::min(qat_->ema_decay, (1 + t) / (10 + t));
  for (size_t i = 0; i + 1 < ema_.size(); ++i) {
    ema_[i].tensor.lerp_(params_[i].tensor.detach(), 1.0 - decay);
  }
  updates.add_(1);
}

void LanguageModel::load_ema_weights() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i + 1 < ema_.size(); ++i) params_[i].tensor.copy_(ema_[i].tensor);
}

double LanguageModel::residual_std() const {
  const int64_t layers = config_.block_count * (config_.arch == "afm-server" ? config_.tracks : 1);
  return 0.02 / std::sqrt(2.0 * static_cast<double>(layers));
}

AttentionParams LanguageModel::add_attention(const std::string& prefix, bool with_kv,
                                             bool qk_norm) {
  const int64_t d = config_.embedding_length, hd = config_.effective_head_dim();
  const int64_t q = config_.head_count * hd, kv = config_.head_count_kv * hd;
  AttentionParams p;
  p.norm = add(prefix + "attn_norm.weight", ones({d}), false);
  p.wq = add_weight(prefix + "attn_q.weight", normal({q, d}, 0.02), true);
  if (with_kv) {
    p.wk = add_weight(prefix + "attn_k.weight", normal({kv, d}, 0.02), true);
    p.wv = add_weight(prefix + "attn_v.weight", normal({kv, d}, 0.02), true);
  }
  if (qk_norm) {
    p.q_norm = add(prefix + "attn_q_norm.weight", ones({hd}), false);
    if (with_kv) p.k_norm = add(prefix + "attn_k_norm.weight", ones({hd}), false);
  }
  p.wo = add_weight(prefix + "attn_output.weight", normal({d, q}, residual_std()), true);
  return p;
}

FfnParams LanguageModel::add_ffn(const std::string& prefix) {
  const int64_t d = config_.embedding_length, f = config_.feed_forward_length;
  FfnParams p;
  p.norm = add(prefix + "ffn_norm.weight", ones({d}), false);
  p.gate = add_weight(prefix + "ffn_gate.weight", normal({f, d}, 0.02), true);
  p.up = add_weight(prefix + "ffn_up.weight", normal({f, d}, 0.02), true);
  p.down = add_weight(prefix + "ffn_down.weight", normal({d, f}, residual_std()), true);
  return p;
}

AttentionSpec LanguageModel::attention_spec(const RopeTable* rope, int64_t window,
                                            const torch::Tensor& same_segment) const {
  AttentionSpec s;
  s.n_head = config_.head_count;
  s.n_head_kv = config_.head_count_kv;
  s.head_dim = config_.effective_head_dim();
  s.rope = rope;
  s.qk_norm_eps = config_.qk_norm_epsilon;
  s.window = window;
  s.same_segment = same_segment;
  return s;
}

std::shared_ptr<LanguageModel> make_language_model(const ModelConfig& config, uint64_t seed) {
  torch::manual_seed(seed);
  if (config.arch == "afm-server") return std::make_shared<ServerModel>(config);
  return std::make_shared<DenseModel>(config);
}

}  // namespace afm::train
