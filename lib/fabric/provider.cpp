// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/provider.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <rdma/fi_errno.h>

#include "fabric/fabric_error.h"
#include "fabric/logger.h"

namespace rpmem::fabric {

namespace {

constexpr std::uint32_t kApiVersion = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);

constexpr std::uint64_t kRequiredCaps =
    FI_MSG | FI_RMA | FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;

// `name` empty: any provider.
Result<InfoPtr> make_hints(std::string_view name, bool with_rma_pmem) {
    auto hints = allocate_info();
    if (!hints)
        return hints;
    fi_info& h = **hints;
    h.ep_attr->type = FI_EP_MSG;
    h.caps = kRequiredCaps | (with_rma_pmem ? FI_RMA_PMEM : 0);
    // We never write with remote CQ data, so consuming a receive for it costs nothing.
    h.mode = FI_RX_CQ_DATA;
    h.tx_attr->msg_order = FI_ORDER_RAW | FI_ORDER_SAW;
    h.domain_attr->threading = FI_THREAD_SAFE;
    h.domain_attr->data_progress = FI_PROGRESS_MANUAL;
    h.domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED;
    if (!name.empty()) {
        // fi_freeinfo frees prov_name with free().
        h.fabric_attr->prov_name = strndup(name.data(), name.size());
        if (h.fabric_attr->prov_name == nullptr)
            return fail(ENOMEM, "strndup: out of memory", ErrorSource::system, ENOMEM);
    }
    return hints;
}

// fi_getinfo; -FI_ENODATA (nothing matches) is an empty list, not an error.
Result<InfoPtr> get_info(const ProviderRequest& request, const fi_info& hints) {
    const char* node = request.node.empty() ? nullptr : request.node.c_str();
    const std::string service = request.service.empty() && request.role == Role::listener
                                    ? std::string("0")
                                    : request.service;
    const std::uint64_t flags = request.role == Role::listener ? FI_SOURCE : 0;
    auto library = FabricLibrary::load();
    if (!library)
        return fail(library.error());
    fi_info* list = nullptr;
    const int ret = (*library)->getinfo(
        kApiVersion, node, service.empty() ? nullptr : service.c_str(), flags, &hints, &list);
    if (ret == -FI_ENODATA)
        return InfoPtr();
    if (ret != 0)
        return fail(fabric_error(ret, "fi_getinfo"));
    return InfoPtr(list);
}

bool is_utility_provider(std::string_view name) {
    // Layered providers (ofi_rxm, ofi_rxd, hooks) are named "ofi_..." or appear after a ';'.
    return name.starts_with("ofi_") || name.find(';') != std::string_view::npos;
}

std::string join(const std::vector<std::string>& names, std::string_view separator = ", ") {
    if (names.empty())
        return "none";
    std::string text;
    for (const std::string& name : names) {
        if (!text.empty())
            text += separator;
        text += name;
    }
    return text;
}

std::string describe_target(const ProviderRequest& request) {
    const std::string node = request.node.empty() ? std::string("any address") : request.node;
    const std::string service = request.service.empty() ? std::string("0") : request.service;
    return fmt::format("{} {}:{}", request.role == Role::listener ? "listening on" : "reaching",
                       node, service);
}

// The first entry of `list` whose provider is exactly `name` (any non-utility one when `name`
// is empty), copied.
Result<InfoPtr> pick(const fi_info* list, std::string_view name) {
    for (const fi_info* entry = list; entry != nullptr; entry = entry->next) {
        const char* prov = entry->fabric_attr != nullptr ? entry->fabric_attr->prov_name : nullptr;
        if (prov == nullptr)
            continue;
        if (name.empty() ? !is_utility_provider(prov) : name == prov)
            return duplicate_info(*entry);
    }
    return InfoPtr();
}

Result<Provider> select_named(const ProviderRequest& request) {
    Result<InfoPtr> chosen = InfoPtr();
    for (const bool with_rma_pmem : {true, false}) {
        auto hints = make_hints(request.name, with_rma_pmem);
        if (!hints)
            return fail(std::move(hints.error()));
        auto list = get_info(request, **hints);
        if (!list)
            return fail(std::move(list.error().add_context(
                fmt::format("fabric provider {} {}", request.name, describe_target(request)))));
        chosen = pick(list->get(), request.name);
        if (!chosen || *chosen)
            break;
    }
    if (!chosen)
        return fail(std::move(chosen.error()));
    if (!*chosen) {
        const std::vector<std::string> present = available_providers();
        if (std::find(present.begin(), present.end(), request.name) == present.end())
            return fail(ENODEV,
                        fmt::format("fabric provider \"{}\" is not available on this host "
                                    "(available: {})",
                                    request.name, join(present)),
                        ErrorSource::fabric, FI_ENODATA);
        return fail(EADDRNOTAVAIL,
                    fmt::format("fabric provider {} cannot serve {}: no matching interface",
                                request.name, describe_target(request)),
                    ErrorSource::fabric, FI_ENODATA);
    }
    Provider provider{std::move(*chosen), {}};
    provider.capabilities = Capabilities::from_info(*provider.info);
    logger().debug("selected {}", provider.capabilities.describe());
    return provider;
}

} // namespace

std::vector<std::string> available_providers() {
    std::vector<std::string> names;
    auto hints = make_hints({}, false);
    if (!hints)
        return names;
    // make_hints succeeded, so libfabric is loaded.
    fi_info* list = nullptr;
    if (FabricLibrary::loaded()->getinfo(kApiVersion, nullptr, nullptr, 0, hints->get(), &list) !=
        0)
        return names;
    const InfoPtr owner(list);
    for (const fi_info* entry = list; entry != nullptr; entry = entry->next) {
        const char* prov = entry->fabric_attr != nullptr ? entry->fabric_attr->prov_name : nullptr;
        if (prov != nullptr && !is_utility_provider(prov))
            names.emplace_back(prov);
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

Result<Provider> select_provider(const ProviderRequest& request) {
    const auto allowed = [&](std::string_view name) {
        return request.allowed.empty() || std::find(request.allowed.begin(), request.allowed.end(),
                                                    name) != request.allowed.end();
    };
    if (!request.name.empty()) {
        if (!allowed(request.name))
            return fail(ENODEV,
                        fmt::format("fabric provider {} is not allowed (allowed: {})", request.name,
                                    join(request.allowed)),
                        ErrorSource::fabric, FI_ENODATA);
        return select_named(request);
    }

    // Candidates: the preferred providers in their order, then the others present.
    const std::vector<std::string> present = available_providers();
    std::vector<std::string> candidates;
    for (const std::string_view preferred : kPreferredProviders) {
        if (std::find(present.begin(), present.end(), preferred) != present.end())
            candidates.emplace_back(preferred);
    }
    for (const std::string& other : present) {
        if (std::find(candidates.begin(), candidates.end(), other) == candidates.end())
            candidates.push_back(other);
    }
    std::vector<std::string> reasons;
    for (const std::string& candidate : candidates) {
        if (!allowed(candidate))
            continue;
        ProviderRequest named = request;
        named.name = candidate;
        auto provider = select_named(named);
        if (provider)
            return provider;
        logger().debug("provider {} skipped: {}", candidate, provider.error().message());
        reasons.push_back(provider.error().message());
    }
    return fail(ENODEV,
                fmt::format("no {}fabric provider offers FI_EP_MSG with FI_MSG|FI_RMA {} "
                            "(available: {}{}{})",
                            request.allowed.empty() ? "" : "allowed ", describe_target(request),
                            join(present), reasons.empty() ? "" : "; ", join(reasons, "; ")),
                ErrorSource::fabric, FI_ENODATA);
}

} // namespace rpmem::fabric
