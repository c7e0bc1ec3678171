// SPDX-License-Identifier: BSD-3-Clause
// The key = value format and the value spellings rpmemd.conf and client.conf share.
#include <cerrno>

#include <catch2/catch.hpp>

#include "base/config_text.h"

using namespace rpmem;
using namespace std::chrono_literals;

TEST_CASE("entries keep their order and line, comments and blank lines are dropped") {
    auto entries = parse_config_text("# header\n\n a = 1 # note\nb=two words\r\n\tc =  \n", "f");
    REQUIRE(entries);
    REQUIRE(entries->size() == 3);
    CHECK((*entries)[0].key == "a");
    CHECK((*entries)[0].value == "1");
    CHECK((*entries)[0].line == 3);
    CHECK((*entries)[1].key == "b");
    CHECK((*entries)[1].value == "two words");
    CHECK((*entries)[1].line == 4);
    CHECK((*entries)[2].key == "c");
    CHECK((*entries)[2].value.empty());
    CHECK((*entries)[2].line == 5);
}

TEST_CASE("a line without '=' or without a key names the origin and the line") {
    for (const char* text : {"a = 1\nbogus\n", "a = 1\n = 3\n"}) {
        CAPTURE(text);
        auto entries = parse_config_text(text, "my.conf");
        REQUIRE_FALSE(entries);
        CHECK(entries.error().errno_value() == EINVAL);
        CHECK_THAT(entries.error().message(),
                   Catch::StartsWith("my.conf:2: expected 'key = value'"));
    }
}

TEST_CASE("switches: one set of spellings for both files") {
    for (const char* on : {"yes", "YES", "true", "On", "1"}) {
        CAPTURE(on);
        auto value = parse_config_switch(on);
        REQUIRE(value);
        CHECK(*value);
    }
    for (const char* off : {"no", "False", "off", "0"}) {
        CAPTURE(off);
        auto value = parse_config_switch(off);
        REQUIRE(value);
        CHECK_FALSE(*value);
    }
    for (const char* bad : {"", "2", "yess", "y"}) {
        CAPTURE(bad);
        auto value = parse_config_switch(bad);
        REQUIRE_FALSE(value);
        CHECK_THAT(value.error().message(), Catch::StartsWith("expected yes or no"));
    }
}

TEST_CASE("numbers are whole, decimal and within their bounds") {
    CHECK(parse_config_number("7", 1, 10).value() == 7);
    CHECK(parse_config_number("18446744073709551615", 0, UINT64_MAX).value() == UINT64_MAX);
    for (const char* bad : {"", "0", "11", "-1", "3x", " 3", "0x5", "18446744073709551616"}) {
        CAPTURE(bad);
        auto value = parse_config_number(bad, 1, 10);
        REQUIRE_FALSE(value);
        CHECK_THAT(value.error().message(),
                   Catch::StartsWith("expected a whole number from 1 to 10"));
    }
}

TEST_CASE("durations take a unit, a bare number is in the caller's unit") {
    CHECK(parse_config_duration("250", 1ms, 1ms, 1h).value() == 250ms);
    CHECK(parse_config_duration("250", 1us, 1us, 1s).value() == 250us);
    CHECK(parse_config_duration("2s", 1ms, 1ms, 1h).value() == 2s);
    CHECK(parse_config_duration("1m", 1ms, 1ms, 1h).value() == 1min);
    CHECK(parse_config_duration("30us", 1ms, 1us, 1h).value() == 30us);
    CHECK(parse_config_duration("60m", 1ms, 1ms, 1h).value() == 1h);
    for (const char* bad : {"", "0s", "61m", "2h", "ms", "1.5s", "-1s", "99999999999999999999s"}) {
        CAPTURE(bad);
        auto value = parse_config_duration(bad, 1ms, 1ms, 1h);
        REQUIRE_FALSE(value);
        CHECK_THAT(value.error().message(), Catch::StartsWith("expected a duration") &&
                                                Catch::Contains("from 1ms to 3600s"));
    }
}
