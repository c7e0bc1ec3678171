// SPDX-License-Identifier: BSD-3-Clause
#include "persist/method_choice.h"

#include <array>
#include <cerrno>

namespace rpmem::persist {

namespace {

using protocol::PersistMethod;

// Why `method` cannot be used here, or an empty string when it can.
std::string invalid_because(PersistMethod method, const Platform& platform,
                            const ProviderTraits& provider, bool pool_is_pmem,
                            const MethodPolicy& policy) {
    switch (method) {
    case PersistMethod::apm:
        if (!policy.allow_apm)
            return "apm is not allowed by the configuration (persist-apm)";
        if (!pool_is_pmem)
            return "apm needs the pool on persistent memory";
        if (platform.domain == PersistenceDomain::eadr)
            return {};
        if (provider.software)
            return "apm on a software provider proves visibility, not durability, without eADR";
        if (!platform.nic_writes_bypass_cache)
            return "apm needs NIC writes that bypass the CPU caches, or eADR";
        return {};
    case PersistMethod::commit:
        if (!policy.allow_commit)
            return "commit is not allowed by the configuration (persist-commit)";
        if (!provider.offers_rma_pmem)
            return "commit needs a provider offering FI_RMA_PMEM";
        if (!pool_is_pmem)
            return "commit needs the pool on persistent memory (the provider only flushes caches)";
        return {};
    case PersistMethod::gpspm:
        if (!policy.allow_gpspm)
            return "gpspm is not allowed by the configuration (persist-general)";
        return {};
    case PersistMethod::any:
        break;
    }
    return "no method named";
}

} // namespace

Result<MethodChoice> choose_method(const Platform& platform, const ProviderTraits& provider,
                                   bool pool_is_pmem, const MethodPolicy& policy,
                                   protocol::PersistMethod preference) {
    std::string refused_preference;
    if (preference != PersistMethod::any) {
        refused_preference = invalid_because(preference, platform, provider, pool_is_pmem, policy);
        if (refused_preference.empty())
            return MethodChoice{preference, std::string(protocol::name_of(preference)) +
                                                " as the client asked"};
    }

    std::string reasons;
    for (PersistMethod method :
         std::array{PersistMethod::commit, PersistMethod::apm, PersistMethod::gpspm}) {
        std::string why_not = invalid_because(method, platform, provider, pool_is_pmem, policy);
        if (why_not.empty()) {
            std::string reason =
                std::string(protocol::name_of(method)) + " is the fastest valid method";
            if (!refused_preference.empty())
                reason += " (client preference refused: " + refused_preference + ")";
            return MethodChoice{method, std::move(reason)};
        }
        if (!reasons.empty())
            reasons += "; ";
        reasons += why_not;
    }
    return fail(EMEDIUMTYPE, "no persistence method is valid here: " + reasons);
}

} // namespace rpmem::persist
