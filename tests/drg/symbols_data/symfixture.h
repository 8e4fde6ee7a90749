/* Fixture for scalea_symbols_test. Lines the test expects are marked with a SYMFIX_LINE comment;
   the test finds their numbers by scanning these sources, so edits here cannot break it. */
#ifndef SYMFIXTURE_H
#define SYMFIXTURE_H
#ifdef __cplusplus
extern "C" {
#endif

/* Prints "<kind> <marker> <hex offset> <module path>" for `addr`, where offset = addr - dlpi_addr
   of the object containing it: the same (module, offset) the collector stores. kind is FN for a
   function entry, RA for a return address. */
void symfix_report(const char* kind, const char* marker, const void* addr);
void symfix_report_lib(void);
void symfix_report_cpp(void);
void symfix_entry(void);
const void* symfix_entry_return_address(void);

#ifdef __cplusplus
}
#endif
#endif
