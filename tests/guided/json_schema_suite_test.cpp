// The official JSON Schema Test Suite (draft 2020-12) against compiled grammars.
//
// For every test group whose schema compiles, each instance is serialised canonically
// (canonical_json: compact, integral floats as integers). An instance counts as accepted when
// that text, or the same value with object keys reordered into the order the grammar writes
// them (schema_key_order.h), is fully accepted and complete. Valid instances must be accepted,
// invalid ones rejected. Schemas that do not compile count as unsupported; they must fail with
// afm::Error, never anything else. Set AFM_GUIDED_SUITE_TABLE to a file path to get the
// per-file counts as a Markdown table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "base/error.h"
#include "guided/byte_matcher.h"
#include "guided/json_schema_compiler.h"
#include "guided/schema_key_order.h"

namespace afm::guided {
namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

struct Counts {
  int pass = 0, fail = 0, order_only = 0, by_design = 0, unsupported = 0;
  void add(const Counts& o) {
    pass += o.pass, fail += o.fail, order_only += o.order_only, by_design += o.by_design;
    unsupported += o.unsupported;
  }
};

// Rejecting a valid instance is allowed (counted in by_design) where `reject_ok` says so:
// format is asserted on purpose (the suite's default is annotation-only), and the format
// regexes accept a documented subset of each format.
template <typename RejectOk>
Counts run_file(const fs::path& file, RejectOk reject_ok, Whitespace ws) {
  std::ifstream in(file);
  const Json groups = Json::parse(in);
  Counts c;
  for (const Json& group : groups) {
    std::shared_ptr<const Grammar> grammar;
    try {
      JsonSchemaOptions options;
      options.whitespace = ws;
      grammar = compile_json_schema(group["schema"], options);
    } catch (const Error&) {
      c.unsupported += static_cast<int>(group["tests"].size());
      continue;
    }
    const std::vector<std::string> order = schema_key_order(group["schema"]);
    for (const Json& test : group["tests"]) {
      const bool valid = test["valid"].get<bool>();
      const bool as_is = ByteMatcher::matches(grammar, canonical_json(test["data"], ws));
      const bool accepted =
          as_is ||
          ByteMatcher::matches(grammar, canonical_json(in_key_order(test["data"], order), ws));
      if (accepted == valid) {
        ++c.pass;
        if (valid && !as_is) ++c.order_only;
      } else if (valid && reject_ok(group)) {
        ++c.by_design;
      } else {
        ++c.fail;
        ADD_FAILURE() << file.filename() << ": " << group["description"] << " / "
                      << test["description"] << ": " << (valid ? "rejected" : "accepted") << " "
                      << canonical_json(test["data"], ws);
      }
    }
  }
  return c;
}

// table_env: when that variable names a file, the per-file table is written there.
template <typename RejectOk>
void run_suite(const std::string& sub_dir, const char* table_env, RejectOk reject_ok,
               Whitespace ws = Whitespace::kCompact) {
  const char* root = std::getenv("AFM_SOURCE_DIR");
  const fs::path dir = fs::path(root ? root : ".") / ".." / "shared" / "data" /
                       "json-schema-test-suite" / "tests" / sub_dir;
  if (!fs::is_directory(dir)) GTEST_SKIP() << "JSON Schema Test Suite not found at " << dir;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::pair<std::string, Counts>> table;
  Counts total;
  for (const fs::path& file : files) {
    table.emplace_back(file.filename().string(), run_file(file, reject_ok, ws));
    total.add(table.back().second);
  }
  table.emplace_back("**total**", total);
  if (const char* out_path = table_env ? std::getenv(table_env) : nullptr) {
    std::ofstream out(out_path);
    out << "| file | pass | (key order only) | fail | valid but rejected by design | "
           "unsupported |\n|---|---|---|---|---|---|\n";
    for (const auto& [name, c] : table) {
      out << "| " << name << " | " << c.pass << " | " << c.order_only << " | " << c.fail << " | "
          << c.by_design << " | " << c.unsupported << " |\n";
    }
  }
  EXPECT_EQ(total.fail, 0);
}

TEST(JsonSchemaSuite, Draft2020_12) {
  run_suite("draft2020-12", "AFM_GUIDED_SUITE_TABLE", [](const Json& group) {
    const Json& s = group["schema"];
    return s.is_object() && s.contains("format");  // asserted on purpose
  });
}

// The second pass the issue asks for: the same instances written with the spaced whitespace
// policy ({"a": 1, "b": [1, 2]}) against grammars compiled for it.
TEST(JsonSchemaSuite, Draft2020_12SpacedWhitespace) {
  run_suite("draft2020-12", nullptr, [](const Json& group) {
    const Json& s = group["schema"];
    return s.is_object() && s.contains("format");
  }, Whitespace::kSpaced);
}

// The optional ECMA-262 regex file: \\p{..} escapes, Unicode \\d \\w \\s, and what each means in
// `pattern` and `patternProperties`. Every group that compiles must be exact.
TEST(JsonSchemaSuite, Draft2020_12EcmascriptRegex) {
  const char* root = std::getenv("AFM_SOURCE_DIR");
  const fs::path file = fs::path(root ? root : ".") / ".." / "shared" / "data" /
                        "json-schema-test-suite" / "tests" / "draft2020-12" / "optional" /
                        "ecmascript-regex.json";
  if (!fs::exists(file)) GTEST_SKIP() << "JSON Schema Test Suite not found at " << file;
  // \\s generates only the whitespace ECMA-262 and Python's `re` agree on (regex_parser.cpp):
  // U+FEFF and the like are rejected by design.
  const auto disputed_space = [](const Json& group) {
    return group["schema"].dump().find("\\\\s") != std::string::npos;
  };
  const Counts c = run_file(file, disputed_space, Whitespace::kCompact);
  std::cout << "ecmascript-regex.json: " << c.pass << " pass, " << c.by_design
            << " valid but rejected by design, " << c.unsupported << " unsupported\n";
  EXPECT_EQ(c.fail, 0);
  EXPECT_GE(c.pass, 60);  // the \\p groups compile since property escapes exist
}

TEST(JsonSchemaSuite, Draft2020_12FormatAssertions) {
  run_suite("draft2020-12/optional/format", "AFM_GUIDED_FORMAT_TABLE",
            [](const Json&) { return true; });  // the regexes accept a subset of each format
}

}  // namespace
}  // namespace afm::guided
