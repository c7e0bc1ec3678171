// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>
#include <string_view>

namespace rpmem::daemon {

// The text of an error as a client may see it: every absolute path replaced by its last
// component. The daemon's errors name its files in full (the log keeps them, for the operator),
// but a client needs the pool set name and the reason, never the server's directory layout.
// Done once, where every reply's message is made, so that no error deep in the pool set code
// has to know who will read it. A path is a '/' that starts the text or follows a space, a
// quote, '(' or '=', and runs until a space, a quote, ')', ',' or ';', or a ':' that ends the
// text or comes before a space.
std::string client_message(std::string_view message);

} // namespace rpmem::daemon
