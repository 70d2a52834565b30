# Which shapes of a __local 2D array keep their rows on a platform (argv[1] in its name).
import sys, numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if sys.argv[1] in p.name][0]
ctx = cl.Context(plat.get_devices()); q = cl.CommandQueue(ctx)
def src(rows, cols, flat=False, reqd=True, unroll=True, sel=False, wrapped=False):
    at = (lambda r, c: f"l[({r}) * {cols} + ({c})]") if flat else (lambda r, c: f"l[{r}][{c}]")
    decl = f"local uint l[{rows * cols}];" if flat else f"local uint l[{rows}][{cols}];"
    if wrapped:
        at = lambda r, c: f"l[{r}][{c}].v"
        decl = f"struct w {{ uint v; }}; local struct w l[{rows}][{cols}];"
    pragma = "" if unroll else "#pragma unroll 1\n"
    s = f"""{'__attribute__((reqd_work_group_size(256, 1, 1)))' if reqd else ''}
kernel void t(global uint *out, uint n) {{
  {decl}
  uint lid = get_local_id(0);
  {pragma}for (int k = 0; k < {rows}; k++) {at('k', 'lid')} = lid * 100 + k;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint s = {at(0, 'lid')};
  {"for (int k = 1; k < %d; k++) if (lid * 16 + k < n) s = %s;" % (rows, at('k', 'lid')) if sel else ""}
  out[lid] = {at('lid % ' + str(rows), 'lid')};
  out[256 + lid] = s;
}}"""
    return s
cases = {
    "17x257": dict(rows=17, cols=257), "17x256": dict(rows=17, cols=256),
    "4x257": dict(rows=4, cols=257), "2x256": dict(rows=2, cols=256),
    "17x257 flat": dict(rows=17, cols=257, flat=True), "17x257 no reqd": dict(rows=17, cols=257, reqd=False),
    "17x257 loop": dict(rows=17, cols=257, unroll=False), "17x257 sel": dict(rows=17, cols=257, sel=True),
    "16x257 sel": dict(rows=16, cols=257, sel=True),
    "17x257 struct": dict(rows=17, cols=257, wrapped=True),
    "17x257 struct loop": dict(rows=17, cols=257, wrapped=True, unroll=False),
    "17x257 loop sel": dict(rows=17, cols=257, unroll=False, sel=True),
}
for name, c in cases.items():
    prg = cl.Program(ctx, src(**c)).build()
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 512 * 4)
    cl.enqueue_fill_buffer(q, out, np.uint32(7), 0, 512 * 4)
    n = 1000
    prg.t(q, (256,), (256,), out, np.uint32(n)); h = np.empty(512, np.uint32); cl.enqueue_copy(q, h, out); q.finish()
    lid = np.arange(256, dtype=np.uint32); rows = c["rows"]
    want = lid * 100 + lid % rows
    bad = np.nonzero(h[:256] != want)[0]
    extra = ""
    if c.get("sel"):
        ks = [max([k for k in range(1, rows) if l * 16 + k < n], default=0) for l in range(256)]
        bad2 = np.nonzero(h[256:] != lid * 100 + np.array(ks, np.uint32))[0]
        extra = f"; selected: {'ok' if len(bad2) == 0 else f'{len(bad2)} wrong'}"
    print(f"{name:16} {'ok' if len(bad) == 0 else f'{len(bad)} wrong, e.g. out[{bad[1] if len(bad) > 1 else bad[0]}] = {h[bad[1] if len(bad) > 1 else bad[0]]}'}{extra}")
