// SPDX-License-Identifier: BSD-3-Clause
// The Prometheus text rendering of /metrics: families, the histogram, escaped labels. The
// format itself is checked by promtool against a real rpmemd (rpmemd_metrics integration test).
#include <sstream>

#include <catch2/catch.hpp>

#include "rpmemd/supervisor/metrics_text.h"

using namespace rpmem;
using namespace rpmem::daemon;
using Catch::Matchers::Contains;

namespace {

// The value of the sample line that starts with `series ` exactly.
std::string value_of(const std::string& text, const std::string& series) {
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line))
        if (line.rfind(series + " ", 0) == 0)
            return line.substr(series.size() + 1);
    return "(missing)";
}

} // namespace

TEST_CASE("metrics: gauges, counters and a cumulative histogram") {
    MetricsSnapshot s;
    s.version = "0.1.0";
    s.sessions = 3;
    s.max_sessions = 64;
    s.workers = 2;
    s.totals.persists = 5;
    s.totals.persisted_bytes = 320;
    s.totals.latency.counts[protocol::LatencyHistogram::bucket_of(1'500)] = 2;  // le 2us
    s.totals.latency.counts[protocol::LatencyHistogram::bucket_of(40'000)] = 3; // le 50us
    s.totals.latency.counts.back() = 1;                                         // above 2s
    s.totals.latency.sum_ns = 3'000'000'000;
    s.events_total[static_cast<std::size_t>(protocol::EventKind::refused)] = 4;
    const std::string text = render_metrics(s);

    CHECK_THAT(text, Contains("# TYPE rpmemd_sessions gauge\n"));
    CHECK(value_of(text, "rpmemd_sessions") == "3");
    CHECK(value_of(text, "rpmemd_workers") == "2");
    CHECK_THAT(text, Contains("# TYPE rpmemd_persisted_bytes_total counter\n"));
    CHECK(value_of(text, "rpmemd_persisted_bytes_total") == "320");
    CHECK_THAT(text, Contains("# TYPE rpmemd_persist_latency_seconds histogram\n"));
    CHECK(value_of(text, "rpmemd_persist_latency_seconds_bucket{le=\"1e-06\"}") == "0");
    CHECK(value_of(text, "rpmemd_persist_latency_seconds_bucket{le=\"2e-06\"}") == "2");
    CHECK(value_of(text, "rpmemd_persist_latency_seconds_bucket{le=\"5e-05\"}") == "5");
    CHECK(value_of(text, "rpmemd_persist_latency_seconds_bucket{le=\"2\"}") == "5");
    CHECK(value_of(text, "rpmemd_persist_latency_seconds_bucket{le=\"+Inf\"}") == "6");
    CHECK(value_of(text, "rpmemd_persist_latency_seconds_count") == "6");
    CHECK(value_of(text, "rpmemd_persist_latency_seconds_sum") == "3");
    CHECK(value_of(text, "rpmemd_events_total{kind=\"refused\"}") == "4");
    CHECK(value_of(text, "rpmemd_events_total{kind=\"session_lost\"}") == "0");
    CHECK(value_of(text, "rpmemd_build_info{version=\"0.1.0\"}") == "1");
}

TEST_CASE("metrics: a replica's state is a state set, its labels escaped") {
    MetricsSnapshot s;
    protocol::SessionStatus session;
    session.identity = "al\"ice";
    session.pool_set = "dir\\x\n.set";
    session.state = protocol::ReplicaState::outdated;
    session.generation = 4;
    session.resync_active = true;
    session.resync_done_bytes = 10;
    session.resync_total_bytes = 30;
    s.session_list.push_back(session);
    protocol::SessionStatus idle; // no pool: no replica series
    idle.identity = "bob";
    s.session_list.push_back(idle);
    const std::string text = render_metrics(s);

    // escape_for_log first (backslash doubled, newline as \n), then the text format's escapes.
    const std::string labels = R"(pool_set="dir\\\\x\\n.set",identity="al\"ice")";
    CHECK(value_of(text, "rpmemd_replica_state{" + labels + ",state=\"outdated\"}") == "1");
    CHECK(value_of(text, "rpmemd_replica_state{" + labels + ",state=\"consistent\"}") == "0");
    CHECK(value_of(text, "rpmemd_replica_generation{" + labels + "}") == "4");
    CHECK(value_of(text, "rpmemd_resync_remaining_bytes{" + labels + "}") == "20");
    CHECK_THAT(text, !Contains("bob"));
}
