/* Executable part of the symbols fixture, built both as PIE and non-PIE; see symfixture.h. */
#include "symfixture.h"

static int g_counter;
static void* g_main_return_address;

__attribute__((noinline)) static int main_static_function(int x) { /* SYMFIX_LINE main_static */
  return x + 1;
}

__attribute__((noinline)) static void main_record_return_address(void) {
  g_main_return_address = __builtin_return_address(0);
}

int main(void) {
  main_record_return_address(); /* SYMFIX_LINE main_call_site */
  g_counter += main_static_function(g_counter);
  symfix_report("FN", "main_static", (const void*)&main_static_function);
  symfix_report("RA", "main_call_site", g_main_return_address);
  symfix_report_lib();
  symfix_report_cpp();
  return 0;
}
