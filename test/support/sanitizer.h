// SPDX-License-Identifier: BSD-3-Clause
#pragma once

namespace rpmem::test {

// Whether this test (and so the rpmemd of the same build) runs under AddressSanitizer, which
// changes what a test may observe: it catches a SIGSEGV itself, reports it and aborts, and its
// redzones and shadow pages make every heap allocation cost several times its size.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

} // namespace rpmem::test
