// SPDX-License-Identifier: BSD-3-Clause
#include "channel/name_resolver.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>

namespace rpmem::channel {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

// One getaddrinfo_a() request. glibc's resolver thread writes into it until the request is
// done, so it lives on the heap and is abandoned (not freed) when the wait gives up on a
// lookup that cannot be cancelled any more.
struct Lookup {
    std::string host;
    std::string service;
    addrinfo hints{};
    gaicb request{};

    ~Lookup() {
        if (request.ar_result != nullptr)
            ::freeaddrinfo(request.ar_result);
    }
};

std::vector<tcp::endpoint> endpoints_of(const addrinfo* list) {
    std::vector<tcp::endpoint> endpoints;
    for (const addrinfo* entry = list; entry != nullptr; entry = entry->ai_next) {
        tcp::endpoint endpoint;
        if (entry->ai_addrlen > endpoint.capacity())
            continue;
        std::memcpy(endpoint.data(), entry->ai_addr, entry->ai_addrlen);
        endpoint.resize(entry->ai_addrlen);
        endpoints.push_back(endpoint);
    }
    return endpoints;
}

} // namespace

Result<std::vector<tcp::endpoint>> resolve_host(const std::string& host, std::uint16_t port,
                                                Clock::time_point deadline) {
    boost::system::error_code numeric;
    auto address = asio::ip::make_address(host, numeric);
    if (!numeric)
        return std::vector<tcp::endpoint>{tcp::endpoint(address, port)};

    const auto budget =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto lookup = std::make_unique<Lookup>();
    lookup->host = host;
    lookup->service = std::to_string(port);
    lookup->hints.ai_family = AF_UNSPEC;
    lookup->hints.ai_socktype = SOCK_STREAM;
    // No AI_ADDRCONFIG: on a host (or namespace) with only loopback it would hide localhost.
    lookup->hints.ai_flags = AI_NUMERICSERV;
    lookup->request.ar_name = lookup->host.c_str();
    lookup->request.ar_service = lookup->service.c_str();
    lookup->request.ar_request = &lookup->hints;
    gaicb* requests[] = {&lookup->request};
    if (int started = ::getaddrinfo_a(GAI_NOWAIT, requests, 1, nullptr); started != 0)
        return fail(EHOSTUNREACH, fmt::format("resolving {}: {}", host, ::gai_strerror(started)));

    int status = ::gai_error(&lookup->request);
    while (status == EAI_INPROGRESS) {
        auto left = deadline - Clock::now();
        if (left <= Clock::duration::zero())
            break;
        auto seconds = std::chrono::duration_cast<std::chrono::seconds>(left);
        timespec wait{
            static_cast<time_t>(seconds.count()),
            static_cast<long>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(left - seconds).count())};
        const gaicb* waiting[] = {&lookup->request};
        (void)::gai_suspend(waiting, 1, &wait); // done, timed out or interrupted: ask again
        status = ::gai_error(&lookup->request);
    }
    if (status == EAI_INPROGRESS) {
        if (::gai_cancel(&lookup->request) == EAI_NOTCANCELED)
            (void)lookup.release(); // still in the resolver's hands; see Lookup
        return fail(ETIMEDOUT, fmt::format("resolving {}: no answer within {} ms", host,
                                           std::max<long long>(budget.count(), 0)));
    }
    if (status != 0)
        return fail(EHOSTUNREACH, fmt::format("resolving {}: {}", host, ::gai_strerror(status)));
    auto endpoints = endpoints_of(lookup->request.ar_result);
    if (endpoints.empty())
        return fail(EHOSTUNREACH, fmt::format("resolving {}: no address", host));
    return endpoints;
}

} // namespace rpmem::channel
