// SPDX-License-Identifier: BSD-3-Clause
#include "fault_checker.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "fault_record.h"

namespace rpmem::test::faults {

namespace {

std::uint64_t load_word(std::string_view pool, std::uint64_t offset) {
    std::uint64_t word = 0;
    std::memcpy(&word, pool.data() + offset, sizeof word);
    return word;
}

std::string hex(std::uint64_t value) {
    std::ostringstream text;
    text << "0x" << std::hex << value;
    return text.str();
}

} // namespace

WriterLog parse_writer_log(std::string_view text) {
    WriterLog log;
    std::istringstream lines{std::string(text)};
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream fields(line);
        std::string what;
        std::uint64_t record = 0;
        int rc = 0;
        int error = 0;
        fields >> what;
        if (what == "persist")
            fields >> record;
        std::uint64_t start = 0;
        std::uint64_t end = 0;
        std::string message; // "-" on success
        fields >> rc >> error >> start >> end >> message;
        if (!fields || (what != "create" && what != "persist" && what != "close"))
            throw std::runtime_error("fault-writer's log has a line it should not: " + line);
        if (rc != 0 && !log.failed_errno) {
            log.failed_errno = error;
            log.failure = line;
            log.failed_at_ns = end;
        }
        if (what == "create") {
            log.created = rc == 0;
        } else if (what == "close") {
            log.closed = rc == 0;
        } else {
            if (record != log.last_attempted + 1 && log.last_attempted != 0)
                throw std::runtime_error("fault-writer's log skips a record: " + line);
            log.last_attempted = record;
            if (rc == 0)
                log.last_acked = record;
        }
    }
    // The writer is sequential: after the last logged persist at most the next one was
    // started (and killed, or still waiting) unless the log says the writer stopped.
    if (log.created && !log.failed_errno && !log.closed)
        log.last_attempted += 1;
    return log;
}

std::vector<std::string> check_records(std::string_view pool, const WriterLog& log,
                                       const RecordLayout& layout, std::size_t limit) {
    std::vector<std::string> problems;
    std::size_t more = 0;
    auto report = [&](std::string problem) {
        if (problems.size() < limit)
            problems.push_back(std::move(problem));
        else
            ++more;
    };
    if (layout.slots == 0 || pool.size() < fault_record_offset(layout.slots)) {
        problems.push_back("the pool (" + std::to_string(pool.size()) +
                           " bytes) is too small for " + std::to_string(layout.slots) + " slots");
        return problems;
    }
    for (std::uint64_t slot = 0; slot < layout.slots; ++slot) {
        // The last acknowledged record of this slot (0: none) and the newest that may be there.
        std::uint64_t acked = 0;
        if (log.last_acked >= slot && (slot != 0 || log.last_acked >= layout.slots))
            acked = log.last_acked - (log.last_acked - slot) % layout.slots;
        for (unsigned k = 0; k < kRecordWords; ++k) {
            const std::uint64_t offset = fault_record_offset(slot) + 8 * k;
            const std::uint64_t word = load_word(pool, offset);
            const std::uint64_t record = word >> 32;
            const std::string where = "slot " + std::to_string(slot) + " word " +
                                      std::to_string(k) + " (offset " + std::to_string(offset) +
                                      ")";
            if (word == 0) {
                if (acked != 0)
                    report(where + ": acknowledged record " + std::to_string(acked) +
                           " is missing (the word is zero)");
                continue;
            }
            if (word != fault_record_word(record, k, layout.stamp) ||
                record % layout.slots != slot) {
                report(where + ": torn or foreign word " + hex(word));
                continue;
            }
            if (record < acked)
                report(where + ": acknowledged record " + std::to_string(acked) +
                       " is missing (holds the older record " + std::to_string(record) + ")");
            else if (record > log.last_attempted)
                report(where + ": record " + std::to_string(record) +
                       " was never sent (the last that may have been is " +
                       std::to_string(log.last_attempted) + ")");
        }
    }
    if (more > 0)
        problems.push_back("... and " + std::to_string(more) + " more");
    return problems;
}

std::optional<std::uint64_t> first_difference(std::string_view replica, std::string_view local,
                                              std::uint64_t from) {
    const std::uint64_t common = std::min(replica.size(), local.size());
    for (std::uint64_t offset = from; offset < common; ++offset)
        if (replica[offset] != local[offset])
            return offset;
    if (replica.size() != local.size())
        return std::max(from, common);
    return std::nullopt;
}

} // namespace rpmem::test::faults
