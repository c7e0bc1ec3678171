// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/replica_state_file.h"

#include <cerrno>
#include <charconv>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/config_text.h"
#include "base/log_text.h"
#include "rpmemd/supervisor/small_file.h"

namespace rpmem::daemon {

namespace {

constexpr std::string_view kSuffix = ".rpmem-state";
constexpr std::size_t kMaxStateFileSize = 4096;

std::string uuid_hex(const PoolAttributes::Uuid& uuid) {
    std::string text;
    for (std::uint8_t byte : uuid)
        text += fmt::format("{:02x}", byte);
    return text;
}

bool parse_uuid_hex(std::string_view text, PoolAttributes::Uuid& uuid) {
    if (text.size() != uuid.size() * 2)
        return false;
    for (std::size_t i = 0; i < uuid.size(); ++i) {
        auto [rest, error] =
            std::from_chars(text.data() + 2 * i, text.data() + 2 * i + 2, uuid[i], 16);
        if (error != std::errc{} || rest != text.data() + 2 * i + 2)
            return false;
    }
    return true;
}

template <typename Number>
bool parse_number(std::string_view value, Number& number, int base = 10) {
    auto [rest, error] = std::from_chars(value.data(), value.data() + value.size(), number, base);
    return error == std::errc{} && rest == value.data() + value.size() && !value.empty();
}

} // namespace

std::string format_replica_record(const ReplicaRecord& record) {
    std::string text = fmt::format("# rpmemd replica state of the pool set beside this file; "
                                   "rpmemd writes it, do not edit\nstate = {}\ngeneration = {}\n",
                                   protocol::name_of(record.state), record.generation);
    if (record.lost_in_sync)
        text += "lost-in-sync = yes\n";
    if (record.undo) {
        const PromotionUndo& undo = *record.undo;
        text +=
            fmt::format("undo-state = {}\nundo-generation = {}\nundo-prev-replica = {}\n"
                        "undo-next-replica = {}\nundo-data-digest = {:016x}\n",
                        protocol::name_of(undo.state), undo.generation, uuid_hex(undo.prev_replica),
                        uuid_hex(undo.next_replica), undo.data_digest);
    }
    return text;
}

Result<ReplicaRecord> parse_replica_record(std::string_view text, std::string_view origin) {
    ReplicaRecord record;
    bool have_state = false;
    bool have_generation = false;
    int undo_keys = 0;
    auto entries = parse_config_text(text, origin);
    if (!entries)
        return fail(std::move(entries.error()));
    for (const ConfigEntry& entry : *entries) {
        auto bad = [&](std::string_view what) {
            return fail(EINVAL, fmt::format("{}:{}: {}", origin, entry.line, what));
        };
        const std::string_view key = entry.key;
        const std::string_view value = entry.value;
        if (key == "state") {
            auto state = protocol::replica_state_from_name(value);
            if (!state)
                return bad(fmt::format("unknown state '{}'", escape_for_log(value)));
            record.state = *state;
            have_state = true;
        } else if (key == "generation") {
            std::uint64_t generation = 0;
            auto [rest, error] =
                std::from_chars(value.data(), value.data() + value.size(), generation);
            if (error != std::errc{} || rest != value.data() + value.size() || generation == 0)
                return bad(
                    fmt::format("generation '{}' is not a positive number", escape_for_log(value)));
            record.generation = generation;
            have_generation = true;
        } else if (key == "lost-in-sync") {
            if (value != "yes" && value != "no")
                return bad("lost-in-sync is yes or no");
            record.lost_in_sync = value == "yes";
        } else if (key.starts_with("undo-")) {
            PromotionUndo& undo = record.undo ? *record.undo : record.undo.emplace();
            ++undo_keys;
            bool ok = true;
            if (key == "undo-state") {
                auto state = protocol::replica_state_from_name(value);
                ok = state.has_value();
                undo.state = state.value_or(protocol::ReplicaState::inconsistent);
            } else if (key == "undo-generation") {
                ok = parse_number(value, undo.generation) && undo.generation != 0;
            } else if (key == "undo-prev-replica") {
                ok = parse_uuid_hex(value, undo.prev_replica);
            } else if (key == "undo-next-replica") {
                ok = parse_uuid_hex(value, undo.next_replica);
            } else if (key == "undo-data-digest") {
                ok = parse_number(value, undo.data_digest, 16);
            } else {
                return bad(fmt::format("unknown key '{}'", escape_for_log(key)));
            }
            if (!ok)
                return bad(fmt::format("bad value '{}' of {}", escape_for_log(value), key));
        } else {
            return bad(fmt::format("unknown key '{}'", escape_for_log(key)));
        }
    }
    if (!have_state || !have_generation)
        return fail(EINVAL, fmt::format("{}: needs both 'state' and 'generation'", origin));
    if (record.undo && undo_keys != 5)
        return fail(EINVAL,
                    fmt::format("{}: a promotion's undo needs all five undo-* keys", origin));
    return record;
}

ReplicaStateFile::ReplicaStateFile(UniqueFd directory, std::string_view set_leaf,
                                   std::string_view set_path)
    : file_(std::move(directory), set_leaf, set_path, kSuffix) {}

Result<std::optional<ReplicaRecord>> ReplicaStateFile::read() const {
    auto text = file_.read(kMaxStateFileSize);
    if (!text)
        return fail(std::move(text.error()));
    if (!*text)
        return std::optional<ReplicaRecord>{};
    auto record = parse_replica_record(**text, file_.path());
    if (!record)
        return fail(std::move(record.error()));
    return std::optional<ReplicaRecord>(*record);
}

Result<void> ReplicaStateFile::write(const ReplicaRecord& record) const {
    return file_.replace(format_replica_record(record), "replica state");
}

Result<void> ReplicaStateFile::remove() const {
    return file_.remove();
}

} // namespace rpmem::daemon
