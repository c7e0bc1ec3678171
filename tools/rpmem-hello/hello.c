/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmem-hello: the classic librpmem example. Usage: rpmem-hello TARGET POOL_SET
 *
 * Each run first tries to create the remote pool described by POOL_SET (a pool set file in
 * rpmemd's pool set directory on TARGET), as PMDK's examples do; when it exists already (EEXIST)
 * the run opens it instead. A new pool gets "Hello world!" at offset 4096, just after the pool
 * header; an existing one has its message read back with rpmem_read(), printed, switched to the
 * other language and persisted. librpmem is quiet on stderr by default, so what this program
 * prints is all the application's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "librpmem.h"

#define POOL_SIZE ((size_t)(32 * 1024 * 1024))
#define DATA_OFFSET 4096 /* the pool header comes first */
#define MESSAGE_SIZE 64
#define SIGNATURE "HELLO"

static const char HELLO_EN[] = "Hello world!";
static const char HELLO_ES[] = "\xC2\xA1Hola Mundo!"; /* ¡Hola Mundo! */

int main(int argc, char* argv[]) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s TARGET POOL_SET\n", argv[0]);
        return 2;
    }
    const char* target = argv[1];
    const char* pool_set = argv[2];

    void* pool = NULL;
    if (posix_memalign(&pool, (size_t)sysconf(_SC_PAGESIZE), POOL_SIZE) != 0) {
        fprintf(stderr, "cannot allocate the local pool\n");
        return 1;
    }
    memset(pool, 0, POOL_SIZE);
    char* message = (char*)pool + DATA_OFFSET;

    unsigned nlanes = 1;
    struct rpmem_pool_attr attr;
    memset(&attr, 0, sizeof attr);
    memcpy(attr.signature, SIGNATURE, sizeof SIGNATURE);
    attr.major = 1;
    int created = 1;
    RPMEMpool* rpp = rpmem_create(target, pool_set, pool, POOL_SIZE, &nlanes, &attr);
    if (rpp == NULL && errno == EEXIST) {
        nlanes = 1;
        created = 0;
        rpp = rpmem_open(target, pool_set, pool, POOL_SIZE, &nlanes, &attr);
    }
    if (rpp == NULL) {
        fprintf(stderr, "%s %s on %s: %s\n", created ? "creating" : "opening", pool_set, target,
                rpmem_errormsg());
        free(pool);
        return 1;
    }

    int status = 0;
    if (created) {
        strcpy(message, HELLO_EN);
    } else {
        if (strncmp(attr.signature, SIGNATURE, sizeof SIGNATURE) != 0) {
            fprintf(stderr, "%s on %s is not a hello pool\n", pool_set, target);
            status = 1;
            goto out;
        }
        if (rpmem_read(rpp, message, DATA_OFFSET, MESSAGE_SIZE, 0) != 0) {
            fprintf(stderr, "reading the message: %s\n", rpmem_errormsg());
            status = 1;
            goto out;
        }
        message[MESSAGE_SIZE - 1] = '\0';
        printf("Previous message: %s\n", message);
        strcpy(message, strcmp(message, HELLO_EN) == 0 ? HELLO_ES : HELLO_EN);
    }

    printf("Next message: %s\n", message);
    if (rpmem_persist(rpp, DATA_OFFSET, MESSAGE_SIZE, 0, 0) != 0) {
        fprintf(stderr, "persisting the message: %s\n", rpmem_errormsg());
        status = 1;
    }
out:
    if (rpmem_close(rpp) != 0) {
        fprintf(stderr, "closing %s on %s: %s\n", pool_set, target, rpmem_errormsg());
        status = 1;
    }
    free(pool);
    return status;
}
