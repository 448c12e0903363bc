// `afm quantize IN.gguf OUT.gguf --type T [--embedding-type T] [--output-type T] [--keep S]...
// [--json]`: a model re-encoded in another weight type (model_quantize.h, docs/compression.md).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "command.h"
#include "gguf/reader.h"
#include "model_quantize.h"
#include "quant/tensor_encode.h"

namespace afm::cli {
namespace {

struct QuantizeArgs {
  std::string in, out, type, embedding_type, output_type;
  std::vector<std::string> keep;
  std::string astc_offset = "pow2";
  float astc_effort = 60.0f;
  int threads = 0;
  bool json = false;
};

constexpr const char* kTypes = "f32, f16, bf16, q8_0, q4_0, q2_b, astc6x6";

quant::astc::OffsetMode parse_offset(const std::string& name) {
  if (name == "pow2") return quant::astc::OffsetMode::kPowerOfTwo;
  if (name == "min") return quant::astc::OffsetMode::kMinimum;
  throw_error(ErrorCode::kInvalidArgument, "--astc-offset '" + name + "' is not pow2 or min");
}

gguf::TensorType parse_type(const std::string& name, const char* option) {
  const auto type = gguf::tensor_type_from_name(name);
  if (!type || !quant::can_encode(*type)) {
    throw_error(ErrorCode::kInvalidArgument,
                std::string(option) + " '" + name + "' is not one of " + kTypes);
  }
  return *type;
}

std::optional<gguf::TensorType> parse_optional(const std::string& name, const char* option) {
  if (name.empty()) return std::nullopt;
  return parse_type(name, option);
}

nlohmann::ordered_json summary_json(const QuantizeArgs& a, const QuantizeSummary& s) {
  nlohmann::ordered_json types = nlohmann::ordered_json::object();
  for (const auto& [name, t] : s.per_type) {
    types[name] = {{"tensors", t.tensors}, {"elements", t.elements}, {"bytes", t.bytes}};
  }
  return {{"input", a.in},         {"output", a.out},
          {"type", a.type},        {"tensors", s.tensors},
          {"converted", s.converted}, {"kept", s.kept},
          {"f16_fallbacks", s.fallbacks}, {"bytes_in", s.bytes_in},
          {"bytes_out", s.bytes_out}, {"tensor_types", types}};
}

void run_quantize(const QuantizeArgs& a) {
  QuantizeOptions o;
  o.type = parse_type(a.type, "--type");
  o.embedding_type = parse_optional(a.embedding_type, "--embedding-type");
  o.output_type = parse_optional(a.output_type, "--output-type");
  o.keep = a.keep;
  o.astc.offset = parse_offset(a.astc_offset);
  o.astc.effort = a.astc_effort;
  o.astc.threads = a.threads > 0 ? a.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  o.progress = !a.json;
  const gguf::File in = gguf::File::open(a.in);
  const QuantizeSummary s = quantize_model(in, a.out, o);
  if (a.json) {
    std::printf("%s\n", summary_json(a, s).dump().c_str());
    return;
  }
  std::fprintf(stderr,
               "quantized %s -> %s: %llu tensors (%llu re-encoded, %llu kept, %llu as f16 "
               "because their rows do not split into blocks), %.2f MB -> %.2f MB\n",
               a.in.c_str(), a.out.c_str(), static_cast<unsigned long long>(s.tensors),
               static_cast<unsigned long long>(s.converted),
               static_cast<unsigned long long>(s.kept),
               static_cast<unsigned long long>(s.fallbacks), static_cast<double>(s.bytes_in) / 1e6,
               static_cast<double>(s.bytes_out) / 1e6);
}

void setup_quantize(CLI::App& root) {
  auto a = std::make_shared<QuantizeArgs>();
  CLI::App* cmd = root.add_subcommand(
      "quantize", "Re-encode a GGUF model's weights in another type (like llama-quantize)");
  cmd->add_option("in", a->in, "Input GGUF model")->required();
  cmd->add_option("out", a->out, "Output GGUF model (written atomically)")->required();
  cmd->add_option("--type", a->type,
                  std::string("Type of the matrices: ") + kTypes +
                      " (q2_b: balanced 2-bit, 2.125 bits per weight, scales picked per 128-value "
                      "block by least squared error; astc6x6: 6x6 tiles as ASTC HDR blocks plus an "
                      "f16 offset each, 4.0 bits per weight, encoded with libastcenc). Norms, "
                      "biases and MoE routers keep their type; a matrix whose rows do not split "
                      "into the type's blocks (32 values, 128 for q2_b) becomes f16")
      ->required();
  cmd->add_option("--astc-offset", a->astc_offset,
                  "astc6x6 tile shift: pow2 (min - B, B = the tile's range rounded up to a power "
                  "of two, values in one binade; default) or min (the tile's minimum, as the "
                  "report describes: about twice the error)")
      ->check(CLI::IsMember({"pow2", "min"}));
  cmd->add_option("--astc-effort", a->astc_effort,
                  "astc6x6 encoder search effort, 0 (fastest) .. 100 (exhaustive); default 60")
      ->check(CLI::Range(0.0f, 100.0f));
  cmd->add_option("--threads,-t", a->threads, "astc6x6 encoder threads (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--embedding-type", a->embedding_type,
                  "Type of token_embd.weight (default: --type; under astc6x6 its own type); with "
                  "tied embeddings it is also the output head");
  cmd->add_option("--output-type", a->output_type,
                  "Type of an untied output.weight (default: --type)");
  cmd->add_option("--keep", a->keep,
                  "Copy tensors whose name contains this text unchanged (repeatable)");
  cmd->add_flag("--json", a->json, "Print a JSON summary (tensors and bytes per type)");
  cmd->callback([a] { run_quantize(*a); });
}

}  // namespace

AFM_COMMAND(quantize, setup_quantize);

}  // namespace afm::cli
