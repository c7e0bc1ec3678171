// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/client_message.h"

namespace rpmem::daemon {

namespace {

bool starts_path(std::string_view text, std::size_t at) {
    if (text[at] != '/')
        return false;
    if (at == 0)
        return true;
    const char before = text[at - 1];
    return before == ' ' || before == '\'' || before == '"' || before == '(' || before == '=' ||
           before == '\t' || before == '\n';
}

bool ends_path(std::string_view text, std::size_t at) {
    const char c = text[at];
    if (c == ' ' || c == '\'' || c == '"' || c == ')' || c == ',' || c == ';' || c == '\t' ||
        c == '\n')
        return true;
    return c == ':' && (at + 1 == text.size() || text[at + 1] == ' ');
}

} // namespace

std::string client_message(std::string_view message) {
    std::string out;
    out.reserve(message.size());
    std::size_t at = 0;
    while (at < message.size()) {
        if (!starts_path(message, at)) {
            out += message[at++];
            continue;
        }
        std::size_t end = at;
        while (end < message.size() && !ends_path(message, end))
            ++end;
        std::string_view path = message.substr(at, end - at);
        while (path.size() > 1 && path.back() == '/')
            path.remove_suffix(1);
        const std::size_t slash = path.rfind('/');
        // "/" alone stays as it is; "/srv/pools/a.set" becomes "a.set".
        out += path.size() == 1 ? path : path.substr(slash + 1);
        at = end;
    }
    return out;
}

} // namespace rpmem::daemon
