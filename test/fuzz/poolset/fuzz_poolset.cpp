// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for poolset::parse(): any byte string must give a PoolSet or an Error,
// never a crash, a hang or a sanitizer report; the size rules and validators must hold up on
// whatever the parser accepts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "poolset/parser.h"
#include "poolset/pool_set.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto set = rpmem::poolset::parse(text, "fuzz.set");
    if (!set) {
        // Every error names the origin first.
        if (set.error().message().rfind("fuzz.set:", 0) != 0)
            std::abort();
        return 0;
    }
    // Invariants of a parsed set.
    if (set->replicas.empty() || set->replicas.front().is_remote() ||
        set->replicas.front().parts.empty())
        std::abort();
    for (const auto& replica : set->replicas) {
        if (replica.is_remote() != replica.parts.empty())
            std::abort();
        (void)set->net_size(replica);
        (void)set->header_count(replica);
        if (replica.remote) {
            auto again = rpmem::parse_target(replica.remote->target.to_string());
            if (!again || *again != replica.remote->target)
                std::abort();
        }
    }
    (void)set->pool_size();
    (void)rpmem::poolset::validate_local(*set);
    (void)rpmem::poolset::validate_for_target(*set);
    return 0;
}
