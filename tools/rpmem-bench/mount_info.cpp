// SPDX-License-Identifier: BSD-3-Clause
#include "mount_info.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <system_error>

#include <fmt/format.h>
#include <mntent.h>

namespace rpmem::bench {

std::string describe_mount(const std::filesystem::path& path) {
    std::error_code error;
    const std::filesystem::path where = std::filesystem::canonical(path, error);
    if (error)
        return "unknown";
    const std::unique_ptr<FILE, int (*)(FILE*)> mounts(::setmntent("/proc/self/mounts", "r"),
                                                       ::endmntent);
    if (!mounts)
        return "unknown";
    // The longest mount point that contains `where`; a later mount over the same point wins.
    std::string best_point;
    std::string best;
    mntent entry{};
    char buffer[4096];
    while (::getmntent_r(mounts.get(), &entry, buffer, sizeof buffer) != nullptr) {
        const std::filesystem::path point(entry.mnt_dir);
        const auto [end, rest] =
            std::mismatch(point.begin(), point.end(), where.begin(), where.end());
        if (end != point.end() || point.string().size() < best_point.size())
            continue;
        best_point = point.string();
        best = fmt::format("{} on {} ({})", entry.mnt_type, entry.mnt_dir, entry.mnt_opts);
    }
    return best.empty() ? "unknown" : best;
}

} // namespace rpmem::bench
