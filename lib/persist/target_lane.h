// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "fabric/completion_queue.h"
#include "fabric/event_queue.h"
#include "fabric/memory_region.h"
#include "fabric/shared_queue_endpoint.h"
#include "persist/request_handler.h"
#include "protocol/data_path_counters.h"
#include "protocol/lane_message.h"

namespace rpmem::persist {

// The target half of one lane, beside InitiatorLane: its slots in the target's message buffers
// (kLaneCredits receive slots of lane_slot_size(inline) bytes, then a ring of reply slots),
// the handling of each message (RequestHandler: validate, copy with 8-byte stores, flush) and
// the reply. The loop that owns the lanes (the responder thread its session is attached to, reading
// one completion queue shared by every lane's endpoint) hands each completion to the lane that
// posted it (owner_of), and keeps the provider progressing.
//
// A lane is connected at most once: after it closes, for any reason, it refuses to be accepted
// again, so that a session's lane cannot be taken over by a second connection. Not movable
// (completion contexts point into it); used by the one responder thread.
class TargetLane {
public:
    // Reply slots: twice the credits, so a reply's buffer is never reused while its send may
    // still be in flight (the initiator has at most kLaneCredits messages unacknowledged).
    static constexpr std::size_t kReplySlots = 2 * protocol::kLaneCredits;
    static constexpr std::chrono::seconds kConnectPatience{1};

    using Clock = std::chrono::steady_clock;

    // Bytes of the message buffers one lane uses, for `inline_size` bytes of inline data.
    static std::size_t buffer_size(std::size_t inline_size) noexcept;

    // `buffers` is registered for receive and send; this lane uses buffer_size() bytes of it
    // from `buffer_offset`. `name` prefixes log lines ("session 7"). Each persist message
    // served is recorded in `counters` (may be null; must outlive the lane). `reply_delay`
    // (rpmemd's inject-reply-delay; zero: none) holds every reply back that long after its
    // message was handled, in order, as a longer link would: the owner sends what is due
    // (send_due_replies) when its timer for next_due() fires.
    TargetLane(unsigned index, const TargetPool& pool, std::size_t inline_size,
               std::size_t protected_prefix, const fabric::MemoryRegion& buffers,
               std::size_t buffer_offset, std::string name,
               protocol::DataPathCounterPage* counters = nullptr,
               std::chrono::nanoseconds reply_delay = {});
    TargetLane(const TargetLane&) = delete;
    TargetLane& operator=(const TargetLane&) = delete;

    // The lane a completion (or a failed completion) belongs to: every context this lane posts
    // points at one of its slots. Null for contexts that are no lane's.
    static TargetLane* owner_of(void* context) noexcept;

    // Takes a freshly created endpoint, posts the receive slots and accepts the connection.
    // Refused (EBUSY) when the lane is or was connected; the endpoint is then dropped.
    Result<void> accept(fabric::SharedQueueEndpoint endpoint);

    bool connected() const noexcept { return endpoint_.has_value(); }

    // A completion this lane posted: a received message is handled and answered, a sent reply
    // frees its slot.
    void on_completion(const fabric::Completion& completion);
    // A failed completion of this lane: the connection is gone or broken.
    void on_failure(const fabric::CompletionError& failure);
    // Closes the lane when its connection failed (seen on the event queue); sends the replies
    // that waited for the connection to be established.
    void check_connection();
    // With a reply delay: sends the held replies due by `now`, in order; returns how many.
    std::size_t send_due_replies(Clock::time_point now);
    // When the first held reply falls due, if one is held and the connection can take it
    // (a reply waiting for the connection is released by check_connection instead).
    std::optional<Clock::time_point> next_due() const noexcept;
    // Shuts the connection down and retires the lane; `why` goes to the log.
    void close(std::string_view why);
    // The same without a log line, for the owner ending the session.
    void shutdown() noexcept;

private:
    struct Slot {
        TargetLane* lane = nullptr;
        bool reply = false; // else a receive slot
        unsigned index = 0;
        bool busy = false; // reply slots: a send from it has not completed yet
    };

    void on_receive(Slot& slot, std::size_t length);
    enum class Sent { sent, not_connected_yet, failed };

    void send_reply(const protocol::LaneReply& reply);
    Sent try_send(Slot& slot);
    std::size_t send_waiting_replies(Clock::time_point now);
    std::size_t receive_offset(unsigned index) const noexcept;
    std::size_t reply_offset(unsigned index) const noexcept;

    unsigned index_;
    RequestHandler handler_;
    std::size_t slot_size_;
    const fabric::MemoryRegion& buffers_;
    std::size_t buffer_offset_;
    std::string name_;
    protocol::DataPathCounterPage* counters_;

    std::optional<fabric::SharedQueueEndpoint> endpoint_;
    std::array<Slot, protocol::kLaneCredits> receives_{};
    std::array<Slot, kReplySlots> replies_{};
    unsigned next_reply_ = 0;
    std::chrono::nanoseconds reply_delay_;
    // Replies not sent yet, in order: held for the reply delay, or early. A lane's first
    // message can arrive before its FI_CONNECTED event was read, and a reply cannot be sent
    // before: such replies wait for the event (read by the session's next look at its events),
    // never spinning the responder thread, which other sessions share. Given up on
    // kConnectPatience after they fell due.
    struct Waiting {
        unsigned slot = 0; // reply slot index
        Clock::time_point due;
    };
    std::array<Waiting, kReplySlots> waiting_{}; // a ring
    std::size_t waiting_first_ = 0;
    std::size_t waiting_count_ = 0;
    bool awaiting_connection_ = false; // the first waiting reply found no connection yet
    bool retired_ = false;             // was connected once and closed: never accepted again
};

} // namespace rpmem::persist
