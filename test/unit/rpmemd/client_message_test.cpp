// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>

#include "rpmemd/supervisor/client_message.h"

using rpmem::daemon::client_message;

TEST_CASE("a client's message keeps the last component of every absolute path") {
    CHECK(client_message("part '/srv/pools/a.part' already holds data; refusing to overwrite it") ==
          "part 'a.part' already holds data; refusing to overwrite it");
    CHECK(client_message("pool set 'x.set' in the pool set directory /srv/rpmem/alice: no such "
                         "file") ==
          "pool set 'x.set' in the pool set directory alice: no such file");
    CHECK(client_message("/var/lib/pools/p.set:3: bad size") == "p.set:3: bad size");
    CHECK(client_message("opening /a/b/: Permission denied") == "opening b: Permission denied");
    CHECK(client_message("mapping (/mnt/pmem0/x) failed, then (/y/z)") ==
          "mapping (x) failed, then (z)");
    CHECK(client_message("file=\"/etc/rpmem/s.key\"") == "file=\"s.key\"");
}

TEST_CASE("what is not an absolute path stays as it was") {
    for (const char* text : {"", "no pool is open", "sub/dir/x.set: no such file", "a / b",
                             "ratio 1/2", "host:port", "pool set 'a/b.set'"})
        CHECK(client_message(text) == text);
    CHECK(client_message("/") == "/");
}
