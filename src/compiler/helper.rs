//! The `vkcl-clspv` helper process: both its server side (run by the helper binary) and the
//! client side (run inside the ICD by `compiler::compile`).
//!
//! A fatal error inside LLVM or clspv ends the process it happens in (an unknown option exits, a
//! printf without `-enable-printf` segfaults), so clspv never runs in the application's process.
//! The client talks to one long-lived helper over a Unix socket that is the helper's stdin and
//! stdout; the helper's stderr is a pipe the client keeps reading, so whatever clspv printed
//! before dying can go into the build log.
//!
//! Protocol: every message is a frame, `u32 count` then `count` parts of `u32 len` + bytes, all
//! little-endian.
//! - helper → client once at start: `["ok"]` or `["error", why]` (clspv could not be loaded);
//! - client → helper: `["compile", options, source...]`;
//! - helper → client: `[status (i32 LE), log, spirv bytes]`; status is clspv's return code.

use std::ffi::{c_char, c_int, c_void, CString};
use std::io::{self, Read, Write};

/// Written on stderr after each compile, before the answer (see `Client::take_stderr`).
const END_OF_STDERR: &str = "\u{1}vkcl-clspv:end-of-compile\u{1}\n";

/// Largest part a frame may carry: sources and SPIR-V are far smaller; anything bigger is a
/// garbled stream, not data.
const MAX_PART: usize = 1 << 30;
/// Most parts in one frame (the sources of one program plus two).
const MAX_PARTS: usize = 1 << 16;

/// Writes one frame.
pub(crate) fn write_frame(w: &mut impl Write, parts: &[&[u8]]) -> io::Result<()> {
    let mut buf = Vec::with_capacity(4 + parts.iter().map(|p| p.len() + 4).sum::<usize>());
    buf.extend_from_slice(&len32(parts.len())?.to_le_bytes());
    for part in parts {
        buf.extend_from_slice(&len32(part.len())?.to_le_bytes());
        buf.extend_from_slice(part);
    }
    w.write_all(&buf)?;
    w.flush()
}

fn len32(n: usize) -> io::Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|&n| (n as usize) <= MAX_PART)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "frame part too large"))
}

/// Reads one frame. End of stream before a complete frame is `UnexpectedEof`.
pub(crate) fn read_frame(r: &mut impl Read) -> io::Result<Vec<Vec<u8>>> {
    let count = read_u32(r)? as usize;
    if count > MAX_PARTS {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "too many frame parts",
        ));
    }
    let mut parts = Vec::with_capacity(count);
    for _ in 0..count {
        let len = read_u32(r)? as usize;
        if len > MAX_PART {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "frame part too large",
            ));
        }
        let mut part = vec![0; len];
        r.read_exact(&mut part)?;
        parts.push(part);
    }
    Ok(parts)
}

fn read_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

// ---------------------------------------------------------------------------------------------
// Server side (the helper binary).

type CompileFn = unsafe extern "C" fn(
    usize,
    *const usize,
    *const *const c_char,
    *const c_char,
    *mut *mut c_char,
    *mut usize,
    *mut *mut c_char,
) -> c_int;

extern "C" {
    fn free(p: *mut c_void);
    #[cfg(unix)]
    fn dup(fd: c_int) -> c_int;
    #[cfg(unix)]
    fn dup2(old: c_int, new: c_int) -> c_int;
}

/// clspv loaded in this process.
pub struct Clspv {
    compile: CompileFn,
    // Keeps the code behind `compile` mapped.
    _lib: libloading::Library,
}

impl Clspv {
    /// Loads clspv with every symbol bound now, so a missing one is an error here, not a crash
    /// in the middle of a compile. In a process without the Python stubs this fails for the
    /// pyclspv build.
    pub fn load(path: &str) -> Result<Clspv, String> {
        #[cfg(unix)]
        let lib = {
            use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
            // SAFETY: loading runs clspv's static constructors (LLVM option registration),
            // which have no preconditions on our side.
            unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }
                .map(libloading::Library::from)
        };
        #[cfg(not(unix))]
        // SAFETY: as above.
        let lib = unsafe { libloading::Library::new(path) };
        let lib = lib.map_err(|e| format!("cannot load clspv from {path}: {e}"))?;
        // SAFETY: the symbol is clspv's documented C entry point, whose signature is `CompileFn`.
        let compile = unsafe { lib.get::<CompileFn>(b"clspvCompileFromSourcesString\0") }
            .map(|f| *f)
            .map_err(|e| format!("{path} is not clspv: {e}"))?;
        Ok(Clspv { compile, _lib: lib })
    }

    /// One compilation: clspv's return code (0 = success), its log and its output bytes.
    pub fn compile(&self, options: &str, sources: &[&[u8]]) -> (i32, Vec<u8>, Vec<u8>) {
        let Ok(options) = CString::new(options) else {
            return (-1, b"build options contain a NUL byte".to_vec(), Vec::new());
        };
        let sizes: Vec<usize> = sources.iter().map(|s| s.len()).collect();
        let ptrs: Vec<*const c_char> = sources.iter().map(|s| s.as_ptr().cast()).collect();
        let (mut bin, mut bin_size, mut log) = (std::ptr::null_mut(), 0usize, std::ptr::null_mut());
        // SAFETY: `sizes`/`ptrs` describe `sources`, which outlive the call; `options` is
        // NUL-terminated; the three out-pointers are valid for writes.
        let status = unsafe {
            (self.compile)(
                sources.len(),
                sizes.as_ptr(),
                ptrs.as_ptr(),
                options.as_ptr(),
                &mut bin,
                &mut bin_size,
                &mut log,
            )
        };
        // SAFETY: clspv returns malloc'ed buffers (or NULL): `bin` of `bin_size` bytes and a
        // NUL-terminated `log`; we copy them once and release them with `free` as its API says.
        let (bin, log) = unsafe { (take_bytes(bin, bin_size), take_cstr(log)) };
        (status, log, bin)
    }
}

/// Copies and frees a malloc'ed buffer.
///
/// # Safety
/// `p` is NULL or a malloc'ed block of at least `len` readable bytes, not used afterwards.
unsafe fn take_bytes(p: *mut c_char, len: usize) -> Vec<u8> {
    if p.is_null() {
        return Vec::new();
    }
    // SAFETY: guaranteed by the caller.
    let v = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }.to_vec();
    // SAFETY: `p` came from malloc and is not used again.
    unsafe { free(p.cast()) };
    v
}

/// Copies and frees a malloc'ed C string.
///
/// # Safety
/// `p` is NULL or a malloc'ed NUL-terminated string, not used afterwards.
unsafe fn take_cstr(p: *mut c_char) -> Vec<u8> {
    if p.is_null() {
        return Vec::new();
    }
    // SAFETY: guaranteed by the caller.
    let v = unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes().to_vec();
    // SAFETY: `p` came from malloc and is not used again.
    unsafe { free(p.cast()) };
    v
}

/// The helper binary's main: `vkcl-clspv --serve <libclspv path>`. Returns the exit status.
/// A compile can run for minutes; when the application goes away meanwhile, the helper must
/// not go on as an orphan. (PR_SET_PDEATHSIG would fire when the application *thread* that
/// started the helper ends, not the process.) A watcher thread exits once the helper has been
/// re-parented.
#[cfg(unix)]
fn die_with_parent() {
    extern "C" {
        fn getppid() -> i32;
    }
    // SAFETY: getppid has no preconditions.
    let parent = unsafe { getppid() };
    let _ = std::thread::Builder::new()
        .name("parent-watch".into())
        .spawn(move || loop {
            std::thread::sleep(std::time::Duration::from_millis(500));
            // SAFETY: as above.
            if unsafe { getppid() } != parent {
                std::process::exit(0);
            }
        });
}

#[cfg(not(unix))]
fn die_with_parent() {}

pub fn serve() -> i32 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let lib = match args.as_slice() {
        [flag, lib] if flag == "--serve" => lib.clone(),
        _ => {
            eprintln!(
                "usage: vkcl-clspv --serve <path of libclspv>\n(started by the vkcl OpenCL ICD)"
            );
            return 2;
        }
    };
    die_with_parent();
    let Some(mut out) = protocol_stdout() else {
        eprintln!("vkcl-clspv: cannot set up stdout");
        return 1;
    };
    let mut input = io::stdin().lock();
    let clspv = match Clspv::load(&lib) {
        Ok(c) => c,
        Err(e) => {
            let _ = write_frame(&mut out, &[b"error", e.as_bytes()]);
            return 1;
        }
    };
    if write_frame(&mut out, &[b"ok"]).is_err() {
        return 1;
    }
    serve_requests(&clspv, &mut input, &mut out)
}

/// Answers requests until the client closes the stream.
fn serve_requests(clspv: &Clspv, input: &mut impl Read, out: &mut impl Write) -> i32 {
    loop {
        let frame = match read_frame(input) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return 0,
            Err(e) => {
                eprintln!("vkcl-clspv: bad request: {e}");
                return 1;
            }
        };
        let (status, log, spirv) = match frame.as_slice() {
            [cmd, options, sources @ ..] if cmd.as_slice() == b"compile" => {
                let options = String::from_utf8_lossy(options);
                let sources: Vec<&[u8]> = sources.iter().map(Vec::as_slice).collect();
                clspv.compile(&options, &sources)
            }
            _ => (-1, b"vkcl-clspv: unknown request".to_vec(), Vec::new()),
        };
        // Mark the end of this compile's stderr output, so the client knows it has all of it.
        eprint!("{END_OF_STDERR}");
        if write_frame(out, &[&status.to_le_bytes(), &log, &spirv]).is_err() {
            return 1;
        }
    }
}

/// Takes stdout for the protocol and points file descriptor 1 at stderr, so that anything clspv
/// or LLVM prints on stdout ends up in the captured stderr instead of corrupting the frames.
#[cfg(unix)]
fn protocol_stdout() -> Option<std::fs::File> {
    use std::os::fd::FromRawFd;
    // SAFETY: plain descriptor calls on descriptors 1 and 2, which exist in a spawned helper.
    let fd = unsafe { dup(1) };
    // SAFETY: as above.
    if fd < 0 || unsafe { dup2(2, 1) } < 0 {
        return None;
    }
    // SAFETY: `fd` is a fresh descriptor that nothing else owns.
    Some(unsafe { std::fs::File::from_raw_fd(fd) })
}

#[cfg(not(unix))]
fn protocol_stdout() -> Option<io::Stdout> {
    Some(io::stdout())
}

// ---------------------------------------------------------------------------------------------
// Client side (inside the ICD).

/// Keep at most this much of the helper's stderr: enough for any crash report, bounded for a
/// helper that lives as long as the application.
#[cfg(unix)]
const STDERR_KEEP: usize = 64 * 1024;

/// The longest a compile may take before the helper is stopped and the build fails. clspv
/// 0.0.1 loops for ever on some programs (pyopencl's radix-sort scan kernels: still inside
/// clBuildProgram after 900 s), and an application must get an answer.
#[cfg(unix)]
pub(crate) const COMPILE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(180);

/// The reader of the helper's stderr pauses this long after each read, so that a helper
/// printing in tiny writes (LLVM's unbuffered stderr; clspv printing an instruction per
/// iteration of a loop) costs the application a few wake-ups a second, not a core: the pipe
/// fills meanwhile and the next read takes it all.
#[cfg(unix)]
const STDERR_PAUSE: std::time::Duration = std::time::Duration::from_millis(20);

/// Why a request got no answer.
#[cfg(unix)]
pub(crate) enum Lost {
    /// The request could not even be sent: the helper was already gone, so retrying is safe.
    BeforeRequest,
    /// The helper died (or garbled the stream) while compiling; the text says how.
    During(String),
}

/// A running helper process.
#[cfg(unix)]
pub(crate) struct Client {
    child: std::process::Child,
    sock: std::os::unix::net::UnixStream,
    stderr: std::sync::Arc<Captured>,
    stderr_reader: Option<std::thread::JoinHandle<()>>,
    /// How long one compile may take (`COMPILE_TIMEOUT`; shorter in tests).
    pub(crate) timeout: std::time::Duration,
}

#[cfg(unix)]
impl Client {
    /// Starts `helper --serve lib` and waits for its greeting. `Err` means the compiler is not
    /// available (the text says why).
    pub(crate) fn spawn(helper: &std::path::Path, lib: &std::path::Path) -> Result<Client, String> {
        use std::process::{Command, Stdio};
        let (sock, theirs) =
            std::os::unix::net::UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
        let theirs_out = theirs.try_clone().map_err(|e| format!("socketpair: {e}"))?;
        let mut child = Command::new(helper)
            .arg("--serve")
            .arg(lib)
            .stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
            .stdout(Stdio::from(std::os::fd::OwnedFd::from(theirs_out)))
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", helper.display()))?;
        let stderr = std::sync::Arc::new(Captured::default());
        let stderr_reader = child
            .stderr
            .take()
            .map(|pipe| spawn_stderr_reader(pipe, stderr.clone()));
        let mut client = Client {
            child,
            sock,
            stderr,
            stderr_reader,
            timeout: COMPILE_TIMEOUT,
        };
        match read_frame(&mut client.sock) {
            Ok(f) if f.first().is_some_and(|c| c == b"ok") => Ok(client),
            Ok(f) => {
                Err(String::from_utf8_lossy(f.get(1).map_or(&[][..], Vec::as_slice)).into_owned())
            }
            Err(_) => Err(format!(
                "{} failed to start: {}",
                helper.display(),
                client.died()
            )),
        }
    }

    /// Sends one compile request and waits for the answer: (status, log, spirv bytes).
    pub(crate) fn compile(
        &mut self,
        options: &str,
        sources: &[&[u8]],
    ) -> Result<(i32, Vec<u8>, Vec<u8>), Lost> {
        self.stderr.buf.lock().clear();
        let mut parts: Vec<&[u8]> = vec![b"compile", options.as_bytes()];
        parts.extend_from_slice(sources);
        if write_frame(&mut NoSigPipe(&self.sock), &parts).is_err() {
            return Err(Lost::BeforeRequest);
        }
        let _ = self.sock.set_read_timeout(Some(self.timeout));
        let frame = read_frame(&mut self.sock);
        let _ = self.sock.set_read_timeout(None);
        let frame = match frame {
            Ok(f) => f,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                let _ = self.child.kill();
                return Err(Lost::During(format!(
                    "clspv did not finish within {} s and was stopped ({})",
                    self.timeout.as_secs(),
                    self.died()
                )));
            }
            Err(_) => return Err(Lost::During(self.died())),
        };
        match frame.as_slice() {
            [status, log, spirv] if status.len() == 4 => {
                let status = i32::from_le_bytes([status[0], status[1], status[2], status[3]]);
                let mut log = log.clone();
                let stderr = self.take_stderr();
                if !stderr.trim().is_empty() {
                    // clspv reports some failures (e.g. a refused option value) only there.
                    log.extend_from_slice(stderr.as_bytes());
                }
                Ok((status, log, spirv.clone()))
            }
            _ => Err(Lost::During(format!(
                "vkcl-clspv sent a malformed answer\n{}",
                self.died()
            ))),
        }
    }

    /// This compile's stderr output: waits (briefly) for the helper's end marker, which it
    /// writes before answering, so the reader thread has seen everything by then.
    fn take_stderr(&self) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        let mut buf = self.stderr.buf.lock();
        let end = END_OF_STDERR.as_bytes();
        loop {
            if let Some(at) = buf.windows(end.len()).position(|w| w == end) {
                let text = String::from_utf8_lossy(&buf[..at]).into_owned();
                buf.drain(..at + end.len());
                return text;
            }
            if self.stderr.cv.wait_until(&mut buf, deadline).timed_out() {
                return String::from_utf8_lossy(&std::mem::take(&mut *buf)).into_owned();
            }
        }
    }

    /// Whether the process has exited (between requests).
    pub(crate) fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Makes sure the helper is gone and describes how it ended, with its last stderr output.
    fn died(&mut self) -> String {
        let _ = self.sock.shutdown(std::net::Shutdown::Both);
        let status = wait_briefly(&mut self.child);
        // The reader stops at end of file, which comes once the process is gone (unless it left
        // a child holding the pipe: then do not wait for it).
        if let Some(reader) = self.stderr_reader.take() {
            let start = std::time::Instant::now();
            while !reader.is_finished() && start.elapsed() < std::time::Duration::from_secs(1) {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            if reader.is_finished() {
                let _ = reader.join();
            }
        }
        let stderr = std::mem::take(&mut *self.stderr.buf.lock());
        let mut text = format!("clspv crashed: {}", describe_exit(status));
        let stderr = String::from_utf8_lossy(&stderr);
        if !stderr.trim().is_empty() {
            text.push('\n');
            text.push_str(stderr.trim_end());
        }
        text
    }
}

#[cfg(unix)]
impl Drop for Client {
    fn drop(&mut self) {
        // Closing the socket makes the helper exit on its own; reap it if it already has.
        let _ = self.sock.shutdown(std::net::Shutdown::Both);
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Waits up to two seconds for the process to end, then kills it.
#[cfg(unix)]
fn wait_briefly(child: &mut std::process::Child) -> Option<std::process::ExitStatus> {
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(2) {
        match child.try_wait() {
            Ok(Some(s)) => return Some(s),
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(5)),
            Err(_) => return None,
        }
    }
    let _ = child.kill();
    child.wait().ok()
}

#[cfg(unix)]
fn describe_exit(status: Option<std::process::ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) if s.signal().is_some() => {
            let sig = s.signal().unwrap_or(0);
            let name = match sig {
                4 => " (SIGILL)",
                6 => " (SIGABRT)",
                7 => " (SIGBUS)",
                8 => " (SIGFPE)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                _ => "",
            };
            format!("killed by signal {sig}{name}")
        }
        Some(s) => format!("exited with status {}", s.code().unwrap_or(-1)),
        None => "ended in an unknown way".into(),
    }
}

#[cfg(unix)]
fn spawn_stderr_reader(
    mut pipe: std::process::ChildStderr,
    captured: std::sync::Arc<Captured>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut chunk = vec![0u8; 64 * 1024];
        while let Ok(n @ 1..) = pipe.read(&mut chunk) {
            let mut b = captured.buf.lock();
            b.extend_from_slice(&chunk[..n]);
            if b.len() > STDERR_KEEP {
                let cut = b.len() - STDERR_KEEP;
                b.drain(..cut);
            }
            captured.cv.notify_all();
            drop(b);
            std::thread::sleep(STDERR_PAUSE);
        }
    })
}

/// The helper's stderr output so far, and a signal for each new piece.
#[cfg(unix)]
#[derive(Default)]
struct Captured {
    buf: parking_lot::Mutex<Vec<u8>>,
    cv: parking_lot::Condvar,
}

/// Writes to the socket with `MSG_NOSIGNAL`: the application may not ignore SIGPIPE, and a
/// helper that died must not take it down.
#[cfg(unix)]
struct NoSigPipe<'a>(&'a std::os::unix::net::UnixStream);

#[cfg(unix)]
impl Write for NoSigPipe<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        use std::os::fd::AsRawFd;
        extern "C" {
            fn send(fd: c_int, buf: *const c_void, len: usize, flags: c_int) -> isize;
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        const MSG_NOSIGNAL: c_int = 0x4000;
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        const MSG_NOSIGNAL: c_int = 0;
        // SAFETY: `buf` is valid for `buf.len()` bytes and the descriptor is our open socket.
        let n = unsafe {
            send(
                self.0.as_raw_fd(),
                buf.as_ptr().cast(),
                buf.len(),
                MSG_NOSIGNAL,
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
