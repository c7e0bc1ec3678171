// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/worker_message.h"

#include <cerrno>

#include <fmt/format.h>

#include "protocol/byte_reader.h"
#include "protocol/byte_writer.h"
#include "protocol/data_path.h"
#include "protocol/message_limits.h"

namespace rpmem::protocol {

namespace {

enum class WorkerKind : std::uint16_t { start = 1, started = 2, stop = 3, stopped = 4, hello = 5 };

constexpr std::size_t kMaxSessionNameLength = 128;

struct Encoder {
    ByteWriter& w;

    void operator()(const WorkerStart& m) const {
        w.u16(static_cast<std::uint16_t>(WorkerKind::start));
        w.u64(m.session_id);
        w.string(m.session_name, "session_name", kMaxSessionNameLength);
        w.bytes(m.token);
        w.u8(static_cast<std::uint8_t>(m.provider));
        w.require(m.allowed_providers.size() <= kMaxWorkerProviders, "too many allowed providers");
        w.u8(static_cast<std::uint8_t>(m.allowed_providers.size()));
        for (const std::string& provider : m.allowed_providers)
            w.string(provider, "allowed_providers", kMaxProviderNameLength);
        w.string(m.bind_host, "bind_host", kMaxHostLength);
        w.u32(m.lanes);
        w.u64(m.pool_size);
        w.u64(m.data_offset);
        w.boolean(m.is_pmem);
        w.require(m.segments.size() <= kMaxWorkerSegments, "too many segments");
        w.u8(static_cast<std::uint8_t>(m.segments.size()));
        for (const WorkerSegment& s : m.segments) {
            w.u32(s.fd_index);
            w.u64(s.file_offset);
            w.u64(s.length);
            w.u64(s.pool_offset);
        }
        w.u64(m.responder_spin_ns);
        w.u32(static_cast<std::uint32_t>(m.responder_cpu));
        w.require(m.reply_delay_ns <= kMaxWorkerReplyDelayNs, "reply_delay_ns beyond 1 s");
        w.u64(m.reply_delay_ns);
        w.boolean(m.counters_page);
    }
    void operator()(const WorkerStarted& m) const {
        w.u16(static_cast<std::uint16_t>(WorkerKind::started));
        w.u64(m.session_id);
        w.u32(m.errno_value);
        w.string(m.message, "message", kMaxMessageLength);
        write_data_path(w, m.data_path);
        w.boolean(m.software_provider);
        w.boolean(m.offers_rma_pmem);
    }
    void operator()(const WorkerStop& m) const {
        w.u16(static_cast<std::uint16_t>(WorkerKind::stop));
        w.u64(m.session_id);
    }
    void operator()(const WorkerStopped& m) const {
        w.u16(static_cast<std::uint16_t>(WorkerKind::stopped));
        w.u64(m.session_id);
    }
    void operator()(const WorkerHello& m) const {
        w.u16(static_cast<std::uint16_t>(WorkerKind::hello));
        w.string(m.version, "version", kMaxWorkerVersionLength);
    }
};

WorkerStart read_start(ByteReader& r) {
    WorkerStart m;
    m.session_id = r.u64("session_id");
    m.session_name = r.string("session_name", kMaxSessionNameLength);
    r.bytes(m.token, "token");
    m.provider = read_provider(r);
    std::uint8_t providers = r.u8("allowed_providers");
    r.require(providers <= kMaxWorkerProviders, "allowed_providers", "too many");
    for (std::uint8_t i = 0; i < providers && !r.failed(); ++i)
        m.allowed_providers.push_back(r.string("allowed_providers", kMaxProviderNameLength));
    m.bind_host = r.string("bind_host", kMaxHostLength);
    m.lanes = r.u32("lanes");
    m.pool_size = r.u64("pool_size");
    m.data_offset = r.u64("data_offset");
    r.require(m.data_offset <= m.pool_size, "data_offset", "beyond the pool");
    m.is_pmem = r.boolean("is_pmem");
    std::uint8_t segments = r.u8("segments");
    r.require(segments <= kMaxWorkerSegments, "segments", "too many");
    for (std::uint8_t i = 0; i < segments && !r.failed(); ++i) {
        WorkerSegment s;
        s.fd_index = r.u32("segment.fd_index");
        s.file_offset = r.u64("segment.file_offset");
        s.length = r.u64("segment.length");
        s.pool_offset = r.u64("segment.pool_offset");
        r.require(s.fd_index < segments, "segment.fd_index", "names no descriptor");
        r.require(s.pool_offset <= m.pool_size && s.length <= m.pool_size - s.pool_offset,
                  "segment", "outside the pool");
        m.segments.push_back(s);
    }
    m.responder_spin_ns = r.u64("responder_spin_ns");
    m.responder_cpu = static_cast<std::int32_t>(r.u32("responder_cpu"));
    m.reply_delay_ns = r.u64("reply_delay_ns");
    r.require(m.reply_delay_ns <= kMaxWorkerReplyDelayNs, "reply_delay_ns", "beyond 1 s");
    m.counters_page = r.boolean("counters_page");
    return m;
}

WorkerStarted read_started(ByteReader& r) {
    WorkerStarted m;
    m.session_id = r.u64("session_id");
    m.errno_value = r.u32("errno");
    r.require(m.errno_value < 4096, "errno", "not an errno value");
    m.message = r.string("message", kMaxMessageLength);
    m.data_path = read_data_path(r);
    m.software_provider = r.boolean("software_provider");
    m.offers_rma_pmem = r.boolean("offers_rma_pmem");
    return m;
}

} // namespace

Result<std::vector<std::uint8_t>> encode_worker_message(const WorkerMessage& message) {
    std::vector<std::uint8_t> packet;
    ByteWriter writer(packet);
    std::visit(Encoder{writer}, message);
    writer.require(packet.size() <= kMaxWorkerMessage, "worker message too large");
    if (auto done = writer.finish(); !done)
        return fail(std::move(done.error()).add_context("encoding a worker message"));
    return packet;
}

Result<WorkerMessage> decode_worker_message(std::span<const std::uint8_t> packet) {
    if (packet.size() > kMaxWorkerMessage)
        return fail(
            EPROTO,
            fmt::format("worker message of {} bytes (limit {})", packet.size(), kMaxWorkerMessage),
            ErrorSource::protocol);
    ByteReader reader(packet);
    WorkerMessage message;
    switch (static_cast<WorkerKind>(reader.u16("kind"))) {
    case WorkerKind::start:
        message = read_start(reader);
        break;
    case WorkerKind::started:
        message = read_started(reader);
        break;
    case WorkerKind::stop:
        message = WorkerStop{reader.u64("session_id")};
        break;
    case WorkerKind::stopped:
        message = WorkerStopped{reader.u64("session_id")};
        break;
    case WorkerKind::hello:
        message = WorkerHello{reader.string("version", kMaxWorkerVersionLength)};
        break;
    default:
        reader.require(false, "kind", "unknown worker message");
        break;
    }
    if (auto done = reader.finish(); !done)
        return fail(std::move(done.error()).add_context("decoding a worker message"));
    return message;
}

} // namespace rpmem::protocol
