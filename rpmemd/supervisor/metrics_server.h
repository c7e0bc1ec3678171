// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/error.h"

namespace rpmem::daemon {

// Serves GET /metrics over plain HTTP/1.1 on one address (metrics-listen): the text the
// `render` callback makes at each scrape (the Prometheus text format, see metrics_text.h).
// Anything else gets 404 or 405. One thread of its own; at most kMaxConnections connections at
// once, each with a 5 s deadline and an 8 KiB request limit, so a slow or hostile scraper holds
// at most that. Meant for a local address: it has no authentication of its own.
//
// Thread-safe; destroying it (or stop()) closes the listener and every connection and joins
// the thread.
class MetricsServer {
public:
    static constexpr std::size_t kMaxConnections = 8;

    static Result<std::unique_ptr<MetricsServer>> start(const std::string& host, std::uint16_t port,
                                                        std::function<std::string()> render);
    ~MetricsServer();
    MetricsServer(const MetricsServer&) = delete;
    MetricsServer& operator=(const MetricsServer&) = delete;

    std::uint16_t port() const noexcept;
    void stop();

    class Impl;

private:
    explicit MetricsServer(std::shared_ptr<Impl> impl);
    std::shared_ptr<Impl> impl_;
};

} // namespace rpmem::daemon
