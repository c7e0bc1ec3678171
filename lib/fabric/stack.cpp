// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/stack.h"

namespace rpmem::fabric {

Result<std::unique_ptr<Stack>> Stack::open(const ProviderRequest& request) {
    auto provider = select_provider(request);
    if (!provider)
        return fail(std::move(provider.error()));
    auto fabric = Fabric::open(*provider->info);
    if (!fabric)
        return fail(std::move(fabric.error()).add_context("opening the fabric"));
    auto domain = Domain::open(*fabric, *provider->info);
    if (!domain)
        return fail(std::move(domain.error()).add_context("opening the fabric domain"));
    auto events = EventQueue::open(*fabric);
    if (!events)
        return fail(std::move(events.error()).add_context("opening the event queue"));
    return std::unique_ptr<Stack>(new Stack(std::move(*provider), std::move(*fabric),
                                            std::move(*domain), std::move(*events)));
}

} // namespace rpmem::fabric
