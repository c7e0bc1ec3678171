// SPDX-License-Identifier: BSD-3-Clause
// librpmem.h compiles as C++ with every warning on, and its declarations have C linkage: taking
// the address of each function through the expected C signature proves both.
#include <cstddef>
#include <type_traits>

#include "librpmem.h"

static_assert(sizeof(rpmem_pool_attr) == 104);
static_assert(std::is_trivially_copyable_v<rpmem_pool_attr>);
static_assert(std::is_standard_layout_v<rpmem_pool_attr>);

extern "C" {
using CreateFn = RPMEMpool* (*)(const char*, const char*, void*, size_t, unsigned*,
                                const rpmem_pool_attr*);
using OpenFn = RPMEMpool* (*)(const char*, const char*, void*, size_t, unsigned*, rpmem_pool_attr*);
using PersistFn = int (*)(RPMEMpool*, size_t, size_t, unsigned, unsigned);
using ReadFn = int (*)(RPMEMpool*, void*, size_t, size_t, unsigned);
}

int main() {
    CreateFn create = &rpmem_create;
    OpenFn open = &rpmem_open;
    PersistFn persist = &rpmem_persist;
    PersistFn flush = &rpmem_flush;
    ReadFn read = &rpmem_read;
    int (*drain)(RPMEMpool*, unsigned, unsigned) = &rpmem_drain;
    int (*deep_persist)(RPMEMpool*, size_t, size_t, unsigned) = &rpmem_deep_persist;
    int (*set_attr)(RPMEMpool*, const rpmem_pool_attr*) = &rpmem_set_attr;
    int (*close)(RPMEMpool*) = &rpmem_close;
    int (*remove)(const char*, const char*, int) = &rpmem_remove;
    const char* (*check_version)(unsigned, unsigned) = &rpmem_check_version;
    const char* (*errormsg)() = &rpmem_errormsg;
    bool all = create && open && persist && flush && read && drain && deep_persist && set_attr &&
               close && remove && check_version && errormsg;
    return all && rpmem_check_version(RPMEM_MAJOR_VERSION, RPMEM_MINOR_VERSION) == nullptr ? 0 : 1;
}
