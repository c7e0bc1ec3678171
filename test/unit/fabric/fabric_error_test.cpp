// SPDX-License-Identifier: BSD-3-Clause
#include <cerrno>
#include <cstring>

#include <catch2/catch.hpp>
#include <rdma/fi_errno.h>

#include "fabric/fabric_error.h"

using namespace rpmem::fabric;

TEST_CASE("libfabric codes that are errno values keep them, either sign", "[fabric][error]") {
    CHECK(errno_from_fabric(-FI_ECONNREFUSED) == ECONNREFUSED);
    CHECK(errno_from_fabric(FI_ECONNREFUSED) == ECONNREFUSED);
    CHECK(errno_from_fabric(-FI_EAGAIN) == EAGAIN);
    CHECK(errno_from_fabric(-FI_EACCES) == EACCES);
    CHECK(errno_from_fabric(-FI_ENODATA) == ENODATA);
}

TEST_CASE("libfabric's own codes map to the nearest errno, unknown ones to EIO",
          "[fabric][error]") {
    CHECK(errno_from_fabric(-FI_ETRUNC) == EMSGSIZE);
    CHECK(errno_from_fabric(-FI_ETOOSMALL) == EMSGSIZE);
    CHECK(errno_from_fabric(-FI_ENOKEY) == EKEYREJECTED);
    CHECK(errno_from_fabric(-FI_EOVERRUN) == EOVERFLOW);
    CHECK(errno_from_fabric(-FI_EBADFLAGS) == EINVAL);
    CHECK(errno_from_fabric(-FI_EOTHER) == EIO);
    CHECK(errno_from_fabric(-FI_EAVAIL) == EIO);
    CHECK(errno_from_fabric(0) == EIO);
    CHECK(errno_from_fabric(-FI_ERRNO_MAX - 5) == EIO);
}

TEST_CASE("every way of losing a connection is ECONNRESET on a connection", "[fabric][error]") {
    for (const int code : {FI_ENOTCONN, FI_ECONNABORTED, FI_ESHUTDOWN, FI_ECONNRESET, FI_ECANCELED,
                           EPIPE, FI_ENOENT})
        CHECK(connection_errno_from_fabric(-code) == ECONNRESET);
    CHECK(connection_errno_from_fabric(-FI_EACCES) == EACCES);
    CHECK(connection_errno_from_fabric(-FI_ECONNREFUSED) == ECONNREFUSED);
}

TEST_CASE("errors name the operation, the peer and libfabric's text", "[fabric][error]") {
    const rpmem::Error error = fabric_error(-FI_ECONNREFUSED, "fi_connect", "10.0.0.2:7636");
    CHECK(error.errno_value() == ECONNREFUSED);
    CHECK(error.source() == rpmem::ErrorSource::fabric);
    CHECK(error.native_code() == FI_ECONNREFUSED);
    // Codes below FI_ERRNO_OFFSET are errno values, and libfabric's text for them is strerror's.
    CHECK(error.message() ==
          std::string("fi_connect (10.0.0.2:7636): ") + std::strerror(ECONNREFUSED));
    CHECK(fabric_error(-FI_ENOMEM, "fi_cq_open").message() ==
          std::string("fi_cq_open: ") + std::strerror(ENOMEM));
    CHECK(connection_error(-FI_ENOTCONN, "RMA write", "h:1").errno_value() == ECONNRESET);
}
