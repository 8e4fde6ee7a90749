/* archer-mux: runs LLVM's Archer and an OMPT tool (scalea) in one OpenMP process.
 *
 * The OpenMP runtime activates one OMPT tool. Archer tells ThreadSanitizer about OpenMP's
 * synchronization (barriers, task creation and completion, locks); without it TSan reports every
 * hand-off through the uninstrumented libomp as a race. This library, preloaded (LD_PRELOAD) into
 * a TSan-instrumented OpenMP program, is found by the runtime first (its ompt_start_tool), loads
 * Archer (ARCHER_MUX_ARCHER, default the path compiled in) and the tool the runtime would have
 * started (an ompt_start_tool elsewhere in the address space, else the first of
 * OMP_TOOL_LIBRARIES that starts), and forwards every OMPT callback to both.
 *
 * - Data: each thread, parallel region and task gets a pair of ompt_data_t (one per tool) in the
 *   runtime's data slot; each tool sees only its own. Pairs are allocated where the entity begins
 *   (thread_begin, parallel_begin, implicit_task begin, task_create) and freed after the callbacks
 *   where it ends (parallel regions: see region_push).
 * - Order: Archer's callback runs before the tool's where Archer acquires (implicit task begin,
 *   barrier end, parallel end, mutex acquired, task schedule) and after it where Archer releases
 *   (parallel begin, barrier begin, task create, dependences, mutex released), so the tool's own
 *   accesses in its callbacks are ordered by Archer's annotations like the program's are.
 * - The tool is initialized twice: first with a lookup that records its callbacks (the runtime's
 *   ompt_get_callback does not answer during initialization), then with the runtime's own lookup
 *   function (scalea takes the runtime's module from its address); its callbacks are then
 *   replaced by the forwarding ones. So the tool's initialize must be repeatable (scalea's is: it
 *   notes the runtime and registers callbacks; its experiment lists the callbacks twice), and it
 *   must look up only ompt_set_callback: inquiry functions from the runtime's lookup would return
 *   the pair, not its data (scalea looks up only ompt_set_callback).
 *   Archer gets a lookup that translates ompt_get_thread_data/parallel_info/task_info.
 * - Without TSan in the process Archer declines to start and the tool runs alone, untouched.
 * Not instrumented itself: build with plain clang -shared -fPIC. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp-tools.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ARCHER_MUX_DEFAULT_ARCHER
#define ARCHER_MUX_DEFAULT_ARCHER "libarcher.so"
#endif
#define NEVENTS 64

typedef struct {
  ompt_data_t a; /* Archer's */
  ompt_data_t s; /* the tool's */
} pair_t;

static ompt_start_tool_result_t *g_archer, *g_tool;
static ompt_function_lookup_t g_lookup;
static ompt_set_callback_t g_set_callback;
static ompt_get_thread_data_t g_get_thread_data;
static ompt_get_parallel_info_t g_get_parallel_info;
static ompt_get_task_info_t g_get_task_info;
static ompt_callback_t g_cb_a[NEVENTS], g_cb_s[NEVENTS];
static int g_verbose;

/* Creation points only: the pair of d, allocated if the slot is empty. */
static pair_t *pair_of(ompt_data_t *d) {
  pair_t *p = (pair_t *)__atomic_load_n(&d->ptr, __ATOMIC_ACQUIRE);
  if (p) return p;
  pair_t *n = (pair_t *)calloc(1, sizeof(pair_t));
  if (!n) abort();
  void *expected = NULL;
  if (__atomic_compare_exchange_n(&d->ptr, &expected, n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return n;
  free(n); /* another thread allocated it first */
  return (pair_t *)expected;
}
static void pair_free(ompt_data_t *d) {
  if (!d) return;
  void *p = __atomic_exchange_n(&d->ptr, NULL, __ATOMIC_ACQ_REL);
  free(p);
}
/* Elsewhere: what the slot holds; an empty slot shows as an empty ompt_data_t of this thread
 * (what the tool would see without this library; a value written there is dropped). */
static __thread ompt_data_t t_empty;
static ompt_data_t *side(ompt_data_t *d, int archer) {
  if (!d) return NULL;
  pair_t *p = (pair_t *)__atomic_load_n(&d->ptr, __ATOMIC_ACQUIRE);
  if (!p) {
    t_empty.value = 0;
    return &t_empty;
  }
  return archer ? &p->a : &p->s;
}
static ompt_data_t *A(ompt_data_t *d) { return side(d, 1); }
static ompt_data_t *S(ompt_data_t *d) { return side(d, 0); }

/* The parallel regions this thread is the master of, innermost last. libomp 14 may hand a
 * nested region's parallel_end a parallel_data in a team structure that another thread has
 * already reused for a new region (holding that region's pair): Archer gets the pair of the
 * region that really ends, the tool gets what the runtime hands it. */
static __thread pair_t **t_regions;
static __thread size_t t_nregions, t_capregions;
static void region_push(pair_t *p) {
  if (t_nregions == t_capregions) {
    t_capregions = t_capregions ? 2 * t_capregions : 16;
    t_regions = (pair_t **)realloc(t_regions, t_capregions * sizeof(pair_t *));
    if (!t_regions) abort();
  }
  t_regions[t_nregions++] = p;
}

#define CB(tab, ev, type) ((type)tab[ompt_callback_##ev])
/* Calls Archer's and the tool's callback for event ev, Archer first (AS) or last (SA). */
#define CALL_A(ev, type, ...) \
  do { if (g_cb_a[ompt_callback_##ev]) CB(g_cb_a, ev, type)(__VA_ARGS__); } while (0)
#define CALL_S(ev, type, ...) \
  do { if (g_cb_s[ompt_callback_##ev]) CB(g_cb_s, ev, type)(__VA_ARGS__); } while (0)

static void on_thread_begin(ompt_thread_t type, ompt_data_t *td) {
  (void)pair_of(td);
  CALL_A(thread_begin, ompt_callback_thread_begin_t, type, A(td));
  CALL_S(thread_begin, ompt_callback_thread_begin_t, type, S(td));
}
static void on_thread_end(ompt_data_t *td) {
  CALL_S(thread_end, ompt_callback_thread_end_t, S(td));
  CALL_A(thread_end, ompt_callback_thread_end_t, A(td));
  pair_free(td);
}
static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *par,
                              unsigned int req, int flags, const void *ra) {
  region_push(pair_of(par));
  CALL_S(parallel_begin, ompt_callback_parallel_begin_t, S(task), frame, S(par), req, flags, ra);
  CALL_A(parallel_begin, ompt_callback_parallel_begin_t, A(task), frame, A(par), req, flags, ra);
}
static void on_parallel_end(ompt_data_t *par, ompt_data_t *task, int flags, const void *ra) {
  pair_t *mine = t_nregions ? t_regions[--t_nregions] : NULL;
  ompt_data_t *a = mine ? &mine->a : A(par);
  CALL_A(parallel_end, ompt_callback_parallel_end_t, a, A(task), flags, ra);
  CALL_S(parallel_end, ompt_callback_parallel_end_t, S(par), S(task), flags, ra);
  if (!mine) return;
  void *expected = mine; /* empty the slot only if it still holds this region's pair */
  if (par) __atomic_compare_exchange_n(&par->ptr, &expected, NULL, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  free(mine);
}
static void on_implicit_task(ompt_scope_endpoint_t ep, ompt_data_t *par, ompt_data_t *task,
                             unsigned int n, unsigned int index, int flags) {
  if (ep == ompt_scope_end) {
    CALL_S(implicit_task, ompt_callback_implicit_task_t, ep, S(par), S(task), n, index, flags);
    CALL_A(implicit_task, ompt_callback_implicit_task_t, ep, A(par), A(task), n, index, flags);
    pair_free(task);
    if (flags & ompt_task_initial) pair_free(par);
  } else {
    (void)pair_of(task);
    if (par && (flags & ompt_task_initial)) (void)pair_of(par);
    CALL_A(implicit_task, ompt_callback_implicit_task_t, ep, A(par), A(task), n, index, flags);
    CALL_S(implicit_task, ompt_callback_implicit_task_t, ep, S(par), S(task), n, index, flags);
  }
}
/* sync_region, reduction: releases at begin (Archer last), acquires at end (Archer first). */
#define SYNC_LIKE(name)                                                                        \
  static void on_##name(ompt_sync_region_t kind, ompt_scope_endpoint_t ep, ompt_data_t *par,  \
                        ompt_data_t *task, const void *ra) {                                  \
    if (ep == ompt_scope_end) {                                                                \
      CALL_A(name, ompt_callback_sync_region_t, kind, ep, A(par), A(task), ra);                \
      CALL_S(name, ompt_callback_sync_region_t, kind, ep, S(par), S(task), ra);                \
    } else {                                                                                   \
      CALL_S(name, ompt_callback_sync_region_t, kind, ep, S(par), S(task), ra);                \
      CALL_A(name, ompt_callback_sync_region_t, kind, ep, A(par), A(task), ra);                \
    }                                                                                          \
  }
SYNC_LIKE(sync_region)
SYNC_LIKE(sync_region_wait)
SYNC_LIKE(reduction)
static void on_work(ompt_work_t wstype, ompt_scope_endpoint_t ep, ompt_data_t *par,
                    ompt_data_t *task, uint64_t count, const void *ra) {
  CALL_A(work, ompt_callback_work_t, wstype, ep, A(par), A(task), count, ra);
  CALL_S(work, ompt_callback_work_t, wstype, ep, S(par), S(task), count, ra);
}
static void on_masked(ompt_scope_endpoint_t ep, ompt_data_t *par, ompt_data_t *task,
                      const void *ra) {
  CALL_A(masked, ompt_callback_masked_t, ep, A(par), A(task), ra);
  CALL_S(masked, ompt_callback_masked_t, ep, S(par), S(task), ra);
}
static void on_dispatch(ompt_data_t *par, ompt_data_t *task, ompt_dispatch_t kind,
                        ompt_data_t instance) {
  CALL_A(dispatch, ompt_callback_dispatch_t, A(par), A(task), kind, instance);
  CALL_S(dispatch, ompt_callback_dispatch_t, S(par), S(task), kind, instance);
}
static void on_task_create(ompt_data_t *parent, const ompt_frame_t *frame, ompt_data_t *task,
                           int flags, int has_deps, const void *ra) {
  (void)pair_of(task);
  if (flags & ompt_task_initial) {
    ompt_data_t *par = NULL;
    int size = 0;
    if (g_get_parallel_info && g_get_parallel_info(0, &par, &size) && par) (void)pair_of(par);
  }
  CALL_S(task_create, ompt_callback_task_create_t, S(parent), frame, S(task), flags, has_deps, ra);
  CALL_A(task_create, ompt_callback_task_create_t, A(parent), frame, A(task), flags, has_deps, ra);
}
/* Archer releases the prior task and acquires the next one in one callback, so the tool's own
 * accesses to its task data cannot sit on the right side of both: a task part that leaves one
 * thread (untied tasks) and resumes on another is ordered for the tool here, by TSan's annotations
 * on the tool's side of the task's data (acquired before the tool's callback, released after). */
typedef void (*annotate_t)(const char *, int, const volatile void *);
static annotate_t g_hb_before, g_hb_after;
static void on_task_schedule(ompt_data_t *prior, ompt_task_status_t status, ompt_data_t *next) {
  if (next && g_hb_after) g_hb_after(__FILE__, __LINE__, S(next));
  CALL_A(task_schedule, ompt_callback_task_schedule_t, A(prior), status, A(next));
  CALL_S(task_schedule, ompt_callback_task_schedule_t, S(prior), status, S(next));
  if (prior && g_hb_before) g_hb_before(__FILE__, __LINE__, S(prior));
  if (status == ompt_task_complete || status == ompt_task_cancel ||
      status == ompt_task_late_fulfill || status == ompt_taskwait_complete)
    pair_free(prior);
}
static void on_dependences(ompt_data_t *task, const ompt_dependence_t *deps, int n) {
  CALL_S(dependences, ompt_callback_dependences_t, S(task), deps, n);
  CALL_A(dependences, ompt_callback_dependences_t, A(task), deps, n);
}
static void on_task_dependence(ompt_data_t *src, ompt_data_t *sink) {
  CALL_S(task_dependence, ompt_callback_task_dependence_t, S(src), S(sink));
  CALL_A(task_dependence, ompt_callback_task_dependence_t, A(src), A(sink));
}
static void on_lock_init(ompt_mutex_t kind, unsigned int hint, unsigned int impl,
                         ompt_wait_id_t id, const void *ra) {
  CALL_A(lock_init, ompt_callback_mutex_acquire_t, kind, hint, impl, id, ra);
  CALL_S(lock_init, ompt_callback_mutex_acquire_t, kind, hint, impl, id, ra);
}
static void on_lock_destroy(ompt_mutex_t kind, ompt_wait_id_t id, const void *ra) {
  CALL_S(lock_destroy, ompt_callback_mutex_t, kind, id, ra);
  CALL_A(lock_destroy, ompt_callback_mutex_t, kind, id, ra);
}
static void on_mutex_acquire(ompt_mutex_t kind, unsigned int hint, unsigned int impl,
                             ompt_wait_id_t id, const void *ra) {
  CALL_A(mutex_acquire, ompt_callback_mutex_acquire_t, kind, hint, impl, id, ra);
  CALL_S(mutex_acquire, ompt_callback_mutex_acquire_t, kind, hint, impl, id, ra);
}
static void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t id, const void *ra) {
  CALL_A(mutex_acquired, ompt_callback_mutex_t, kind, id, ra);
  CALL_S(mutex_acquired, ompt_callback_mutex_t, kind, id, ra);
}
static void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t id, const void *ra) {
  CALL_S(mutex_released, ompt_callback_mutex_t, kind, id, ra);
  CALL_A(mutex_released, ompt_callback_mutex_t, kind, id, ra);
}
static void on_nest_lock(ompt_scope_endpoint_t ep, ompt_wait_id_t id, const void *ra) {
  if (ep == ompt_scope_end) { /* released one level */
    CALL_S(nest_lock, ompt_callback_nest_lock_t, ep, id, ra);
    CALL_A(nest_lock, ompt_callback_nest_lock_t, ep, id, ra);
  } else {
    CALL_A(nest_lock, ompt_callback_nest_lock_t, ep, id, ra);
    CALL_S(nest_lock, ompt_callback_nest_lock_t, ep, id, ra);
  }
}
static void on_flush(ompt_data_t *td, const void *ra) {
  CALL_A(flush, ompt_callback_flush_t, A(td), ra);
  CALL_S(flush, ompt_callback_flush_t, S(td), ra);
}
static void on_cancel(ompt_data_t *task, int flags, const void *ra) {
  CALL_A(cancel, ompt_callback_cancel_t, A(task), flags, ra);
  CALL_S(cancel, ompt_callback_cancel_t, S(task), flags, ra);
}

/* The forwarding callback of each event this library handles; others cannot be registered. */
static ompt_callback_t forwarder(ompt_callbacks_t e) {
  switch (e) {
#define F(ev) case ompt_callback_##ev: return (ompt_callback_t)&on_##ev;
    F(thread_begin) F(thread_end) F(parallel_begin) F(parallel_end) F(implicit_task)
    F(sync_region) F(sync_region_wait) F(reduction) F(work) F(masked) F(dispatch)
    F(task_create) F(task_schedule) F(dependences) F(task_dependence) F(lock_init)
    F(lock_destroy) F(mutex_acquire) F(mutex_acquired) F(mutex_released) F(nest_lock) F(flush)
    F(cancel)
#undef F
    default: return NULL;
  }
}

/* ---- Archer's view of the runtime ---- */
static int archer_set_callback(ompt_callbacks_t e, ompt_callback_t cb) {
  if ((unsigned)e >= NEVENTS || !forwarder(e)) {
    fprintf(stderr, "archer-mux: Archer registers OMPT event %d, which is not forwarded\n", (int)e);
    abort();
  }
  g_cb_a[e] = cb;
  return g_set_callback(e, forwarder(e));
}
static int archer_get_callback(ompt_callbacks_t e, ompt_callback_t *cb) {
  if ((unsigned)e >= NEVENTS || !g_cb_a[e]) return 0;
  *cb = g_cb_a[e];
  return 1;
}
static ompt_data_t *archer_get_thread_data(void) { return A(g_get_thread_data()); }
static int archer_get_parallel_info(int level, ompt_data_t **par, int *size) {
  int r = g_get_parallel_info(level, par, size);
  if (r == 2 && par && *par) *par = A(*par);
  return r;
}
static int archer_get_task_info(int level, int *flags, ompt_data_t **task, ompt_frame_t **frame,
                                ompt_data_t **par, int *size) {
  int r = g_get_task_info(level, flags, task, frame, par, size);
  if (r == 2) {
    if (task && *task) *task = A(*task);
    if (par && *par) *par = A(*par);
  }
  return r;
}
static ompt_interface_fn_t archer_lookup(const char *name) {
  if (!strcmp(name, "ompt_set_callback")) return (ompt_interface_fn_t)&archer_set_callback;
  if (!strcmp(name, "ompt_get_callback")) return (ompt_interface_fn_t)&archer_get_callback;
  if (!strcmp(name, "ompt_get_thread_data")) return (ompt_interface_fn_t)&archer_get_thread_data;
  if (!strcmp(name, "ompt_get_parallel_info"))
    return (ompt_interface_fn_t)&archer_get_parallel_info;
  if (!strcmp(name, "ompt_get_task_info")) return (ompt_interface_fn_t)&archer_get_task_info;
  return g_lookup(name);
}

/* ---- the tool's first initialization: its callbacks are recorded ---- */
static int tool_capture_set_callback(ompt_callbacks_t e, ompt_callback_t cb) {
  if ((unsigned)e >= NEVENTS || !forwarder(e)) {
    fprintf(stderr, "archer-mux: the tool registers OMPT event %d, which is not forwarded\n", (int)e);
    abort();
  }
  g_cb_s[e] = cb;
  return g_set_callback(e, cb);
}
static ompt_interface_fn_t tool_capture_lookup(const char *name) {
  if (!strcmp(name, "ompt_set_callback")) return (ompt_interface_fn_t)&tool_capture_set_callback;
  return g_lookup(name);
}

static int mux_initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *data) {
  (void)data;
  g_lookup = lookup;
  g_set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
  g_get_thread_data = (ompt_get_thread_data_t)lookup("ompt_get_thread_data");
  g_get_parallel_info = (ompt_get_parallel_info_t)lookup("ompt_get_parallel_info");
  g_get_task_info = (ompt_get_task_info_t)lookup("ompt_get_task_info");
  if (!g_set_callback || !g_get_thread_data || !g_get_parallel_info ||
      !g_get_task_info) {
    fprintf(stderr, "archer-mux: the OpenMP runtime lacks an OMPT entry point\n");
    abort();
  }
  /* The tool, twice. The runtime's ompt_get_callback answers only after initialization, so the
   * first call gets a lookup whose ompt_set_callback records the tool's callbacks (and registers
   * them, to return the runtime's support level). The second gets the runtime's own lookup, so
   * the tool's view of the runtime (which module the lookup function is in) is the real one. */
  (void)g_tool->initialize(tool_capture_lookup, device, &g_tool->tool_data);
  int rs = g_tool->initialize(lookup, device, &g_tool->tool_data);
  int ra = g_archer->initialize(archer_lookup, device, &g_archer->tool_data);
  for (int e = 1; e < NEVENTS; ++e)
    if (g_cb_s[e]) g_set_callback((ompt_callbacks_t)e, forwarder((ompt_callbacks_t)e));
  if (g_verbose) {
    int na = 0, ns = 0;
    for (int e = 1; e < NEVENTS; ++e) na += !!g_cb_a[e], ns += !!g_cb_s[e];
    fprintf(stderr, "archer-mux: Archer (%d callbacks) and the tool (%d callbacks) active\n", na, ns);
  }
  return rs && ra;
}
static void mux_finalize(ompt_data_t *data) {
  (void)data;
  g_tool->finalize(&g_tool->tool_data); /* the tool writes its results while Archer still runs */
  g_archer->finalize(&g_archer->tool_data);
}

static ompt_start_tool_result_t *start_from(const char *path, unsigned int v, const char *rv) {
  void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "archer-mux: cannot load %s: %s\n", path, dlerror());
    return NULL;
  }
  typedef ompt_start_tool_result_t *(*start_t)(unsigned int, const char *);
  start_t start = (start_t)dlsym(h, "ompt_start_tool");
  return start ? start(v, rv) : NULL;
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int v, const char *rv) {
  g_verbose = getenv("ARCHER_MUX_VERBOSE") && *getenv("ARCHER_MUX_VERBOSE") == '1';
  const char *archer = getenv("ARCHER_MUX_ARCHER");
  g_archer = start_from(archer && *archer ? archer : ARCHER_MUX_DEFAULT_ARCHER, v, rv);
  /* The tool, as the runtime would find it: first ompt_start_tool elsewhere in the address space
   * (a program linked with libscalea-omp), then OMP_TOOL_LIBRARIES. */
  g_tool = NULL;
  typedef ompt_start_tool_result_t *(*start_t)(unsigned int, const char *);
  start_t next = (start_t)dlsym(RTLD_NEXT, "ompt_start_tool");
  Dl_info info;
  /* libomp's own weak ompt_start_tool only looks further (dlsym RTLD_NEXT from libomp) */
  if (next && next != &ompt_start_tool) g_tool = next(v, rv);
  if (g_verbose && g_tool && dladdr((void *)next, &info))
    fprintf(stderr, "archer-mux: tool from the address space (%s)\n", info.dli_fname);
  const char *libs = getenv("OMP_TOOL_LIBRARIES");
  if (!g_tool && libs && *libs) {
    char *copy = strdup(libs), *save = NULL;
    for (char *p = strtok_r(copy, ":", &save); p && !g_tool; p = strtok_r(NULL, ":", &save))
      g_tool = start_from(p, v, rv);
    free(copy);
  }
  if (g_verbose)
    fprintf(stderr, "archer-mux: Archer %s, tool %s\n", g_archer ? "started" : "declined",
            g_tool ? "started" : "none");
  if (!g_archer) return g_tool; /* no TSan in the process: the tool alone, as usual */
  g_hb_before = (annotate_t)dlsym(RTLD_DEFAULT, "AnnotateHappensBefore");
  g_hb_after = (annotate_t)dlsym(RTLD_DEFAULT, "AnnotateHappensAfter");
  if (!g_tool) return g_archer;
  static ompt_start_tool_result_t result = {&mux_initialize, &mux_finalize, {0}};
  return &result;
}
