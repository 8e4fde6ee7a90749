// C++ part of the symbols fixture (linked into the shared library): a qualified, mangled name.
#include "symfixture.h"

namespace symfix {
struct Widget {
  static int scaled(int value);
};

int Widget::scaled(int value) { /* SYMFIX_LINE cpp_method */
  return value * 2;
}
}  // namespace symfix

extern "C" void symfix_report_cpp(void) {
  symfix_report("FN", "cpp_method", reinterpret_cast<const void*>(&symfix::Widget::scaled));
}
