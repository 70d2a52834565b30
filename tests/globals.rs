//! Program-scope global variables (OpenCL C 2.0 `global` variables at program scope and
//! `static` locals).
#[macro_use]
mod common;
use common::*;

const SOURCE: &str = r#"
global int counter = 5;
global float table[4] = {1.5f, 2.5f, 3.5f, 4.5f};
kernel void bump(global int *o) {
    static global int calls = 100;
    if (get_global_id(0) == 0) {
        o[0] = counter++;
        o[1] = calls++;
        o[2] = (int)(table[1] * 2.0f);
        table[1] += 1.0f;
    }
}
kernel void peek(global int *o) { o[0] = counter; o[1] = (int)(table[1] * 2.0f); }
"#;

#[test]
fn globals_persist_across_launches_and_kernels() {
    let e = Env::new();
    let p = match build_program(e.ctx, e.dev, SOURCE, "-cl-std=CL2.0") {
        Ok(p) => p,
        Err((code, log)) => panic!("{}: {log}", err_name(code)),
    };
    let bump = kernel(p, "bump");
    let peek = kernel(p, "peek");
    let o = e.buffer_from(&[0i32; 3]);
    arg(bump, 0, &o);
    arg(peek, 0, &o);
    for i in 0..3 {
        e.run(bump, None, &[4], None);
        assert_eq!(e.read::<i32>(o, 3), [5 + i, 100 + i, 5 + 2 * i]);
    }
    e.run(peek, None, &[1], None);
    assert_eq!(e.read::<i32>(o, 2), [8, 11]);
    check!(clReleaseMemObject(o));
    check!(clReleaseKernel(bump));
    check!(clReleaseKernel(peek));
    check!(clReleaseProgram(p));
}
