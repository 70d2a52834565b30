//! Pipes: clCreatePipe and clGetPipeInfo errors and queries, pipes refused by host commands,
//! and producer/consumer kernels (2- and 4-argument forms, reservations, work-group
//! reservations, full and empty pipes, packet counts, argument info).
#[macro_use]
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

const CL_PIPE_MAX_PACKETS: cl_uint = 0x1121;
const CL_PIPE_PROPERTIES: cl_uint = 0x1122;
const CL_DEVICE_MAX_PIPE_ARGS: cl_uint = 0x1055;
const CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS: cl_uint = 0x1056;
const CL_DEVICE_PIPE_MAX_PACKET_SIZE: cl_uint = 0x1057;
const CL_DEVICE_OPENCL_C_FEATURES: cl_uint = 0x106F;
const CL_KERNEL_ARG_ACCESS_QUALIFIER: cl_uint = 0x1197;
const CL_KERNEL_ARG_TYPE_NAME: cl_uint = 0x1198;
const CL_KERNEL_ARG_TYPE_QUALIFIER: cl_uint = 0x1199;
const CL_KERNEL_ARG_ADDRESS_GLOBAL: cl_uint = 0x119B;
const CL_KERNEL_ARG_ACCESS_READ_ONLY: cl_uint = 0x11A0;
const CL_KERNEL_ARG_ACCESS_WRITE_ONLY: cl_uint = 0x11A1;
const CL_KERNEL_ARG_TYPE_PIPE: cl_bitfield = 1 << 3;

const OPTS: &str = "-cl-std=CL3.0";

fn create(e: &Env, flags: cl_bitfield, packet: u32, max: u32) -> Result<cl_mem, cl_int> {
    let mut err = 0;
    let m = unsafe { clCreatePipe(e.ctx, flags, packet, max, null(), &mut err) };
    if err == CL_SUCCESS {
        assert!(!m.is_null());
        Ok(m)
    } else {
        assert!(m.is_null());
        Err(err)
    }
}

fn pipe(e: &Env, packet: u32, max: u32) -> cl_mem {
    create(e, 0, packet, max).unwrap_or_else(|c| panic!("clCreatePipe: {}", err_name(c)))
}

fn pipe_info(m: cl_mem, p: cl_uint) -> Vec<u8> {
    let mut size = 0;
    check!(clGetPipeInfo(m, p, 0, null_mut(), &mut size));
    let mut v = vec![0u8; size];
    let mut size2 = 0;
    check!(clGetPipeInfo(m, p, size, v.as_mut_ptr().cast(), &mut size2));
    assert_eq!(size, size2);
    v
}

fn release(m: cl_mem) {
    check!(clReleaseMemObject(m));
}

/// Runs `k` over `gws` (local size `lws`) on `e`'s queue and waits.
fn run(e: &Env, k: cl_kernel, gws: usize, lws: Option<usize>) {
    let l = lws.map(|l| [l]);
    e.run(k, None, &[gws], l.as_ref().map(|l| &l[..]));
}

const INT_PIPES: &str = r#"
kernel void produce(write_only pipe int p, global int *status) {
    int v = get_global_id(0);
    status[v] = write_pipe(p, &v);
}
kernel void consume(read_only pipe int p, global int *out, global int *status) {
    int v = -1;
    status[get_global_id(0)] = read_pipe(p, &v);
    out[get_global_id(0)] = v;
}
// One work-item: keeps the order.
kernel void produce_seq(__write_only pipe int p, int n, global int *ok) {
    int good = 0;
    for (int i = 0; i < n; i++)
        good += write_pipe(p, &i) == 0;
    ok[0] = good;
}
kernel void consume_seq(__read_only pipe int p, int n, global int *out) {
    for (int i = 0; i < n; i++) {
        int v = -1;
        if (read_pipe(p, &v) != 0)
            v = -2;
        out[i] = v;
    }
}
// A pipe passed on to a function.
int put(write_only pipe int q, int v) { return write_pipe(q, &v); }
kernel void produce_via_function(write_only pipe int p, global int *status) {
    status[get_global_id(0)] = put(p, get_global_id(0));
}
kernel void counts(pipe int p, global uint *out) {
    out[0] = get_pipe_num_packets(p);
    out[1] = get_pipe_max_packets(p);
}
"#;

struct Int {
    e: Env,
    prog: cl_program,
}

impl Int {
    fn new() -> Int {
        let e = Env::new();
        let prog = e.program(INT_PIPES, OPTS);
        Int { e, prog }
    }

    /// `n` work-items write their ids; returns each one's status.
    fn produce(&self, p: cl_mem, n: usize) -> Vec<i32> {
        let k = kernel(self.prog, "produce");
        let status = self.e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
        arg(k, 0, &p);
        arg(k, 1, &status);
        run(&self.e, k, n, None);
        let s = self.e.read(status, n);
        release(status);
        check!(clReleaseKernel(k));
        s
    }

    /// `n` work-items read one packet each: (status, value) per work-item.
    fn consume(&self, p: cl_mem, n: usize) -> Vec<(i32, i32)> {
        let k = kernel(self.prog, "consume");
        let out = self.e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
        let status = self.e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
        arg(k, 0, &p);
        arg(k, 1, &out);
        arg(k, 2, &status);
        run(&self.e, k, n, None);
        let s: Vec<i32> = self.e.read(status, n);
        let v: Vec<i32> = self.e.read(out, n);
        release(out);
        release(status);
        check!(clReleaseKernel(k));
        s.into_iter().zip(v).collect()
    }

    fn counts(&self, p: cl_mem) -> [u32; 2] {
        let k = kernel(self.prog, "counts");
        let out = self.e.buffer(CL_MEM_READ_WRITE, 8, null_mut());
        arg(k, 0, &p);
        arg(k, 1, &out);
        run(&self.e, k, 1, None);
        let v: Vec<u32> = self.e.read(out, 2);
        release(out);
        check!(clReleaseKernel(k));
        [v[0], v[1]]
    }
}

impl Drop for Int {
    fn drop(&mut self) {
        unsafe { clReleaseProgram(self.prog) };
    }
}

#[test]
fn create_pipe_errors() {
    let e = Env::new();
    for bad in [
        CL_MEM_READ_ONLY,
        CL_MEM_WRITE_ONLY,
        CL_MEM_HOST_READ_ONLY,
        CL_MEM_COPY_HOST_PTR,
        CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
    ] {
        assert_eq!(
            create(&e, bad, 4, 4),
            Err(CL_INVALID_VALUE),
            "flags {bad:#x}"
        );
    }
    assert_eq!(create(&e, 0, 0, 4), Err(CL_INVALID_PIPE_SIZE));
    assert_eq!(create(&e, 0, 4, 0), Err(CL_INVALID_PIPE_SIZE));
    let max: u32 = device_val(e.dev, CL_DEVICE_PIPE_MAX_PACKET_SIZE);
    assert_eq!(create(&e, 0, max + 1, 4), Err(CL_INVALID_PIPE_SIZE));
    let m = pipe(&e, max, 2);
    release(m);
    // More than any allocation can hold.
    assert_eq!(
        create(&e, 0, max, u32::MAX),
        Err(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    );
    let mut err = 0;
    let props: [cl_pipe_properties; 3] = [1, 0, 0];
    let m = unsafe { clCreatePipe(e.ctx, 0, 4, 4, props.as_ptr(), &mut err) };
    assert_eq!((m, err), (null_mut(), CL_INVALID_VALUE));
    let m = unsafe { clCreatePipe(null_mut(), 0, 4, 4, null(), &mut err) };
    assert_eq!((m, err), (null_mut(), CL_INVALID_CONTEXT));
    // An empty property list is the same as none.
    let empty: [cl_pipe_properties; 1] = [0];
    let m = unsafe { clCreatePipe(e.ctx, CL_MEM_READ_WRITE, 4, 4, empty.as_ptr(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(
        bytes_to_vec::<cl_pipe_properties>(&pipe_info(m, CL_PIPE_PROPERTIES)),
        [0]
    );
    release(m);
}

#[test]
fn pipe_and_memory_queries() {
    let e = Env::new();
    let m = pipe(&e, 16, 100);
    assert_eq!(bytes_to::<u32>(&pipe_info(m, CL_PIPE_PACKET_SIZE)), 16);
    assert_eq!(bytes_to::<u32>(&pipe_info(m, CL_PIPE_MAX_PACKETS)), 100);
    assert!(pipe_info(m, CL_PIPE_PROPERTIES).is_empty());
    let mut small = 0u16;
    check_err!(
        clGetPipeInfo(
            m,
            CL_PIPE_PACKET_SIZE,
            2,
            (&mut small as *mut u16).cast(),
            null_mut()
        ),
        CL_INVALID_VALUE
    );
    check_err!(
        clGetPipeInfo(m, 0x7777, 0, null_mut(), null_mut()),
        CL_INVALID_VALUE
    );
    assert_eq!(mem_val::<cl_uint>(m, CL_MEM_TYPE), CL_MEM_OBJECT_PIPE);
    assert_eq!(
        mem_val::<cl_bitfield>(m, CL_MEM_FLAGS),
        CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS
    );
    assert!(mem_val::<usize>(m, CL_MEM_SIZE) >= 16 * 100);
    assert_eq!(mem_val::<usize>(m, CL_MEM_HOST_PTR), 0);

    let buf = e.buffer(CL_MEM_READ_WRITE, 64, null_mut());
    let mut sz = 0;
    check_err!(
        clGetPipeInfo(buf, CL_PIPE_PACKET_SIZE, 0, null_mut(), &mut sz),
        CL_INVALID_MEM_OBJECT
    );
    check_err!(
        clGetPipeInfo(null_mut(), CL_PIPE_PACKET_SIZE, 0, null_mut(), &mut sz),
        CL_INVALID_MEM_OBJECT
    );
    // "Read/Write to Buffers and Images, but not Pipes": host commands refuse pipes.
    let mut host = [0u8; 64];
    let q = e.queue;
    check_err!(
        clEnqueueReadBuffer(
            q,
            m,
            CL_TRUE,
            0,
            16,
            host.as_mut_ptr().cast(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_MEM_OBJECT
    );
    check_err!(
        clEnqueueWriteBuffer(
            q,
            m,
            CL_TRUE,
            0,
            16,
            host.as_ptr().cast(),
            0,
            null(),
            null_mut()
        ),
        CL_INVALID_MEM_OBJECT
    );
    check_err!(
        clEnqueueFillBuffer(q, m, host.as_ptr().cast(), 4, 0, 16, 0, null(), null_mut()),
        CL_INVALID_MEM_OBJECT
    );
    check_err!(
        clEnqueueCopyBuffer(q, m, buf, 0, 0, 16, 0, null(), null_mut()),
        CL_INVALID_MEM_OBJECT
    );
    check_err!(
        clEnqueueCopyBuffer(q, buf, m, 0, 0, 16, 0, null(), null_mut()),
        CL_INVALID_MEM_OBJECT
    );
    let mut err = 0;
    let p = unsafe { clEnqueueMapBuffer(q, m, CL_TRUE, 1, 0, 16, 0, null(), null_mut(), &mut err) };
    assert_eq!((p, err), (null_mut(), CL_INVALID_MEM_OBJECT));
    let region = cl_buffer_region {
        origin: 0,
        size: 16,
    };
    let sub = unsafe {
        clCreateSubBuffer(
            m,
            0,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&region as *const cl_buffer_region).cast(),
            &mut err,
        )
    };
    assert_eq!((sub, err), (null_mut(), CL_INVALID_MEM_OBJECT));
    release(buf);
    release(m);
}

#[test]
fn device_reports_pipes() {
    let dev = device();
    assert_eq!(device_val::<cl_bool>(dev, CL_DEVICE_PIPE_SUPPORT), CL_TRUE);
    assert!(device_val::<u32>(dev, CL_DEVICE_MAX_PIPE_ARGS) >= 16);
    assert!(device_val::<u32>(dev, CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS) >= 1);
    assert!(device_val::<u32>(dev, CL_DEVICE_PIPE_MAX_PACKET_SIZE) >= 1024);
    let features = device_info(dev, CL_DEVICE_OPENCL_C_FEATURES);
    // cl_name_version: a cl_version then a 64-byte name.
    let names: Vec<String> = features
        .chunks(68)
        .map(|c| {
            bytes_to_string(&c[4..])
                .trim_end_matches(char::from(0))
                .to_string()
        })
        .collect();
    assert!(names.iter().any(|n| n == "__opencl_c_pipes"), "{names:?}");
}

#[test]
fn producer_then_consumer_pass_every_packet_once() {
    let t = Int::new();
    let n = 1000;
    let p = pipe(&t.e, 4, 1024);
    assert!(t.produce(p, n).iter().all(|&s| s == 0));
    assert_eq!(t.counts(p), [n as u32, 1024]);
    let got = t.consume(p, n);
    assert!(got.iter().all(|&(s, _)| s == 0), "{got:?}");
    let mut values: Vec<i32> = got.iter().map(|&(_, v)| v).collect();
    values.sort();
    assert_eq!(values, (0..n as i32).collect::<Vec<_>>());
    assert_eq!(t.counts(p), [0, 1024]);
    // The ring wraps: a second round through the same pipe.
    assert!(t.produce(p, n).iter().all(|&s| s == 0));
    let mut values: Vec<i32> = t
        .consume(p, n)
        .iter()
        .map(|&(s, v)| {
            assert_eq!(s, 0);
            v
        })
        .collect();
    values.sort();
    assert_eq!(values, (0..n as i32).collect::<Vec<_>>());
    release(p);
}

#[test]
fn pipes_passed_to_functions_and_wrong_packet_sizes() {
    let t = Int::new();
    let n = 16;
    let p = pipe(&t.e, 4, 32);
    let k = kernel(t.prog, "produce_via_function");
    let status = t.e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    arg(k, 0, &p);
    arg(k, 1, &status);
    run(&t.e, k, n, None);
    assert!(t.e.read::<i32>(status, n).iter().all(|&s| s == 0));
    let mut v: Vec<i32> = t
        .consume(p, n)
        .iter()
        .map(|&(s, v)| {
            assert_eq!(s, 0);
            v
        })
        .collect();
    v.sort();
    assert_eq!(v, (0..n as i32).collect::<Vec<_>>());
    // int packets through a pipe of 8-byte packets: refused, nothing written beyond a packet.
    let wide = pipe(&t.e, 8, 32);
    assert!(t.produce(wide, n).iter().all(|&s| s < 0));
    assert!(t.consume(wide, n).iter().all(|&(s, v)| s < 0 && v == -1));
    for m in [p, wide, status] {
        release(m);
    }
    check!(clReleaseKernel(k));
}

#[test]
fn single_work_items_keep_the_order() {
    let t = Int::new();
    let n = 300i32;
    let p = pipe(&t.e, 4, 256);
    let prod = kernel(t.prog, "produce_seq");
    let ok = t.e.buffer(CL_MEM_READ_WRITE, 4, null_mut());
    arg(prod, 0, &p);
    arg(prod, 1, &n);
    arg(prod, 2, &ok);
    run(&t.e, prod, 1, None);
    // Full after 256 packets.
    assert_eq!(t.e.read::<i32>(ok, 1), [256]);
    let cons = kernel(t.prog, "consume_seq");
    let out = t.e.buffer(CL_MEM_READ_WRITE, n as usize * 4, null_mut());
    arg(cons, 0, &p);
    arg(cons, 1, &n);
    arg(cons, 2, &out);
    run(&t.e, cons, 1, None);
    let v: Vec<i32> = t.e.read(out, n as usize);
    let expected: Vec<i32> = (0..256).chain(std::iter::repeat(-2).take(44)).collect();
    assert_eq!(v, expected);
    for m in [ok, out, p] {
        release(m);
    }
    check!(clReleaseKernel(prod));
    check!(clReleaseKernel(cons));
}

#[test]
fn full_and_empty_pipes() {
    let t = Int::new();
    let p = pipe(&t.e, 4, 64);
    // Empty: every read fails and leaves the value alone.
    let got = t.consume(p, 32);
    assert!(got.iter().all(|&(s, v)| s < 0 && v == -1), "{got:?}");
    // 256 writers, room for 64.
    let status = t.produce(p, 256);
    let winners: Vec<i32> = (0..256).filter(|&i| status[i as usize] == 0).collect();
    assert_eq!(winners.len(), 64);
    assert!(status.iter().all(|&s| s <= 0));
    assert_eq!(t.counts(p), [64, 64]);
    let got = t.consume(p, 256);
    let mut read: Vec<i32> = got
        .iter()
        .filter(|&&(s, _)| s == 0)
        .map(|&(_, v)| v)
        .collect();
    assert_eq!(read.len(), 64);
    read.sort();
    assert_eq!(read, winners);
    release(p);
}

#[test]
fn producer_and_consumer_on_two_queues() {
    let t = Int::new();
    let e = &t.e;
    let mut err = 0;
    let q2 = unsafe { clCreateCommandQueueWithProperties(e.ctx, e.dev, null(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let n = 512usize;
    let p = pipe(e, 4, n as u32);
    let prod = kernel(t.prog, "produce");
    let cons = kernel(t.prog, "consume");
    let s1 = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    let s2 = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    let out = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    arg(prod, 0, &p);
    arg(prod, 1, &s1);
    arg(cons, 0, &p);
    arg(cons, 1, &out);
    arg(cons, 2, &s2);
    let mut produced: cl_event = null_mut();
    check!(clEnqueueNDRangeKernel(
        e.queue,
        prod,
        1,
        null(),
        &n,
        null(),
        0,
        null(),
        &mut produced
    ));
    check!(clFlush(e.queue));
    check!(clEnqueueNDRangeKernel(
        q2,
        cons,
        1,
        null(),
        &n,
        null(),
        1,
        &produced,
        null_mut()
    ));
    check!(clFinish(q2));
    let status: Vec<i32> = e.read(s2, n);
    assert!(status.iter().all(|&s| s == 0));
    let mut v: Vec<i32> = e.read(out, n);
    v.sort();
    assert_eq!(v, (0..n as i32).collect::<Vec<_>>());
    check!(clReleaseEvent(produced));
    for m in [s1, s2, out, p] {
        release(m);
    }
    check!(clReleaseKernel(prod));
    check!(clReleaseKernel(cons));
    check!(clReleaseCommandQueue(q2));
}

const RESERVE: &str = r#"
kernel void produce2(write_only pipe uint p, global int *ok) {
    uint id = get_global_id(0);
    reserve_id_t r = reserve_write_pipe(p, 2);
    ok[id] = is_valid_reserve_id(r);
    if (is_valid_reserve_id(r)) {
        uint a = 2 * id, b = 2 * id + 1;
        write_pipe(p, r, 1, &b);
        write_pipe(p, r, 0u, &a);
        commit_write_pipe(p, r);
    }
}
kernel void consume2(read_only pipe uint p, global uint *out, global int *ok) {
    uint id = get_global_id(0);
    reserve_id_t r = reserve_read_pipe(p, 2);
    ok[id] = is_valid_reserve_id(r);
    uint a = 0xffffffff, b = 0xffffffff;
    if (is_valid_reserve_id(r)) {
        read_pipe(p, r, 0, &a);
        read_pipe(p, r, 1, &b);
        // Beyond the reservation: refused.
        if (read_pipe(p, r, 2, &b) == 0) b = 0xfffffffe;
        commit_read_pipe(p, r);
    }
    out[2 * id] = a;
    out[2 * id + 1] = b;
}
kernel void produce_wg(write_only pipe float4 p, global int *ok) {
    reserve_id_t r = work_group_reserve_write_pipe(p, get_local_size(0));
    float4 v = (float4)(get_global_id(0), 1.0f, 2.0f, 3.0f);
    ok[get_global_id(0)] = is_valid_reserve_id(r) ? write_pipe(p, r, get_local_id(0), &v) : -7;
    work_group_commit_write_pipe(p, r);
}
// The reservation in local memory, as the conformance tests write it.
kernel void consume_wg(read_only pipe float4 p, global float4 *out) {
    __local reserve_id_t r;
    r = work_group_reserve_read_pipe(p, get_local_size(0));
    float4 v = (float4)(-1.0f);
    if (is_valid_reserve_id(r))
        read_pipe(p, r, get_local_id(0), &v);
    work_group_commit_read_pipe(p, r);
    out[get_global_id(0)] = v;
}
kernel void null_id(global int *out) {
    reserve_id_t r = CLK_NULL_RESERVE_ID;
    out[0] = is_valid_reserve_id(r);
}
"#;

#[test]
fn reservations() {
    let e = Env::new();
    let prog = e.program(RESERVE, "-cl-std=CL2.0");
    let n = 100usize;
    // Room for 2 × 80 packets: 80 reservations succeed.
    let p = pipe(&e, 4, 160);
    let prod = kernel(prog, "produce2");
    let ok = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    arg(prod, 0, &p);
    arg(prod, 1, &ok);
    run(&e, prod, n, None);
    let okv: Vec<i32> = e.read(ok, n);
    let winners: Vec<u32> = (0..n as u32).filter(|&i| okv[i as usize] == 1).collect();
    assert_eq!(winners.len(), 80, "{okv:?}");
    let cons = kernel(prog, "consume2");
    let out = e.buffer(CL_MEM_READ_WRITE, n * 8, null_mut());
    arg(cons, 0, &p);
    arg(cons, 1, &out);
    arg(cons, 2, &ok);
    run(&e, cons, n, None);
    let okv: Vec<i32> = e.read(ok, n);
    let v: Vec<u32> = e.read(out, 2 * n);
    let mut pairs = vec![];
    for i in 0..n {
        if okv[i] == 1 {
            // A reservation's packets stay together and in order.
            assert_eq!(
                v[2 * i] + 1,
                v[2 * i + 1],
                "pair {i}: {:?}",
                &v[2 * i..2 * i + 2]
            );
            pairs.push(v[2 * i] / 2);
        } else {
            assert_eq!((v[2 * i], v[2 * i + 1]), (u32::MAX, u32::MAX));
        }
    }
    pairs.sort();
    assert_eq!(pairs, winners);

    let k = kernel(prog, "null_id");
    arg(k, 0, &ok);
    run(&e, k, 1, None);
    assert_eq!(e.read::<i32>(ok, 1), [0]);
    for m in [ok, out, p] {
        release(m);
    }
    for k in [prod, cons, k] {
        check!(clReleaseKernel(k));
    }
    check!(clReleaseProgram(prog));
}

#[test]
fn work_group_reservations() {
    let e = Env::new();
    let prog = e.program(RESERVE, OPTS);
    let (n, wg) = (256usize, 32usize);
    // Room for 5 work-groups of 32 packets of 16 bytes.
    let p = pipe(&e, 16, 160);
    let prod = kernel(prog, "produce_wg");
    let ok = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    arg(prod, 0, &p);
    arg(prod, 1, &ok);
    run(&e, prod, n, Some(wg));
    let okv: Vec<i32> = e.read(ok, n);
    let groups: Vec<usize> = (0..n / wg)
        .filter(|g| okv[g * wg..(g + 1) * wg].iter().all(|&s| s == 0))
        .collect();
    assert_eq!(groups.len(), 5, "{okv:?}");
    // The other groups failed as a whole.
    assert_eq!(okv.iter().filter(|&&s| s == -7).count(), n - 5 * wg);
    let cons = kernel(prog, "consume_wg");
    let out = e.buffer(CL_MEM_READ_WRITE, n * 16, null_mut());
    arg(cons, 0, &p);
    arg(cons, 1, &out);
    run(&e, cons, n, Some(wg));
    let v: Vec<[f32; 4]> = e.read(out, n);
    let mut got: Vec<usize> = vec![];
    for (i, x) in v.iter().enumerate() {
        if x[0] >= 0.0 {
            assert_eq!(&x[1..], &[1.0, 2.0, 3.0], "item {i}");
            got.push(x[0] as usize);
        } else {
            assert_eq!(x, &[-1.0; 4]);
        }
    }
    got.sort();
    let expected: Vec<usize> = groups.iter().flat_map(|g| g * wg..(g + 1) * wg).collect();
    assert_eq!(got, expected);
    for m in [ok, out, p] {
        release(m);
    }
    check!(clReleaseKernel(prod));
    check!(clReleaseKernel(cons));
    check!(clReleaseProgram(prog));
}

/// Byte packets up to the device's largest (`struct { char a[N]; }`, the conformance suite's
/// pipe_max_packet_size with N = CL_DEVICE_PIPE_MAX_PACKET_SIZE), through reservations and the
/// 2-argument forms, the ring filled and drained twice: each packet arrives once, whole. Copied
/// with a constant index per byte, a 1024-byte packet took lavapipe minutes to compile.
#[test]
fn byte_packets_up_to_the_largest_size() {
    let e = Env::new();
    let max: u32 = device_val(e.dev, CL_DEVICE_PIPE_MAX_PACKET_SIZE);
    let n = 256usize;
    for size in [63usize, 64, 65, 1024.min(max as usize)] {
        let src = format!(
            "typedef struct {{ char a[{size}]; }} packet;
kernel void put(write_only pipe packet p, global packet *src) {{
    int i = get_global_id(0);
    if (i % 2) {{ write_pipe(p, &src[i]); return; }}
    reserve_id_t r = reserve_write_pipe(p, 1);
    if (is_valid_reserve_id(r)) {{ write_pipe(p, r, 0, &src[i]); commit_write_pipe(p, r); }}
}}
kernel void get(read_only pipe packet p, global packet *dst) {{
    int i = get_global_id(0);
    if (i % 2) {{ read_pipe(p, &dst[i]); return; }}
    reserve_id_t r = reserve_read_pipe(p, 1);
    if (is_valid_reserve_id(r)) {{ read_pipe(p, r, 0, &dst[i]); commit_read_pipe(p, r); }}
}}"
        );
        let prog = e.program(&src, OPTS);
        let p = pipe(&e, size as u32, n as u32);
        for round in 0..2u8 {
            let data: Vec<u8> = (0..n * size)
                .map(|i| (i * 7 + i / size + round as usize) as u8)
                .collect();
            let input = e.buffer_from(&data);
            let output = e.buffer_from(&vec![0u8; n * size]);
            let (put, get) = (kernel(prog, "put"), kernel(prog, "get"));
            arg(put, 0, &p);
            arg(put, 1, &input);
            arg(get, 0, &p);
            arg(get, 1, &output);
            run(&e, put, n, None);
            run(&e, get, n, None);
            let mut sent: Vec<&[u8]> = data.chunks(size).collect();
            let got = e.read::<u8>(output, n * size);
            let mut got: Vec<&[u8]> = got.chunks(size).collect();
            sent.sort();
            got.sort();
            assert_eq!(got, sent, "{size}-byte packets, round {round}");
            for m in [input, output] {
                release(m);
            }
            check!(clReleaseKernel(put));
            check!(clReleaseKernel(get));
        }
        release(p);
        check!(clReleaseProgram(prog));
    }
}

/// Every built-in form as a statement, its result discarded (as the conformance suite's
/// kernels have them), for pipes of a built-in type and of a struct: the lowering's
/// expansions must not warn, or `-Werror` fails a correct program (the 4-argument forms
/// ended in a `0;` statement: -Wunused-value).
#[test]
fn every_form_builds_under_werror() {
    let src = r#"
typedef struct { char c; short s; } pair;
kernel void put(write_only pipe int p, write_only pipe pair q, global int *src, global pair *ps) {
    int i = get_global_id(0);
    write_pipe(p, &src[i]);
    write_pipe(q, &ps[i]);
    reserve_id_t r = reserve_write_pipe(p, 1);
    if (is_valid_reserve_id(r)) { write_pipe(p, r, 0, &src[i]); commit_write_pipe(p, r); }
    reserve_id_t s = reserve_write_pipe(q, 1);
    if (is_valid_reserve_id(s)) { write_pipe(q, s, 0, &ps[i]); commit_write_pipe(q, s); }
    reserve_id_t w = work_group_reserve_write_pipe(p, get_local_size(0));
    if (is_valid_reserve_id(w)) write_pipe(p, w, get_local_id(0), &src[i]);
    work_group_commit_write_pipe(p, w);
}
kernel void get(read_only pipe int p, read_only pipe pair q, global int *dst, global pair *pd) {
    int i = get_global_id(0);
    read_pipe(p, &dst[i]);
    read_pipe(q, &pd[i]);
    reserve_id_t r = reserve_read_pipe(p, 1);
    if (is_valid_reserve_id(r)) { read_pipe(p, r, 0, &dst[i]); commit_read_pipe(p, r); }
    reserve_id_t s = reserve_read_pipe(q, 1);
    if (is_valid_reserve_id(s)) { read_pipe(q, s, 0, &pd[i]); commit_read_pipe(q, s); }
    reserve_id_t w = work_group_reserve_read_pipe(p, get_local_size(0));
    if (is_valid_reserve_id(w)) read_pipe(p, w, get_local_id(0), &dst[i]);
    work_group_commit_read_pipe(p, w);
    get_pipe_num_packets(p);
}
"#;
    let e = Env::new();
    for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
        let p = build_program(e.ctx, e.dev, src, &format!("{std} -Werror"))
            .unwrap_or_else(|(c, log)| panic!("{std}: {}\n{log}", err_name(c)));
        check!(clReleaseProgram(p));
    }
}

const PACKETS: &str = r#"
typedef struct { int a; float b; uint c[2]; } packet;
kernel void put(write_only pipe packet p, write_only pipe char c, write_only pipe ushort s) {
    int i = get_global_id(0);
    packet v = { i, i * 0.5f, { i + 1, i + 2 } };
    char x = (char)(i - 64);
    ushort y = (ushort)(i * 300);
    write_pipe(p, &v);
    write_pipe(c, &x);
    write_pipe(s, &y);
}
kernel void get(read_only pipe packet p, read_only pipe char c, read_only pipe ushort s,
                global packet *out, global char *oc, global ushort *os) {
    int i = get_global_id(0);
    read_pipe(p, &out[i]);
    read_pipe(c, &oc[i]);
    read_pipe(s, &os[i]);
}
"#;

#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Packet {
    a: i32,
    b: f32,
    c: [u32; 2],
}

#[test]
fn struct_char_and_short_packets() {
    let e = Env::new();
    let prog = e.program(PACKETS, OPTS);
    let n = 128usize;
    let p = pipe(&e, 16, n as u32);
    let c = pipe(&e, 1, n as u32);
    let s = pipe(&e, 2, n as u32);
    let put = kernel(prog, "put");
    for (i, m) in [p, c, s].iter().enumerate() {
        arg(put, i as u32, m);
    }
    run(&e, put, n, None);
    let get = kernel(prog, "get");
    let out = e.buffer(CL_MEM_READ_WRITE, n * 16, null_mut());
    let oc = e.buffer(CL_MEM_READ_WRITE, n, null_mut());
    let os = e.buffer(CL_MEM_READ_WRITE, n * 2, null_mut());
    for (i, m) in [p, c, s, out, oc, os].iter().enumerate() {
        arg(get, i as u32, m);
    }
    run(&e, get, n, None);
    let mut v: Vec<Packet> = e.read(out, n);
    v.sort_by_key(|p| p.a);
    for (i, x) in v.iter().enumerate() {
        let i32_ = i as i32;
        assert_eq!(
            *x,
            Packet {
                a: i32_,
                b: i32_ as f32 * 0.5,
                c: [i as u32 + 1, i as u32 + 2]
            }
        );
    }
    let mut chars: Vec<i8> = e.read(oc, n);
    chars.sort();
    assert_eq!(
        chars,
        (0..n as i32).map(|i| (i - 64) as i8).collect::<Vec<_>>()
    );
    let mut shorts: Vec<u16> = e.read(os, n);
    shorts.sort();
    let mut expected: Vec<u16> = (0..n).map(|i| (i * 300) as u16).collect();
    expected.sort();
    assert_eq!(shorts, expected);
    for m in [p, c, s, out, oc, os] {
        release(m);
    }
    check!(clReleaseKernel(put));
    check!(clReleaseKernel(get));
    check!(clReleaseProgram(prog));
}

fn arg_info_bytes(k: cl_kernel, i: u32, p: cl_uint) -> Vec<u8> {
    let mut size = 0;
    check!(clGetKernelArgInfo(k, i, p, 0, null_mut(), &mut size));
    let mut v = vec![0u8; size];
    check!(clGetKernelArgInfo(
        k,
        i,
        p,
        size,
        v.as_mut_ptr().cast(),
        null_mut()
    ));
    v
}

#[test]
fn pipe_arguments() {
    let e = Env::new();
    let prog = e.program(INT_PIPES, &format!("{OPTS} -cl-kernel-arg-info"));
    let k = kernel(prog, "consume");
    assert_eq!(
        bytes_to_string(&arg_info_bytes(k, 0, CL_KERNEL_ARG_NAME)),
        "p"
    );
    assert_eq!(
        bytes_to_string(&arg_info_bytes(k, 0, CL_KERNEL_ARG_TYPE_NAME)),
        "int"
    );
    assert_eq!(
        bytes_to::<cl_bitfield>(&arg_info_bytes(k, 0, CL_KERNEL_ARG_TYPE_QUALIFIER)),
        CL_KERNEL_ARG_TYPE_PIPE
    );
    assert_eq!(
        bytes_to::<cl_uint>(&arg_info_bytes(k, 0, CL_KERNEL_ARG_ACCESS_QUALIFIER)),
        CL_KERNEL_ARG_ACCESS_READ_ONLY
    );
    assert_eq!(
        bytes_to::<cl_uint>(&arg_info_bytes(k, 0, CL_KERNEL_ARG_ADDRESS_QUALIFIER)),
        CL_KERNEL_ARG_ADDRESS_GLOBAL
    );
    // The buffer argument beside it is reported as before.
    assert_eq!(
        bytes_to_string(&arg_info_bytes(k, 1, CL_KERNEL_ARG_TYPE_NAME)),
        "int*"
    );
    assert_eq!(
        bytes_to::<cl_bitfield>(&arg_info_bytes(k, 1, CL_KERNEL_ARG_TYPE_QUALIFIER)),
        0
    );
    let w = kernel(prog, "produce_seq");
    assert_eq!(
        bytes_to::<cl_uint>(&arg_info_bytes(w, 0, CL_KERNEL_ARG_ACCESS_QUALIFIER)),
        CL_KERNEL_ARG_ACCESS_WRITE_ONLY
    );
    let r = kernel(prog, "counts");
    assert_eq!(
        bytes_to::<cl_uint>(&arg_info_bytes(r, 0, CL_KERNEL_ARG_ACCESS_QUALIFIER)),
        CL_KERNEL_ARG_ACCESS_READ_ONLY
    );

    // A buffer for a pipe argument, a pipe for a buffer argument, NULL for a pipe.
    let p = pipe(&e, 4, 4);
    let buf = e.buffer(CL_MEM_READ_WRITE, 64, null_mut());
    let size = std::mem::size_of::<cl_mem>();
    let set = |i: u32, m: &cl_mem| unsafe {
        clSetKernelArg(k, i, size, (m as *const cl_mem).cast::<c_void>())
    };
    assert_eq!(set(0, &buf), CL_INVALID_MEM_OBJECT);
    assert_eq!(set(1, &p), CL_INVALID_MEM_OBJECT);
    assert_eq!(set(0, &null_mut()), CL_INVALID_MEM_OBJECT);
    assert_eq!(set(0, &p), CL_SUCCESS);
    assert_eq!(set(1, &buf), CL_SUCCESS);
    release(p);
    release(buf);
    for k in [k, w, r] {
        check!(clReleaseKernel(k));
    }
    check!(clReleaseProgram(prog));
}

/// The pipe's argument info of `k`'s argument 0: (type name, access qualifier, type qualifier).
fn pipe_arg_of(k: cl_kernel) -> (String, cl_uint, cl_bitfield) {
    (
        bytes_to_string(&arg_info_bytes(k, 0, CL_KERNEL_ARG_TYPE_NAME)),
        bytes_to(&arg_info_bytes(k, 0, CL_KERNEL_ARG_ACCESS_QUALIFIER)),
        bytes_to(&arg_info_bytes(k, 0, CL_KERNEL_ARG_TYPE_QUALIFIER)),
    )
}

#[test]
fn pipes_through_compile_link_and_binaries() {
    let e = Env::new();
    let mut err = 0;
    let ptr = INT_PIPES.as_ptr() as *const std::ffi::c_char;
    let len = INT_PIPES.len();
    let obj = unsafe { clCreateProgramWithSource(e.ctx, 1, &ptr, &len, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let opts = std::ffi::CString::new("-cl-std=CL2.0 -cl-kernel-arg-info").unwrap();
    check!(clCompileProgram(
        obj,
        1,
        &e.dev,
        opts.as_ptr(),
        0,
        null(),
        null(),
        None,
        null_mut()
    ));
    let linked = unsafe {
        clLinkProgram(
            e.ctx,
            1,
            &e.dev,
            null(),
            1,
            &obj,
            None,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    let k = kernel(linked, "produce");
    // Argument info needs -cl-kernel-arg-info at link time; that argument 0 is a pipe is
    // known all the same.
    let status = e.buffer(CL_MEM_READ_WRITE, 256, null_mut());
    let size = std::mem::size_of::<cl_mem>();
    check_err!(
        clSetKernelArg(k, 0, size, (&status as *const cl_mem).cast()),
        CL_INVALID_MEM_OBJECT
    );
    // The linked producer fills a pipe that a kernel of a program rebuilt from the binary of
    // a source-built program empties.
    let n = 64;
    let p = pipe(&e, 4, n as u32);
    arg(k, 0, &p);
    arg(k, 1, &status);
    run(&e, k, n, None);
    assert!(e.read::<i32>(status, n).iter().all(|&s| s == 0));

    let built = e.program(INT_PIPES, "-cl-std=CL3.0 -cl-kernel-arg-info");
    let bin = binaries(built).swap_remove(0);
    let (bptr, blen) = (bin.as_ptr(), bin.len());
    let mut bstatus = 0;
    let from_bin = unsafe {
        clCreateProgramWithBinary(e.ctx, 1, &e.dev, &blen, &bptr, &mut bstatus, &mut err)
    };
    assert_eq!((bstatus, err), (CL_SUCCESS, CL_SUCCESS));
    check!(clBuildProgram(
        from_bin,
        1,
        &e.dev,
        null(),
        None,
        null_mut()
    ));
    let c = kernel(from_bin, "consume");
    assert_eq!(
        pipe_arg_of(c),
        (
            "int".to_string(),
            CL_KERNEL_ARG_ACCESS_READ_ONLY,
            CL_KERNEL_ARG_TYPE_PIPE
        )
    );
    let out = e.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
    arg(c, 0, &p);
    arg(c, 1, &out);
    arg(c, 2, &status);
    run(&e, c, n, None);
    assert!(e.read::<i32>(status, n).iter().all(|&s| s == 0));
    let mut v: Vec<i32> = e.read(out, n);
    v.sort();
    assert_eq!(v, (0..n as i32).collect::<Vec<_>>());
    for m in [p, status, out] {
        release(m);
    }
    check!(clReleaseKernel(k));
    check!(clReleaseKernel(c));
    for p in [obj, linked, built, from_bin] {
        check!(clReleaseProgram(p));
    }
}
