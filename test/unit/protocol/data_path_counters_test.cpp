// SPDX-License-Identifier: BSD-3-Clause
// The counters page a worker and the supervisor share: persists and their service times, and
// the asynchronous replication lag the initiator reports with each message of ordered records.
#include <catch2/catch.hpp>

#include "protocol/data_path_counters.h"

using rpmem::protocol::DataPathCounterPage;
using rpmem::protocol::DataPathCounters;

TEST_CASE("the page counts persists and keeps the last and the most lag reported") {
    DataPathCounterPage page;
    page.record(64, 3000);
    page.record(128, 7000);
    page.record_lag(4096);
    page.record_lag(65536);
    page.record_lag(512);
    const DataPathCounters read = page.read();
    CHECK(read.persists == 2);
    CHECK(read.persisted_bytes == 192);
    CHECK(read.latency.count() == 2);
    CHECK(read.ordered_messages == 3);
    CHECK(read.lag_bytes == 512);
    CHECK(read.max_lag_bytes == 65536);

    // Summed over sessions: the lags add up, the most is the most.
    DataPathCounters total;
    total.add(read);
    DataPathCounters other;
    other.lag_bytes = 100;
    other.max_lag_bytes = 1000;
    other.ordered_messages = 1;
    total.add(other);
    CHECK(total.lag_bytes == 612);
    CHECK(total.max_lag_bytes == 65536);
    CHECK(total.ordered_messages == 4);
}
