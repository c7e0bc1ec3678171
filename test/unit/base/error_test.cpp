// SPDX-License-Identifier: BSD-3-Clause
#include <cerrno>

#include <catch2/catch.hpp>

#include "base/error.h"

using rpmem::Error;
using rpmem::ErrorSource;
using rpmem::Result;

namespace {

Result<int> parse_positive(int value) {
    if (value <= 0)
        return rpmem::fail(EINVAL, "value must be positive");
    return value;
}

} // namespace

TEST_CASE("errors carry errno, source and the context added by each caller") {
    auto result = rpmem::with_context(parse_positive(-1), "reading lane count");
    REQUIRE_FALSE(result);
    CHECK(result.error().errno_value() == EINVAL);
    CHECK(result.error().source() == ErrorSource::input);
    CHECK(result.error().message() == "reading lane count: value must be positive");

    result.error().add_context("opening pool");
    CHECK(result.error().message() == "opening pool: reading lane count: value must be positive");
}

TEST_CASE("successful results pass through with_context unchanged") {
    auto result = rpmem::with_context(parse_positive(3), "ignored");
    REQUIRE(result);
    CHECK(*result == 3);
}

TEST_CASE("from_errno appends the system's text and never yields a non-positive errno") {
    Error error = Error::from_errno(ENOENT, "opening /nonexistent");
    CHECK(error.errno_value() == ENOENT);
    CHECK(error.message() == "opening /nonexistent: No such file or directory");

    CHECK(Error(0, "zero").errno_value() == EIO);
    CHECK(Error(-5, "negative").errno_value() == EIO);
}
