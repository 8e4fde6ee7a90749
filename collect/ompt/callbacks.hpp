// The OMPT callbacks, declared so unit tests can feed them synthetic event sequences without an
// OpenMP runtime (the omptest approach). Only ompt_tool.cpp registers them with a runtime.
#pragma once
#include <omp-tools.h>
#include <stdint.h>

namespace scalea::collect::ompt {

void on_thread_begin(ompt_thread_t type, ompt_data_t* thread_data);
void on_thread_end(ompt_data_t* thread_data);
void on_parallel_begin(ompt_data_t* encountering_task, const ompt_frame_t* frame,
                       ompt_data_t* parallel_data, unsigned requested, int flags,
                       const void* codeptr);
void on_parallel_end(ompt_data_t* parallel_data, ompt_data_t* encountering_task, int flags,
                     const void* codeptr);
void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data,
                      ompt_data_t* task_data, unsigned actual_parallelism, unsigned index,
                      int flags);
void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                    ompt_data_t* parallel_data, ompt_data_t* task_data, const void* codeptr);
void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                         ompt_data_t* parallel_data, ompt_data_t* task_data, const void* codeptr);
void on_reduction(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                  ompt_data_t* parallel_data, ompt_data_t* task_data, const void* codeptr);
void on_work(ompt_work_t wstype, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data,
             ompt_data_t* task_data, uint64_t count, const void* codeptr);
void on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data, ompt_data_t* task_data,
               const void* codeptr);
void on_dispatch(ompt_data_t* parallel_data, ompt_data_t* task_data, ompt_dispatch_t kind,
                 ompt_data_t instance);
void on_mutex_acquire(ompt_mutex_t kind, unsigned hint, unsigned impl, ompt_wait_id_t wait_id,
                      const void* codeptr);
void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void* codeptr);
void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void* codeptr);
void on_nest_lock(ompt_scope_endpoint_t endpoint, ompt_wait_id_t wait_id, const void* codeptr);
void on_flush(ompt_data_t* thread_data, const void* codeptr);
void on_cancel(ompt_data_t* task_data, int flags, const void* codeptr);
void on_task_create(ompt_data_t* encountering_task, const ompt_frame_t* frame,
                    ompt_data_t* new_task, int flags, int has_dependences, const void* codeptr);
void on_task_schedule(ompt_data_t* prior, ompt_task_status_t status, ompt_data_t* next);

// The caller of an OpenMP routine from a backtrace taken inside one of its callbacks (innermost
// first): the first frame after the runtime's frames ([runtime_lo, runtime_hi)). Frames before
// them are the tool's and whatever wraps backtrace() (a sanitizer's interceptor). Without a
// runtime frame, the first frame outside the tool ([tool_lo, tool_hi)); `fallback` when none.
const void* caller_after_runtime(void* const* frames, int n, uintptr_t runtime_lo,
                                 uintptr_t runtime_hi, uintptr_t tool_lo, uintptr_t tool_hi,
                                 const void* fallback);

}  // namespace scalea::collect::ompt
