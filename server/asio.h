// Boost.Asio for the daemon. Boost 1.74's awaitable.hpp uses std::exchange without
// including <utility>, which fails under C++20 with GCC 12; include it first, always.
#pragma once

// clang-format off
#include <utility>
#include <boost/asio.hpp>
// clang-format on
