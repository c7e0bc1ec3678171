/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tx-writer: the cluster test's application, a plain libpmemobj program (it replicates because
 * its pool set has a REPLICA line, and knows nothing of rpmem or Pacemaker).
 *
 *   tx-writer create SET         create the pool (no transaction)
 *   tx-writer run SET            open, verify what is there, then run numbered transactions
 *                                from the counter on until SIGTERM (or SIGINT), then close
 *   tx-writer verify SET         open and verify
 *
 * Transaction i stores {i, session} in entry i % ENTRIES and sets the counter to i + 1,
 * atomically; session is a random number drawn at each run. Verification: entry e holds the
 * last transaction below the counter that wrote it (or nothing), so a transaction that was
 * acknowledged and lost, or one that landed without its counter (a write of a session that
 * had lost the pool), is found. It prints "verified COUNT" and, per session seen, "session S
 * first F last L"; run prints "session S", then "committed N" after each commit (flushed: a
 * line on stdout is an acknowledged transaction).
 */
#include <errno.h>
#include <inttypes.h>
#include <libpmemobj.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define LAYOUT "rpmem-cluster"
#define ENTRIES (1U << 15)
#define MAX_SESSIONS 64

struct entry {
    uint64_t tx_plus_one; /* 0: never written */
    uint64_t session;
};

struct root {
    uint64_t count;
    struct entry entries[ENTRIES];
};

static volatile sig_atomic_t stopping;

static void on_stop(int signal_number) {
    (void)signal_number;
    stopping = 1;
}

static int verify(struct root* root) {
    uint64_t count = root->count;
    uint64_t sessions[MAX_SESSIONS], first[MAX_SESSIONS], last[MAX_SESSIONS];
    unsigned nsessions = 0;
    for (uint64_t e = 0; e < ENTRIES; ++e) {
        const struct entry* entry = &root->entries[e];
        uint64_t expected = 0; /* the last transaction below count that wrote entry e, plus one */
        if (count > e)
            expected = e + (count - 1 - e) / ENTRIES * ENTRIES + 1;
        if (entry->tx_plus_one != expected) {
            fprintf(stderr,
                    "entry %" PRIu64 " holds transaction %" PRId64 " (session %#" PRIx64
                    "), expected %" PRId64 " with the counter at %" PRIu64 "\n",
                    e, (int64_t)entry->tx_plus_one - 1, entry->session, (int64_t)expected - 1,
                    count);
            return 1;
        }
        if (expected == 0)
            continue;
        unsigned s = 0;
        while (s < nsessions && sessions[s] != entry->session)
            ++s;
        if (s == nsessions) {
            if (nsessions == MAX_SESSIONS) {
                fprintf(stderr, "more than %d sessions in the pool\n", MAX_SESSIONS);
                return 1;
            }
            sessions[s] = entry->session;
            first[s] = last[s] = expected - 1;
            ++nsessions;
        }
        if (expected - 1 < first[s])
            first[s] = expected - 1;
        if (expected - 1 > last[s])
            last[s] = expected - 1;
    }
    printf("verified %" PRIu64 "\n", count);
    for (unsigned s = 0; s < nsessions; ++s)
        printf("session %#" PRIx64 " first %" PRIu64 " last %" PRIu64 "\n", sessions[s], first[s],
               last[s]);
    fflush(stdout);
    return 0;
}

static int run(PMEMobjpool* pop, struct root* root) {
    uint64_t session = 0;
    while (session == 0)
        if (getrandom(&session, sizeof session, 0) != sizeof session) {
            perror("getrandom");
            return 1;
        }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_stop;
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    printf("session %#" PRIx64 "\n", session);
    fflush(stdout);
    /* Paced, so that a 2-core machine running two clusters' daemons keeps up. */
    const struct timespec pause = {0, 2 * 1000 * 1000};
    while (!stopping) {
        uint64_t i = root->count;
        volatile int failed = 0; /* set across TX_BEGIN's setjmp */
        TX_BEGIN(pop) {
            struct entry* entry = &root->entries[i % ENTRIES];
            pmemobj_tx_add_range_direct(entry, sizeof *entry);
            entry->tx_plus_one = i + 1;
            entry->session = session;
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
        printf("committed %" PRIu64 "\n", i + 1);
        fflush(stdout);
        nanosleep(&pause, NULL);
    }
    printf("stopping at %" PRIu64 "\n", root->count);
    fflush(stdout);
    return 0;
}

int main(int argc, char* argv[]) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s create|run|verify SET\n", argv[0]);
        return 2;
    }
    const char* mode = argv[1];
    const char* set = argv[2];
    PMEMobjpool* pop = strcmp(mode, "create") == 0 ? pmemobj_create(set, LAYOUT, 0, 0600)
                                                   : pmemobj_open(set, LAYOUT);
    if (pop == NULL) {
        fprintf(stderr, "%s %s: %s\n",
                strcmp(mode, "create") == 0 ? "pmemobj_create" : "pmemobj_open", set,
                pmemobj_errormsg());
        return 1;
    }
    struct root* root = pmemobj_direct(pmemobj_root(pop, sizeof(struct root)));
    int status = 0;
    if (root == NULL) {
        fprintf(stderr, "pmemobj_root: %s\n", pmemobj_errormsg());
        status = 1;
    } else if (strcmp(mode, "verify") == 0) {
        status = verify(root);
    } else if (strcmp(mode, "run") == 0) {
        status = verify(root);
        if (status == 0)
            status = run(pop, root);
    } else if (strcmp(mode, "create") != 0) {
        status = 2;
    }
    pmemobj_close(pop);
    return status;
}
