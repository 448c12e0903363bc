#include "data/package_files.h"

#include <fstream>
#include <system_error>

#include "base/error.h"

namespace afm::data {

std::filesystem::path package_path(const std::filesystem::path& root, std::string_view path) {
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  return root / std::filesystem::path(path);
}

void require_package_file(const std::filesystem::path& root, std::string_view path,
                          std::string_view package) {
  std::error_code ec;
  if (std::filesystem::exists(package_path(root, path), ec)) return;
  const std::string pkg(package);
  throw_error(ErrorCode::kNotFound, "missing " + package_path(root, path).string() +
                                        " from the Debian package " + pkg +
                                        "; install it with: apt-get install " + pkg);
}

std::string installed_package_version(const std::filesystem::path& root, std::string_view package) {
  std::ifstream in(package_path(root, "/var/lib/dpkg/status"));
  if (!in) return "";
  // Stanzas are separated by blank lines; fields of interest are Package, Status, Version.
  std::string line, name, status, version;
  auto matches = [&] { return name == package && status.find(" installed") != std::string::npos; };
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (matches()) return version;
      name.clear(), status.clear(), version.clear();
    } else if (line.rfind("Package: ", 0) == 0) {
      name = line.substr(9);
    } else if (line.rfind("Status: ", 0) == 0) {
      status = line.substr(8);
    } else if (line.rfind("Version: ", 0) == 0) {
      version = line.substr(9);
    }
  }
  return matches() ? version : "";
}

}  // namespace afm::data
