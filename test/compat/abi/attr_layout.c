/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pins the layout of struct rpmem_pool_attr to PMDK's: 104 bytes, no padding, every field at
 * its offset. Compiled as C99 with -Werror, so it also shows that librpmem.h is valid C99.
 * Checked at compile time and reported at run time.
 */
#include <stddef.h>
#include <stdio.h>

#include "librpmem.h"

/* C99 has no _Static_assert: a negative array size stops the compilation instead. */
#define STATIC_CHECK(name, condition) typedef char static_check_##name[(condition) ? 1 : -1]
#define CHECK_OFFSET(field, expected)                                                              \
    STATIC_CHECK(offset_of_##field, offsetof(struct rpmem_pool_attr, field) == (expected))

STATIC_CHECK(size_is_104, sizeof(struct rpmem_pool_attr) == 104);
CHECK_OFFSET(signature, 0);
CHECK_OFFSET(major, 8);
CHECK_OFFSET(compat_features, 12);
CHECK_OFFSET(incompat_features, 16);
CHECK_OFFSET(ro_compat_features, 20);
CHECK_OFFSET(poolset_uuid, 24);
CHECK_OFFSET(uuid, 40);
CHECK_OFFSET(next_uuid, 56);
CHECK_OFFSET(prev_uuid, 72);
CHECK_OFFSET(user_flags, 88);

STATIC_CHECK(persist_flags, RPMEM_PERSIST_RELAXED == 1U && RPMEM_FLUSH_RELAXED == 1U);
STATIC_CHECK(remove_flags, RPMEM_REMOVE_FORCE == 1 && RPMEM_REMOVE_POOL_SET == 2);
STATIC_CHECK(api_version, RPMEM_MAJOR_VERSION == 1 && RPMEM_MINOR_VERSION == 3);
STATIC_CHECK(size_limits, RPMEM_MIN_POOL == 8192 && RPMEM_MIN_PART == 2097152);

int main(void) {
    /* The API version this library provides must satisfy the header's. */
    if (rpmem_check_version(RPMEM_MAJOR_VERSION, RPMEM_MINOR_VERSION) != NULL) {
        fprintf(stderr, "rpmem_check_version: %s\n", rpmem_errormsg());
        return 1;
    }
    if (rpmem_check_version(RPMEM_MAJOR_VERSION + 1, 0) == NULL ||
        rpmem_check_version(RPMEM_MAJOR_VERSION, RPMEM_MINOR_VERSION + 1) == NULL) {
        fprintf(stderr, "rpmem_check_version accepted a newer version\n");
        return 1;
    }
    printf("sizeof(struct rpmem_pool_attr) = %zu\n", sizeof(struct rpmem_pool_attr));
    return 0;
}
