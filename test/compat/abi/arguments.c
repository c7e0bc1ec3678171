/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMDK's argument rules, checked through the C ABI without any daemon: every call below must
 * fail with EINVAL before it contacts anything, and leave a message in rpmem_errormsg().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "librpmem.h"

static int failures;

static void expect_einval(const char* what, int failed) {
    if (!failed || errno != EINVAL || rpmem_errormsg()[0] == '\0') {
        fprintf(stderr, "%s: expected EINVAL with a message, got failed=%d errno=%d '%s'\n", what,
                failed, errno, rpmem_errormsg());
        ++failures;
    }
}

int main(void) {
    static char pool[8192] __attribute__((aligned(4096)));
    unsigned nlanes = 4;
    unsigned zero_lanes = 0;

    expect_einval("create: NULL target",
                  rpmem_create(NULL, "pool.set", pool, sizeof pool, &nlanes, NULL) == NULL);
    expect_einval("create: NULL pool set",
                  rpmem_create("localhost", NULL, pool, sizeof pool, &nlanes, NULL) == NULL);
    expect_einval("create: unaligned address",
                  rpmem_create("localhost", "pool.set", pool + 1, 4096, &nlanes, NULL) == NULL);
    expect_einval("create: unaligned size",
                  rpmem_create("localhost", "pool.set", pool, 4097, &nlanes, NULL) == NULL);
    expect_einval("create: zero size",
                  rpmem_create("localhost", "pool.set", pool, 0, &nlanes, NULL) == NULL);
    expect_einval("create: NULL nlanes",
                  rpmem_create("localhost", "pool.set", pool, sizeof pool, NULL, NULL) == NULL);
    expect_einval("create: zero lanes", rpmem_create("localhost", "pool.set", pool, sizeof pool,
                                                     &zero_lanes, NULL) == NULL);
    expect_einval("open: bad port", rpmem_open("localhost:70000", "pool.set", pool, sizeof pool,
                                               &nlanes, NULL) == NULL);
    expect_einval("open: empty user",
                  rpmem_open("@localhost", "pool.set", pool, sizeof pool, &nlanes, NULL) == NULL);
    expect_einval("remove: unknown flags", rpmem_remove("localhost", "pool.set", 0x4) != 0);
    expect_einval("persist: NULL pool", rpmem_persist(NULL, 4096, 8, 0, 0) != 0);
    expect_einval("deep_persist: NULL pool", rpmem_deep_persist(NULL, 4096, 8, 0) != 0);
    expect_einval("flush: NULL pool", rpmem_flush(NULL, 4096, 8, 0, 0) != 0);
    expect_einval("drain: NULL pool", rpmem_drain(NULL, 0, 0) != 0);
    expect_einval("read: NULL pool", rpmem_read(NULL, pool, 0, 8, 0) != 0);
    expect_einval("set_attr: NULL pool", rpmem_set_attr(NULL, NULL) != 0);
    expect_einval("close: NULL pool", rpmem_close(NULL) != 0);

    if (strstr(rpmem_errormsg(), "rpmem_close") == NULL) {
        fprintf(stderr, "the message does not name the call: '%s'\n", rpmem_errormsg());
        ++failures;
    }
    return failures == 0 ? 0 : 1;
}
