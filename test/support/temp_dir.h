// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace rpmem::test {

// A fresh directory under the system's temporary directory, removed with everything in it
// when the object goes. Throws std::runtime_error when it cannot be made.
class TempDir {
public:
    explicit TempDir(std::string_view prefix = "rpmem-test");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::filesystem::path& path() const noexcept { return path_; }
    std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

    // Writes `text` to `name` (creating parent directories) and returns its path.
    std::filesystem::path write(std::string_view name, std::string_view text) const;

private:
    std::filesystem::path path_;
};

} // namespace rpmem::test
