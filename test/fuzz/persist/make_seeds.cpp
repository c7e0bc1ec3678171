// SPDX-License-Identifier: BSD-3-Clause
// Writes valid data-path messages into the directory given as argument: the seed corpus of the
// data-path fuzzer (corpus/data_path/). Run once after a change of the data-path messages or
// the lane binding and commit the files:
// `make_data_path_seeds test/fuzz/persist/corpus/data_path`.
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "protocol/lane_binding.h"
#include "protocol/lane_message.h"

namespace protocol = rpmem::protocol;

namespace {

bool write_seed(const std::string& dir, const std::string& name, std::span<const std::byte> bytes) {
    std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(out);
}

// A request header followed by `data` bytes (0x5a) of inline data.
std::vector<std::byte> request(protocol::LaneOperation operation, std::uint8_t flags,
                               std::uint64_t offset, std::uint64_t length, std::size_t data) {
    std::vector<std::byte> bytes(protocol::kLaneHeaderSize + data, std::byte{0x5a});
    protocol::encode(protocol::LaneRequest{operation, flags, 7, offset, length}, bytes);
    return bytes;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIRECTORY\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    using protocol::LaneOperation;
    const std::uint8_t ack = protocol::kAckRequested;
    bool ok = true;
    ok &=
        write_seed(dir, "persist_inline", request(LaneOperation::persist_inline, ack, 4096, 8, 8));
    ok &= write_seed(dir, "persist_inline_noack",
                     request(LaneOperation::persist_inline, 0, 8192, 64, 64));
    ok &= write_seed(dir, "deep_persist_inline",
                     request(LaneOperation::deep_persist_inline, ack, 4096, 16, 16));
    ok &= write_seed(dir, "flush", request(LaneOperation::flush, ack, 4096, 4096, 0));
    ok &= write_seed(dir, "flush_header", request(LaneOperation::flush, 0, 0, 4096, 0));
    ok &= write_seed(dir, "deep_flush", request(LaneOperation::deep_flush, ack, 65536, 1 << 20, 0));
    ok &= write_seed(dir, "barrier", request(LaneOperation::barrier, ack, 0, 0, 0));
    {
        const std::vector<protocol::LaneRange> ranges{{4096, 64}, {1 << 16, 4096}};
        auto list =
            request(LaneOperation::flush_list, ack, 0, ranges.size() * protocol::kLaneRangeSize,
                    ranges.size() * protocol::kLaneRangeSize);
        protocol::encode(std::span<const protocol::LaneRange>(ranges),
                         std::span(list).subspan(protocol::kLaneHeaderSize));
        ok &= write_seed(dir, "flush_list", list);
    }
    {
        // Two records (one deep), the header's offset the initiator's lag.
        const std::vector<std::pair<protocol::LaneRecord, std::size_t>> records{
            {{4096, 12, 0}, 12}, {{1 << 16, 8, protocol::kRecordDeep}, 8}};
        const std::size_t size = protocol::lane_record_size(12) + protocol::lane_record_size(8);
        auto message = request(LaneOperation::persist_records, ack, 4096, size, size);
        std::size_t at = protocol::kLaneHeaderSize;
        for (const auto& [record, length] : records) {
            const std::vector<std::byte> data(length, std::byte{0x3c});
            protocol::encode(record, data, std::span(message).subspan(at));
            at += protocol::lane_record_size(length);
        }
        ok &= write_seed(dir, "persist_records", message);
    }

    std::vector<std::byte> reply(protocol::kLaneReplySize);
    protocol::encode(protocol::LaneReply{7, 0}, reply);
    ok &= write_seed(dir, "reply_ok", reply);
    protocol::encode(protocol::LaneReply{8, 22}, reply);
    ok &= write_seed(dir, "reply_einval", reply);

    protocol::LaneBinding binding;
    for (std::size_t i = 0; i < binding.token.size(); ++i)
        binding.token[i] = static_cast<std::uint8_t>(0xa0 + i);
    binding.lane = 3;
    ok &= write_seed(dir, "lane_binding", protocol::encode(binding));
    if (!ok) {
        std::fprintf(stderr, "cannot write the seeds into %s\n", dir.c_str());
        return 1;
    }
    return 0;
}
