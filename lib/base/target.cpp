// SPDX-License-Identifier: BSD-3-Clause
#include "base/target.h"

#include <cerrno>

namespace rpmem {

namespace {

tl::unexpected<Error> target_error(std::string_view text, std::string_view what) {
    std::string message = "invalid target '";
    message += text;
    message += "': ";
    message += what;
    return fail(EINVAL, std::move(message));
}

bool has_forbidden_character(std::string_view part) {
    for (char c : part) {
        auto byte = static_cast<unsigned char>(c);
        if (byte <= ' ' || byte == 0x7f || c == '@' || c == '/' || c == '[' || c == ']')
            return true;
    }
    return false;
}

std::optional<std::uint16_t> parse_port(std::string_view digits) {
    if (digits.empty() || digits.size() > 5)
        return std::nullopt;
    std::uint32_t value = 0;
    for (char c : digits) {
        if (c < '0' || c > '9')
            return std::nullopt;
        value = value * 10 + static_cast<std::uint32_t>(c - '0');
    }
    if (value == 0 || value > 65535)
        return std::nullopt;
    return static_cast<std::uint16_t>(value);
}

} // namespace

std::string Target::to_string() const {
    std::string text;
    if (!user.empty()) {
        text += user;
        text += '@';
    }
    if (host.find(':') != std::string::npos) {
        text += '[';
        text += host;
        text += ']';
    } else {
        text += host;
    }
    if (port) {
        text += ':';
        text += std::to_string(*port);
    }
    return text;
}

Result<Target> parse_target(std::string_view text) {
    Target target;
    std::string_view rest = text;

    if (auto at = rest.find('@'); at != std::string_view::npos) {
        std::string_view user = rest.substr(0, at);
        if (user.empty())
            return target_error(text, "empty user name before '@'");
        if (user.size() > kMaxTargetUserLength)
            return target_error(text, "user name longer than 32 characters");
        if (has_forbidden_character(user))
            return target_error(text, "user name contains a forbidden character");
        target.user = std::string(user);
        rest.remove_prefix(at + 1);
    }

    std::string_view host;
    std::optional<std::string_view> port_text;
    if (!rest.empty() && rest.front() == '[') {
        auto close = rest.find(']');
        if (close == std::string_view::npos)
            return target_error(text, "'[' without a closing ']'");
        host = rest.substr(1, close - 1);
        std::string_view after = rest.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':')
                return target_error(text, "expected ':PORT' or the end after ']'");
            port_text = after.substr(1);
        }
        if (host.find(':') == std::string_view::npos)
            return target_error(text, "brackets are only for IPv6 addresses");
    } else {
        auto first = rest.find(':');
        auto last = rest.rfind(':');
        if (first != std::string_view::npos && first == last) {
            host = rest.substr(0, first);
            port_text = rest.substr(first + 1);
        } else {
            host = rest; // no ':' at all, or a bare IPv6 address without a port
        }
    }

    if (host.empty())
        return target_error(text, "empty host name");
    if (host.size() > kMaxTargetHostLength)
        return target_error(text, "host name longer than 255 characters");
    if (has_forbidden_character(host))
        return target_error(text, "host name contains a forbidden character");
    target.host = std::string(host);

    if (port_text) {
        auto port = parse_port(*port_text);
        if (!port)
            return target_error(text, "the port must be a number from 1 to 65535");
        target.port = port;
    }
    return target;
}

} // namespace rpmem
