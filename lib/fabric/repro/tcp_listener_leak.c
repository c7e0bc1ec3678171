// SPDX-License-Identifier: BSD-3-Clause
// Reproducer (not built): libfabric 1.17's tcp provider and raw TCP connections to a passive
// endpoint (lib/fabric/README.md, "Listeners"). Build and run:
//   cc -g -o tcp_listener_leak tcp_listener_leak.c -lfabric
//   ASAN_OPTIONS=detect_leaks=0 ./tcp_listener_leak idle-end
// Modes: close (connect and close at once, the EQ read meanwhile: nothing is left), idle
// (connections that stay silent: held by the provider, also after fi_close of the listener),
// partial (one byte of a connection request, then silence: the same), idle-end (silent ones
// still connected when the listener, EQ and fabric close: their descriptors are never freed;
// printed as "fds" over the count before the listener opened), shut-zero and shut-eagain (our
// side shuts the silent connections down and reads the EQ with errno 0, or with a stale EAGAIN
// as a thread that made nonblocking calls has: the provider frees them, or keeps them).
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fds(void) {
    int n = 0;
    DIR* d = opendir("/proc/self/fd");
    while (readdir(d))
        n++;
    closedir(d);
    return n - 3;
}
#define CHECK(x)                                                                                   \
    do {                                                                                           \
        int r_ = (x);                                                                              \
        if (r_) {                                                                                  \
            fprintf(stderr, "%s: %d %s\n", #x, r_, fi_strerror(-r_));                              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static void pump(struct fid_eq* eq) {
    struct fi_eq_cm_entry e;
    uint32_t ev;
    for (int i = 0; i < 50; i++) {
        ssize_t r = fi_eq_read(eq, &ev, &e, sizeof e, 0);
        if (r > 0)
            printf("  event %u\n", ev);
        usleep(1000);
    }
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "close";
    struct fi_info *hints = fi_allocinfo(), *info;
    hints->ep_attr->type = FI_EP_MSG;
    hints->caps = FI_MSG | FI_RMA;
    hints->fabric_attr->prov_name = strdup("tcp");
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED;
    CHECK(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", "0", FI_SOURCE, hints, &info));
    struct fid_fabric* fabric;
    struct fid_eq* eq;
    struct fid_pep* pep;
    CHECK(fi_fabric(info->fabric_attr, &fabric, NULL));
    struct fi_eq_attr eq_attr = {.wait_obj = FI_WAIT_UNSPEC};
    CHECK(fi_eq_open(fabric, &eq_attr, &eq, NULL));
    int base = fds();
    CHECK(fi_passive_ep(fabric, info, &pep, NULL));
    CHECK(fi_pep_bind(pep, &eq->fid, 0));
    CHECK(fi_listen(pep));
    struct sockaddr_in addr;
    size_t len = sizeof addr;
    CHECK(fi_getname(&pep->fid, &addr, &len));
    printf("listening on port %d; fds %d over the fabric and EQ\n", ntohs(addr.sin_port),
           fds() - base);
    int held[100];
    for (int i = 0; i < 100; i++) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(s, (struct sockaddr*)&addr, sizeof addr)) {
            perror("connect");
            return 1;
        }
        if (!strcmp(mode, "partial"))
            (void)!write(s, "\x03", 1);
        if (!strcmp(mode, "close"))
            close(s);
        else
            held[i] = s;
        if (strcmp(mode, "close-nopump"))
            pump(eq);
        else
            usleep(1000);
    }
    printf("%s: after 100 raw connections (EQ read meanwhile): fds %d (ours held: %d)\n", mode,
           fds() - base, strcmp(mode, "close") ? 100 : 0);
    CHECK(fi_close(&pep->fid));
    pump(eq);
    printf("%s: after closing the listener: fds %d\n", mode, fds() - base);
    if (!strncmp(mode, "shut", 4)) {
        // our side shuts the provider's sockets down (as rpmemd's LaneGate does)
        for (int fd = 3; fd < 1024; fd++) {
            struct sockaddr_in a;
            socklen_t l = sizeof a;
            int acc = 0;
            socklen_t al = sizeof acc;
            if (getsockname(fd, (struct sockaddr*)&a, &l) || a.sin_family != AF_INET ||
                a.sin_port != addr.sin_port)
                continue;
            getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al);
            if (!acc)
                shutdown(fd, SHUT_RDWR);
        }
        for (int i = 0; i < 20; i++) {
            if (!strcmp(mode, "shut-eagain"))
                errno = EAGAIN;
            else
                errno = 0;
            struct fi_eq_cm_entry e;
            uint32_t ev;
            fi_eq_read(eq, &ev, &e, sizeof e, 0);
            usleep(1000);
        }
        printf("%s: after shutting them down and reading the EQ: fds %d (ours: 100)\n", mode,
               fds() - base);
        return 0;
    }
    if (!strcmp(mode, "idle-end")) {
        CHECK(fi_close(&eq->fid));
        CHECK(fi_close(&fabric->fid));
        printf("%s: after closing the EQ and fabric, peers still connected: fds %d (ours: 100)\n",
               mode, fds() - base);
        for (int i = 0; i < 100; i++)
            close(held[i]);
        printf("%s: after the peers closed: fds %d\n", mode, fds() - base);
        return 0;
    }
    if (strcmp(mode, "close")) {
        for (int i = 0; i < 100; i++) {
            (void)!write(held[i], "xxxxxxxxxxxxxxxxxxxxxxxx", 24);
            close(held[i]);
        }
        pump(eq);
        printf("%s: after the peers wrote and closed: fds %d\n", mode, fds() - base);
    }
    CHECK(fi_close(&eq->fid));
    printf("%s: after closing the EQ: fds %d\n", mode, fds() - base);
    CHECK(fi_close(&fabric->fid));
    printf("%s: after closing the fabric: fds %d\n", mode, fds() - base);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    return 0;
}
