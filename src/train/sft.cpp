#include "train/sft.h"

#include <filesystem>

#include "base/error.h"
#include "train/gguf_export.h"
#include "train/gguf_import.h"
#ifdef AFM_TRAIN_WITH_RUNTIME
#include "train/lora_export.h"
#endif
#include "train/draft_data.h"
#include "train/svd_split.h"
#include "train/training_loop.h"

namespace afm::train {
namespace {

TrainConfig sft_loop_config(const SftOptions& o, const ModelConfig& model) {
  TrainConfig c;
  c.model = model;
  c.seq_len = o.seq_len;
  c.optim = o.optim;
  c.eval_every = o.eval_every;
  c.eval_batches = o.eval_batches;
  c.log_every = o.log_every;
  c.out_dir = o.out_dir;
  c.checkpoint_every = o.checkpoint_every;
  c.seed = o.seed;
  return c;
}

}  // namespace

SftResult run_sft(const SftOptions& o) {
  if (o.out_dir.empty()) throw_error(ErrorCode::kInvalidArgument, "sft needs an output folder");
#ifndef AFM_TRAIN_WITH_RUNTIME
  if (o.lora && !o.merged)
    throw_error(ErrorCode::kUnsupported,
                "this trainer-only build cannot write adapter files (they are checked by the "
                "runtime's writer): add --merged, or build afm-train with the runtime");
#endif
  if (o.qat && o.lora) {
    throw_error(ErrorCode::kInvalidArgument,
                "quantization-aware training runs on the whole model, not with LoRA adapters");
  }
  const ModelConfig model_config = read_gguf_model_config(o.base);
  if (o.seq_len + 1 > model_config.context_length) {
    throw_error(ErrorCode::kInvalidArgument,
                "--seq-len " + std::to_string(o.seq_len) + " is longer than the model's context (" +
                    std::to_string(model_config.context_length) + " tokens, minus one)");
  }
  // Conversations, pretraining token shards, or both in every micro-batch (draft_data.h).
  DraftDataOptions d;
  d.shards = o.shards;
  d.sft = o.data;
  d.sft_share = o.sft_share;
  d.batch_size = o.optim.batch_size;
  d.seq_len = o.seq_len;
  d.eval_batches = o.eval_batches;
  d.seed = o.seed;
  d.vocab_size = model_config.vocab_size;
  const std::unique_ptr<BatchSource> batches = open_draft_data(d);
  const TrainConfig config = sft_loop_config(o, model_config);

  std::shared_ptr<LanguageModel> model;
  SftResult result;
  result.run = run_training(config, o.run,
                            [&] {
                              model = import_gguf_model(o.base).model;
                              if (o.lora) {
                                torch::manual_seed(o.seed);
                                model->attach_lora(*o.lora);
                                if (!o.lora_init_from_svd.empty()) {
                                  init_lora_from_principal_parts(*model, o.lora_init_from_svd);
                                }
                              }
                              if (o.qat) model->attach_qat(*o.qat);
                              return model;
                            },
                            *batches);
  const std::filesystem::path dir(o.out_dir);
  if (o.lora) {
#ifdef AFM_TRAIN_WITH_RUNTIME
    result.adapter_path = (dir / "adapter.gguf").string();
    result.adapted_tensors =
        export_lora_adapter(*model, o.base, {o.adapter_type, "afm-adapter"}, result.adapter_path);
#endif
    if (!o.merged) return result;
    model->merge_lora();
  }
  result.model_path = (dir / "model.gguf").string();
  ExportOptions e{o.export_type, o.base, o.lora ? "afm-merged" : (o.qat ? "afm-qat" : "afm-sft")};
  prepare_qat_export(*model, e);
  export_gguf(*model, e, result.model_path);
  return result;
}

}  // namespace afm::train
