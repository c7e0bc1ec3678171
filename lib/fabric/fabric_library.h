// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <atomic>
#include <mutex>

#include <rdma/fabric.h>

#include "base/error.h"

namespace rpmem::fabric {

// libfabric.so.1, opened with dlopen on first use rather than linked: loading it (through
// libpsm_infinipath) installs crash handlers in the host process, so it is loaded under a
// HostProcessGuard, and only by processes that really open a fabric. The five functions rpmem
// calls that are not inline wrappers are resolved here; everything else in <rdma/fi_*.h> goes
// through the ops tables of objects these return.
//
// One per process, never unloaded (fabric objects may outlive any owner we could give it).
// Thread-safe.
class FabricLibrary {
public:
    // Loads the library once; later calls return the same library or the same failure.
    static Result<const FabricLibrary*> load();

    // The library when load() has succeeded, else null. For code that can only run after a
    // fabric object exists: freeing an fi_info, the text of a libfabric error code.
    static const FabricLibrary* loaded() noexcept;

    // fi_getinfo and fi_fabric. The first of them initializes libfabric's providers, which may
    // load more libraries, so that call runs under a HostProcessGuard as well.
    int getinfo(std::uint32_t version, const char* node, const char* service, std::uint64_t flags,
                const fi_info* hints, fi_info** info) const;
    int open_fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context) const;

    fi_info* dupinfo(const fi_info* info) const noexcept { return dupinfo_(info); }
    void freeinfo(fi_info* info) const noexcept { freeinfo_(info); }
    const char* strerror(int code) const noexcept { return strerror_(code); }

private:
    FabricLibrary() = default;
    static Result<const FabricLibrary*> open();
    template <typename Call>
    int first_call_guarded(Call&& call) const;

    decltype(&::fi_getinfo) getinfo_ = nullptr;
    decltype(&::fi_fabric) fabric_ = nullptr;
    decltype(&::fi_dupinfo) dupinfo_ = nullptr;
    decltype(&::fi_freeinfo) freeinfo_ = nullptr;
    decltype(&::fi_strerror) strerror_ = nullptr;
    mutable std::mutex first_call_mutex_;
    mutable std::atomic<bool> providers_loaded_{false};
};

// fi_strerror(code) once libfabric is loaded; before that (no fabric call has failed yet) the
// errno text for codes below FI_ERRNO_OFFSET and "libfabric error N" above.
const char* fabric_strerror(int code) noexcept;

} // namespace rpmem::fabric
