// SPDX-License-Identifier: BSD-3-Clause
#include <cerrno>

#include <catch2/catch.hpp>

#include "protocol/status.h"

using rpmem::protocol::errno_of;
using rpmem::protocol::Status;
using rpmem::protocol::status_from_wire;
using rpmem::protocol::status_of;

TEST_CASE("statuses keep PMDK's numbers and the errno librpmem reported") {
    // The table of PMDK's rpmem_proto.h / rpmem_util.c, value by value.
    struct Row {
        std::uint16_t wire;
        Status status;
        int errno_value;
    };
    const Row pmdk[] = {
        {0, Status::ok, 0},
        {1, Status::protocol_mismatch, EPROTONOSUPPORT},
        {2, Status::bad_name, EINVAL},
        {3, Status::bad_size, EFBIG},
        {4, Status::bad_lanes, EINVAL},
        {5, Status::bad_provider, EINVAL},
        {6, Status::fatal, EREMOTEIO},
        {7, Status::fatal_connection, ECONNABORTED},
        {8, Status::busy, EBUSY},
        {9, Status::exists, EEXIST},
        {10, Status::provider_unsupported, EMEDIUMTYPE},
        {11, Status::no_exist, ENOENT},
        {12, Status::no_access, EACCES},
        {13, Status::pool_config, EINVAL},
    };
    for (const auto& row : pmdk) {
        CAPTURE(row.wire);
        CHECK(static_cast<std::uint16_t>(row.status) == row.wire);
        CHECK(errno_of(row.status) == row.errno_value);
        CHECK(status_from_wire(row.wire) == row.status);
    }
}

TEST_CASE("statuses added beyond PMDK map to their own errno") {
    CHECK(errno_of(Status::not_permitted) == EPERM);
    CHECK(errno_of(Status::bad_message) == EPROTO);
    CHECK(errno_of(Status::invalid_request) == EINVAL);
    CHECK(errno_of(Status::no_space) == ENOSPC);
    CHECK(errno_of(Status::not_supported) == EOPNOTSUPP);
}

TEST_CASE("status_of inverts errno_of wherever the errno names one status") {
    for (std::uint16_t wire = 0; wire <= rpmem::protocol::kMaxStatusValue; ++wire) {
        Status status = *status_from_wire(wire);
        if (errno_of(status) == EINVAL)
            continue; // several statuses share EINVAL, as in PMDK
        CAPTURE(wire);
        CHECK(status_of(errno_of(status)) == status);
    }
}

TEST_CASE("status_of follows rpmemd for shared and unknown errno values") {
    CHECK(status_of(EINVAL) == Status::invalid_request);
    CHECK(status_of(EWOULDBLOCK) == Status::busy); // flock held by another session
    CHECK(status_of(ENOMEM) == Status::fatal);
    CHECK(status_of(EIO) == Status::fatal);
    CHECK(status_of(-1) == Status::fatal);
}

TEST_CASE("every status has a name and a text; unknown wire values are refused") {
    for (std::uint16_t wire = 0; wire <= rpmem::protocol::kMaxStatusValue; ++wire) {
        CAPTURE(wire);
        auto status = status_from_wire(wire);
        REQUIRE(status);
        CHECK_FALSE(name_of(*status).empty());
        CHECK_FALSE(text_of(*status).empty());
    }
    CHECK(name_of(Status::protocol_mismatch) == "protocol_mismatch");
    CHECK(text_of(Status::busy) == "Pool already in use");
    CHECK_FALSE(status_from_wire(rpmem::protocol::kMaxStatusValue + 1));
    CHECK_FALSE(status_from_wire(0xffff));
}
