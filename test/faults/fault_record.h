/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fault_record.h -- the records fault-writer persists and the fault checker reads back.
 *
 * Record i (numbered from 1) lives at slot i % slots, kRecordWords aligned 8-byte words at
 * kRecordBase + slot * kRecordSize. Word k of record i holds i in its upper 32 bits and a check
 * of (i, k, stamp) in its lower 32: a word is either zero (never written), or names the record
 * that wrote it, or is torn (bytes of two stores), which its check shows. The stamp is chosen
 * per run, so data of another run never passes for this one's.
 *
 * Shared by the C writer (public C API only) and the C++ checker, hence plain C99.
 */
#ifndef RPMEM_TEST_FAULT_RECORD_H
#define RPMEM_TEST_FAULT_RECORD_H 1

#include <stdint.h>

enum {
    kRecordBase = 4096, /* the first 4096 bytes are the pool's header, owned by the target */
    kRecordWords = 4,
    kRecordSize = kRecordWords * 8,
};

static inline uint32_t fault_record_check(uint64_t record, unsigned word, uint32_t stamp) {
    /* splitmix64's finalizer over the three values: every input bit reaches every output bit */
    uint64_t x = (record << 2 | word) ^ ((uint64_t)stamp << 40) ^ 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return (uint32_t)(x ^ (x >> 31));
}

static inline uint64_t fault_record_word(uint64_t record, unsigned word, uint32_t stamp) {
    return (record << 32) | fault_record_check(record, word, stamp);
}

static inline uint64_t fault_record_offset(uint64_t slot) {
    return kRecordBase + slot * kRecordSize;
}

#endif
