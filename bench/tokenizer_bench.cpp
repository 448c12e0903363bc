// Timing half of bench/tokenizer_bench.py: encodes every line of a file with one tokenizer on
// one thread, after one untimed warm-up pass, and prints the best time of N passes in seconds.
//   tokenizer_bench TOKENIZER_JSON TEXT_FILE [REPEATS]
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "tokenizer/tokenizer.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: tokenizer_bench TOKENIZER_JSON TEXT_FILE [REPEATS]\n");
    return 2;
  }
  auto tok = afm::tokenizer::Tokenizer::from_json_file(argv[1]);
  std::vector<std::string> lines;
  std::istringstream in(afm::read_file_to_string(argv[2]));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  int repeats = argc > 3 ? std::stoi(argv[3]) : 3;
  size_t sink = 0;
  for (const std::string& line : lines) sink += tok.encode(line).size();
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (const std::string& line : lines) sink += tok.encode(line).size();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("%.6f %zu\n", best, sink);
  return 0;
}
