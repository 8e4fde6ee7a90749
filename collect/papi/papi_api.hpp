// PAPI reached through dlopen, so that a process loads libpapi (and libpfm below it) only when it
// measures PAPI events: loading and relocating the two costs about 1 ms per process, and
// PAPI_library_init 3-4 ms more (docs/performance.md, "Start-up and exit cost"). The prototypes
// come from papi.h, so a function whose signature changes fails to compile here, not at run time.
#pragma once
#include <papi.h>

#include <string>

namespace scalea::collect::counters {

// Every PAPI function the collector calls.
// clang-format off
#define SCALEA_PAPI_FUNCTIONS(X)    \
  X(PAPI_library_init)              \
  X(PAPI_thread_init)               \
  X(PAPI_strerror)                  \
  X(PAPI_num_components)            \
  X(PAPI_get_component_info)        \
  X(PAPI_enum_event)                \
  X(PAPI_get_event_info)            \
  X(PAPI_event_name_to_code)        \
  X(PAPI_create_eventset)           \
  X(PAPI_assign_eventset_component) \
  X(PAPI_set_multiplex)             \
  X(PAPI_multiplex_init)            \
  X(PAPI_add_event)                 \
  X(PAPI_start)                     \
  X(PAPI_stop)                      \
  X(PAPI_read)                      \
  X(PAPI_cleanup_eventset)          \
  X(PAPI_destroy_eventset)
// clang-format on

struct PapiApi {
#define SCALEA_PAPI_POINTER(f) decltype(&::f) f = nullptr;
  SCALEA_PAPI_FUNCTIONS(SCALEA_PAPI_POINTER)
#undef SCALEA_PAPI_POINTER
};

// Loads the library the build was configured with (SCALEA_PAPI_SONAME) once; null with the
// reason in `why` when it or one of the functions is missing. Thread-safe.
const PapiApi* load_papi(std::string& why);

}  // namespace scalea::collect::counters
