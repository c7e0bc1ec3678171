// SPDX-License-Identifier: BSD-3-Clause
// exec-as USER PROGRAM [ARGS...]: runs PROGRAM as USER (and USER's primary group, no
// supplementary groups) in this process. PROGRAM is opened while still root and executed
// through that descriptor, so it may live where USER cannot traverse: the situation of a
// daemon an administrator installed under a private directory and runs unprivileged (PMDK's
// TEST scripts run rpmemd as nobody). For tests, as root.
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

extern char** environ;

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: exec-as USER PROGRAM [ARGS...]\n");
        return 2;
    }
    const passwd* user = ::getpwnam(argv[1]);
    if (user == nullptr) {
        std::fprintf(stderr, "exec-as: no user '%s'\n", argv[1]);
        return 2;
    }
    const int program = ::open(argv[2], O_PATH | O_CLOEXEC);
    if (program < 0) {
        std::fprintf(stderr, "exec-as: opening %s: %s\n", argv[2], std::strerror(errno));
        return 2;
    }
    if (::setgroups(0, nullptr) != 0 ||
        ::setresgid(user->pw_gid, user->pw_gid, user->pw_gid) != 0 ||
        ::setresuid(user->pw_uid, user->pw_uid, user->pw_uid) != 0) {
        std::fprintf(stderr, "exec-as: becoming %s: %s\n", argv[1], std::strerror(errno));
        return 2;
    }
    ::fexecve(program, argv + 2, environ);
    std::fprintf(stderr, "exec-as: executing %s as %s: %s\n", argv[2], argv[1],
                 std::strerror(errno));
    return 2;
}
