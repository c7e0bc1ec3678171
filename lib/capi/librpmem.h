/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librpmem.h -- remote access to persistent memory pools (rpmem project).
 *
 * A drop-in implementation of the C API of PMDK's librpmem (API version 1.3, library
 * librpmem.so.1, symbol version LIBRPMEM_1.0). The initiator maps a local pool; each function
 * below acts on the remote replica of that pool kept by rpmemd on the target host.
 *
 * Conventions shared by every function:
 *  - Functions returning int return 0 on success and -1 (or another non-zero value) on error;
 *    functions returning a pointer return NULL on error. On error errno holds a positive
 *    error number and rpmem_errormsg() a text naming the host and the step that failed.
 *  - Lanes are numbered 0 .. *nlanes-1 as returned by rpmem_create() or rpmem_open(). A lane
 *    must not be used by two threads at once; different lanes are independent and nothing
 *    orders operations across lanes.
 *  - After a failure on the data path (flush, drain, persist, deep_persist, read) the pool
 *    handle is broken: every later data-path call and rpmem_set_attr() fail with the same errno.
 */
#ifndef LIBRPMEM_H
#define LIBRPMEM_H 1

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An open remote pool. Opaque; freed by rpmem_close(). */
typedef struct rpmem_pool RPMEMpool;

#define RPMEM_POOL_HDR_SIG_LEN 8
#define RPMEM_POOL_HDR_UUID_LEN 16
#define RPMEM_POOL_USER_FLAGS_LEN 16

/*
 * The attributes written into the remote pool's headers by rpmem_create() and returned by
 * rpmem_open(). 104 bytes, no padding. A NULL or all-zero value means the remote pool has no
 * headers (its pool set file must say OPTION NOHDRS).
 */
struct rpmem_pool_attr {
    char signature[RPMEM_POOL_HDR_SIG_LEN];              /* pool signature, e.g. "PMEMOBJ" */
    uint32_t major;                                      /* format major version */
    uint32_t compat_features;                            /* features that may be ignored */
    uint32_t incompat_features;                          /* features that must be understood */
    uint32_t ro_compat_features;                         /* features forcing read-only if unknown */
    unsigned char poolset_uuid[RPMEM_POOL_HDR_UUID_LEN]; /* the pool set's UUID */
    unsigned char uuid[RPMEM_POOL_HDR_UUID_LEN];         /* UUID of the remote replica's part 0 */
    unsigned char next_uuid[RPMEM_POOL_HDR_UUID_LEN];    /* UUID of the next replica */
    unsigned char prev_uuid[RPMEM_POOL_HDR_UUID_LEN];    /* UUID of the previous replica */
    unsigned char user_flags[RPMEM_POOL_USER_FLAGS_LEN]; /* the header's architecture flags */
};

/*
 * rpmem_create -- create the pool described by pool_set_name on target and connect to it.
 *
 * target:        "[user@]host[:port]"; an IPv6 host is written in brackets.
 * pool_set_name: a pool set file relative to rpmemd's pool set directory on the target.
 * pool_addr:     the local pool (page aligned); the source of every persist.
 * pool_size:     its size in bytes (page aligned, non-zero).
 * nlanes:        in: the largest number of lanes wanted (> 0); out: the number granted.
 * create_attr:   attributes for the remote headers, or NULL for a pool without headers. With
 *                headers, offsets below 4096 (the header) cannot be written through this API.
 *
 * Returns the pool handle, or NULL with errno set (EEXIST, ENOENT, EACCES, EBUSY, EFBIG,
 * EINVAL, ECONNREFUSED, ...).
 */
RPMEMpool* rpmem_create(const char* target, const char* pool_set_name, void* pool_addr,
                        size_t pool_size, unsigned* nlanes,
                        const struct rpmem_pool_attr* create_attr);

/*
 * rpmem_open -- open the existing remote pool described by pool_set_name on target.
 *
 * Arguments as for rpmem_create(). When open_attr is not NULL it receives the attributes stored
 * in the remote headers (all zero for a pool without headers). The remote pool must be at least
 * pool_size bytes (else EFBIG).
 */
RPMEMpool* rpmem_open(const char* target, const char* pool_set_name, void* pool_addr,
                      size_t pool_size, unsigned* nlanes, struct rpmem_pool_attr* open_attr);

/* rpmem_set_attr -- rewrite the remote pool's header attributes (NULL: all zero). */
int rpmem_set_attr(RPMEMpool* rpp, const struct rpmem_pool_attr* attr);

/*
 * rpmem_close -- disconnect from the remote pool and free the handle. The handle is freed even
 * when an error is returned.
 */
int rpmem_close(RPMEMpool* rpp);

/* Flags of rpmem_persist(). */
#define RPMEM_PERSIST_RELAXED (1U << 0) /* no 8-byte store atomicity promise */

/* Flags of rpmem_flush(). */
#define RPMEM_FLUSH_RELAXED (1U << 0)

/*
 * rpmem_flush -- start copying [pool_addr + offset, + length) to the same offset of the remote
 * pool on the given lane. Durable only after a later rpmem_drain() on the same lane.
 */
int rpmem_flush(RPMEMpool* rpp, size_t offset, size_t length, unsigned lane, unsigned flags);

/*
 * rpmem_drain -- make every earlier flush on this lane durable. flags: 0, or
 * RPMEM_DRAIN_REPLICATED (an rpmem extension): also wait until the replica holds every persist
 * made so far on any lane, which under RPMEM_REPLICATION=async is the barrier to use before an
 * external side effect (the same as 0 under sync). ETIMEDOUT after RPMEM_TIMEOUT.
 */
#define RPMEM_DRAIN_REPLICATED (1U << 0)
int rpmem_drain(RPMEMpool* rpp, unsigned lane, unsigned flags);

/*
 * rpmem_persist -- copy [pool_addr + offset, + length) to the same offset of the remote pool and
 * return once it is durable there. Without RPMEM_PERSIST_RELAXED every aligned 8-byte word of
 * the range lands whole. EINVAL for a range outside the pool, unknown flags, a bad lane, or an
 * offset inside the header. A zero length succeeds without doing anything.
 */
int rpmem_persist(RPMEMpool* rpp, size_t offset, size_t length, unsigned lane, unsigned flags);

/*
 * rpmem_deep_persist -- as rpmem_persist(), and the target also flushes the range to the
 * deepest persistence domain it has (msync when the pool is not on persistent memory).
 */
int rpmem_deep_persist(RPMEMpool* rpp, size_t offset, size_t length, unsigned lane);

/* rpmem_read -- read [offset, + length) of the remote pool into buff. */
int rpmem_read(RPMEMpool* rpp, void* buff, size_t offset, size_t length, unsigned lane);

/* Flags of rpmem_remove(). */
#define RPMEM_REMOVE_FORCE 0x1    /* ignore errors while removing parts */
#define RPMEM_REMOVE_POOL_SET 0x2 /* also remove the pool set file */

/* rpmem_remove -- remove the remote pool described by pool_set_name on target. */
int rpmem_remove(const char* target, const char* pool_set_name, int flags);

/* The API version this header describes. */
#define RPMEM_MAJOR_VERSION 1
#define RPMEM_MINOR_VERSION 3

/*
 * rpmem_check_version -- NULL when the library provides API version major_required with at
 * least minor_required, else a static text saying why not.
 */
const char* rpmem_check_version(unsigned major_required, unsigned minor_required);

/* rpmem_errormsg -- the last error of the calling thread, as text. */
const char* rpmem_errormsg(void);

/* Smallest remote pool and smallest part of a remote pool set. */
#define RPMEM_MIN_POOL ((size_t)(1024 * 8))
#define RPMEM_MIN_PART ((size_t)(1024 * 1024 * 2))

#ifdef __cplusplus
}
#endif
#endif /* LIBRPMEM_H */
