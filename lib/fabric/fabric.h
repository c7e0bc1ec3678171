// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <rdma/fabric.h>

#include "base/error.h"
#include "fabric/fid_ptr.h"

namespace rpmem::fabric {

// Owner of an open fabric (fi_fabric), the parent of domains, event queues and passive
// endpoints, which must all be closed first. Movable; the libfabric object itself never moves,
// so children may keep its raw pointer. Thread-safe as libfabric is (FI_THREAD_SAFE).
class Fabric {
public:
    static Result<Fabric> open(const fi_info& info);

    fid_fabric* get() const noexcept { return fabric_.get(); }

private:
    explicit Fabric(FidPtr<fid_fabric> fabric)
        : fabric_(std::move(fabric)) {}

    FidPtr<fid_fabric> fabric_;
};

} // namespace rpmem::fabric
