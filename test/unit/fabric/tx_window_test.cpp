// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>

#include "fabric/tx_window.h"

using rpmem::fabric::TxWindow;
using Decision = TxWindow::Decision;

namespace {

// Posts as planned and returns the decision.
Decision post(TxWindow& window, bool wants_completion) {
    const Decision decision = window.plan(wants_completion);
    if (decision != Decision::full)
        window.on_posted(decision == Decision::signalled);
    return decision;
}

} // namespace

TEST_CASE("unsignalled posts stay unsignalled while the window has room", "[fabric][window]") {
    TxWindow window(4);
    CHECK(post(window, false) == Decision::unsignalled);
    CHECK(post(window, false) == Decision::unsignalled);
    CHECK(window.in_flight() == 2);
    CHECK(window.signalled_outstanding() == 0);
}

TEST_CASE("the post that takes the last entry is signalled when nothing else is",
          "[fabric][window]") {
    TxWindow window(4);
    for (int i = 0; i < 3; ++i)
        REQUIRE(post(window, false) == Decision::unsignalled);
    CHECK(post(window, false) == Decision::signalled); // forced
    CHECK(window.in_flight() == 4);
    CHECK(window.plan(false) == Decision::full);
    CHECK(window.plan(true) == Decision::full);
    window.on_completed(); // retires all four
    CHECK(window.in_flight() == 0);
    CHECK(window.plan(false) == Decision::unsignalled);
}

TEST_CASE("a signalled post in flight lets the last entry go unsignalled", "[fabric][window]") {
    TxWindow window(4);
    CHECK(post(window, true) == Decision::signalled);
    CHECK(post(window, false) == Decision::unsignalled);
    CHECK(post(window, false) == Decision::unsignalled);
    CHECK(post(window, false) == Decision::unsignalled);
    CHECK(window.plan(false) == Decision::full);
    // The signalled op was first: its completion retires only itself.
    window.on_completed();
    CHECK(window.in_flight() == 3);
    // Nothing signalled is outstanding now, so the next post must be.
    CHECK(post(window, false) == Decision::signalled);
    window.on_completed();
    CHECK(window.in_flight() == 0);
}

TEST_CASE("completions retire in posting order", "[fabric][window]") {
    TxWindow window(8);
    post(window, false);
    post(window, true); // seq 2
    post(window, false);
    post(window, true); // seq 4
    post(window, false);
    CHECK(window.signalled_outstanding() == 2);
    window.on_completed();
    CHECK(window.in_flight() == 3);
    window.on_completed();
    CHECK(window.in_flight() == 1);
    window.on_completed(); // nothing signalled left: ignored
    CHECK(window.in_flight() == 1);
}

TEST_CASE("a depth of one signals every post", "[fabric][window]") {
    TxWindow window(1);
    CHECK(post(window, false) == Decision::signalled);
    CHECK(window.plan(true) == Decision::full);
    window.on_completed();
    CHECK(post(window, true) == Decision::signalled);
}

TEST_CASE("a full window always has a signalled operation outstanding", "[fabric][window]") {
    // Any mix of posts and completions: whenever the window is full, a completion is coming.
    for (unsigned pattern = 0; pattern < 256; ++pattern) {
        TxWindow window(5);
        for (unsigned step = 0; step < 40; ++step) {
            const bool wants = ((pattern >> (step % 8)) & 1) != 0;
            if (post(window, wants) == Decision::full) {
                REQUIRE(window.signalled_outstanding() > 0);
                window.on_completed();
            }
            REQUIRE(window.in_flight() <= window.depth());
        }
    }
}
