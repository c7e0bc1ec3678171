// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include "base/error.h"
#include "fabric/capabilities.h"
#include "fabric/fabric.h"
#include "fabric/fid_ptr.h"

namespace rpmem::fabric {

// Owner of a resource domain (fi_domain): the parent of completion queues, memory regions and
// endpoints, which must be closed before it; its Fabric must outlive it. Keeps the provider's
// Capabilities (mr_mode, limits) for the objects opened in it. Movable (the libfabric object
// stays put). Thread-safe: the domain is opened FI_THREAD_SAFE.
class Domain {
public:
    static Result<Domain> open(const Fabric& fabric, const fi_info& info);

    fid_domain* get() const noexcept { return domain_.get(); }
    fid_fabric* fabric() const noexcept { return fabric_; }
    const Capabilities& capabilities() const noexcept { return capabilities_; }

private:
    Domain(fid_fabric* fabric, FidPtr<fid_domain> domain, Capabilities capabilities)
        : fabric_(fabric)
        , domain_(std::move(domain))
        , capabilities_(std::move(capabilities)) {}

    fid_fabric* fabric_;
    FidPtr<fid_domain> domain_;
    Capabilities capabilities_;
};

} // namespace rpmem::fabric
