// The CLIPS C API, wrapped for C++ (Debian's headers have no extern "C" guards).
// Include only from .cpp files: the CLIPS headers define many macros.
#pragma once

extern "C" {
#include <clips/clips.h>
}
