/* Tail calls into an entry point of another module (symfix_entry, as a construct's call of
   __kmpc_omp_task or an MPI function ending a function), built at -O2 so that they are jumps:
   the entry's return address is then the call of the function that jumped, in its caller.
   See symfixture.h. */
#include "symfixture.h"

volatile int g_tail_calls;

__attribute__((noinline)) void tail_ends_with_entry(void) {
  ++g_tail_calls;
  symfix_entry(); /* SYMFIX_LINE tail_jump */
}

__attribute__((noinline)) void tail_other(void) { ++g_tail_calls; }

/* Two tail calls; the entry is reached through one of them. */
__attribute__((noinline)) void tail_chain(int x) {
  if (x > 100) {
    tail_other();
    return;
  }
  tail_ends_with_entry();
}

int main(int argc, char** argv) {
  (void)argv;
  tail_ends_with_entry(); /* SYMFIX_LINE tail_caller */
  symfix_report("RA", "tail_direct", symfix_entry_return_address());
  tail_chain(argc); /* SYMFIX_LINE tail_chain_caller */
  symfix_report("RA", "tail_chain", symfix_entry_return_address());
  symfix_entry(); /* SYMFIX_LINE direct_call */
  symfix_report("RA", "direct", symfix_entry_return_address());
  symfix_report("FN", "tail_function", (const void*)&tail_ends_with_entry);
  return 0;
}
