/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * readback_guest: a raw librpmem program, as PMDK's hello example is one: its pool is a buffer of
 * its own, not a libpmemobj pool, and after a crash it recovers its data by reading the replica
 * back with rpmem_read.
 *
 *   readback_guest write TARGET SET   create the pool (or open it), then persist 64-byte records
 *                                     1, 2, 3, ... into 4096 slots round robin, printing
 *                                     "ok N" once record N is acknowledged; runs until killed
 *   readback_guest read TARGET SET    open the pool with an empty (zeroed) buffer, read the
 *                                     slots back and print "max N" (the newest record found) and
 *                                     "LOST K": how many of the 4096 records up to N are missing
 *
 * A record is its number and a check word derived from it, so a torn or foreign slot is told
 * from a good one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "librpmem.h"

#define POOL_SIZE ((size_t)(8 * 1024 * 1024))
#define DATA_OFFSET ((size_t)4096)
#define SLOTS 4096U
#define RECORD 64U

struct record {
    uint64_t number;
    uint64_t check;
    uint64_t pad[6];
};

static uint64_t check_of(uint64_t number) {
    return number * 0x9E3779B97F4A7C15ULL ^ 0x5a5a5a5a5a5a5a5aULL;
}

static struct rpmem_pool_attr attributes(void) {
    struct rpmem_pool_attr attr;
    memset(&attr, 0, sizeof(attr));
    memcpy(attr.signature, "READBACK", 8);
    attr.major = 1;
    for (int i = 0; i < RPMEM_POOL_HDR_UUID_LEN; i++) {
        attr.poolset_uuid[i] = (unsigned char)(0x10 + i);
        attr.uuid[i] = (unsigned char)(0x20 + i);
        attr.next_uuid[i] = attr.prev_uuid[i] = (unsigned char)(0x30 + i);
    }
    return attr;
}

/* rpmem_open, retried while the target still holds the previous (killed) session's pool. */
static RPMEMpool* open_pool(const char* target, const char* set, void* pool, unsigned* lanes,
                            struct rpmem_pool_attr* attr) {
    for (int attempt = 0; attempt < 200; attempt++) {
        unsigned want = *lanes;
        RPMEMpool* rpp = rpmem_open(target, set, pool, POOL_SIZE, &want, attr);
        if (rpp != NULL) {
            *lanes = want;
            return rpp;
        }
        if (errno != EBUSY)
            break;
        usleep(50 * 1000);
    }
    fprintf(stderr, "rpmem_open: %s\n", rpmem_errormsg());
    return NULL;
}

static int run_writer(const char* target, const char* set, unsigned char* pool) {
    unsigned lanes = 1;
    struct rpmem_pool_attr attr = attributes();
    RPMEMpool* rpp = rpmem_create(target, set, pool, POOL_SIZE, &lanes, &attr);
    if (rpp == NULL && errno == EEXIST)
        rpp = open_pool(target, set, pool, &lanes, NULL);
    if (rpp == NULL) {
        fprintf(stderr, "rpmem_create: %s\n", rpmem_errormsg());
        return 2;
    }
    for (uint64_t number = 1;; number++) {
        const size_t offset = DATA_OFFSET + (size_t)((number - 1) % SLOTS) * RECORD;
        struct record record = {number, check_of(number), {0}};
        memcpy(pool + offset, &record, sizeof(record));
        if (rpmem_persist(rpp, offset, RECORD, 0, 0) != 0) {
            fprintf(stderr, "rpmem_persist: %s\n", rpmem_errormsg());
            return 3;
        }
        printf("ok %" PRIu64 "\n", number);
        fflush(stdout);
    }
}

static int run_reader(const char* target, const char* set, unsigned char* pool) {
    unsigned lanes = 1;
    struct rpmem_pool_attr attr;
    RPMEMpool* rpp = open_pool(target, set, pool, &lanes, &attr);
    if (rpp == NULL)
        return 2;
    if (rpmem_read(rpp, pool + DATA_OFFSET, DATA_OFFSET, (size_t)SLOTS * RECORD, 0) != 0) {
        fprintf(stderr, "rpmem_read: %s\n", rpmem_errormsg());
        return 3;
    }
    uint64_t max = 0;
    for (unsigned slot = 0; slot < SLOTS; slot++) {
        struct record record;
        memcpy(&record, pool + DATA_OFFSET + (size_t)slot * RECORD, sizeof(record));
        if (record.number != 0 && record.check == check_of(record.number) && record.number > max)
            max = record.number;
    }
    unsigned lost = 0;
    for (uint64_t number = max > SLOTS ? max - SLOTS + 1 : 1; number <= max; number++) {
        struct record record;
        memcpy(&record, pool + DATA_OFFSET + (size_t)((number - 1) % SLOTS) * RECORD,
               sizeof(record));
        if (record.number != number || record.check != check_of(number))
            lost++;
    }
    printf("max %" PRIu64 "\nLOST %u\n", max, lost);
    if (rpmem_close(rpp) != 0) {
        fprintf(stderr, "rpmem_close: %s\n", rpmem_errormsg());
        return 4;
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc != 4 || (strcmp(argv[1], "write") != 0 && strcmp(argv[1], "read") != 0)) {
        fprintf(stderr, "usage: readback_guest write|read TARGET SET\n");
        return 1;
    }
    unsigned char* pool = NULL;
    if (posix_memalign((void**)&pool, 4096, POOL_SIZE) != 0)
        return 1;
    memset(pool, 0, POOL_SIZE);
    int status = strcmp(argv[1], "write") == 0 ? run_writer(argv[2], argv[3], pool)
                                               : run_reader(argv[2], argv[3], pool);
    free(pool);
    return status;
}
