/*
 * libscalea-noop-tool.so -- the benchmark floor for OMPT tools.
 *
 * Registers, with empty bodies, the callbacks a profiler such as
 * libscalea-omp.so needs. Each callback does exactly one thing: a plain
 * increment of a per-thread counter. Running a program with
 *   OMP_TOOL_LIBRARIES=/path/libscalea-noop-tool.so
 * therefore measures what the OpenMP runtime itself costs once a tool is
 * attached (dispatching the callback, building the arguments, the indirect
 * call), so a real tool can be judged by its cost *above* this floor.
 *
 * Environment:
 *   NOOP_TOOL_COUNT_FILE  at finalize, append one line with the total number
 *                         of callback invocations (all threads) to this file.
 *   NOOP_TOOL_VERBOSE     if set and non-empty (not "0"), print to stderr which
 *                         callbacks the runtime granted, and the total.
 *
 * The counters live in a static array of cache-line-sized slots; a thread
 * claims a slot on its first callback (normally thread_begin) and keeps a
 * pointer to it in thread-local storage. The slots outlive the threads, so
 * finalize can sum them no matter in which order the runtime ends its
 * threads. Threads beyond NOOP_MAX_THREADS share one atomic overflow slot.
 */
#include <omp-tools.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOOP_MAX_THREADS 1024

typedef struct {
  _Alignas(64) uint64_t n;
} noop_slot_t;

static noop_slot_t noop_slots[NOOP_MAX_THREADS];
static atomic_uint noop_next_slot;
static _Atomic uint64_t noop_overflow; /* threads beyond NOOP_MAX_THREADS */
static _Thread_local uint64_t *noop_my_counter;

static uint64_t *noop_claim_slot(void) {
  unsigned i = atomic_fetch_add_explicit(&noop_next_slot, 1, memory_order_relaxed);
  noop_my_counter = (i < NOOP_MAX_THREADS) ? &noop_slots[i].n : NULL;
  return noop_my_counter;
}

static inline void noop_hit(void) {
  uint64_t *c = noop_my_counter;
  if (__builtin_expect(c != NULL, 1)) {
    ++*c; /* the floor's only work */
    return;
  }
  c = noop_claim_slot();
  if (c)
    ++*c;
  else
    atomic_fetch_add_explicit(&noop_overflow, 1, memory_order_relaxed);
}

/* ---- the callbacks: empty apart from the count ------------------------- */

static void cb_thread_begin(ompt_thread_t type, ompt_data_t *thread_data) {
  (void)type; (void)thread_data;
  noop_hit();
}
static void cb_thread_end(ompt_data_t *thread_data) {
  (void)thread_data;
  noop_hit();
}
static void cb_parallel_begin(ompt_data_t *enc_task, const ompt_frame_t *enc_frame,
                              ompt_data_t *parallel, unsigned int requested,
                              int flags, const void *codeptr_ra) {
  (void)enc_task; (void)enc_frame; (void)parallel; (void)requested;
  (void)flags; (void)codeptr_ra;
  noop_hit();
}
static void cb_parallel_end(ompt_data_t *parallel, ompt_data_t *enc_task, int flags,
                            const void *codeptr_ra) {
  (void)parallel; (void)enc_task; (void)flags; (void)codeptr_ra;
  noop_hit();
}
static void cb_implicit_task(ompt_scope_endpoint_t ep, ompt_data_t *parallel,
                             ompt_data_t *task, unsigned int actual, unsigned int index,
                             int flags) {
  (void)ep; (void)parallel; (void)task; (void)actual; (void)index; (void)flags;
  noop_hit();
}
static void cb_task_create(ompt_data_t *enc_task, const ompt_frame_t *enc_frame,
                           ompt_data_t *new_task, int flags, int has_deps,
                           const void *codeptr_ra) {
  (void)enc_task; (void)enc_frame; (void)new_task; (void)flags; (void)has_deps;
  (void)codeptr_ra;
  noop_hit();
}
static void cb_task_schedule(ompt_data_t *prior, ompt_task_status_t status,
                             ompt_data_t *next) {
  (void)prior; (void)status; (void)next;
  noop_hit();
}
/* sync_region, sync_region_wait and reduction share one signature. */
static void cb_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t ep,
                           ompt_data_t *parallel, ompt_data_t *task,
                           const void *codeptr_ra) {
  (void)kind; (void)ep; (void)parallel; (void)task; (void)codeptr_ra;
  noop_hit();
}
static void cb_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t ep,
                                ompt_data_t *parallel, ompt_data_t *task,
                                const void *codeptr_ra) {
  (void)kind; (void)ep; (void)parallel; (void)task; (void)codeptr_ra;
  noop_hit();
}
static void cb_reduction(ompt_sync_region_t kind, ompt_scope_endpoint_t ep,
                         ompt_data_t *parallel, ompt_data_t *task,
                         const void *codeptr_ra) {
  (void)kind; (void)ep; (void)parallel; (void)task; (void)codeptr_ra;
  noop_hit();
}
static void cb_work(ompt_work_t wstype, ompt_scope_endpoint_t ep, ompt_data_t *parallel,
                    ompt_data_t *task, uint64_t count, const void *codeptr_ra) {
  (void)wstype; (void)ep; (void)parallel; (void)task; (void)count; (void)codeptr_ra;
  noop_hit();
}
static void cb_masked(ompt_scope_endpoint_t ep, ompt_data_t *parallel, ompt_data_t *task,
                      const void *codeptr_ra) {
  (void)ep; (void)parallel; (void)task; (void)codeptr_ra;
  noop_hit();
}
/* mutex_acquire and lock_init share one signature. */
static void cb_mutex_acquire(ompt_mutex_t kind, unsigned int hint, unsigned int impl,
                             ompt_wait_id_t wait_id, const void *codeptr_ra) {
  (void)kind; (void)hint; (void)impl; (void)wait_id; (void)codeptr_ra;
  noop_hit();
}
static void cb_lock_init(ompt_mutex_t kind, unsigned int hint, unsigned int impl,
                         ompt_wait_id_t wait_id, const void *codeptr_ra) {
  (void)kind; (void)hint; (void)impl; (void)wait_id; (void)codeptr_ra;
  noop_hit();
}
/* mutex_acquired, mutex_released and lock_destroy share one signature. */
static void cb_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id,
                              const void *codeptr_ra) {
  (void)kind; (void)wait_id; (void)codeptr_ra;
  noop_hit();
}
static void cb_mutex_released(ompt_mutex_t kind, ompt_wait_id_t wait_id,
                              const void *codeptr_ra) {
  (void)kind; (void)wait_id; (void)codeptr_ra;
  noop_hit();
}
static void cb_lock_destroy(ompt_mutex_t kind, ompt_wait_id_t wait_id,
                            const void *codeptr_ra) {
  (void)kind; (void)wait_id; (void)codeptr_ra;
  noop_hit();
}
static void cb_nest_lock(ompt_scope_endpoint_t ep, ompt_wait_id_t wait_id,
                         const void *codeptr_ra) {
  (void)ep; (void)wait_id; (void)codeptr_ra;
  noop_hit();
}
static void cb_dispatch(ompt_data_t *parallel, ompt_data_t *task, ompt_dispatch_t kind,
                        ompt_data_t instance) {
  (void)parallel; (void)task; (void)kind; (void)instance;
  noop_hit();
}
static void cb_flush(ompt_data_t *thread_data, const void *codeptr_ra) {
  (void)thread_data; (void)codeptr_ra;
  noop_hit();
}

/* ---- registration ------------------------------------------------------- */

static int noop_verbose;

static const char *noop_set_result_name(ompt_set_result_t r) {
  switch (r) {
  case ompt_set_error: return "error";
  case ompt_set_never: return "never";
  case ompt_set_impossible: return "impossible";
  case ompt_set_sometimes: return "sometimes";
  case ompt_set_sometimes_paired: return "sometimes_paired";
  case ompt_set_always: return "always";
  }
  return "?";
}

static int noop_initialize(ompt_function_lookup_t lookup, int initial_device_num,
                           ompt_data_t *tool_data) {
  (void)initial_device_num; (void)tool_data;
  ompt_set_callback_t set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
  if (!set_callback)
    return 0; /* cannot register anything: stay inactive */

#define NOOP_REGISTER(event, fn)                                                    \
  do {                                                                              \
    ompt_set_result_t r_ = set_callback(event, (ompt_callback_t)(fn));              \
    if (noop_verbose)                                                               \
      fprintf(stderr, "noop-tool: %-28s %s\n", #event, noop_set_result_name(r_));   \
  } while (0)

  NOOP_REGISTER(ompt_callback_thread_begin, cb_thread_begin);
  NOOP_REGISTER(ompt_callback_thread_end, cb_thread_end);
  NOOP_REGISTER(ompt_callback_parallel_begin, cb_parallel_begin);
  NOOP_REGISTER(ompt_callback_parallel_end, cb_parallel_end);
  NOOP_REGISTER(ompt_callback_implicit_task, cb_implicit_task);
  NOOP_REGISTER(ompt_callback_task_create, cb_task_create);
  NOOP_REGISTER(ompt_callback_task_schedule, cb_task_schedule);
  NOOP_REGISTER(ompt_callback_sync_region, cb_sync_region);
  NOOP_REGISTER(ompt_callback_sync_region_wait, cb_sync_region_wait);
  NOOP_REGISTER(ompt_callback_work, cb_work);
  NOOP_REGISTER(ompt_callback_masked, cb_masked);
  NOOP_REGISTER(ompt_callback_mutex_acquire, cb_mutex_acquire);
  NOOP_REGISTER(ompt_callback_mutex_acquired, cb_mutex_acquired);
  NOOP_REGISTER(ompt_callback_mutex_released, cb_mutex_released);
  NOOP_REGISTER(ompt_callback_dispatch, cb_dispatch);
  NOOP_REGISTER(ompt_callback_reduction, cb_reduction);
  NOOP_REGISTER(ompt_callback_flush, cb_flush);
  NOOP_REGISTER(ompt_callback_nest_lock, cb_nest_lock);
  NOOP_REGISTER(ompt_callback_lock_init, cb_lock_init);
  NOOP_REGISTER(ompt_callback_lock_destroy, cb_lock_destroy);
#undef NOOP_REGISTER
  return 1; /* non-zero: keep the tool active */
}

static void noop_finalize(ompt_data_t *tool_data) {
  (void)tool_data;
  uint64_t total = atomic_load_explicit(&noop_overflow, memory_order_relaxed);
  unsigned used = atomic_load_explicit(&noop_next_slot, memory_order_relaxed);
  if (used > NOOP_MAX_THREADS)
    used = NOOP_MAX_THREADS;
  for (unsigned i = 0; i < used; ++i)
    total += noop_slots[i].n;

  if (noop_verbose)
    fprintf(stderr, "noop-tool: %llu callbacks on %u threads\n",
            (unsigned long long)total, used);

  const char *path = getenv("NOOP_TOOL_COUNT_FILE");
  if (path && *path) {
    FILE *f = fopen(path, "a");
    if (!f) {
      fprintf(stderr, "noop-tool: cannot open NOOP_TOOL_COUNT_FILE '%s'\n", path);
      return;
    }
    fprintf(f, "%llu\n", (unsigned long long)total);
    fclose(f);
  }
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
                                          const char *runtime_version) {
  static ompt_start_tool_result_t result = {noop_initialize, noop_finalize, {0}};
  const char *v = getenv("NOOP_TOOL_VERBOSE");
  noop_verbose = v && *v && strcmp(v, "0") != 0;
  if (noop_verbose)
    fprintf(stderr, "noop-tool: runtime '%s', OpenMP version %u\n",
            runtime_version ? runtime_version : "?", omp_version);
  return &result;
}
