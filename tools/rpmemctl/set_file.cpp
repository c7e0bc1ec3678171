// SPDX-License-Identifier: BSD-3-Clause
#include "set_file.h"

#include <cerrno>
#include <fstream>

#include "poolset/parser.h"

namespace rpmem::tools {

namespace {

// Pool set files are a few lines long; anything this large is not one.
constexpr std::uintmax_t kMaxSetFileSize = 1u << 20;

} // namespace

Result<std::string> read_set_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return fail(Error::from_errno(errno, "cannot open '" + path + "'"));
    std::string text;
    char buffer[4096];
    while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (text.size() > kMaxSetFileSize)
            return fail(EFBIG, "'" + path + "' is larger than 1 MiB: not a pool set file");
    }
    if (in.bad())
        return fail(Error::from_errno(EIO, "cannot read '" + path + "'"));
    return text;
}

Result<poolset::PoolSet> load_set_file(const std::string& path) {
    return read_set_file(path).and_then(
        [&](const std::string& text) { return poolset::parse(text, path); });
}

} // namespace rpmem::tools
