// fortune(6) cookies from fortunes and fortunes-min: /usr/share/games/fortunes/<topic> files,
// cookies separated by lines holding "%".
#include <algorithm>
#include <array>
#include <system_error>

#include "base/error.h"
#include "base/mapped_file.h"
#include "data/package_files.h"
#include "data/sources/sources.h"
#include "data/text_clean.h"

namespace afm::data::sources {
namespace {

// Pictures drawn in characters, and phrases in other languages, are not English prose.
constexpr std::array<std::string_view, 2> kSkippedFiles = {"ascii-art", "translate-me"};

bool is_cookie_file(const std::filesystem::directory_entry& e) {
  const std::string name = e.path().filename().string();
  const std::string ext = e.path().extension().string();
  std::error_code ec;
  // The .u8 names are symbolic links to the same files; .dat files are strfile(1) indexes.
  return e.is_regular_file(ec) && !e.is_symlink(ec) && ext != ".dat" && ext != ".u8" &&
         name[0] != '.' &&
         std::find(kSkippedFiles.begin(), kSkippedFiles.end(), name) == kSkippedFiles.end();
}

}  // namespace

void fortune_documents(std::string_view text, const DocumentSink& sink) {
  std::string cookie;
  auto flush = [&] {
    if (!is_blank(cookie)) sink(trim_right(cookie));
    cookie.clear();
  };
  for (std::string_view line : split_lines(text)) {
    if (trim_right(line) == "%") {
      flush();
    } else {
      cookie.append(trim_right(line)).push_back('\n');
    }
  }
  flush();
}

void read_fortunes(const std::filesystem::path& root, const DocumentSink& sink) {
  require_package_file(root, kFortunesMarker, kFortunesPackage);
  const std::filesystem::path dir = package_path(root, kFortunesDirectory);
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (is_cookie_file(*it)) files.push_back(it->path());
  }
  if (ec) throw_error(ErrorCode::kIo, "cannot list " + dir.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    MappedFile file = MappedFile::open(path.string());
    fortune_documents({reinterpret_cast<const char*>(file.data()), file.size()}, sink);
  }
}

}  // namespace afm::data::sources
