// SPDX-License-Identifier: BSD-3-Clause
#include "persist/word_copy.h"

#include <cstdint>
#include <cstring>

namespace rpmem::persist {

void copy_aligned_words(void* destination, const void* source, std::size_t length) noexcept {
    auto* out = static_cast<unsigned char*>(destination);
    const auto* in = static_cast<const unsigned char*>(source);

    // Leading bytes up to the first aligned word of the destination.
    while (length > 0 && reinterpret_cast<std::uintptr_t>(out) % 8 != 0) {
        *out++ = *in++;
        --length;
    }
    // Whole words: the volatile store keeps the compiler from splitting or merging them.
    for (; length >= 8; length -= 8, out += 8, in += 8) {
        std::uint64_t word;
        std::memcpy(&word, in, sizeof word);
        *reinterpret_cast<volatile std::uint64_t*>(out) = word;
    }
    // Trailing bytes of the last, partial word.
    while (length > 0) {
        *out++ = *in++;
        --length;
    }
}

} // namespace rpmem::persist
