/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pmemobj-tx: a plain libpmemobj application. It knows nothing of rpmem: it replicates because
 * its pool set has a REPLICA line, which is the whole point (the README's first command and the
 * compat tests run it).
 *
 *   pmemobj-tx create SET COUNT    create the pool and run COUNT transactions
 *   pmemobj-tx run SET FROM COUNT  open it and run transactions FROM .. FROM+COUNT-1, printing
 *                                  "committed N" after each (for the crash tests); with
 *                                  PMEMOBJ_TX_PAUSE_US set, it sleeps that long between them
 *   pmemobj-tx verify SET COUNT    open it and check that exactly COUNT transactions are there
 *                                  (COUNT "any": as many as the counter says, all consistent)
 *
 * Transaction i sets slot slot_of(i) to value(i) and the counter to i + 1, atomically. slot_of
 * is a permutation of the slots (a multiplication by an odd number modulo their power-of-two
 * count), so consecutive transactions write all over the 1 MiB root object, not one page.
 */
#include <inttypes.h>
#include <libpmemobj.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LAYOUT "rpmem-compat"
#define SLOTS (1U << 17)
#define SLOT_STRIDE 40503U /* odd: i -> i * SLOT_STRIDE % SLOTS is a permutation */

struct root {
    uint64_t count;
    uint64_t slots[SLOTS];
};

static uint64_t value(uint64_t i) {
    return (i + 1) * 0x9E3779B97F4A7C15ULL;
}

static uint64_t slot_of(uint64_t i) {
    return (i * SLOT_STRIDE) & (SLOTS - 1);
}

/* The first transaction that writes `slot`: slot times the inverse of the stride. */
static uint64_t first_writer(uint64_t slot) {
    uint64_t inverse = SLOT_STRIDE; /* Newton's iteration: correct to 3, 6, 12, ... bits */
    for (int i = 0; i < 5; ++i)
        inverse *= 2 - SLOT_STRIDE * inverse;
    return (slot * inverse) & (SLOTS - 1);
}

static int run(PMEMobjpool* pop, uint64_t from, uint64_t count, int verbose) {
    PMEMoid root_oid = pmemobj_root(pop, sizeof(struct root));
    struct root* root = pmemobj_direct(root_oid);
    if (root == NULL) {
        fprintf(stderr, "pmemobj_root: %s\n", pmemobj_errormsg());
        return 1;
    }
    const char* pause_text = getenv("PMEMOBJ_TX_PAUSE_US");
    long pause_us = pause_text != NULL ? strtol(pause_text, NULL, 10) : 0;
    for (uint64_t i = from; i < from + count; ++i) {
        int failed = 0;
        if (pause_us > 0 && i > from) {
            struct timespec pause = {pause_us / 1000000, (pause_us % 1000000) * 1000};
            nanosleep(&pause, NULL);
        }
        TX_BEGIN(pop) {
            uint64_t slot = slot_of(i);
            pmemobj_tx_add_range_direct(&root->slots[slot], sizeof root->slots[slot]);
            root->slots[slot] = value(i);
            pmemobj_tx_add_range_direct(&root->count, sizeof root->count);
            root->count = i + 1;
        }
        TX_ONABORT {
            failed = 1;
        }
        TX_END
        if (failed) {
            fprintf(stderr, "transaction %" PRIu64 " aborted: %s\n", i, pmemobj_errormsg());
            return 1;
        }
        if (verbose) {
            printf("committed %" PRIu64 "\n", i + 1);
            fflush(stdout);
        }
    }
    return 0;
}

static int verify(PMEMobjpool* pop, const char* expected_count) {
    struct root* root = pmemobj_direct(pmemobj_root(pop, sizeof(struct root)));
    if (root == NULL) {
        fprintf(stderr, "pmemobj_root: %s\n", pmemobj_errormsg());
        return 1;
    }
    uint64_t count =
        strcmp(expected_count, "any") == 0 ? root->count : strtoull(expected_count, NULL, 10);
    if (root->count != count) {
        fprintf(stderr, "counter is %" PRIu64 ", expected %" PRIu64 "\n", root->count, count);
        return 1;
    }
    for (uint64_t slot = 0; slot < SLOTS; ++slot) {
        uint64_t expected = 0;
        uint64_t first = first_writer(slot);
        if (count > first) /* the last transaction that wrote this slot */
            expected = value(first + (count - 1 - first) / SLOTS * SLOTS);
        if (root->slots[slot] != expected) {
            fprintf(stderr, "slot %" PRIu64 " holds %#" PRIx64 ", expected %#" PRIx64 "\n", slot,
                    root->slots[slot], expected);
            return 1;
        }
    }
    printf("verified %" PRIu64 " transactions\n", count);
    return 0;
}

int main(int argc, char* argv[]) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s create|verify SET COUNT | run SET FROM COUNT\n", argv[0]);
        return 2;
    }
    const char* mode = argv[1];
    const char* set = argv[2];
    int status;
    PMEMobjpool* pop;

    if (strcmp(mode, "create") == 0) {
        pop = pmemobj_create(set, LAYOUT, 0, 0600);
        if (pop == NULL) {
            fprintf(stderr, "pmemobj_create %s: %s\n", set, pmemobj_errormsg());
            return 1;
        }
        status = run(pop, 0, strtoull(argv[3], NULL, 10), 0);
    } else {
        pop = pmemobj_open(set, LAYOUT);
        if (pop == NULL) {
            fprintf(stderr, "pmemobj_open %s: %s\n", set, pmemobj_errormsg());
            return 1;
        }
        if (strcmp(mode, "run") == 0 && argc == 5)
            status = run(pop, strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10), 1);
        else if (strcmp(mode, "verify") == 0)
            status = verify(pop, argv[3]);
        else
            status = 2;
    }
    pmemobj_close(pop);
    return status;
}
