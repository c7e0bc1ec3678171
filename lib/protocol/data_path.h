// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <string>

#include "protocol/byte_reader.h"
#include "protocol/byte_writer.h"
#include "protocol/preferences.h"
#include "protocol/session_token.h"

namespace rpmem::protocol {

// Everything the initiator's data path needs to reach an opened pool.
struct DataPath {
    std::string provider;           // libfabric provider name, e.g. "tcp"
    std::string host;               // fabric address of the target's listener (name or IP)
    std::uint16_t port = 0;         // its port
    std::uint64_t remote_base = 0;  // address (or offset) of the pool in the remote region
    std::uint64_t remote_key = 0;   // the region's key
    bool offset_addressing = false; // true when the provider lacks FI_MR_VIRT_ADDR
    std::uint32_t lanes = 0;        // granted
    PersistMethod persist_method = PersistMethod::any; // chosen
    std::uint32_t inline_buffer_size = 0; // bytes a lane may send inline with a persist
    std::uint64_t pool_size = 0;          // the remote pool's real size
    SessionToken token{};

    friend bool operator==(const DataPath&, const DataPath&) = default;
};

// Its one wire layout, shared by the create/open replies and rpmemd's worker packets:
//   str provider, str host, u16 port, u64 remote_base, u64 remote_key, u8 offset_addressing,
//   u32 lanes, u8 persist_method, u32 inline_buffer_size, u64 pool_size, token[32]
void write_data_path(ByteWriter& w, const DataPath& path);
DataPath read_data_path(ByteReader& r);

} // namespace rpmem::protocol
