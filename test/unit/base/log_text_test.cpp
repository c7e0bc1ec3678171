// SPDX-License-Identifier: BSD-3-Clause
#include <string>

#include <catch2/catch.hpp>

#include "base/log_text.h"

using rpmem::escape_for_log;

TEST_CASE("plain text is logged as it is") {
    CHECK(escape_for_log("pool.set") == "pool.set");
    CHECK(escape_for_log("dir/a b'c") == "dir/a b'c");
    CHECK(escape_for_log("") == "");
}

TEST_CASE("control characters become visible escapes") {
    CHECK(escape_for_log("a\nb") == "a\\nb");
    CHECK(escape_for_log("a\r\tb") == "a\\r\\tb");
    CHECK(escape_for_log("\x1b[31mred") == "\\x1b[31mred");
    CHECK(escape_for_log(std::string("a\0b", 3)) == "a\\x00b");
    CHECK(escape_for_log("\x7f") == "\\x7f");
}

TEST_CASE("a backslash is escaped, so an escape always means an escaped byte") {
    CHECK(escape_for_log("a\\nb") == "a\\\\nb");
    CHECK(escape_for_log("a\\nb") != escape_for_log("a\nb"));
}

TEST_CASE("bytes from 0x80 up (UTF-8, C1 controls) are shown as bytes") {
    CHECK(escape_for_log("\xc3\xa9") == "\\xc3\\xa9");
    CHECK(escape_for_log("\x9b"
                         "31m") == "\\x9b31m");
}

TEST_CASE("a forged log line cannot survive") {
    std::string forged = "x.set\n2026-12-01 12:00:00.000 [1] info: session 7 (127.0.0.1:1): "
                         "identity 'admin' accepted";
    std::string escaped = escape_for_log(forged);
    CHECK(escaped.find('\n') == std::string::npos);
    CHECK(escaped.starts_with("x.set\\n2026-12-01"));
}

TEST_CASE("long text is cut and the rest counted") {
    std::string name(4095, 'a');
    std::string escaped = escape_for_log(name);
    CHECK(escaped == std::string(256, 'a') + "\u2026(3839 more bytes)");
    CHECK(escape_for_log("abcdef", 3) == "abc\u2026(3 more bytes)");
    CHECK(escape_for_log("abc", 3) == "abc");
    // The bound is on the input: escapes may make the output longer, never unbounded.
    CHECK(escape_for_log(std::string(300, '\n'), 4) == "\\n\\n\\n\\n\u2026(296 more bytes)");
}
