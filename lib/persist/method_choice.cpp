// SPDX-License-Identifier: BSD-3-Clause
#include "persist/method_choice.h"

#include <array>
#include <cerrno>
#include <string_view>

namespace rpmem::persist {

namespace {

using protocol::PersistMethod;

constexpr const char* kProviderAcknowledged =
    "inject-reply-delay allows only gpspm (the provider acknowledges apm's and commit's writes "
    "itself, so the delay could not hold them)";

// Why the policy does not allow `method` (config key `key`).
std::string not_allowed(std::string_view method, std::string_view key, const MethodPolicy& policy) {
    if (policy.keys_named)
        return std::string(method) +
               " is not enabled: the configuration names persist-* keys, "
               "and not " +
               std::string(key) + " = yes";
    return std::string(method) + " is off by default (" + std::string(key) + " = yes enables it)";
}

// Why `method` cannot be used here, or an empty string when it can.
std::string invalid_because(PersistMethod method, const Platform& platform,
                            const ProviderTraits& provider, bool pool_is_pmem,
                            const MethodPolicy& policy) {
    switch (method) {
    case PersistMethod::apm:
        if (!policy.allow_apm)
            return not_allowed("apm", "persist-apm", policy);
        if (policy.replies_only)
            return kProviderAcknowledged;
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
            return not_allowed("commit", "persist-commit", policy);
        if (policy.replies_only)
            return kProviderAcknowledged;
        if (!provider.offers_rma_pmem)
            return "commit needs a provider offering FI_RMA_PMEM";
        if (!pool_is_pmem)
            return "commit needs the pool on persistent memory (the provider only flushes caches)";
        return {};
    case PersistMethod::gpspm:
        if (!policy.allow_gpspm)
            return not_allowed("gpspm", "persist-general", policy);
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
            if (!reasons.empty())
                reason += " (passed over: " + reasons + ")";
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
