// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>

namespace rpmem::persist {

// Copies `length` bytes so that every 8-byte-aligned word of the destination is written by one
// 8-byte store: a reader (or a crash) sees each aligned word either old or new, never torn.
// This is the promise a strict persist makes and libpmemobj relies on; memcpy and RMA writes do
// not make it. The source may have any alignment; the ranges must not overlap.
void copy_aligned_words(void* destination, const void* source, std::size_t length) noexcept;

} // namespace rpmem::persist
