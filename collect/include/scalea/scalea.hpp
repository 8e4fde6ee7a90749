// scalea user-region API (C++): a scope is a region.
//   void step() { SCALEA_SCOPE("step"); ... }
#pragma once
#include "scalea/scalea.h"

namespace scalea {

class Scope {
 public:
  Scope(const char* name, const char* file, int line, const char* function) : name_(name) {
    scalea_region_begin_loc(name, file, line, function);
  }
  ~Scope() { scalea_region_end(name_); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  const char* name_;
};

}  // namespace scalea

#define SCALEA_CONCAT_INNER(a, b) a##b
#define SCALEA_CONCAT(a, b) SCALEA_CONCAT_INNER(a, b)
#define SCALEA_SCOPE(name) \
  ::scalea::Scope SCALEA_CONCAT(scalea_scope_, __LINE__)((name), __FILE__, __LINE__, __func__)
