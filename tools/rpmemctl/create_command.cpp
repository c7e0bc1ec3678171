// SPDX-License-Identifier: BSD-3-Clause
// `rpmemctl create TARGET SET [--size N] [--signature SIG [--major N] [--singlehdr]]`: creates a
// pool on a running rpmemd without an initiator pool behind it, to prepare or test a target:
// with zero attributes (the set must say OPTION NOHDRS) or with headers carrying a signature.
// It opens the session's data plane, as every create does, and closes it again at once.
#include <optional>
#include <string>

#include "channel/client.h"
#include "command.h"
#include "poolset/parser.h"
#include "poolset/pool_header.h"
#include "protocol/request.h"
#include "remote_target.h"

namespace rpmem::tools {

namespace {

constexpr std::string_view kUsage =
    "usage: rpmemctl create [user@]HOST[:PORT] SET [--size N] [--signature SIG [--major N]\n"
    "                       [--singlehdr]]\n"
    "\n"
    "Creates the pool described by the pool set file SET (relative to rpmemd's pool set\n"
    "directory). Without --signature the pool gets no headers: the set must say OPTION NOHDRS.\n"
    "\n"
    "  --size N          the remote pool must hold at least N bytes (suffixes K, M, G, ...)\n"
    "  --signature SIG   write pool headers with this signature (at most 8 characters), random\n"
    "                    pool set and pool UUIDs, and the target's architecture flags\n"
    "  --major N         the headers' major version (default 1)\n"
    "  --singlehdr       set the SINGLEHDR feature (the set must say OPTION SINGLEHDR)\n"
    "\n"
    "Exit status: 0 done, 1 failed, 2 usage error.\n";

struct CreateOptions {
    std::string_view target;
    std::string_view pool_set;
    std::uint64_t size = 0;
    std::optional<std::string> signature;
    std::uint32_t major = 1;
    bool single_header = false;
};

std::optional<CreateOptions> parse(std::span<const std::string_view> args, std::ostream& err) {
    CreateOptions options;
    std::vector<std::string_view> positional;
    bool has_major = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string_view arg = args[i];
        auto value = [&]() -> std::optional<std::string_view> {
            if (i + 1 < args.size())
                return args[++i];
            err << "rpmemctl create: " << arg << " needs a value\n";
            return std::nullopt;
        };
        if (arg == "--size") {
            auto text = value();
            if (!text)
                return std::nullopt;
            auto size = poolset::parse_size(*text);
            if (!size) {
                err << "rpmemctl create: --size: " << size.error().message() << "\n";
                return std::nullopt;
            }
            options.size = *size;
        } else if (arg == "--signature") {
            auto text = value();
            if (!text)
                return std::nullopt;
            if (text->empty() || text->size() > PoolAttributes::kSignatureLength) {
                err << "rpmemctl create: --signature takes 1 to 8 characters\n";
                return std::nullopt;
            }
            options.signature = std::string(*text);
        } else if (arg == "--major") {
            auto text = value();
            if (!text)
                return std::nullopt;
            auto number = poolset::parse_size(*text);
            if (!number || *number == 0 || *number > 0xffffffffu) {
                err << "rpmemctl create: --major takes a positive 32-bit number\n";
                return std::nullopt;
            }
            options.major = static_cast<std::uint32_t>(*number);
            has_major = true;
        } else if (arg == "--singlehdr") {
            options.single_header = true;
        } else if (arg.starts_with("-") || positional.size() == 2) {
            err << "rpmemctl create: unexpected argument '" << arg << "'\n";
            return std::nullopt;
        } else {
            positional.push_back(arg);
        }
    }
    if (positional.size() != 2) {
        err << "rpmemctl create: expected a target and a pool set name\n";
        return std::nullopt;
    }
    if (!options.signature && (has_major || options.single_header)) {
        err << "rpmemctl create: --major and --singlehdr go with --signature\n";
        return std::nullopt;
    }
    options.target = positional[0];
    options.pool_set = positional[1];
    return options;
}

PoolAttributes attributes_of(const CreateOptions& options) {
    PoolAttributes attributes;
    if (!options.signature)
        return attributes;
    std::copy(options.signature->begin(), options.signature->end(), attributes.signature.begin());
    attributes.major = options.major;
    if (options.single_header)
        attributes.incompat_features |= poolset::kFeatureSingleHeader;
    attributes.poolset_uuid = poolset::random_uuid();
    attributes.uuid = poolset::random_uuid();
    return attributes;
}

} // namespace

int run_create_command(std::span<const std::string_view> args, std::ostream& out,
                       std::ostream& err) {
    return run_parsed(args, kUsage, out, err, parse, [&](const CreateOptions& options) {
        auto remote = RemoteTarget::from(options.target);
        if (!remote) {
            err << "rpmemctl create: " << remote.error().message() << "\n";
            return kExitFailure;
        }
        auto control = remote->connect();
        if (!control) {
            err << "rpmemctl create: " << control.error().message() << "\n";
            return kExitFailure;
        }
        protocol::CreateRequest request;
        request.pool_set = std::string(options.pool_set);
        request.pool_size = options.size;
        request.lanes = 1;
        request.provider = remote->provider();
        request.persist_method = remote->persist_method();
        request.attributes = attributes_of(options);
        std::string what = "creating " + request.pool_set + " on " + remote->target.to_string();
        auto created = channel::expect<protocol::CreateReply>((*control)->call(request), what);
        if (!created) {
            err << "rpmemctl create: " << created.error().message() << "\n";
            const Error& error = created.error();
            if (!options.signature && error.source() == ErrorSource::remote &&
                error.native_code() == static_cast<int>(protocol::Status::pool_config))
                err << "rpmemctl create: without --signature the pool gets no headers; if the set "
                       "has headers, add --signature SIG (PMEMOBJ for a libpmemobj pool), or "
                       "put OPTION NOHDRS in the set for a pool without them\n";
            return kExitFailure;
        }
        auto closed = channel::expect<protocol::CloseReply>(
            (*control)->call(protocol::CloseRequest{}), "closing it");
        (*control)->close();
        if (!closed) {
            err << "rpmemctl create: " << closed.error().message() << "\n";
            return kExitFailure;
        }
        std::uint64_t size = created->data_path.pool_size;
        out << "created " << request.pool_set << " on " << remote->target.to_string() << ": "
            << poolset::format_size(size) << " (" << size << " bytes), "
            << (request.attributes.is_zero()
                    ? "no headers"
                    : "headers with signature " + signature_text(request.attributes))
            << "\n";
        return kExitOk;
    });
}

} // namespace rpmem::tools
