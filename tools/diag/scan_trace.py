# Traces pyopencl's scan kernel by kernel: after each launch, the first values of every buffer
# argument (as int32), on the platform whose name contains argv[1].
import sys, numpy as np, pyopencl as cl, pyopencl.array as cl_array
from pyopencl.scan import GenericScanKernel
plat = [p for p in cl.get_platforms() if sys.argv[1] in p.name][0]
ctx = cl.Context(plat.get_devices()); q = cl.CommandQueue(ctx)
print(plat.name, ctx.devices[0].name)
orig = cl.Kernel.__call__
def traced(self, queue, gs, ls, *args, **kw):
    evt = orig(self, queue, gs, ls, *args, **kw); queue.finish()
    desc = []
    for j, a in enumerate(args):
        if isinstance(a, cl.MemoryObjectHolder):
            h = np.empty(min(a.size // 4, 12), np.int32); cl.enqueue_copy(queue, h, a); queue.finish()
            desc.append(f"#{j}@{a.int_ptr % 100000}={h.tolist()}")
        else:
            desc.append(f"#{j}={a}")
    print(" ", self.function_name, gs, ls, " ".join(desc))
    return evt
cl.Kernel.__call__ = traced
for scan_expr in sys.argv[2:] or ["b", "a+b"]:
    for n in [10, 5000]:
        knl = GenericScanKernel(ctx, np.int32, arguments="__global int *out", input_expr="i",
                scan_expr=scan_expr, neutral="0", output_statement="out[i] = item;")
        out = cl_array.empty(q, n, dtype=np.int32); out.fill(-7); knl(out); o = out.get()
        want = np.arange(n) if scan_expr == "b" else np.cumsum(np.arange(n, dtype=np.int64)).astype(np.int32)
        bad = np.nonzero(o != want)[0]
        print(scan_expr, n, "ok" if len(bad) == 0 else f"{len(bad)} wrong, first at {bad[:8]}: {o[bad[:8]]}")
