// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <memory>

#include <rdma/fabric.h>

#include "base/error.h"
#include "fabric/fabric_library.h"

namespace rpmem::fabric {

// An fi_info exists only once libfabric is loaded.
struct InfoDeleter {
    void operator()(fi_info* info) const noexcept {
        if (info != nullptr)
            FabricLibrary::loaded()->freeinfo(info);
    }
};

// Owner of an fi_info list as fi_getinfo returns it: fi_freeinfo frees the whole list once, so
// an entry of the list is never owned separately (duplicate_info copies one entry instead).
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

// An empty fi_info with every sub-structure allocated, for hints.
Result<InfoPtr> allocate_info();

// A copy of one entry of a list (fi_dupinfo copies the entry, not the entries after it).
Result<InfoPtr> duplicate_info(const fi_info& info);

} // namespace rpmem::fabric
