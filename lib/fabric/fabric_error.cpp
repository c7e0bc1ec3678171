// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/fabric_error.h"

#include <cerrno>
#include <cstdlib>
#include <string>

#include <rdma/fi_errno.h>

#include "fabric/fabric_library.h"

namespace rpmem::fabric {

namespace {

Error make_error(int errno_value, int code, std::string_view operation, std::string_view peer) {
    const int native = std::abs(code);
    std::string message(operation);
    if (!peer.empty()) {
        message += " (";
        message += peer;
        message += ")";
    }
    message += ": ";
    message += fabric_strerror(native);
    return Error(errno_value, std::move(message), ErrorSource::fabric, native);
}

} // namespace

int errno_from_fabric(int code) noexcept {
    const int native = std::abs(code);
    if (native == 0)
        return EIO;
    if (native < FI_ERRNO_OFFSET)
        return native; // libfabric's FI_E* below the offset are errno values by definition
    switch (native) {
    case FI_ETOOSMALL:
    case FI_ETRUNC:
        return EMSGSIZE;
    case FI_EOPBADSTATE:
        return EBADFD;
    case FI_EBADFLAGS:
        return EINVAL;
    case FI_ENOKEY:
        return EKEYREJECTED;
    case FI_EOVERRUN:
        return EOVERFLOW;
    case FI_ENORX:
        return ENOBUFS;
    case FI_ECRC:
        return EBADMSG;
    default:
        return EIO;
    }
}

int connection_errno_from_fabric(int code) noexcept {
    const int mapped = errno_from_fabric(code);
    switch (mapped) {
    case ENOTCONN:
    case EPIPE:
    case ECONNABORTED:
    case ESHUTDOWN:
    case ECONNRESET:
    // Operations still queued when a connection breaks complete as canceled; this layer never
    // cancels one itself.
    case ECANCELED:
    // The sockets provider's answer to a post on a connection it has torn down.
    case ENOENT:
        return ECONNRESET;
    default:
        return mapped;
    }
}

Error fabric_error(int code, std::string_view operation, std::string_view peer) {
    return make_error(errno_from_fabric(code), code, operation, peer);
}

Error connection_error(int code, std::string_view operation, std::string_view peer) {
    return make_error(connection_errno_from_fabric(code), code, operation, peer);
}

} // namespace rpmem::fabric
