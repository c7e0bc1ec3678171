/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fault-writer -- the fault tests' workload: persists uniquely stamped records through the
 * public C API of librpmem only, and logs every call so that a checker knows what the target
 * acknowledged.
 *
 *   fault-writer TARGET[,TARGET...] SET POOL_SIZE SLOTS COUNT STAMP LOG [LOCAL_COPY]
 *
 * Creates SET on each TARGET (with pool attributes: the target owns the first 4096 bytes), all
 * replicas of one local pool as libpmemobj's REPLICA lines are, then for i = 1 .. COUNT writes
 * record i (fault_record.h) into the local pool and persists its 32 bytes on lane 0 of each
 * replica in turn (libpmemobj's order; with fan-out the first call posts to all). It stops at the
 * first failure (errors are sticky). The first target's log is LOG, the k-th's (from 1) LOG.k;
 * each gets one line per call on its replica, written with one write(2) after the call returned,
 * so a line is there exactly when the call came back, even if the process is killed right after:
 *
 *   create RC ERRNO START_NS END_NS MESSAGE
 *   persist I RC ERRNO START_NS END_NS MESSAGE
 *   close RC ERRNO START_NS END_NS MESSAGE
 *
 * (MESSAGE is "-" on success.) A persist not in the log was never started or was in flight.
 * stdout gets "acked I" every 64 records, for the test to time its fault. After a clean close
 * the local pool is written to LOCAL_COPY, for a byte-for-byte comparison with the replica.
 * With FAULT_WRITER_PAUSE_US set, it sleeps that long between records (degraded scenarios).
 * Exit status: 0 when every call succeeded, 1 when one failed, 2 on bad usage.
 *
 *   fault-writer --readback TARGET SET POOL_SIZE OUT
 *
 * After a fault: reopens SET with an empty (zeroed) local pool, as a raw librpmem program
 * recovering its data does, reads the replica's data back with rpmem_read and writes the pool
 * (its first 4096 bytes zero) to OUT. The reopen must leave the replica as it is (proven
 * direction): a zeroed buffer proves nothing about being its master.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fault_record.h"
#include "librpmem.h"

#define MAX_TARGETS 4

static int log_fds[MAX_TARGETS] = {-1, -1, -1, -1};

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* One line per call: `what` (with the record number for persist), result, errno, times. */
static void log_call(unsigned replica, const char* what, int rc, int error, uint64_t start,
                     uint64_t end) {
    char line[1024];
    const char* message = rc == 0 ? "-" : rpmem_errormsg();
    int length = snprintf(line, sizeof line, "%s %d %d %" PRIu64 " %" PRIu64 " %s\n", what, rc,
                          rc == 0 ? 0 : error, start, end, message ? message : "(none)");
    if (length < 0)
        return;
    if ((size_t)length >= sizeof line) {
        length = (int)sizeof line - 1;
        line[length - 1] = '\n';
    }
    /* One write: the line is whole in the file or absent. Newlines inside the message would
     * split it: the message is the last field, and the parser takes a line's first fields. */
    for (int i = 0; i < length - 1; ++i)
        if (line[i] == '\n')
            line[i] = ' ';
    if (write(log_fds[replica], line, (size_t)length) != length)
        perror("fault-writer: writing the log");
}

static int write_file(const char* path, const void* data, size_t size) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    const char* bytes = data;
    while (size > 0) {
        ssize_t done = write(fd, bytes, size);
        if (done <= 0) {
            close(fd);
            return -1;
        }
        bytes += done;
        size -= (size_t)done;
    }
    return close(fd);
}

/* --readback: see the top of this file. */
static int read_back(const char* target, const char* set, size_t pool_size, const char* out) {
    char* pool = aligned_alloc(4096, pool_size);
    if (pool == NULL)
        return 2;
    memset(pool, 0, pool_size);
    RPMEMpool* rpp = NULL;
    /* The target frees the faulted session's pool once it noticed the session is gone. */
    for (int attempt = 0; attempt < 400 && rpp == NULL; ++attempt) {
        unsigned lanes = 1;
        rpp = rpmem_open(target, set, pool, pool_size, &lanes, NULL);
        if (rpp == NULL && errno != EBUSY)
            break;
        if (rpp == NULL)
            usleep(50 * 1000);
    }
    if (rpp == NULL) {
        fprintf(stderr, "fault-writer --readback: rpmem_open: %s\n", rpmem_errormsg());
        return 1;
    }
    if (rpmem_read(rpp, pool + 4096, 4096, pool_size - 4096, 0) != 0) {
        fprintf(stderr, "fault-writer --readback: rpmem_read: %s\n", rpmem_errormsg());
        return 1;
    }
    if (rpmem_close(rpp) != 0) {
        fprintf(stderr, "fault-writer --readback: rpmem_close: %s\n", rpmem_errormsg());
        return 1;
    }
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, pool, pool_size) != (ssize_t)pool_size || close(fd) != 0) {
        perror(out);
        return 1;
    }
    free(pool);
    return 0;
}

int main(int argc, char* argv[]) {
    if (argc == 6 && strcmp(argv[1], "--readback") == 0)
        return read_back(argv[2], argv[3], strtoull(argv[4], NULL, 0), argv[5]);
    if (argc != 8 && argc != 9) {
        fprintf(stderr,
                "usage: %s TARGET[,TARGET...] SET POOL_SIZE SLOTS COUNT STAMP LOG [LOCAL_COPY]\n",
                argv[0]);
        return 2;
    }
    const char* set = argv[2];
    const size_t pool_size = strtoull(argv[3], NULL, 0);
    const uint64_t slots = strtoull(argv[4], NULL, 0);
    const uint64_t count = strtoull(argv[5], NULL, 0);
    const uint32_t stamp = (uint32_t)strtoul(argv[6], NULL, 0);
    if (slots == 0 || pool_size % 4096 != 0 || fault_record_offset(slots) > pool_size ||
        count >= (1ULL << 32)) {
        fprintf(stderr, "fault-writer: the slots do not fit the pool\n");
        return 2;
    }
    char* targets[MAX_TARGETS];
    unsigned replicas = 0;
    char* list = strdup(argv[1]);
    for (char* next = strtok(list, ","); next != NULL; next = strtok(NULL, ",")) {
        if (replicas == MAX_TARGETS) {
            fprintf(stderr, "fault-writer: at most %d targets\n", MAX_TARGETS);
            return 2;
        }
        targets[replicas++] = next;
    }
    if (replicas == 0) {
        fprintf(stderr, "fault-writer: no target\n");
        return 2;
    }
    for (unsigned k = 0; k < replicas; ++k) {
        char path[4096];
        if (k == 0)
            snprintf(path, sizeof path, "%s", argv[7]);
        else
            snprintf(path, sizeof path, "%s.%u", argv[7], k);
        log_fds[k] = open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC | O_CLOEXEC, 0600);
        if (log_fds[k] < 0) {
            perror(path);
            return 2;
        }
    }

    void* pool = NULL;
    if (posix_memalign(&pool, 4096, pool_size) != 0) {
        fprintf(stderr, "fault-writer: no memory for the pool\n");
        return 2;
    }
    memset(pool, 0, pool_size);

    struct rpmem_pool_attr attr;
    memset(&attr, 0, sizeof attr);
    memcpy(attr.signature, "FAULTWR", 8);
    attr.major = 1;
    for (int i = 0; i < RPMEM_POOL_HDR_UUID_LEN; ++i) {
        attr.poolset_uuid[i] = (unsigned char)(stamp >> (i % 4 * 8));
        attr.uuid[i] = (unsigned char)(i + 1);
        attr.next_uuid[i] = (unsigned char)(i + 1);
        attr.prev_uuid[i] = (unsigned char)(i + 1);
    }

    RPMEMpool* rpps[MAX_TARGETS] = {NULL};
    uint64_t start = 0;
    int error = 0;
    for (unsigned k = 0; k < replicas; ++k) {
        unsigned nlanes = 1;
        start = now_ns();
        rpps[k] = rpmem_create(targets[k], set, pool, pool_size, &nlanes, &attr);
        error = errno;
        log_call(k, "create", rpps[k] == NULL ? -1 : 0, error, start, now_ns());
        if (rpps[k] == NULL) {
            fprintf(stderr, "fault-writer: rpmem_create on %s: %s\n", targets[k], rpmem_errormsg());
            return 1;
        }
    }

    const char* pause_text = getenv("FAULT_WRITER_PAUSE_US");
    const long pause_us = pause_text != NULL ? strtol(pause_text, NULL, 10) : 0;
    int status = 0;
    for (uint64_t i = 1; i <= count; ++i) {
        if (pause_us > 0) {
            struct timespec pause = {pause_us / 1000000, (pause_us % 1000000) * 1000};
            nanosleep(&pause, NULL);
        }
        uint64_t slot = i % slots;
        volatile uint64_t* words = (volatile uint64_t*)((char*)pool + fault_record_offset(slot));
        for (unsigned k = 0; k < kRecordWords; ++k)
            words[k] = fault_record_word(i, k, stamp);
        for (unsigned k = 0; k < replicas && status == 0; ++k) {
            start = now_ns();
            int rc = rpmem_persist(rpps[k], fault_record_offset(slot), kRecordSize, 0, 0);
            error = errno;
            char what[64];
            snprintf(what, sizeof what, "persist %" PRIu64, i);
            log_call(k, what, rc, error, start, now_ns());
            if (rc != 0) {
                fprintf(stderr, "fault-writer: persist of record %" PRIu64 " on %s: %s\n", i,
                        targets[k], rpmem_errormsg());
                status = 1;
            }
        }
        if (status != 0)
            break;
        if (i % 64 == 0) {
            printf("acked %" PRIu64 "\n", i);
            fflush(stdout);
        }
    }

    for (unsigned k = replicas; k-- > 0;) {
        start = now_ns();
        int rc = rpmem_close(rpps[k]);
        error = errno;
        log_call(k, "close", rc, error, start, now_ns());
        if (rc != 0)
            status = 1;
    }
    if (status == 0 && argc == 9 && write_file(argv[8], pool, pool_size) != 0) {
        perror(argv[8]);
        status = 1;
    }
    free(pool);
    free(list);
    printf("done %d\n", status);
    return status;
}
