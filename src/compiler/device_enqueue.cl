// Device-side enqueue (OpenCL C 2.0 §6.13.17), compiled after the program by clang with it
// (compiler::device_enqueue). enqueue_kernel and enqueue_marker append a record to the
// launch's device queue state, a host-visible buffer whose address reaches every kernel as a
// hidden parameter; the runtime launches the recorded kernels once the kernel that enqueued
// them has completed (core::device_enqueue). Events are numbers (1, 2, ...), queues too:
// `compiler::device_enqueue` makes clk_event_t and queue_t 64-bit integers in the IR, and
// defines the conversions declared here as the identity.

ulong __vkcl_device_queue_address(void);
ulong __vkcl_event_id(clk_event_t e);
clk_event_t __vkcl_event(ulong id);
ulong __vkcl_queue_id(queue_t q);
queue_t __vkcl_queue(ulong id);

// The state's header, in 32-bit words (core::device_enqueue::State has the same layout).
#define __VKCL_USED 0
#define __VKCL_CAPACITY 1
#define __VKCL_EVENTS 2
#define __VKCL_MAX_EVENTS 3
#define __VKCL_RECORDS 4
#define __VKCL_STATUS 5
#define __VKCL_DEFAULT_QUEUE 6
// A record's fixed part, in bytes: 8 words, then offset, global and local size as ulong[3].
#define __VKCL_RECORD_HEAD 104
// The kernel index of a marker and of a profiling request.
#define __VKCL_MARKER 0xffffffffu
#define __VKCL_PROFILING 0xfffffffeu

// The state and the records are reached through pointers made from integer addresses, one
// element type per address: clspv 0.0.1 gives a pointer one pointee type, and an atomic
// through a pointer it also used for bytes was invalid SPIR-V.
static global uint *__vkcl_state(void) {
  return (global uint *)__vkcl_device_queue_address();
}

// An event's entry: its status word (a user event's as set_user_event_status gave it, a
// command's once it has ended), then its command's execution time in ns.
#define __VKCL_EVENT_BYTES 16

static global uint *__vkcl_status(global uint *s, ulong id) {
  return (global uint *)(__vkcl_device_queue_address() + s[__VKCL_STATUS] +
                         __VKCL_EVENT_BYTES * (id - 1));
}

static global ulong *__vkcl_exec_time(global uint *s, ulong id) {
  return (global ulong *)(__vkcl_device_queue_address() + s[__VKCL_STATUS] +
                          __VKCL_EVENT_BYTES * (id - 1) + 8);
}

static uint __vkcl_round8(uint n) { return (n + 7u) & ~7u; }

// A new event number, 0 if there is none left.
static uint __vkcl_new_event(global uint *s) {
  uint id = atomic_inc((volatile global uint *)&s[__VKCL_EVENTS]) + 1u;
  return id <= s[__VKCL_MAX_EVENTS] ? id : 0u;
}

static bool __vkcl_valid_event(global uint *s, ulong id) {
  return id >= 1 && id <= (ulong)s[__VKCL_EVENTS] && id <= (ulong)s[__VKCL_MAX_EVENTS];
}

// Whether one dimension of an ndrange is invalid: no work-items, or a local size past the
// device's for the dimension or past the global size.
static bool __vkcl_bad_dimension(size_t g, size_t l, size_t max) {
  return g == 0 || l > max || (l != 0 && l > g);
}

// enqueue_kernel (every form: the IR's calls become calls of this, `child` the block's kernel),
// enqueue_marker (child __VKCL_MARKER) and capture_event_profiling_info (__VKCL_PROFILING).
int __vkcl_enqueue(ulong queue, int flags, private ndrange_t *nd, uint child,
                   const generic uchar *block, uint nevents, const generic ulong *wait,
                   generic ulong *ret, uint nlocal, private size_t *sizes) {
  global uint *s = __vkcl_state();
  if (queue == 0)
    return CLK_INVALID_QUEUE;
  if ((nevents > 0 && wait == 0) || (nevents == 0 && wait != 0 && child != __VKCL_MARKER))
    return CLK_INVALID_EVENT_WAIT_LIST;
  for (uint i = 0; i < nevents; i++)
    if (!__vkcl_valid_event(s, wait[i]))
      return CLK_INVALID_EVENT_WAIT_LIST;
  uint dims = 0;
  // The ndrange's values, dimension by dimension: unused dimensions as the spec's defaults.
  size_t o0 = 0, o1 = 0, o2 = 0, g0 = 1, g1 = 1, g2 = 1, l0 = 0, l1 = 0, l2 = 0;
  if (child < __VKCL_PROFILING) {
    dims = nd->workDimension;
    if (dims < 1 || dims > 3)
      return CLK_INVALID_NDRANGE;
    // Written out per dimension, not as loops over the ndrange's arrays: clspv 0.0.1 ended
    // such a loop after its first dimension once the ndrange was chosen at run time.
    o0 = nd->globalWorkOffset[0];
    g0 = nd->globalWorkSize[0];
    l0 = nd->localWorkSize[0];
    if (dims > 1) {
      o1 = nd->globalWorkOffset[1];
      g1 = nd->globalWorkSize[1];
      l1 = nd->localWorkSize[1];
    }
    if (dims > 2) {
      o2 = nd->globalWorkOffset[2];
      g2 = nd->globalWorkSize[2];
      l2 = nd->localWorkSize[2];
    }
    if (__vkcl_bad_dimension(g0, l0, __VKCL_MAX_WORK_ITEM_SIZE_0) ||
        __vkcl_bad_dimension(g1, l1, __VKCL_MAX_WORK_ITEM_SIZE_1) ||
        __vkcl_bad_dimension(g2, l2, __VKCL_MAX_WORK_ITEM_SIZE_2))
      return CLK_INVALID_NDRANGE;
    size_t items = (l0 == 0 ? 1 : l0) * (l1 == 0 ? 1 : l1) * (l2 == 0 ? 1 : l2);
    if (items > __VKCL_MAX_WORK_GROUP_SIZE)
      return CLK_INVALID_NDRANGE;
    for (uint i = 0; i < nlocal; i++)
      if (sizes[i] == 0 || sizes[i] > 0xffffffffu)
        return CLK_INVALID_ARG_SIZE;
  }
  uint literal = child < __VKCL_MARKER ? *(const generic uint *)block : 0u;
  uint head = __vkcl_round8(__VKCL_RECORD_HEAD + 4u * (nevents + nlocal));
  uint bytes = head + __vkcl_round8(literal);
  uint event = 0;
  if (ret != 0) {
    event = __vkcl_new_event(s);
    if (event == 0)
      return CLK_EVENT_ALLOCATION_FAILURE;
  }
  uint at = atomic_add((volatile global uint *)&s[__VKCL_USED], bytes);
  if (at + bytes > s[__VKCL_CAPACITY] || at + bytes < at)
    return CLK_DEVICE_QUEUE_FULL;
  ulong record = __vkcl_device_queue_address() + s[__VKCL_RECORDS] + at;
  global uint *r = (global uint *)record;
  r[1] = child;
  r[2] = (uint)flags;
  r[3] = dims;
  r[4] = nevents;
  r[5] = event;
  r[6] = nlocal;
  r[7] = literal;
  global ulong *shape = (global ulong *)(record + 32);
  shape[0] = o0;
  shape[1] = o1;
  shape[2] = o2;
  shape[3] = g0;
  shape[4] = g1;
  shape[5] = g2;
  shape[6] = l0;
  shape[7] = l1;
  shape[8] = l2;
  global uint *tail = r + __VKCL_RECORD_HEAD / 4;
  for (uint i = 0; i < nevents; i++)
    tail[i] = (uint)wait[i];
  for (uint i = 0; i < nlocal; i++)
    tail[nevents + i] = (uint)sizes[i];
  global uchar *to = (global uchar *)(record + head);
  for (uint i = 0; i < literal; i++)
    to[i] = block[i];
  // The size last: the host takes a record with a size for a whole one.
  r[0] = bytes;
  if (ret != 0)
    *ret = event;
  return CLK_SUCCESS;
}

ndrange_t __attribute__((overloadable)) ndrange_1D(size_t g) {
  return ndrange_1D(0, g, 0);
}

ndrange_t __attribute__((overloadable)) ndrange_1D(size_t g, size_t l) {
  return ndrange_1D(0, g, l);
}

// One dimension of an ndrange (unused ones: offset 0, global size 1, local size 0), written
// out per dimension like __vkcl_enqueue's reads.
static void __vkcl_dimension(ndrange_t *r, uint d, size_t o, size_t g, size_t l) {
  r->globalWorkOffset[d] = o;
  r->globalWorkSize[d] = g;
  r->localWorkSize[d] = l;
}

ndrange_t __attribute__((overloadable)) ndrange_1D(size_t o, size_t g, size_t l) {
  ndrange_t r;
  r.workDimension = 1;
  __vkcl_dimension(&r, 0, o, g, l);
  __vkcl_dimension(&r, 1, 0, 1, 0);
  __vkcl_dimension(&r, 2, 0, 1, 0);
  return r;
}

static ndrange_t __vkcl_ndrange(uint dims, const size_t *o, const size_t *g, const size_t *l) {
  ndrange_t r;
  r.workDimension = dims;
  __vkcl_dimension(&r, 0, o != 0 ? o[0] : 0, g[0], l != 0 ? l[0] : 0);
  __vkcl_dimension(&r, 1, o != 0 ? o[1] : 0, g[1], l != 0 ? l[1] : 0);
  if (dims > 2)
    __vkcl_dimension(&r, 2, o != 0 ? o[2] : 0, g[2], l != 0 ? l[2] : 0);
  else
    __vkcl_dimension(&r, 2, 0, 1, 0);
  return r;
}

// ndrange_2D and ndrange_3D: (global), (global, local), (offset, global, local).
#define __VKCL_NDRANGE(N)                                                                   \
  ndrange_t __attribute__((overloadable)) ndrange_##N##D(const size_t g[N]) {               \
    return __vkcl_ndrange(N, 0, g, 0);                                                      \
  }                                                                                         \
  ndrange_t __attribute__((overloadable)) ndrange_##N##D(const size_t g[N],                 \
                                                         const size_t l[N]) {               \
    return __vkcl_ndrange(N, 0, g, l);                                                      \
  }                                                                                         \
  ndrange_t __attribute__((overloadable)) ndrange_##N##D(                                   \
      const size_t o[N], const size_t g[N], const size_t l[N]) {                            \
    return __vkcl_ndrange(N, o, g, l);                                                      \
  }
__VKCL_NDRANGE(2)
__VKCL_NDRANGE(3)
#undef __VKCL_NDRANGE

// Every device queue takes a launch's children alike: any value but 0 (CLK_NULL_QUEUE, which
// this returns where the context has no default device queue) names one.
queue_t __attribute__((overloadable)) get_default_queue(void) {
  return __vkcl_queue(__vkcl_state()[__VKCL_DEFAULT_QUEUE]);
}

int __attribute__((overloadable)) enqueue_marker(queue_t q, uint n, const clk_event_t *wait,
                                                  clk_event_t *ret) {
  if (ret == 0)
    return CLK_INVALID_EVENT_WAIT_LIST;
  return __vkcl_enqueue(__vkcl_queue_id(q), 0, 0, __VKCL_MARKER, 0, n,
                        (const generic ulong *)wait, (generic ulong *)ret, 0, 0);
}

// Events are not reused within a launch: retaining and releasing them changes nothing.
void __attribute__((overloadable)) retain_event(clk_event_t e) {}

void __attribute__((overloadable)) release_event(clk_event_t e) {}

clk_event_t __attribute__((overloadable)) create_user_event(void) {
  global uint *s = __vkcl_state();
  uint id = __vkcl_new_event(s);
  if (id == 0)
    return CLK_NULL_EVENT;
  atomic_xchg((volatile global uint *)__vkcl_status(s, id), (uint)CL_SUBMITTED);
  return __vkcl_event(id);
}

bool __attribute__((overloadable)) is_valid_event(clk_event_t e) {
  return __vkcl_valid_event(__vkcl_state(), __vkcl_event_id(e));
}

void __attribute__((overloadable)) set_user_event_status(clk_event_t e, int state) {
  global uint *s = __vkcl_state();
  ulong id = __vkcl_event_id(e);
  if (!__vkcl_valid_event(s, id) || (state != CL_COMPLETE && state >= 0))
    return;
  atomic_xchg((volatile global uint *)__vkcl_status(s, id), (uint)state);
}

// The two times at once where the event's command has ended (an earlier round's), else
// written by the host once it has (a request record whose literal is the destination's
// address).
void __attribute__((overloadable)) capture_event_profiling_info(clk_event_t e,
                                                                 clk_profiling_info name,
                                                                 global void *value) {
  global uint *s = __vkcl_state();
  ulong id = __vkcl_event_id(e);
  if (name != CLK_PROFILING_COMMAND_EXEC_TIME || !__vkcl_valid_event(s, id))
    return;
  ulong ns = *__vkcl_exec_time(s, id);
  if (*__vkcl_status(s, id) == CL_COMPLETE && ns != 0) {
    global ulong *to = (global ulong *)value;
    to[0] = ns;
    to[1] = ns;
    return;
  }
  struct {
    uint size, align;
    ulong to;
  } request = {16, 8, (ulong)value};
  __vkcl_enqueue(1, 0, 0, __VKCL_PROFILING, (const generic uchar *)&request, 1, &id, 0, 0, 0);
}

// Writes a profiling request's times: its literal is the request's, then the two values.
kernel void __vkcl_child_profiling(global ulong *literal) {
  global ulong *to = (global ulong *)literal[1];
  to[0] = literal[2];
  to[1] = literal[3];
}

// get_kernel_work_group_size and get_kernel_preferred_work_group_size_multiple of every
// block (the device's limits: a block's kernel is launched like any other).
uint __vkcl_kernel_work_group_size(void) { return __VKCL_MAX_WORK_GROUP_SIZE; }

uint __vkcl_kernel_preferred_multiple(void) { return __VKCL_PREFERRED_MULTIPLE; }
