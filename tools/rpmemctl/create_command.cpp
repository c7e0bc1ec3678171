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

struct CreateOptions {
    std::string target;
    std::string pool_set;
    std::uint64_t size = 0;
    std::optional<std::string> signature;
    std::uint32_t major = 1;
    bool single_header = false;
};

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

int run_create(const CreateOptions& options, std::ostream& out, std::ostream& err) {
    auto remote = RemoteTarget::from(options.target);
    if (!remote)
        return report_failure(err, "create", remote.error());
    auto control = remote->connect();
    if (!control)
        return report_failure(err, "create", control.error());
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
        report_failure(err, "create", created.error());
        const Error& error = created.error();
        if (!options.signature && error.source() == ErrorSource::remote &&
            error.native_code() == static_cast<int>(protocol::Status::pool_config))
            err << "rpmemctl create: without --signature the pool gets no headers; if the set "
                   "has headers, add --signature SIG (PMEMOBJ for a libpmemobj pool), or "
                   "put OPTION NOHDRS in the set for a pool without them\n";
        return kExitFailure;
    }
    auto closed = channel::expect<protocol::CloseReply>((*control)->call(protocol::CloseRequest{}),
                                                        "closing it");
    (*control)->close();
    if (!closed)
        return report_failure(err, "create", closed.error());
    std::uint64_t size = created->data_path.pool_size;
    out << "created " << request.pool_set << " on " << remote->target.to_string() << ": "
        << poolset::format_size(size) << " (" << size << " bytes), "
        << (request.attributes.is_zero()
                ? "no headers"
                : "headers with signature " + signature_text(request.attributes))
        << "\n";
    return kExitOk;
}

} // namespace

void add_create_command(CLI::App& app, CommandOutput& output) {
    auto [command, options] = add_command(
        app, "create", "create a pool on rpmemd",
        "Create the pool described by the pool set file SET (relative to rpmemd's pool set\n"
        "directory), without an initiator pool behind it. Without --signature the pool gets no\n"
        "headers: the set must say OPTION NOHDRS.",
        kRemoteFooter, output, &run_create);
    command->add_option("TARGET", options->target, "rpmemd, as [user@]HOST[:PORT]")->required();
    command->add_option("SET", options->pool_set, "the pool set file, as rpmemd names it")
        ->required();
    command
        ->add_option("--size", options->size,
                     "the remote pool must hold at least this many bytes (suffixes K, M, G, ...)")
        ->transform(byte_size());
    CLI::Option* signature =
        command
            ->add_option("--signature", options->signature,
                         "write pool headers with this signature (PMEMOBJ for a libpmemobj pool), "
                         "random pool set and pool UUIDs and the target's architecture flags")
            ->check(
                [](const std::string& text) {
                    return text.empty() || text.size() > PoolAttributes::kSignatureLength
                               ? std::string("takes 1 to 8 characters")
                               : std::string();
                },
                "1-8 CHARACTERS");
    command->add_option("--major", options->major, "the headers' major version (default 1)")
        ->check(CLI::Range(1u, 0xffffffffu))
        ->needs(signature);
    command
        ->add_flag("--singlehdr", options->single_header,
                   "set the SINGLEHDR feature (the set must say OPTION SINGLEHDR)")
        ->needs(signature);
}

} // namespace rpmem::tools
