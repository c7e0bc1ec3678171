// SPDX-License-Identifier: BSD-3-Clause
#include "poolset/parser.h"

#include <array>
#include <cerrno>
#include <limits>
#include <utility>
#include <vector>

namespace rpmem::poolset {

namespace {

constexpr std::string_view kSignature = "PMEMPOOLSET";
constexpr std::string_view kReplicaKeyword = "REPLICA";
constexpr std::string_view kOptionKeyword = "OPTION";
constexpr std::string_view kAutoSize = "AUTO";

struct Suffix {
    std::string_view text;
    std::uint64_t multiplier;
};

constexpr std::uint64_t kKi = 1024;
constexpr std::uint64_t kKilo = 1000;
constexpr std::array<Suffix, 16> kSuffixes{{
    {"B", 1},
    {"K", kKi},
    {"M", kKi* kKi},
    {"G", kKi* kKi* kKi},
    {"T", kKi* kKi* kKi* kKi},
    {"P", kKi* kKi* kKi* kKi* kKi},
    {"KiB", kKi},
    {"MiB", kKi* kKi},
    {"GiB", kKi* kKi* kKi},
    {"TiB", kKi* kKi* kKi* kKi},
    {"PiB", kKi* kKi* kKi* kKi* kKi},
    {"kB", kKilo},
    {"MB", kKilo* kKilo},
    {"GB", kKilo* kKilo* kKilo},
    {"TB", kKilo* kKilo* kKilo* kKilo},
    {"PB", kKilo* kKilo* kKilo* kKilo* kKilo},
}};

// PMDK separates tokens with spaces and tabs only (strtok_r " \t").
bool is_blank(char c) {
    return c == ' ' || c == '\t';
}

struct Token {
    std::string_view text;
    std::size_t column; // 1-based
};

std::vector<Token> tokenize(std::string_view line, std::size_t first_column) {
    std::vector<Token> tokens;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && is_blank(line[i]))
            ++i;
        std::size_t start = i;
        while (i < line.size() && !is_blank(line[i]))
            ++i;
        if (i > start)
            tokens.push_back({line.substr(start, i - start), first_column + start});
    }
    return tokens;
}

// Quotes a token for a message, cutting very long or binary ones short.
std::string quoted(std::string_view text) {
    constexpr std::size_t kMaxShown = 64;
    std::string out = "'";
    std::size_t shown = 0;
    for (char c : text) {
        if (shown++ == kMaxShown) {
            out += "...";
            break;
        }
        auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7f) {
            constexpr std::string_view kHex = "0123456789abcdef";
            out += "\\x";
            out += kHex[byte >> 4];
            out += kHex[byte & 0xf];
        } else {
            out += c;
        }
    }
    out += "'";
    return out;
}

// The line-by-line state machine; mirrors util_poolset_parse() in PMDK's set.c.
class Parser {
public:
    explicit Parser(std::string_view origin) { set_.origin = std::string(origin); }

    Result<PoolSet> run(std::string_view text);

private:
    tl::unexpected<Error> error(std::size_t line, std::size_t column, std::string_view what) {
        std::string message = set_.origin;
        message += ':';
        message += std::to_string(line);
        message += ':';
        message += std::to_string(column);
        message += ": ";
        message += what;
        return fail(EINVAL, std::move(message));
    }

    Result<void> parse_line(std::string_view line, std::size_t number);
    Result<void> parse_option(std::string_view rest, std::size_t number);
    Result<void> parse_replica(std::string_view line, std::size_t number);
    Result<void> parse_part(std::string_view line, std::size_t number);
    Result<void> require_parts(std::size_t number, std::size_t column);

    ReplicaSpec& current() { return set_.replicas.back(); }

    PoolSet set_;
};

Result<PoolSet> Parser::run(std::string_view text) {
    for (std::size_t i = 0, line = 1, column = 1; i < text.size(); ++i, ++column) {
        if (text[i] == '\0')
            return error(line, column, "NUL byte in a pool set file");
        if (text[i] == '\n') {
            ++line;
            column = 0;
        }
    }

    std::size_t number = 0;
    std::size_t position = 0;
    while (position < text.size()) {
        ++number;
        std::size_t end = text.find('\n', position);
        bool terminated = end != std::string_view::npos;
        if (!terminated)
            end = text.size();
        std::string_view line = text.substr(position, end - position);
        position = terminated ? end + 1 : end;
        // PMDK reads lines with CRLF turned into LF.
        if (terminated && !line.empty() && line.back() == '\r')
            line.remove_suffix(1);

        if (number == 1) {
            // The signature line must be exactly PMEMPOOLSET and end with a newline.
            if (line != kSignature || !terminated)
                return error(1, 1,
                             "expected the first line to be exactly 'PMEMPOOLSET' "
                             "(no spaces or comments), followed by a newline");
            set_.replicas.push_back(ReplicaSpec{{}, std::nullopt, 1});
            continue;
        }
        if (auto done = parse_line(line, number); !done)
            return tl::unexpected(std::move(done.error()));
    }

    if (number == 0)
        return error(1, 1, "empty file: expected the first line to be exactly 'PMEMPOOLSET'");

    if (auto done = require_parts(number + 1, 1); !done)
        return tl::unexpected(std::move(done.error()));
    return std::move(set_);
}

Result<void> Parser::require_parts(std::size_t number, std::size_t column) {
    const ReplicaSpec& replica = current();
    if (replica.is_remote() || !replica.parts.empty())
        return {};
    std::size_t index = set_.replicas.size() - 1;
    if (index == 0)
        return error(number, column, "expected a part line 'SIZE PATH': the set has no parts");
    return error(number, column,
                 "expected a part line 'SIZE PATH': replica " + std::to_string(index) + " (line " +
                     std::to_string(replica.line) + ") has no parts");
}

Result<void> Parser::parse_line(std::string_view line, std::size_t number) {
    if (line.empty())
        return {};
    // A '#' starts a comment; only a '#' in the first column makes the whole line one. PMDK
    // does not skip lines of only blanks, nor indented comments (they leave blanks behind).
    if (auto hash = line.find('#'); hash != std::string_view::npos) {
        if (hash == 0)
            return {};
        line = line.substr(0, hash);
    }

    if (line.substr(0, kOptionKeyword.size()) == kOptionKeyword)
        return parse_option(line.substr(kOptionKeyword.size()), number);
    if (line.substr(0, kReplicaKeyword.size()) == kReplicaKeyword)
        return parse_replica(line, number);
    return parse_part(line, number);
}

Result<void> Parser::parse_option(std::string_view rest, std::size_t number) {
    // PMDK matches the keyword as a prefix, so "OPTIONSINGLEHDR" is accepted too.
    auto tokens = tokenize(rest, kOptionKeyword.size() + 1);
    if (tokens.empty())
        return error(number, kOptionKeyword.size() + 1,
                     "expected an option name (SINGLEHDR or NOHDRS) after OPTION");
    for (const Token& token : tokens) {
        if (token.text == "SINGLEHDR")
            set_.options.single_header = true;
        else if (token.text == "NOHDRS")
            set_.options.no_headers = true;
        else
            return error(number, token.column,
                         "unknown option " + quoted(token.text) +
                             " (expected SINGLEHDR or NOHDRS)");
    }
    return {};
}

Result<void> Parser::parse_replica(std::string_view line, std::size_t number) {
    if (line.size() > kReplicaKeyword.size() && !is_blank(line[kReplicaKeyword.size()]))
        return error(number, 1,
                     "expected exactly 'REPLICA' or 'REPLICA [user@]host[:port] remote.set'");
    // A replica is closed by the next REPLICA line: it must have parts by then.
    if (auto done = require_parts(number, 1); !done)
        return done;

    if (line.size() == kReplicaKeyword.size()) {
        set_.replicas.push_back(ReplicaSpec{{}, std::nullopt, number});
        return {};
    }

    auto tokens = tokenize(line.substr(kReplicaKeyword.size()), kReplicaKeyword.size() + 1);
    if (tokens.size() < 2)
        return error(number, tokens.empty() ? kReplicaKeyword.size() + 1 : tokens[0].column,
                     "expected '[user@]host[:port] relative/path.set' after REPLICA "
                     "(or nothing, for a local replica)");
    if (tokens.size() > 2)
        return error(number, tokens[2].column,
                     "unexpected " + quoted(tokens[2].text) + " after the remote pool set name");
    auto target = parse_target(tokens[0].text);
    if (!target)
        return error(number, tokens[0].column, target.error().message());
    if (tokens[1].text.front() == '/')
        return error(number, tokens[1].column,
                     "the remote pool set " + quoted(tokens[1].text) +
                         " must be a path relative to rpmemd's pool set directory");

    ReplicaSpec replica;
    replica.remote = RemoteReplica{std::move(*target), std::string(tokens[1].text)};
    replica.line = number;
    set_.replicas.push_back(std::move(replica));
    return {};
}

Result<void> Parser::parse_part(std::string_view line, std::size_t number) {
    auto tokens = tokenize(line, 1);
    if (current().is_remote())
        return error(number, tokens.empty() ? 1 : tokens[0].column,
                     "unexpected part line: a remote REPLICA (line " +
                         std::to_string(current().line) + ") has no parts");
    if (tokens.empty())
        return error(number, 1,
                     "expected 'SIZE PATH', found only blanks (PMDK accepts only empty "
                     "blank lines)");
    if (tokens.size() == 1)
        return error(number, tokens[0].column + tokens[0].text.size(),
                     "expected 'SIZE PATH': missing the path after " + quoted(tokens[0].text));
    if (tokens.size() > 2)
        return error(number, tokens[2].column,
                     "unexpected " + quoted(tokens[2].text) + " after the part path");

    const Token& size_token = tokens[0];
    const Token& path_token = tokens[1];
    if (path_token.text.front() != '/')
        return error(number, path_token.column,
                     "the part path " + quoted(path_token.text) + " must be absolute");

    Part part;
    part.path = std::string(path_token.text);
    part.line = number;
    part.column = size_token.column;
    if (size_token.text != kAutoSize) {
        auto size = parse_size(size_token.text);
        if (!size)
            return error(number, size_token.column, size.error().message());
        if (*size == 0)
            return error(number, size_token.column, "the part size must not be zero");
        if (*size > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            return error(number, size_token.column,
                         "the part size " + quoted(size_token.text) +
                             " is larger than a file can be");
        part.size = *size;
    }
    current().parts.push_back(std::move(part));
    return {};
}

} // namespace

Result<PoolSet> parse(std::string_view text, std::string_view origin) {
    return Parser(origin).run(text);
}

Result<std::uint64_t> parse_size(std::string_view text) {
    auto bad = [&](std::string_view why) {
        return fail(EINVAL, "invalid size " + quoted(text) + ": " + std::string(why));
    };
    std::string_view rest = text;
    if (!rest.empty() && rest.front() == '+')
        rest.remove_prefix(1);
    std::uint64_t value = 0;
    std::size_t digits = 0;
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') {
        auto digit = static_cast<std::uint64_t>(rest[digits] - '0');
        if (value > (kMax - digit) / 10)
            return bad("does not fit in 64 bits");
        value = value * 10 + digit;
        ++digits;
    }
    if (digits == 0)
        return bad("expected a decimal number, optionally followed by a unit "
                   "(K, M, G, T, P, KiB, MiB, ..., kB, MB, ...)");
    std::string_view unit = rest.substr(digits);
    if (unit.empty())
        return value;
    for (const Suffix& suffix : kSuffixes) {
        if (unit == suffix.text) {
            if (value > kMax / suffix.multiplier)
                return bad("does not fit in 64 bits");
            return value * suffix.multiplier;
        }
    }
    return bad("unknown unit " + quoted(unit) +
               " (expected B, K, M, G, T, P, KiB, MiB, GiB, TiB, PiB, kB, MB, GB, TB or PB; "
               "units are case-sensitive)");
}

std::string format_size(std::uint64_t bytes) {
    constexpr std::array<std::string_view, 6> kUnits{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    std::size_t unit = 0;
    std::uint64_t value = bytes;
    while (unit + 1 < kUnits.size() && value != 0 && value % 1024 == 0) {
        value /= 1024;
        ++unit;
    }
    if (unit == 0)
        return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
    return std::to_string(value) + " " + std::string(kUnits[unit]);
}

} // namespace rpmem::poolset
