#include "papi_api.hpp"

#include <dlfcn.h>

#include <mutex>

#ifndef SCALEA_PAPI_SONAME
#error "SCALEA_PAPI_SONAME (the PAPI library's soname) is set by collect/CMakeLists.txt"
#endif

namespace scalea::collect::counters {

const PapiApi* load_papi(std::string& why) {
  static std::once_flag once;
  static PapiApi api;
  static const PapiApi* loaded = nullptr;
  static std::string problem;
  std::call_once(once, [] {
    // RTLD_LOCAL: PAPI's symbols stay out of the program's namespace, as if it were not loaded.
    void* lib = dlopen(SCALEA_PAPI_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      problem = std::string("PAPI not loaded (") + (e ? e : SCALEA_PAPI_SONAME) + ")";
      return;
    }
#define SCALEA_PAPI_RESOLVE(f)                                                          \
  api.f = reinterpret_cast<decltype(api.f)>(dlsym(lib, #f));                            \
  if (!api.f) {                                                                         \
    problem = std::string("PAPI not loaded (" SCALEA_PAPI_SONAME " lacks ") + #f + ")"; \
    return;                                                                             \
  }
    SCALEA_PAPI_FUNCTIONS(SCALEA_PAPI_RESOLVE)
#undef SCALEA_PAPI_RESOLVE
    loaded = &api;  // never closed: threads may read counters while the process exits
  });
  if (!loaded) why = problem;
  return loaded;
}

}  // namespace scalea::collect::counters
