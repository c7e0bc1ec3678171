// SPDX-License-Identifier: BSD-3-Clause
// The fault checker on made-up pools and logs: it accepts what the durability contract allows
// and names each kind of violation, so that a scenario passing means something.
#include <cstring>
#include <string>

#include <catch2/catch.hpp>

#include "fault_checker.h"
#include "fault_record.h"

using namespace rpmem::test::faults;

namespace {

constexpr RecordLayout kLayout{8, 0xC0FFEE};
constexpr std::size_t kPoolSize = 8192;

void put_record(std::string& pool, std::uint64_t record) {
    for (unsigned k = 0; k < kRecordWords; ++k) {
        const std::uint64_t word = fault_record_word(record, k, kLayout.stamp);
        std::memcpy(pool.data() + fault_record_offset(record % kLayout.slots) + 8 * k, &word, 8);
    }
}

// A pool holding records 1 .. last and the log of a writer whose persists of them returned 0.
std::string pool_with(std::uint64_t last) {
    std::string pool(kPoolSize, '\0');
    for (std::uint64_t i = 1; i <= last; ++i)
        put_record(pool, i);
    return pool;
}

std::string log_of(std::uint64_t acked, bool failed_next, bool closed) {
    std::string text = "create 0 0 1 2 -\n";
    for (std::uint64_t i = 1; i <= acked; ++i)
        text += "persist " + std::to_string(i) + " 0 0 3 4 -\n";
    if (failed_next)
        text += "persist " + std::to_string(acked + 1) + " -1 110 5 6 timed out\n";
    if (closed)
        text += "close 0 0 7 8 -\n";
    return text;
}

} // namespace

TEST_CASE("the log says which records were acknowledged and which may be in flight") {
    WriterLog killed = parse_writer_log(log_of(20, false, false));
    CHECK(killed.created);
    CHECK(killed.last_acked == 20);
    CHECK(killed.last_attempted == 21); // the one being persisted when the writer died
    CHECK_FALSE(killed.failed_errno);

    WriterLog failed = parse_writer_log(log_of(20, true, false));
    CHECK(failed.last_acked == 20);
    CHECK(failed.last_attempted == 21);
    CHECK(failed.failed_errno == 110);
    CHECK(failed.failed_at_ns == 6);

    WriterLog clean = parse_writer_log(log_of(20, false, true));
    CHECK(clean.closed);
    CHECK(clean.last_attempted == 20);

    CHECK_THROWS(parse_writer_log("persist 1 0 0 3"));
    CHECK_THROWS(parse_writer_log("create 0 0 1 2 -\npersist 1 0 0 3 4 -\npersist 3 0 0 3 4 -\n"));
}

TEST_CASE("every acknowledged record present, and an in-flight one, pass") {
    const WriterLog log = parse_writer_log(log_of(20, true, false));
    CHECK(check_records(pool_with(20), log, kLayout).empty());
    CHECK(check_records(pool_with(21), log, kLayout).empty()); // the failed one landed anyway
}

TEST_CASE("a lost acknowledged record is reported") {
    const WriterLog log = parse_writer_log(log_of(20, false, true));
    std::string pool = pool_with(20);
    put_record(pool, 11); // slot 3 goes back from record 19 to record 11
    auto problems = check_records(pool, log, kLayout);
    REQUIRE(problems.size() == kRecordWords);
    CHECK_THAT(problems[0], Catch::Contains("slot 3") && Catch::Contains("record 19 is missing"));

    // Never written at all.
    auto empty = check_records(std::string(kPoolSize, '\0'), log, kLayout, 1000);
    CHECK(empty.size() == kLayout.slots * kRecordWords);
    auto limited = check_records(std::string(kPoolSize, '\0'), log, kLayout, 5);
    REQUIRE(limited.size() == 6);
    CHECK(limited.back() == "... and 27 more");
}

TEST_CASE("a torn word, a foreign word and a record never sent are reported") {
    const WriterLog log = parse_writer_log(log_of(20, false, true));
    std::string pool = pool_with(20);
    // Record 20's word 1 with the upper half of record 12 (the slot's older value).
    const std::uint64_t torn = (fault_record_word(12, 1, kLayout.stamp) & ~0xFFFFFFFFULL) |
                               (fault_record_word(20, 1, kLayout.stamp) & 0xFFFFFFFFULL);
    std::memcpy(pool.data() + fault_record_offset(4) + 8, &torn, 8);
    auto problems = check_records(pool, log, kLayout);
    REQUIRE(problems.size() == 1);
    CHECK_THAT(problems[0], Catch::Contains("slot 4 word 1") && Catch::Contains("torn"));

    // Another run's stamp.
    pool = pool_with(20);
    const std::uint64_t foreign = fault_record_word(20, 0, kLayout.stamp + 1);
    std::memcpy(pool.data() + fault_record_offset(4), &foreign, 8);
    CHECK(check_records(pool, log, kLayout).size() == 1);

    // A record beyond the last one that may have been sent.
    CHECK_THAT(check_records(pool_with(22), log, kLayout).front(), Catch::Contains("never sent"));
}

TEST_CASE("replica and local pool compared outside the header") {
    std::string local = pool_with(20);
    std::string replica = local;
    replica[100] = 'x'; // the header is the target's own
    CHECK_FALSE(first_difference(replica, local));
    replica[5000] = 'y';
    CHECK(first_difference(replica, local) == 5000u);
    CHECK(first_difference(local.substr(0, 6000), local) == 6000u);
}
