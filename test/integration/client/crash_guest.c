/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_guest LIBRPMEM TARGET POOL_SET: an application that loads librpmem.so.1 with dlopen, as
 * libpmemobj does, creates a remote pool and persists to it, then crashes on a bad pointer.
 *
 * Before loading it installs a handler of its own for SIGBUS and keeps SIG_DFL elsewhere; after
 * the load and after the persist it compares every signal's disposition with what it set and
 * prints "unchanged after load" and "unchanged after persist" (or the first signal that
 * differs, then exits 3). It turns core dumps off, so a crash leaves no file of the kernel's in
 * its working directory either: whatever is found there came from a library.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "librpmem.h"

#define POOL_SIZE ((size_t)(8 * 1024 * 1024))
#define DATA_OFFSET 4096

/* glibc adds SA_RESTORER to what it installs: a disposition put back may differ in it alone. */
#define RESTORER_FLAG 0x04000000

static struct sigaction expected[NSIG];

static void host_bus_handler(int signal) {
    (void)signal;
}

static int check_dispositions(const char* when) {
    for (int signal = 1; signal < NSIG; ++signal) {
        struct sigaction current;
        if (sigaction(signal, NULL, &current) != 0)
            continue;
        if (current.sa_handler != expected[signal].sa_handler ||
            (current.sa_flags & ~RESTORER_FLAG) != (expected[signal].sa_flags & ~RESTORER_FLAG)) {
            printf("signal %d (%s) changed %s\n", signal, strsignal(signal), when);
            return 0;
        }
    }
    printf("unchanged %s\n", when);
    fflush(stdout);
    return 1;
}

int main(int argc, char* argv[]) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s LIBRPMEM TARGET POOL_SET\n", argv[0]);
        return 2;
    }
    const struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);

    struct sigaction bus;
    memset(&bus, 0, sizeof bus);
    bus.sa_handler = host_bus_handler;
    sigaction(SIGBUS, &bus, NULL);
    for (int signal = 1; signal < NSIG; ++signal)
        sigaction(signal, NULL, &expected[signal]);

    void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
        return 2;
    }
    RPMEMpool* (*create)(const char*, const char*, void*, size_t, unsigned*,
                         const struct rpmem_pool_attr*);
    int (*persist)(RPMEMpool*, size_t, size_t, unsigned, unsigned);
    const char* (*errormsg)(void);
    *(void**)&create = dlsym(library, "rpmem_create");
    *(void**)&persist = dlsym(library, "rpmem_persist");
    *(void**)&errormsg = dlsym(library, "rpmem_errormsg");
    if (create == NULL || persist == NULL || errormsg == NULL) {
        fprintf(stderr, "%s lacks the librpmem functions\n", argv[1]);
        return 2;
    }
    if (!check_dispositions("after load"))
        return 3;

    void* pool = NULL;
    if (posix_memalign(&pool, (size_t)sysconf(_SC_PAGESIZE), POOL_SIZE) != 0)
        return 2;
    memset(pool, 0, POOL_SIZE);
    struct rpmem_pool_attr attr;
    memset(&attr, 0, sizeof attr);
    memcpy(attr.signature, "GUEST", 6);
    unsigned lanes = 1;
    RPMEMpool* rpp = create(argv[2], argv[3], pool, POOL_SIZE, &lanes, &attr);
    if (rpp == NULL) {
        fprintf(stderr, "creating %s on %s: %s\n", argv[3], argv[2], errormsg());
        return 2;
    }
    strcpy((char*)pool + DATA_OFFSET, "a guest was here");
    if (persist(rpp, DATA_OFFSET, 64, 0, 0) != 0) {
        fprintf(stderr, "persist: %s\n", errormsg());
        return 2;
    }
    if (!check_dispositions("after persist"))
        return 3;

    /* The application's own bug: a store through a pointer it believes valid. */
    volatile int* volatile bad = NULL;
    *bad = 1;
    return 4;
}
