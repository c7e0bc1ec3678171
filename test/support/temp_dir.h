// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <sys/types.h>

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

    // Writes `text` to `name` (creating parent directories) and returns its path. With
    // `mode`, the file gets exactly these permission bits (the umask does not apply).
    std::filesystem::path write(std::string_view name, std::string_view text) const;
    std::filesystem::path write(std::string_view name, std::string_view text, mode_t mode) const;
    // The contents of `name`; throws when it cannot be read.
    std::string read(std::string_view name) const;

    // `text` with each '@' replaced by this directory's path (pool set files written for it).
    std::string expand(std::string_view text) const;

private:
    std::filesystem::path path_;
};

// The contents of `path`, or "" when it cannot be read (a log not written yet).
std::string read_text(const std::filesystem::path& path);

// Makes `directory` the working directory of the test process (and so of every child it
// starts: rpmemd, rpmemctl, PMDK's programs) until it goes, then goes back. libfabric's psm
// provider drops *.vm.btr files into the working directory of a program that crashes; inside a
// TempDir they go with it.
class WorkingDirectory {
public:
    explicit WorkingDirectory(const std::filesystem::path& directory);
    ~WorkingDirectory();
    WorkingDirectory(const WorkingDirectory&) = delete;
    WorkingDirectory& operator=(const WorkingDirectory&) = delete;

private:
    std::filesystem::path previous_;
};

} // namespace rpmem::test
