/* scalea user-region API (C). Link libscalea-omp.so (CMake: find_package(scalea), target
 * scalea::scalea). All calls are cheap, thread-safe, and do nothing when the tool is disabled.
 *
 *   SCALEA_REGION_BEGIN("solve");   ...   SCALEA_REGION_END("solve");
 *
 * Regions must nest properly per thread; end takes the same name as begin. The macros capture the
 * source file, line and function of the begin call. scalea_measure_disable()/enable() switch
 * recording off and on for the whole process (the SCALEA paper's SIS "measure" directives): regions
 * begun while recording is off are not recorded, nor is anything inside them.
 */
#ifndef SCALEA_H
#define SCALEA_H

#ifdef __cplusplus
extern "C" {
#endif

void scalea_region_begin_loc(const char* name, const char* file, int line, const char* function);
void scalea_region_end(const char* name);
void scalea_measure_enable(void);
void scalea_measure_disable(void);
/* 1 when the tool is recording, 0 when it is disabled or switched off. */
int scalea_measure_enabled(void);

#define SCALEA_REGION_BEGIN(name) scalea_region_begin_loc((name), __FILE__, __LINE__, __func__)
#define SCALEA_REGION_END(name) scalea_region_end(name)

#ifdef __cplusplus
}
#endif
#endif
