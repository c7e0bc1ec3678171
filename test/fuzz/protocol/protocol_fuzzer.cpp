// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the control protocol decoder: any byte string is decoded as a request
// frame, as a reply frame and as a supervisor <-> worker packet. Whatever decodes must re-encode to
// the same bytes (the encoding is canonical) and decode again to the same value; a crash, a
// sanitizer report or a trap is a finding.
#include <algorithm>
#include <cstdint>
#include <span>

#include "protocol/codec.h"
#include "protocol/worker_message.h"

namespace {

namespace protocol = rpmem::protocol;

template <typename Frame, typename Decode>
void check_canonical(std::span<const std::uint8_t> input, const Frame& decoded, Decode decode) {
    auto again = protocol::encode(decoded.message, decoded.request_id);
    if (!again)
        __builtin_trap(); // decoded but cannot be encoded: decoder and encoder disagree on limits
    // Hello and HelloReply are accepted in any version but encoded in ours: compare the rest.
    std::span<const std::uint8_t> bytes(*again);
    if (bytes.size() != input.size() ||
        !std::equal(bytes.begin(), bytes.begin() + 4, input.begin()) ||
        !std::equal(bytes.begin() + 6, bytes.end(), input.begin() + 6))
        __builtin_trap();
    auto round = decode(bytes);
    if (!round || round->request_id != decoded.request_id || !(round->message == decoded.message))
        __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::span<const std::uint8_t> input(data, size);
    if (auto request = protocol::decode_request_frame(input))
        check_canonical(input, *request, protocol::decode_request_frame);
    if (auto reply = protocol::decode_reply_frame(input))
        check_canonical(input, *reply, protocol::decode_reply_frame);
    if (auto packet = protocol::decode_worker_message(input)) {
        auto again = protocol::encode_worker_message(*packet);
        if (!again || !std::equal(again->begin(), again->end(), input.begin(), input.end()))
            __builtin_trap();
    }
    return 0;
}
