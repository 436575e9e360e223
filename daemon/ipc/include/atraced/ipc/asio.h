// The one way to include Boost.Asio in atraced. Boost 1.74's awaitable.hpp uses
// std::exchange without including <utility>, which g++ 12 in C++20 mode rejects
// ("'exchange' is not a member of 'std'"); including <utility> first fixes it.
#pragma once

#include <utility>

#include <boost/asio.hpp>

namespace atraced {
namespace asio = boost::asio;
using LocalSocket = asio::local::stream_protocol::socket;
using LocalAcceptor = asio::local::stream_protocol::acceptor;
}  // namespace atraced
