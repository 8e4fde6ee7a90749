// The OMPT callbacks, declared so unit tests can feed them synthetic event sequences without an
// OpenMP runtime (the omptest approach). Only ompt_tool.cpp registers them with a runtime.
#pragma once
#include <omp-tools.h>

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

}  // namespace scalea::collect::ompt
