#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex_splitter.h"

#include <pcre2.h>

#include "base/error.h"

namespace afm::tokenizer {

namespace {

// One match-data block per thread, grown on demand; freed at thread exit.
struct ThreadMatchData {
  pcre2_match_data* data = nullptr;
  ~ThreadMatchData() {
    if (data != nullptr) pcre2_match_data_free(data);
  }
};

pcre2_match_data* thread_match_data() {
  thread_local ThreadMatchData md;
  if (md.data == nullptr) md.data = pcre2_match_data_create(4, nullptr);
  return md.data;
}

}  // namespace

RegexSplitter::RegexSplitter(const std::string& pattern) : pattern_(pattern) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                    PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY, &err,
                    &offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof(msg));
    throw_error(ErrorCode::kFormat,
                "pre-tokenizer regex does not compile at offset " + std::to_string(offset) + ": " +
                    reinterpret_cast<const char*>(msg) + " in /" + pattern + "/");
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter if JIT fails
  code_ = code;
}

RegexSplitter::~RegexSplitter() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

void RegexSplitter::split(std::string_view text, std::vector<std::string_view>& pieces) const {
  auto* code = static_cast<pcre2_code*>(code_);
  pcre2_match_data* md = thread_match_data();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0, gap_start = 0;
  while (pos < text.size()) {
    int rc = pcre2_match(code, subject, text.size(), pos, 0, md, nullptr);
    if (rc < 0) break;
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    size_t begin = ov[0], end = ov[1];
    if (end == begin) {  // empty match: step one character to guarantee progress
      pos = begin + 1;
      while (pos < text.size() && (static_cast<uint8_t>(text[pos]) & 0xc0) == 0x80) ++pos;
      continue;
    }
    if (begin > gap_start) pieces.push_back(text.substr(gap_start, begin - gap_start));
    pieces.push_back(text.substr(begin, end - begin));
    pos = gap_start = end;
  }
  if (gap_start < text.size()) pieces.push_back(text.substr(gap_start));
}

}  // namespace afm::tokenizer
