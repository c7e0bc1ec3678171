// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/data_path.h"

#include "protocol/message_limits.h"

namespace rpmem::protocol {

void write_data_path(ByteWriter& w, const DataPath& d) {
    w.string(d.provider, "provider", kMaxProviderNameLength);
    w.string(d.host, "host", kMaxHostLength);
    w.u16(d.port);
    w.u64(d.remote_base);
    w.u64(d.remote_key);
    w.boolean(d.offset_addressing);
    w.u32(d.lanes);
    w.u8(static_cast<std::uint8_t>(d.persist_method));
    w.u32(d.inline_buffer_size);
    w.u64(d.pool_size);
    w.bytes(d.token);
}

DataPath read_data_path(ByteReader& r) {
    DataPath d;
    d.provider = r.string("provider", kMaxProviderNameLength);
    d.host = r.string("host", kMaxHostLength);
    d.port = r.u16("port");
    d.remote_base = r.u64("remote_base");
    d.remote_key = r.u64("remote_key");
    d.offset_addressing = r.boolean("offset_addressing");
    d.lanes = r.u32("lanes");
    d.persist_method = read_persist_method(r);
    d.inline_buffer_size = r.u32("inline_buffer_size");
    d.pool_size = r.u64("pool_size");
    r.bytes(d.token, "token");
    return d;
}

} // namespace rpmem::protocol
