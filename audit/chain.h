// The audit log's line format and its SHA-256 chain (docs/AUDIT.md). See /work/brief9.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace warden::audit {}  // namespace warden::audit
