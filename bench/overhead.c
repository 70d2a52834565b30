/* --write-overhead-kernels DIR: what the raw-Vulkan baseline (examples/raw_vulkan.rs) needs to
 * run memory/triad and compute/fma exactly as this program does on vkcl: the vkcl program
 * binaries (docs/BINARY.md; their SPIR-V is what vkcl dispatches) and the launch parameters,
 * in DIR/memory.bin, DIR/fma.bin and DIR/params.txt ("key value" lines). Only meaningful
 * on vkcl: other implementations' binaries are their own. */
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>

static void write_binary(const Env *e, const char *source, const char *dir, const char *file) {
    cl_program prog = build_or_die(e, source, "");
    size_t size = 0;
    CHECK(clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL));
    unsigned char *bin = xmalloc(size);
    CHECK(clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL));
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bin, 1, size, f) != size || fclose(f) != 0) bench_wrong("cannot write %s", path);
    free(bin);
    clReleaseProgram(prog);
}

void write_overhead_kernels(const Env *e, const char *dir) {
    write_binary(e, memory_source, dir, "memory.bin");
    write_binary(e, fma_source, dir, "fma.bin");
    char path[4096];
    snprintf(path, sizeof path, "%s/params.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f) bench_wrong("cannot write %s", path);
    fprintf(f, "reps %d\nsample_s %g\nwarm_up_s %g\nlocal_size %d\n", e->reps, sample_s(e),
            warm_up_s(e), LOCAL_SIZE);
    fprintf(f, "triad_bytes %zu\ntriad_launches %d\n", triad_bytes(e), launches_per_sample(e));
    fprintf(f, "fma_items %zu\nfma_iters %d\n", fma_items(e), FMA_ITERS);
    fclose(f);
    printf("vkcl-bench: overhead kernels written to %s\n", dir);
}
