// SPDX-License-Identifier: BSD-3-Clause
#include "scratch_files.h"

#include <cerrno>
#include <fstream>

#include <fmt/format.h>
#include <sys/stat.h>

namespace rpmem::bench {

std::string pool_set_text(std::size_t size, const std::filesystem::path& part,
                          const std::vector<std::string>& replicas) {
    std::string text = fmt::format("PMEMPOOLSET\n{} {}\n", size, part.string());
    for (const std::string& replica : replicas)
        text += "REPLICA " + replica + "\n";
    return text;
}

Result<void> write_text(const std::filesystem::path& path, const std::string& text, mode_t mode) {
    {
        std::ofstream out(path);
        out << text;
        if (!out)
            return fail(EIO, "writing " + path.string());
    }
    if (::chmod(path.c_str(), mode) != 0)
        return fail(Error::from_errno(errno, "chmod " + path.string()));
    return {};
}

} // namespace rpmem::bench
