// `afm convert HF_DIR OUT.gguf [--type f32|f16|bf16|q8_0|q4_0|q2_b]` (docs/convert.md).
#include <cstdio>
#include <memory>
#include <string>

#include "base/error.h"
#include "command.h"
#include "gguf/types.h"
#include "hf/converter.h"
#include "quant/tensor_encode.h"

namespace afm::cli {

namespace {

struct ConvertArgs {
  std::string hf_dir, out, type = "f16";
};

void run_convert(const ConvertArgs& args) {
  auto type = gguf::tensor_type_from_name(args.type);
  if (!type || !quant::can_encode(*type) || *type == gguf::TensorType::kASTC6X6) {
    throw_error(ErrorCode::kInvalidArgument,
                "--type '" + args.type + "' is not one of f32, f16, bf16, q8_0, q4_0, q2_b");
  }
  hf::ConvertOptions opt{args.hf_dir, args.out, *type};
  hf::ConvertResult r = hf::convert_hf_to_gguf(opt);
  std::fprintf(stderr, "converted %s (%s): %llu tensors, %.2f MB -> %s\n", args.hf_dir.c_str(),
               r.architecture.c_str(), static_cast<unsigned long long>(r.tensor_count),
               static_cast<double>(r.tensor_bytes) / 1e6, args.out.c_str());
}

void setup_convert(CLI::App& root) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* cmd = root.add_subcommand("convert", "Convert a Hugging Face model folder to GGUF");
  cmd->add_option("hf_dir", args->hf_dir, "Folder with config.json, *.safetensors, tokenizer.json")
      ->required();
  cmd->add_option("out", args->out, "Output GGUF file (written atomically)")->required();
  cmd->add_option("--type", args->type, "Weight type: f32, f16 (default), bf16, q8_0, q4_0, q2_b (balanced 2-bit)");
  cmd->callback([args] { run_convert(*args); });
}

}  // namespace

AFM_COMMAND(convert, setup_convert);

}  // namespace afm::cli
