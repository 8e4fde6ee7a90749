/* ompt_trace.c -- a debugging OMPT tool: prints the thread-level event order of a run.
 *
 * Used to find out in which order a runtime reports the events scalea's adapter must handle
 * (docs/architecture.md, "OMPT event orders"); not part of the measurement. Each thread logs into
 * its own buffer (no locks on the event path) and everything is printed at exit, sorted by time:
 *
 *   OMP_TOOL_LIBRARIES=$PWD/libscalea-ompt-trace.so OMPT_TRACE_OUT=trace.txt ./program
 *
 * Each line: time_ns thread event fields. Parallel regions and implicit tasks get small ids in the
 * order they begin (P<n>, T<n>); an implicit task's end names the region its begin belonged to.
 * Parallel regions and implicit tasks end their lines with the runtime's flags (`flags F`, hex:
 * ompt_parallel_league 0x40000000, ompt_task_initial 0x1, ompt_task_implicit 0x2); the
 * program's own initial task (outside any league) is not logged. Worksharing constructs log
 * `work begin|end type W count N code C`.
 */
#include <omp-tools.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kMaxThreads = 1024, kMaxEvents = 1 << 20 };

typedef struct {
  uint64_t when;
  uint32_t thread;
  uint16_t event, endpoint;
  uint32_t flags;
  uint64_t a, b, c, d;
} Rec;

typedef struct {
  Rec* recs;
  size_t n;
  uint32_t id;
} Buf;

static Buf g_bufs[kMaxThreads];
static atomic_uint g_threads, g_parallel_ids, g_task_ids;
static atomic_ulong g_dropped; /* events beyond a buffer or beyond kMaxThreads threads */
static _Thread_local Buf* t_buf;
static uint64_t g_t0;

enum { E_THREAD, E_PAR_BEGIN, E_PAR_END, E_IMPLICIT, E_SYNC, E_WAIT, E_WORK };
static const char* kNames[] = {"thread_begin", "parallel_begin", "parallel_end", "implicit_task",
                               "sync_region",  "sync_wait",      "work"};

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static Buf* buf(void) {
  if (!t_buf) {
    unsigned i = atomic_fetch_add(&g_threads, 1);
    if (i >= kMaxThreads) return NULL;
    t_buf = &g_bufs[i];
    t_buf->id = i;
    t_buf->recs = calloc(kMaxEvents, sizeof(Rec));
  }
  return t_buf->recs ? t_buf : NULL;
}

static void log_flagged(int event, int endpoint, uint32_t flags, uint64_t a, uint64_t b, uint64_t c,
                        uint64_t d) {
  Buf* bf = buf();
  if (!bf || bf->n >= kMaxEvents) {
    atomic_fetch_add(&g_dropped, 1);
    return;
  }
  Rec* r = &bf->recs[bf->n++];
  r->when = now_ns() - g_t0;
  r->thread = bf->id;
  r->event = (uint16_t)event;
  r->endpoint = (uint16_t)endpoint;
  r->flags = flags;
  r->a = a, r->b = b, r->c = c, r->d = d;
}

static void log_event(int event, int endpoint, uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  log_flagged(event, endpoint, 0, a, b, c, d);
}

static void on_thread_begin(ompt_thread_t type, ompt_data_t* d) {
  (void)d;
  log_event(E_THREAD, 0, (uint64_t)type, 0, 0, 0);
}

static void on_parallel_begin(ompt_data_t* task, const ompt_frame_t* f, ompt_data_t* par,
                              unsigned requested, int flags, const void* code) {
  (void)f;
  par->value = atomic_fetch_add(&g_parallel_ids, 1) + 1;
  log_flagged(E_PAR_BEGIN, 0, (uint32_t)flags, par->value, task ? task->value >> 32 : 0, requested,
              (uint64_t)code);
}

static void on_parallel_end(ompt_data_t* par, ompt_data_t* task, int flags, const void* code) {
  (void)task, (void)code;
  log_flagged(E_PAR_END, 0, (uint32_t)flags, par ? par->value : 0, 0, 0, 0);
}

/* task_data->value: task id in the low 32 bits, its region's id in the high 32 bits. */
static void on_implicit_task(ompt_scope_endpoint_t ep, ompt_data_t* par, ompt_data_t* task,
                             unsigned actual, unsigned index, int flags) {
  /* The program's initial task has no parallel region (libomp 14) or one this tool did not see
   * begin (no id); a league's initial tasks (one per team) have the league's. An end comes with no
   * parallel data: the task's own says whether its begin was logged. */
  if (flags & ompt_task_initial) {
    if (ep == ompt_scope_begin ? !(par && par->value) : !task->value) return;
  }
  if (ep == ompt_scope_begin)
    task->value = (par ? par->value << 32 : 0) | (atomic_fetch_add(&g_task_ids, 1) + 1);
  log_flagged(E_IMPLICIT, ep, (uint32_t)flags, task->value >> 32, task->value & 0xffffffffu, actual,
              index);
}

static void on_work(ompt_work_t type, ompt_scope_endpoint_t ep, ompt_data_t* par, ompt_data_t* task,
                    uint64_t count, const void* code) {
  (void)task;
  log_event(E_WORK, ep, par ? par->value : 0, (uint64_t)type, count, (uint64_t)code);
}

static void on_sync(ompt_sync_region_t kind, ompt_scope_endpoint_t ep, ompt_data_t* par,
                    ompt_data_t* task, const void* code) {
  log_event(E_SYNC, ep, par ? par->value : 0, task ? task->value >> 32 : 0, kind, (uint64_t)code);
}

static void on_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t ep, ompt_data_t* par,
                    ompt_data_t* task, const void* code) {
  log_event(E_WAIT, ep, par ? par->value : 0, task ? task->value >> 32 : 0, kind, (uint64_t)code);
}

static int by_time(const void* x, const void* y) {
  const Rec *a = x, *b = y;
  return a->when < b->when ? -1 : a->when > b->when;
}

static void finalize(ompt_data_t* d) {
  (void)d;
  const char* path = getenv("OMPT_TRACE_OUT");
  FILE* out = path ? fopen(path, "w") : stderr;
  if (!out) out = stderr;
  size_t total = 0;
  unsigned n = atomic_load(&g_threads);
  if (n > kMaxThreads) n = kMaxThreads;
  for (unsigned i = 0; i < n; ++i) total += g_bufs[i].n;
  Rec* all = malloc(total * sizeof(Rec) + 1);
  size_t k = 0;
  for (unsigned i = 0; i < n; ++i) {
    memcpy(all + k, g_bufs[i].recs, g_bufs[i].n * sizeof(Rec));
    k += g_bufs[i].n;
  }
  qsort(all, total, sizeof(Rec), by_time);
  for (size_t i = 0; i < total; ++i) {
    const Rec* r = &all[i];
    const char* ep = r->endpoint == ompt_scope_begin ? "begin" : r->endpoint == ompt_scope_end ? "end" : "";
    switch (r->event) {
      case E_PAR_BEGIN:
        fprintf(out, "%llu t%u %s P%llu in P%llu requested %llu code %llx flags %x\n",
                (unsigned long long)r->when, r->thread, kNames[r->event], (unsigned long long)r->a,
                (unsigned long long)r->b, (unsigned long long)r->c, (unsigned long long)r->d,
                r->flags);
        break;
      case E_PAR_END:
        fprintf(out, "%llu t%u %s P%llu flags %x\n", (unsigned long long)r->when, r->thread,
                kNames[r->event], (unsigned long long)r->a, r->flags);
        break;
      case E_IMPLICIT:
        fprintf(out, "%llu t%u %s %s P%llu T%llu actual %llu index %llu flags %x\n",
                (unsigned long long)r->when, r->thread, kNames[r->event], ep,
                (unsigned long long)r->a, (unsigned long long)r->b, (unsigned long long)r->c,
                (unsigned long long)r->d, r->flags);
        break;
      case E_WORK:
        fprintf(out, "%llu t%u %s %s type %llu count %llu code %llx\n", (unsigned long long)r->when,
                r->thread, kNames[r->event], ep, (unsigned long long)r->b, (unsigned long long)r->c,
                (unsigned long long)r->d);
        break;
      case E_SYNC:
      case E_WAIT:
        fprintf(out, "%llu t%u %s %s kind %llu P%llu task-of P%llu code %llx\n",
                (unsigned long long)r->when, r->thread, kNames[r->event], ep,
                (unsigned long long)r->c, (unsigned long long)r->a, (unsigned long long)r->b,
                (unsigned long long)r->d);
        break;
      default:
        fprintf(out, "%llu t%u %s P%llu\n", (unsigned long long)r->when, r->thread,
                kNames[r->event], (unsigned long long)r->a);
    }
  }
  if (atomic_load(&g_dropped))
    fprintf(stderr, "ompt_trace: %lu events dropped (more than %d threads or %d events per thread): "
            "the trace is incomplete\n", (unsigned long)atomic_load(&g_dropped), kMaxThreads, kMaxEvents);
  if (out != stderr) fclose(out);
  free(all);
}

static int initialize(ompt_function_lookup_t lookup, int dev, ompt_data_t* d) {
  (void)dev, (void)d;
  ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
  g_t0 = now_ns();
  set(ompt_callback_thread_begin, (ompt_callback_t)on_thread_begin);
  set(ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin);
  set(ompt_callback_parallel_end, (ompt_callback_t)on_parallel_end);
  set(ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task);
  set(ompt_callback_sync_region, (ompt_callback_t)on_sync);
  set(ompt_callback_sync_region_wait, (ompt_callback_t)on_wait);
  set(ompt_callback_work, (ompt_callback_t)on_work);
  return 1;
}

ompt_start_tool_result_t* ompt_start_tool(unsigned version, const char* runtime) {
  (void)version, (void)runtime;
  static ompt_start_tool_result_t result = {initialize, finalize, {0}};
  return &result;
}
