// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <memory>

#include <boost/asio/ssl/context.hpp>

#include "base/error.h"
#include "channel/tls_files.h"

namespace rpmem::channel {

enum class TlsRole { client, server };

// An Asio TLS context for one end of the control channel: TLS 1.3 only, `files.ca` the only
// trust anchor, this end's certificate and key loaded and checked against each other. The
// peer's certificate is always required and verified (a server refuses clients without one);
// the client's check of the server's name is set per connection (Client). No session tickets:
// every channel is a full mutual handshake. Fails with the errno of an unreadable file
// (ENOENT, EACCES) or EINVAL for unusable content, naming the file. The context is immutable
// once made and may be shared by the connections of one Client or Server.
Result<std::unique_ptr<boost::asio::ssl::context>> make_tls_context(const TlsFiles& files,
                                                                    TlsRole role);

} // namespace rpmem::channel
