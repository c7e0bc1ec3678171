// SPDX-License-Identifier: BSD-3-Clause
#include <cstdint>
#include <limits>

#include <catch2/catch.hpp>

#include "persist/credit_window.h"

using rpmem::persist::CreditWindow;

namespace {

// Sends one message the way InitiatorLane does; returns its ticket.
CreditWindow::Ticket send(CreditWindow& window, bool ask_ack = false) {
    REQUIRE(window.has_credit());
    const CreditWindow::Ticket ticket = window.next(ask_ack);
    window.sent(ticket);
    return ticket;
}

} // namespace

TEST_CASE("a lane never has more than kCredits messages unacknowledged") {
    CreditWindow window;
    CHECK(window.all_acknowledged());
    for (std::uint32_t i = 1; i <= CreditWindow::kCredits; ++i)
        CHECK(send(window).sequence == i);
    CHECK_FALSE(window.has_credit());
    CHECK_FALSE(window.all_acknowledged());

    // The target answers in order: a reply for message 2 frees the first two credits.
    REQUIRE(window.acknowledge(2));
    CHECK(window.has_credit());
    CHECK(window.acknowledged(2));
    CHECK_FALSE(window.acknowledged(3));
    send(window);
    send(window);
    CHECK_FALSE(window.has_credit());
    REQUIRE(window.acknowledge(window.last_sent()));
    CHECK(window.all_acknowledged());
}

TEST_CASE("every kCredits / 2 messages asks for an acknowledgement, and so does the caller's") {
    CreditWindow window;
    std::uint32_t asked = 0;
    for (int i = 0; i < 12; ++i) {
        if (send(window).ask_ack)
            ++asked;
        REQUIRE(window.acknowledge(window.last_sent()));
    }
    CHECK(asked == 12 / (CreditWindow::kCredits / 2));

    // A message the caller wants acknowledged asks, and restarts the count.
    CHECK(send(window, true).ask_ack);
    CHECK(window.last_asked_ack());
    CHECK_FALSE(send(window).ask_ack);
    CHECK_FALSE(window.last_asked_ack());
    CHECK(send(window).ask_ack);
}

TEST_CASE("a reply for a message never sent is refused, a stale one changes nothing") {
    CreditWindow window;
    send(window);
    send(window);
    CHECK_FALSE(window.acknowledge(3)); // a hostile or broken target
    CHECK_FALSE(window.acknowledge(1000));
    CHECK_FALSE(window.all_acknowledged());

    REQUIRE(window.acknowledge(2));
    REQUIRE(window.acknowledge(1)); // older than what is acknowledged: ignored
    CHECK(window.acknowledged(2));
    CHECK(window.all_acknowledged());
}

TEST_CASE("sequence numbers wrap without losing credits") {
    CreditWindow window(std::numeric_limits<std::uint32_t>::max() - 1);
    CHECK(send(window).sequence == std::numeric_limits<std::uint32_t>::max());
    CHECK(send(window).sequence == 0);
    CHECK(send(window).sequence == 1);
    CHECK(window.has_credit());
    CHECK(send(window).sequence == 2);
    CHECK_FALSE(window.has_credit());

    CHECK_FALSE(window.acknowledge(3));
    REQUIRE(window.acknowledge(0)); // across the wrap: frees the first two
    CHECK(window.acknowledged(std::numeric_limits<std::uint32_t>::max()));
    CHECK_FALSE(window.acknowledged(1));
    CHECK(window.has_credit());
    REQUIRE(window.acknowledge(2));
    CHECK(window.all_acknowledged());
}
