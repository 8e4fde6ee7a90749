// The recorder's clock in the unit tests (built with SCALEA_FAKE_CLOCK): the test sets it.
#pragma once
#include <cstdint>

#include "core/clock.hpp"

namespace scalea::collect {

inline void at(uint64_t t) { g_fake_now.store(t); }

}  // namespace scalea::collect
