// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdlib>
#include <string_view>

namespace rpmem {

// Test builds only (meson -Dfailpoints=true) call this: whether RPMEM_FAILPOINT names `name`,
// the one fault the fault tests asked this process to inject.
inline bool failpoint_is(std::string_view name) noexcept {
    const char* value = std::getenv("RPMEM_FAILPOINT");
    return value != nullptr && std::string_view(value) == name;
}

} // namespace rpmem
