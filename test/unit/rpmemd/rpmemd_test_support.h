// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Helpers shared by the rpmemd unit tests: a scratch directory and pool set files in it.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <sys/stat.h>

#include "base/pool_attributes.h"
#include "poolset/pool_header.h"

namespace rpmem::test {

// A scratch directory removed with everything in it at the end of the test.
class TempDir {
public:
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "rpmemd-test-XXXXXX");
        if (::mkdtemp(pattern.data()) == nullptr)
            std::abort();
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::filesystem::path& path() const { return path_; }
    std::string operator/(const std::string& name) const { return (path_ / name).string(); }

    // Writes `text` to `name` (directories created), with `mode`.
    std::string write(const std::string& name, const std::string& text, mode_t mode = 0644) const {
        auto file = path_ / name;
        std::filesystem::create_directories(file.parent_path());
        std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
        ::chmod(file.c_str(), mode);
        return file.string();
    }

private:
    std::filesystem::path path_;
};

// A pool set file text with `parts` parts of `part_size` bytes each in `directory`, named
// `prefix`.0, `prefix`.1, ...; `options` is added as OPTION lines.
inline std::string pool_set_text(const std::filesystem::path& directory, const std::string& prefix,
                                 int parts, const std::string& part_size = "2M",
                                 const std::string& options = "") {
    std::string text = "PMEMPOOLSET\n";
    if (!options.empty())
        text += "OPTION " + options + "\n";
    for (int p = 0; p < parts; ++p)
        text += part_size + " " + (directory / (prefix + "." + std::to_string(p))).string() + "\n";
    return text;
}

// Attributes as libpmemobj sends them for a pool it creates: signature, major 6, features,
// every UUID set, and this machine's arch flags as user flags.
inline PoolAttributes pmemobj_attributes(bool single_header = false) {
    PoolAttributes a;
    const char signature[8] = {'P', 'M', 'E', 'M', 'O', 'B', 'J', '\0'};
    std::copy(std::begin(signature), std::end(signature), a.signature.begin());
    a.major = 6;
    a.compat_features = poolset::kFeatureCheckBadBlocks;
    a.incompat_features = poolset::kFeatureChecksum2K | poolset::kFeatureShutdownState |
                          (single_header ? poolset::kFeatureSingleHeader : 0);
    for (std::uint8_t i = 0; i < 16; ++i) {
        a.poolset_uuid[i] = static_cast<std::uint8_t>(0x10 + i);
        a.uuid[i] = static_cast<std::uint8_t>(0x20 + i);
        a.next_uuid[i] = static_cast<std::uint8_t>(0x30 + i);
        a.prev_uuid[i] = static_cast<std::uint8_t>(0x40 + i);
    }
    a.user_flags = poolset::ArchFlags::local().encode();
    return a;
}

} // namespace rpmem::test
