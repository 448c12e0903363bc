// The SVD step before ASTC (svd_split.h): the principal part is the truncated SVD, exact for a
// matrix of that rank, per expert for stacks; subtracting it and starting an adapter from the
// original's principal part gives back the original function.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/error.h"
#include "tiny_config.h"
#include "train/gguf_export.h"
#include "train/gguf_import.h"
#include "train/svd_split.h"

namespace afm::train {
namespace {

namespace fs = std::filesystem;

TEST(PrincipalPart, IsTheTruncatedSvd) {
  torch::manual_seed(3);
  // A rank-3 matrix is rebuilt exactly by its rank-3 part.
  const torch::Tensor low = torch::matmul(torch::randn({20, 3}), torch::randn({3, 12}));
  const LowRank p3 = principal_part(low, 3);
  EXPECT_EQ(p3.a.sizes(), (std::vector<int64_t>{3, 12}));
  EXPECT_EQ(p3.b.sizes(), (std::vector<int64_t>{20, 3}));
  EXPECT_LT((torch::matmul(p3.b, p3.a) - low).abs().max().item<double>(), 1e-5);
  // Otherwise the residual's largest singular value is the (r + 1)-th of the matrix
  // (Eckart-Young), and both factors carry S^1/2 (equal norms row by row).
  const torch::Tensor w = torch::randn({16, 10});
  const torch::Tensor s = at::linalg_svdvals(w);
  const LowRank p4 = principal_part(w, 4);
  const torch::Tensor rest = at::linalg_svdvals(w - torch::matmul(p4.b, p4.a));
  EXPECT_NEAR(rest[0].item<double>(), s[4].item<double>(), 1e-4);
  EXPECT_LT((p4.a.norm(2, {1}) - p4.b.norm(2, {0})).abs().max().item<double>(), 1e-4);
  // Stacks: each expert on its own.
  const torch::Tensor stack = torch::stack({w, 2 * w.flip(0)});
  const LowRank ps = principal_part(stack, 4);
  EXPECT_LT((torch::matmul(ps.b[1], ps.a[1]) - 2 * torch::matmul(p4.b, p4.a).flip(0)).abs().max().item<double>(), 1e-4);
  EXPECT_THROW(principal_part(w, 11), Error);
}

class SvdSplit : public ::testing::TestWithParam<std::string> {};

TEST_P(SvdSplit, ResidualPlusPrincipalAdapterIsTheOriginal) {
  const fs::path dir = fs::temp_directory_path() /
                       ("afm_svd_split_" + GetParam() + std::to_string(::getpid()));
  fs::create_directories(dir);
  const ModelConfig config = testing::tiny_config(GetParam());
  const std::shared_ptr<LanguageModel> original = make_language_model(config, 5);
  const std::string original_path = (dir / "original.gguf").string();
  export_gguf(*original, ExportOptions{}, original_path);

  const std::shared_ptr<LanguageModel> split = import_gguf_model(original_path).model;
  LoraSpec spec;
  spec.rank = 4;
  spec.alpha = 8;
  EXPECT_GT(subtract_principal_parts(*split, spec), 0);
  EXPECT_FALSE(split->has_lora());
  const torch::Tensor tokens = torch::randint(config.vocab_size, {2, 9});
  torch::NoGradGuard no_grad;
  const torch::Tensor want = original->forward(tokens);
  EXPECT_GT((split->forward(tokens) - want).abs().max().item<double>(), 1e-2);  // it lost something

  split->attach_lora(spec);
  init_lora_from_principal_parts(*split, original_path);
  EXPECT_LT((split->forward(tokens) - want).abs().max().item<double>(), 1e-3);
  fs::remove_all(dir);
}

// afm-server: stacked experts, each expert's matrix split on its own.
INSTANTIATE_TEST_SUITE_P(Architectures, SvdSplit, ::testing::Values("afm-device", "afm-server"));

}  // namespace
}  // namespace afm::train
