# Traces pyopencl's RadixSort (test_sort's) kernel by kernel on the platform whose name contains
# argv[1]: after each launch, a crc32 of every buffer argument, so two platforms' traces diff.
# SRC_DIR, when set, receives each program's source as <n>.cl in build order.
import os, sys, zlib, numpy as np, pyopencl as cl, pyopencl.array as cl_array
from pyopencl.algorithm import RadixSort
from pyopencl.scan import GenericScanKernel
plat = [p for p in cl.get_platforms() if sys.argv[1] in p.name][0]
ctx = cl.Context(plat.get_devices()); q = cl.CommandQueue(ctx)
print(plat.name, ctx.devices[0].name)
src_dir = os.environ.get("SRC_DIR")
if src_dir:
    os.makedirs(src_dir, exist_ok=True)
    orig_build, built = cl.Program.build, [0]
    def build(self, *a, **kw):
        with open(f"{src_dir}/{built[0]}.cl", "w") as f:
            f.write(self.get_info(cl.program_info.SOURCE))
        built[0] += 1
        return orig_build(self, *a, **kw)
    cl.Program.build = build
tracing = [False]
orig = cl.Kernel.__call__
def traced(self, queue, gs, ls, *args, **kw):
    evt = orig(self, queue, gs, ls, *args, **kw)
    if tracing[0]:
        queue.finish()
        desc = []
        for j, a in enumerate(args):
            if isinstance(a, cl.MemoryObjectHolder):
                h = np.empty(a.size, np.uint8); cl.enqueue_copy(queue, h, a); queue.finish()
                desc.append(f"#{j}:{a.size}:{zlib.crc32(h.tobytes()):08x}")
            elif not isinstance(a, cl.LocalMemory):
                desc.append(f"#{j}={a}")
        print(" ", self.function_name, gs, ls, " ".join(desc))
    return evt
cl.Kernel.__call__ = traced
sort = RadixSort(ctx, "int *ary", key_expr="ary[i]", sort_arg_names=["ary"],
                 scan_kernel=GenericScanKernel)
rs = np.random.RandomState(15)
for n in [10, 200, 2000, 20000, 200000]:
    a = rs.randint(0, 2**16, n).astype(np.int32)
    tracing[0] = n == int(os.environ.get("TRACE_N", "0"))
    (s,), _ = sort(cl_array.to_device(q, a), key_bits=16); q.finish()
    got, want = s.get(), np.sort(a)
    bad = np.nonzero(got != want)[0]
    print(n, "ok" if len(bad) == 0 else f"{len(bad)} wrong, first at {bad[:6]}: {got[bad[:6]]} want {want[bad[:6]]}")
