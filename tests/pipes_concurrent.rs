//! Pipes whose two ends may run at the same time (issue 16): a producer and a consumer on two
//! queues with no order between them, reservations of several sizes, failed reservations that
//! must not block later ones. Checked against a host model: every packet written successfully
//! is read exactly once (by the consumer or by a drain afterwards), none is invented, and the
//! packets of one reservation come out in order.
#[macro_use]
mod common;
use common::*;
use std::ptr::{null, null_mut};

const OPTS: &str = "-cl-std=CL3.0";

/// The claims need a compare-and-swap: lavapipe's was measured to let several lanes succeed
/// with one expected value. Each of 4,096 work-items (groups of 256) increments a counter with
/// a compare-and-swap loop and keeps the value it replaced: the values must be 0..4095 once
/// each.
#[test]
fn compare_and_swap_loops_count_exactly() {
    let e = Env::new();
    let p = e.program(
        r#"
kernel void k(volatile global uint *c, global uint *got) {
    // Re-reading the counter (a plain load) at each turn, as the pipe claims do.
    uint old;
    do { old = c[0]; } while (atomic_cmpxchg(c, old, old + 1u) != old);
    got[get_global_id(0)] = old;
}"#,
        OPTS,
    );
    let k = kernel(p, "k");
    let n = 4096usize;
    let c = e.buffer_from(&[0u32]);
    let got = e.buffer_from(&vec![u32::MAX; n]);
    arg(k, 0, &c);
    arg(k, 1, &got);
    e.run(k, None, &[n], Some(&[256]));
    assert_eq!(e.read::<u32>(c, 1), [n as u32]);
    let mut v = e.read::<u32>(got, n);
    v.sort_unstable();
    assert_eq!(v, (0..n as u32).collect::<Vec<_>>());
    for m in [c, got] {
        check!(clReleaseMemObject(m));
    }
    check!(clReleaseKernel(k));
    check!(clReleaseProgram(p));
}

const KERNELS: &str = r#"
// One work-item, a pipe of 8 packets: a reservation larger than the room left fails, and the
// ones after it succeed.
kernel void put_after_failure(write_only pipe int p, global int *out) {
    reserve_id_t a = reserve_write_pipe(p, 4);
    out[0] = is_valid_reserve_id(a);
    for (int i = 0; i < 4; i++) write_pipe(p, a, i, &i);
    commit_write_pipe(p, a);
    reserve_id_t big = reserve_write_pipe(p, 8);
    out[1] = is_valid_reserve_id(big);
    reserve_id_t r = reserve_write_pipe(p, 4);
    out[2] = is_valid_reserve_id(r);
    for (int i = 0; i < 4; i++) { int v = 10 + i; write_pipe(p, r, i, &v); }
    commit_write_pipe(p, r);
    int v = 20;
    out[3] = write_pipe(p, &v);
}
kernel void get_after_failure(read_only pipe int p, global int *out) {
    reserve_id_t a = reserve_read_pipe(p, 4);
    out[0] = is_valid_reserve_id(a);
    for (int i = 0; i < 4; i++) read_pipe(p, a, i, &out[3 + i]);
    commit_read_pipe(p, a);
    reserve_id_t big = reserve_read_pipe(p, 8);
    out[1] = is_valid_reserve_id(big);
    out[2] = get_pipe_num_packets(p);
    for (int i = 0; i < 5; i++) { int v = -1; out[7 + i] = read_pipe(p, &v) == 0 ? v : -2; }
}
// Each work-item reserves 4 packets and writes 4 * id + k into them.
kernel void produce(write_only pipe int p, int base, global int *ok) {
    int id = get_global_id(0);
    reserve_id_t r = reserve_write_pipe(p, 4);
    ok[id] = is_valid_reserve_id(r);
    if (is_valid_reserve_id(r)) {
        for (int k = 3; k >= 0; k--) { int v = base + 4 * id + k; write_pipe(p, r, k, &v); }
        commit_write_pipe(p, r);
    }
}
kernel void consume(read_only pipe int p, global int4 *out) {
    reserve_id_t r = reserve_read_pipe(p, 4);
    int v[4] = { -1, -1, -1, -1 };
    if (is_valid_reserve_id(r)) {
        for (int k = 0; k < 4; k++) read_pipe(p, r, k, &v[k]);
        commit_read_pipe(p, r);
    }
    out[get_global_id(0)] = (int4)(v[0], v[1], v[2], v[3]);
}
kernel void drain(read_only pipe int p, global int *out) {
    int v = -1;
    if (read_pipe(p, &v) != 0) v = -1;
    out[get_global_id(0)] = v;
}
"#;

struct Prog {
    e: Env,
    p: cl_program,
}

impl Prog {
    fn new() -> Prog {
        let e = Env::new();
        let p = e.program(KERNELS, OPTS);
        Prog { e, p }
    }
    fn pipe(&self, packet: u32, max: u32) -> cl_mem {
        let mut err = 0;
        let m = unsafe { clCreatePipe(self.e.ctx, 0, packet, max, null(), &mut err) };
        assert_eq!(err, CL_SUCCESS, "clCreatePipe: {}", err_name(err));
        m
    }
    /// Runs `name(pipe, out)` over `n` work-items on the default queue; `out`'s `words` words.
    fn run(&self, name: &str, p: cl_mem, n: usize, words: usize) -> Vec<i32> {
        let k = kernel(self.p, name);
        let out = self.e.buffer_from(&vec![-3i32; words]);
        arg(k, 0, &p);
        arg(k, 1, &out);
        self.e.run(k, None, &[n], None);
        let v = self.e.read::<i32>(out, words);
        check!(clReleaseMemObject(out));
        check!(clReleaseKernel(k));
        v
    }
}

impl Drop for Prog {
    fn drop(&mut self) {
        unsafe { clReleaseProgram(self.p) };
    }
}

/// A failed reservation leaves the pipe as it was (it was counted as claimed before, and made
/// every later claim of that end fail until the other end ran).
#[test]
fn a_failed_reservation_blocks_nothing() {
    let t = Prog::new();
    let p = t.pipe(4, 8);
    assert_eq!(t.run("put_after_failure", p, 1, 4), [1, 0, 1, -1]);
    assert_eq!(
        t.run("get_after_failure", p, 1, 12),
        [1, 0, 4, 0, 1, 2, 3, 10, 11, 12, 13, -2]
    );
    check!(clReleaseMemObject(p));
}

/// Producers and consumers of 4-packet reservations on two queues with no order between them,
/// consumers enqueued first or second, three rounds on one pipe smaller than what is written,
/// then a drain: every packet written is read exactly once, a reservation's packets in order.
#[test]
fn producer_and_consumer_on_two_queues_at_once() {
    let t = Prog::new();
    let e = &t.e;
    let mut err = 0;
    let q2 = unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, null(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let n = 1024usize;
    let p = t.pipe(4, 1001);
    let prod = kernel(t.p, "produce");
    let cons = kernel(t.p, "consume");
    let mut written = vec![];
    let mut read = vec![];
    for round in 0..3 {
        let base = (round * 4 * n) as i32;
        let ok = e.buffer_from(&vec![-3i32; n]);
        let out = e.buffer_from(&vec![-3i32; 4 * n]);
        arg(prod, 0, &p);
        arg(prod, 1, &base);
        arg(prod, 2, &ok);
        arg(cons, 0, &p);
        arg(cons, 1, &out);
        let enqueue = |q: cl_command_queue, k: cl_kernel| {
            check!(clEnqueueNDRangeKernel(
                q,
                k,
                1,
                null(),
                &n,
                null(),
                0,
                null(),
                null_mut()
            ));
            check!(clFlush(q));
        };
        if round == 1 {
            enqueue(q2, cons);
            enqueue(e.queue, prod);
        } else {
            enqueue(e.queue, prod);
            enqueue(q2, cons);
        }
        check!(clFinish(e.queue));
        check!(clFinish(q2));
        let okv = e.read::<i32>(ok, n);
        for (id, &s) in okv.iter().enumerate() {
            assert!(s == 0 || s == 1, "round {round}: status {s}");
            if s == 1 {
                written.extend((0..4).map(|k| base + 4 * id as i32 + k));
            }
        }
        for v in e.read::<[i32; 4]>(out, n) {
            if v[0] == -1 {
                assert_eq!(v, [-1; 4], "round {round}");
                continue;
            }
            // A reservation holds one producer's 4 packets, in order.
            assert!(v[0] % 4 == 0, "round {round}: {v:?}");
            assert_eq!(v, [v[0], v[0] + 1, v[0] + 2, v[0] + 3], "round {round}");
            read.extend(v);
        }
        check!(clReleaseMemObject(ok));
        check!(clReleaseMemObject(out));
    }
    let rest = t.run("drain", p, 1100, 1100);
    read.extend(rest.iter().filter(|&&v| v >= 0));
    assert!(rest.iter().any(|&v| v < 0), "the drain emptied the pipe");
    written.sort_unstable();
    read.sort_unstable();
    assert!(written.len() >= 1000, "{} packets written", written.len());
    assert_eq!(read, written);
    check!(clReleaseKernel(prod));
    check!(clReleaseKernel(cons));
    check!(clReleaseMemObject(p));
    check!(clReleaseCommandQueue(q2));
}
