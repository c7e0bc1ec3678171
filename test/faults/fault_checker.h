// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// The fault tests' checker: what fault-writer's log says the target acknowledged, and whether
// the target's pool file holds it (acked durability, whole aligned words). Pure functions over
// bytes and text, so they are tested without a network (checker_test.cpp).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rpmem::test::faults {

// What fault-writer's log (see fault_writer.c) says about one run.
struct WriterLog {
    bool created = false;
    // The highest record whose persist returned 0, and the one after the last logged persist
    // (in flight or never started: it may or may not have landed). 0 when there is none.
    std::uint64_t last_acked = 0;
    std::uint64_t last_attempted = 0; // the last persist that may have reached the target
    std::optional<int> failed_errno;  // of the first failed call, if one failed
    std::string failure;              // its line
    std::uint64_t failed_at_ns = 0;   // when it returned (CLOCK_MONOTONIC, as steady_clock)
    bool closed = false;              // close returned 0
};

// Parses the log; throws std::runtime_error on a line it does not understand (a whole line is
// written with one write(2), so a partial one is a bug of the writer).
WriterLog parse_writer_log(std::string_view text);

struct RecordLayout {
    std::uint64_t slots = 0;
    std::uint32_t stamp = 0;
};

// Checks the target's pool bytes (offset 0 = pool offset 0) against the log: every aligned
// word of every slot is whole, and holds the last acknowledged record of its slot or a later
// one that may have been in flight (invariants 1 and 3 of DESIGN.md). Returns one line per
// violation (at most `limit`, then a count), empty when everything holds.
std::vector<std::string> check_records(std::string_view pool, const WriterLog& log,
                                       const RecordLayout& layout, std::size_t limit = 20);

// The first offset at or after `from` where `replica` and `local` differ (a size difference
// counts as a difference at the shorter length), or nullopt when they are equal there. For
// "the replica equals the local pool outside the header (the first 4096 bytes, which the
// target owns)".
std::optional<std::uint64_t> first_difference(std::string_view replica, std::string_view local,
                                              std::uint64_t from = 4096);

} // namespace rpmem::test::faults
