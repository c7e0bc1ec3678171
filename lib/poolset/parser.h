// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"
#include "poolset/pool_set.h"

namespace rpmem::poolset {

// Parses the text of a pool set file with PMDK 1.12's poolset(5) rules; `origin` names the file
// in messages. Pure (no I/O) and total: every input either gives a PoolSet or an EINVAL Error
// whose message reads "ORIGIN:LINE:COLUMN: what was expected". Differences from PMDK: part and
// REPLICA lines are checked fully here (target syntax, size overflow, NUL bytes), where PMDK
// failed later or silently truncated; directory parts (a PATH that is a directory) cannot be
// told from files without I/O and are treated as files.
Result<PoolSet> parse(std::string_view text, std::string_view origin);

// PMDK's size syntax (util_parse_size): decimal digits with an optional leading '+', then an
// optional case-sensitive suffix: B, K, M, G, T, P (powers of 1024), KiB, MiB, GiB, TiB, PiB
// (same), kB, MB, GB, TB, PB (powers of 1000). Values that do not fit in 64 bits are errors.
Result<std::uint64_t> parse_size(std::string_view text);

// A size for people: "8 MiB" when exact in a binary unit, else the byte count.
std::string format_size(std::uint64_t bytes);

} // namespace rpmem::poolset
