// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Pool set files and pool attributes as the tests of rpmemd (unit and integration) make them.

#include <filesystem>
#include <string>
#include <vector>

#include "base/page_buffer.h"
#include "base/pool_attributes.h"
#include "poolset/pool_header.h"

namespace rpmem::test {

// A pool set file text with `parts` parts of `part_size` each in `directory`, named
// `prefix`.0, `prefix`.1, ...; `options` (when not empty) is added as an OPTION line.
std::string pool_set_text(const std::filesystem::path& directory, const std::string& prefix,
                          int parts, const std::string& part_size = "2M",
                          const std::string& options = "");

// Attributes as libpmemobj sends them for a pool it creates: signature PMEMOBJ, major 6,
// CHECK_BAD_BLOCKS, CKSUM_2K and SDS (plus SINGLEHDR when asked), every UUID set, and this
// machine's arch flags as user flags.
PoolAttributes pmemobj_attributes(bool single_header = false);

// Checks the part headers of a pool created with `attributes`, in part order, as PMDK's
// util_header_create writes them: signature, major, features and UUIDs from the attributes, the
// parts linked in a ring with distinct UUIDs (the first part's the pool's), and a checksum
// valid by PMDK's CKSUM_2K rule over the bytes as stored.
void check_created_headers(const std::vector<poolset::PoolHeader>& headers,
                           const PoolAttributes& attributes);

// An initiator's local pool: `size` zeroed bytes on whole pages (throws std::bad_alloc when
// memory is short).
PageBuffer pool_buffer(std::size_t size);

} // namespace rpmem::test
