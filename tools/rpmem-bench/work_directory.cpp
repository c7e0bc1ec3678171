// SPDX-License-Identifier: BSD-3-Clause
#include "work_directory.h"

#include <cerrno>
#include <string>

#include <stdlib.h>

namespace rpmem::bench {

namespace fs = std::filesystem;

Result<WorkDirectory> WorkDirectory::make(const fs::path& parent, Cleanup cleanup) {
    std::string pattern = (parent / "rpmem-bench.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
        return fail(Error::from_errno(errno, "making a directory in " + parent.string()));
    return WorkDirectory(fs::path(pattern), cleanup);
}

WorkDirectory::WorkDirectory(WorkDirectory&& other) noexcept
    : path_(std::move(other.path_))
    , cleanup_(other.cleanup_)
    , succeeded_(other.succeeded_) {
    other.path_.clear();
}

WorkDirectory::~WorkDirectory() {
    if (path_.empty() || (cleanup_ == Cleanup::after_success && !succeeded_))
        return;
    std::error_code ignored;
    fs::remove_all(path_, ignored);
}

} // namespace rpmem::bench
