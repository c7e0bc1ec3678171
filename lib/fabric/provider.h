// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "fabric/capabilities.h"
#include "fabric/info.h"

namespace rpmem::fabric {

// Which end of a connection an fi_info is for: a listener binds `node:service` (port "0" or
// empty: any free port, read back from the passive endpoint), a connector reaches it.
enum class Role {
    connector,
    listener,
};

// What to look for. Every provider is asked for an FI_EP_MSG endpoint with FI_MSG | FI_RMA
// (both directions), read-after-write and send-after-write ordering, thread-safe domains,
// manual data progress (the layers above always drive progress; providers with automatic
// progress accept this and keep theirs, sockets becomes usable with it) and the modern mr_mode
// bits FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED, of which the provider
// keeps what it needs (Capabilities says which). FI_RMA_PMEM is asked for first and dropped
// when the provider lacks it.
struct ProviderRequest {
    // "tcp", "sockets", "verbs", any other provider's name, or empty for the first present of
    // kPreferredProviders, then any provider that serves the request.
    std::string name;
    Role role = Role::connector;
    std::string node;    // host name or address; for a listener, the local address to bind
    std::string service; // port
    // The providers that may be chosen (an operator's allow list); empty: any.
    std::vector<std::string> allowed;
};

// The providers tried, in this order, when ProviderRequest::name is empty: RDMA hardware when
// it is present, otherwise the kernel TCP stack.
inline constexpr std::array<std::string_view, 3> kPreferredProviders{"verbs", "tcp", "sockets"};

// A chosen provider: the fi_info to open the fabric, domain and endpoints with (one entry,
// owned), and what it offers.
struct Provider {
    InfoPtr info;
    Capabilities capabilities;
};

// Chooses a provider: the one named, or else the first of kPreferredProviders, then of the other
// providers present, that is allowed and can serve node:service. This is the one rule for the
// client, the daemon and the tools. A named provider that is not present or not allowed fails
// with ENODEV and a message naming it and listing the providers present here; one that is
// present but cannot serve node:service fails with the provider's reason; with no name, the
// error lists why each candidate was passed over.
Result<Provider> select_provider(const ProviderRequest& request);

// Names of the providers present on this host that offer FI_EP_MSG with FI_MSG | FI_RMA,
// sorted, without duplicates.
std::vector<std::string> available_providers();

} // namespace rpmem::fabric
