// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/fid_ptr.h"

#include <rdma/fi_errno.h>

#include "fabric/fabric_library.h"
#include "fabric/logger.h"

namespace rpmem::fabric {

void close_fid(fid_t fid) noexcept {
    const int ret = fi_close(fid);
    if (ret != 0) {
        try {
            logger().warn("fi_close of a fabric object (class {}) failed: {}", fid->fclass,
                          fabric_strerror(-ret));
        } catch (...) {
            // Logging must not turn a failed close into a crash in a destructor.
        }
    }
}

} // namespace rpmem::fabric
