// Locating a Debian package's files for the corpus readers, and the package's version.
//
// `root` is the file-system root the packages are installed under ("/" normally; tests point
// it at a temporary tree). Paths inside a package are absolute ("/usr/lib/bible.data").
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace afm::data {

// root joined with the absolute package path.
std::filesystem::path package_path(const std::filesystem::path& root, std::string_view path);

// Throws Error(kNotFound) naming the package, the missing path and the apt-get command that
// installs it, when root/path does not exist.
void require_package_file(const std::filesystem::path& root, std::string_view path,
                          std::string_view package);

// The installed version from root/var/lib/dpkg/status, or "" when the status file or the
// package's installed entry is missing. Never throws.
std::string installed_package_version(const std::filesystem::path& root, std::string_view package);

}  // namespace afm::data
