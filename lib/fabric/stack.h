// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <memory>

#include "base/error.h"
#include "fabric/domain.h"
#include "fabric/event_queue.h"
#include "fabric/fabric.h"
#include "fabric/provider.h"

namespace rpmem::fabric {

// What every user of the fabric opens first, in this order: the provider chosen by
// select_provider()'s one rule, its fabric, a domain and an event queue. The client's lanes,
// the daemon's target and the bench's raw ends are built on one each. Declared parent before
// child, so they close child first; endpoints, regions and queues made from it must go before
// it. Not movable (children keep its address); any thread may use it.
class Stack {
public:
    // Errors name the step ("opening the fabric domain: ...").
    static Result<std::unique_ptr<Stack>> open(const ProviderRequest& request);

    Stack(const Stack&) = delete;
    Stack& operator=(const Stack&) = delete;

    const fi_info& info() const noexcept { return *provider_.info; }
    const Capabilities& capabilities() const noexcept { return provider_.capabilities; }
    const Fabric& fabric() const noexcept { return fabric_; }
    const Domain& domain() const noexcept { return domain_; }
    EventQueue& events() const noexcept { return *events_; }

private:
    Stack(Provider provider, Fabric fabric, Domain domain, std::unique_ptr<EventQueue> events)
        : provider_(std::move(provider))
        , fabric_(std::move(fabric))
        , domain_(std::move(domain))
        , events_(std::move(events)) {}

    Provider provider_;
    Fabric fabric_;
    Domain domain_;
    std::unique_ptr<EventQueue> events_;
};

} // namespace rpmem::fabric
