//! OpenCL 2.0 pipes, lowered in the OpenCL C source before clspv (which has no pipe support).
//!
//! A pipe is a storage buffer: a header of [`HEADER_WORDS`] 32-bit words, a state word per
//! slot, then the packets as a ring of slots (see docs/PIPES.md). The lowering is a
//! source-to-source transform ([`lower`]):
//! - a `pipe` parameter (`read_only pipe int p`) becomes `__global vkcl_pipe_r_int *p`, where
//!   `vkcl_pipe_r_int` is a typedef of `uint` whose name carries the access and the packet type
//!   (encoded by [`encode_type`]), so that the module's own argument info tells the runtime which
//!   arguments are pipes ([`pipe_arg`]), through binaries and links alike;
//! - the pipe built-ins become expressions on the header and packets, calling the helper
//!   functions of a one-line prelude (one line, so that clspv's diagnostics keep the
//!   application's line numbers);
//! - `reserve_id_t` and `CLK_NULL_RESERVE_ID` become the prelude's reservation type and value.
//!
//! Sources that use none of this are returned unchanged.

use super::reflection::ArgInfo;
use std::borrow::Cow;
use std::fmt::Write;

/// Words of the header; the slots' state words follow it, then the packets (at a multiple of
/// 128 bytes: every OpenCL C type's alignment divides it).
pub const HEADER_WORDS: usize = 32;
/// Header word indices. Each end has a claim counter (packets claimed, moved only by a
/// successful compare-and-swap) and a done counter (packets published by writers, freed by
/// readers); all count packets since the pipe was created, modulo 2^32. A packet's slot is its
/// number modulo the number of slots, the capacity rounded up to a power of two, so that the
/// slot sequence runs on when the counters wrap. `PACKETS` is the word offset of the first
/// packet (after the slots' state words). (The prelude's OpenCL C uses these indices as
/// literals.)
pub const READ_CLAIMS: usize = 0;
pub const WRITE_CLAIMS: usize = 1;
pub const PACKET_SIZE: usize = 2;
pub const MAX_PACKETS: usize = 3;
pub const READ_DONE: usize = 4;
pub const WRITE_DONE: usize = 5;
pub const SLOTS: usize = 6;
pub const PACKETS: usize = 7;

/// The OpenCL C 3.0 feature the lowering provides.
pub const FEATURE: &str = "__opencl_c_pipes";
/// CL_DEVICE_PIPE_MAX_PACKET_SIZE (the spec's minimum).
pub const MAX_PACKET_SIZE: u32 = 1024;
/// CL_DEVICE_MAX_PIPE_ARGS (the spec's minimum; each pipe is one storage buffer).
pub const MAX_PIPE_ARGS: u32 = 16;
/// CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS. A reservation id carries its first slot and its
/// count, and its slots' states are the rest, so any number works; this is what is promised.
pub const MAX_ACTIVE_RESERVATIONS: u32 = 16;

/// The largest capacity (the counters' differences are compared as signed 32-bit values).
pub const MAX_CAPACITY: u32 = 1 << 30;

/// The header of a new, empty pipe.
pub fn header(packet_size: u32, max_packets: u32) -> [u32; HEADER_WORDS] {
    let mut h = [0u32; HEADER_WORDS];
    h[PACKET_SIZE] = packet_size;
    h[MAX_PACKETS] = max_packets;
    // At most MAX_CAPACITY packets (the caller checks), so the slots fit.
    h[SLOTS] = slots(max_packets.min(MAX_CAPACITY)) as u32;
    h[PACKETS] = (HEADER_WORDS as u64 + state_words(max_packets.min(MAX_CAPACITY))) as u32;
    h
}

/// The first bytes of a new, empty pipe's buffer: the header and the slots' state words (all
/// 0: every slot free for its first packet).
pub fn initial_bytes(packet_size: u32, max_packets: u32) -> Vec<u8> {
    let mut b: Vec<u8> = header(packet_size, max_packets)
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    b.resize(b.len() + 4 * state_words(max_packets) as usize, 0);
    b
}

/// Words of the slots' state, rounded up to 128 bytes so that the packets stay aligned.
fn state_words(max_packets: u32) -> u64 {
    slots(max_packets).next_multiple_of(HEADER_WORDS as u64)
}

/// Slots of the ring for a capacity.
fn slots(max_packets: u32) -> u64 {
    u64::from(max_packets).next_power_of_two()
}

/// Bytes one packet takes in the ring: packets smaller than a word get a word.
pub fn packet_stride(packet_size: u32) -> u64 {
    u64::from(packet_size).div_ceil(4) * 4
}

/// Bytes of the buffer behind a pipe.
pub fn buffer_size(packet_size: u32, max_packets: u32) -> u64 {
    (HEADER_WORDS as u64 + state_words(max_packets)) * 4
        + packet_stride(packet_size) * slots(max_packets)
}

const TYPEDEF_PREFIX: &str = "vkcl_pipe_";

/// The helpers every lowered source starts with, on one line.
///
/// Each slot has a state word (after the header): packet `q` may be written into its slot when
/// the word is `q & !mask` (the slot's round), read when it is one more, and reading it adds
/// `mask` (the next round's free value); all start at 0. `__vkcl_claim` takes `n` packets for
/// reading (`which` 0) or writing (1) and returns the first one's slot, or -1: it reads the
/// end's claim counter, checks that each of the `n` slots is in the state its packet needs
/// (and, for writes, that the pipe would hold at most its capacity), and moves the counter on
/// with a compare-and-swap, trying again when another claim came first (also when a slot is
/// already past that state: the counter it read was stale). A slot behind it (not yet written,
/// not yet read) fails the claim. A failed claim changes nothing, so it blocks no later claim,
/// and the two ends may run at the same time: a reader only takes packets whose writer
/// published them (`__vkcl_done`: after the packet's stores, its slot's state goes on, then the
/// done counter), a writer only slots whose reader freed them. 2-argument reads and writes
/// publish or free their packet at once; a reservation's packets at its commit. (The loop is a
/// `do ... while` on a result: clspv 0.0.1 miscompiled it with a `return` in the slot loop.)
const PRELUDE: &str = concat!(
    r#"_Pragma("clang diagnostic ignored \"-Wgnu-statement-expression-from-macro-expansion\"") "#,
    r#"_Pragma("clang diagnostic ignored \"-Wgnu-statement-expression\"") "#,
    r#"_Pragma("clang diagnostic ignored \"-Wc11-extensions\"") "#,
    r#"_Pragma("clang diagnostic ignored \"-Wcast-align\"") "#,
    r#"_Pragma("clang diagnostic ignored \"-Wtypedef-redefinition\"") "#,
    r#"_Pragma("clang diagnostic push") "#,
    r#"_Pragma("clang diagnostic ignored \"-Wreserved-identifier\"") "#,
    r#"_Pragma("clang diagnostic ignored \"-Wunused-function\"") "#,
    r#"_Pragma("clang diagnostic ignored \"-Wdeclaration-after-statement\"") "#,
    "typedef struct { uint start; uint count; } __vkcl_reserve_id_t; ",
    "static inline __vkcl_reserve_id_t __vkcl_make_rid(int s, uint n) { __vkcl_reserve_id_t r; ",
    "r.start = s < 0 ? 0u : (uint)s; r.count = s < 0 ? 0u : n; return r; } ",
    "static inline int __vkcl_claim(volatile __global uint *h, uint n, uint which) { ",
    "uint cap = h[3], mask = h[6] - 1u; if (n == 0u || n > cap) return -1; ",
    "int r = -2; do { uint pos = h[which]; ",
    "int st = which == 0u || (int)(pos + n - h[4]) <= (int)cap ? 0 : -1; ",
    "for (uint k = 0u; st == 0 && k < n; k++) { uint q = pos + k; ",
    "int d = (int)(h[32u + (q & mask)] - ((q & ~mask) + 1u - which)); st = d < 0 ? -1 : d > 0 ? 1 : 0; } ",
    "if (st < 0) r = -1; ",
    "else if (st == 0 && atomic_cmpxchg(&h[which], pos, pos + n) == pos) r = (int)(pos & mask); ",
    "} while (r == -2); mem_fence(CLK_GLOBAL_MEM_FENCE); return r; } ",
    "static inline void __vkcl_done(volatile __global uint *h, uint s, uint n, uint which) { ",
    "mem_fence(CLK_GLOBAL_MEM_FENCE); uint mask = h[6] - 1u; ",
    "for (uint k = 0u; k < n; k++) atomic_add(&h[32u + ((s + k) & mask)], which != 0u ? 1u : mask); ",
    "atomic_add(&h[4u + which], n); } ",
    "static inline void __vkcl_commit(volatile __global uint *h, __vkcl_reserve_id_t r, uint which) { ",
    "if (r.count != 0u) __vkcl_done(h, r.start, r.count, which); } ",
    "static inline void __vkcl_wg_commit(volatile __global uint *h, __vkcl_reserve_id_t r, uint which) { ",
    "barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE); ",
    "if (get_local_id(0) == 0 && get_local_id(1) == 0 && get_local_id(2) == 0) __vkcl_commit(h, r, which); } ",
    "static inline __vkcl_reserve_id_t __vkcl_reserve(volatile __global uint *h, uint n, uint which) { ",
    "return __vkcl_make_rid(__vkcl_claim(h, n, which), n); } ",
    "static inline __vkcl_reserve_id_t __vkcl_wg_reserve(volatile __global uint *h, uint n, uint which, __local uint *slot) { ",
    "barrier(CLK_LOCAL_MEM_FENCE); ",
    "if (get_local_id(0) == 0 && get_local_id(1) == 0 && get_local_id(2) == 0) { ",
    "__vkcl_reserve_id_t r = __vkcl_reserve(h, n, which); slot[0] = r.start; slot[1] = r.count; } ",
    "barrier(CLK_LOCAL_MEM_FENCE); __vkcl_reserve_id_t r; r.start = slot[0]; r.count = slot[1]; ",
    "barrier(CLK_LOCAL_MEM_FENCE); return r; } ",
    "static inline int __vkcl_slot(volatile __global uint *h, __vkcl_reserve_id_t r, uint i) { ",
    "return i < r.count ? (int)((r.start + i) & (h[6] - 1u)) : -1; } ",
    "static inline uint __vkcl_num_packets(volatile __global uint *h) { return h[5] - h[4]; } ",
    "static inline uint __vkcl_max_packets(volatile __global uint *h) { return h[3]; } ",
    "static inline int __vkcl_status(int s) { return s < 0 ? -1 : 0; } ",
);

/// Sub-group reservations, in the prelude of sources that use them (the sub-group built-ins
/// exist only where the device has sub-groups): the sub-group's first work-item reserves
/// and broadcasts the result.
const SUB_GROUP_PRELUDE: &str = concat!(
    "static inline __vkcl_reserve_id_t __vkcl_sg_reserve(volatile __global uint *h, uint n, uint which) { ",
    "uint s = 0u, c = 0u; if (get_sub_group_local_id() == 0u) { ",
    "__vkcl_reserve_id_t r = __vkcl_reserve(h, n, which); s = r.start; c = r.count; } ",
    "__vkcl_reserve_id_t r; r.start = sub_group_broadcast(s, 0u); r.count = sub_group_broadcast(c, 0u); ",
    "return r; } ",
    "static inline void __vkcl_sg_commit(volatile __global uint *h, __vkcl_reserve_id_t r, uint which) { ",
    "sub_group_barrier(CLK_GLOBAL_MEM_FENCE); if (get_sub_group_local_id() == 0u) __vkcl_commit(h, r, which); } ",
);

/// The prelude of a source whose lowered text is `lowered`: the fixed helpers and those of
/// the packet copies and sub-group reservations it calls.
fn prelude_text(lowered: &str) -> String {
    let mut p = PRELUDE.to_string();
    if ["l", "w", "h", "b"].iter().any(|u| {
        lowered.contains(&format!("__vkcl_put_{u}("))
            || lowered.contains(&format!("__vkcl_get_{u}("))
    }) {
        p.push_str(&view_helpers());
    }
    let mut typed: Vec<&str> = ["__vkcl_put_t_", "__vkcl_get_t_"]
        .iter()
        .flat_map(|f| {
            lowered
                .match_indices(f)
                .map(move |(i, _)| &lowered[i + f.len()..])
        })
        .map(|rest| {
            &rest[..rest
                .find(|c: char| !c.is_ascii_alphanumeric())
                .unwrap_or(rest.len())]
        })
        .collect();
    typed.sort_unstable();
    typed.dedup();
    for ty in typed {
        p.push_str(&typed_helpers(ty));
    }
    if lowered.contains("__vkcl_sg_reserve(") || lowered.contains("__vkcl_sg_commit(") {
        p.push_str(SUB_GROUP_PRELUDE);
    }
    p.push_str(r#"_Pragma("clang diagnostic pop") "#);
    p
}

/// Identifiers whose presence means the source needs lowering.
const PIPE_WORDS: &[&str] = &[
    "pipe",
    "read_pipe",
    "write_pipe",
    "reserve_read_pipe",
    "reserve_write_pipe",
    "commit_read_pipe",
    "commit_write_pipe",
    "work_group_reserve_read_pipe",
    "work_group_reserve_write_pipe",
    "work_group_commit_read_pipe",
    "work_group_commit_write_pipe",
    "sub_group_reserve_read_pipe",
    "sub_group_reserve_write_pipe",
    "sub_group_commit_read_pipe",
    "sub_group_commit_write_pipe",
    "is_valid_reserve_id",
    "get_pipe_num_packets",
    "get_pipe_max_packets",
    "reserve_id_t",
    "CLK_NULL_RESERVE_ID",
];

const WG_SLOT: &str = "vkcl_wg_slot_";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Ident,
    /// Numbers, string and character literals, other punctuation.
    Other,
    /// A whole preprocessor directive line (with continuations).
    Directive,
    Punct(u8),
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Token {
    pub(crate) kind: Kind,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// The tokens of `src`, without comments and whitespace.
pub(crate) fn tokenize(src: &str) -> Vec<Token> {
    let b = src.as_bytes();
    let mut toks = vec![];
    let mut i = 0;
    // Only whitespace (and comments) since the last newline: a '#' starts a directive.
    let mut line_start = true;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c == b'\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() || (c == b'\\' && b.get(i + 1) == Some(&b'\n')) {
            i += if c == b'\\' { 2 } else { 1 };
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i = (i + 2).min(b.len());
            continue;
        }
        let kind = if c == b'#' && line_start {
            while i < b.len() && b[i] != b'\n' {
                if b[i] == b'\\' {
                    i += 1;
                } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    // A block comment may carry the directive over lines.
                    i += 2;
                    while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            Kind::Directive
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            Kind::Other
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            Kind::Ident
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_') {
                i += 1;
            }
            Kind::Other
        } else {
            i += 1;
            if b"(),;{}".contains(&c) {
                Kind::Punct(c)
            } else {
                Kind::Other
            }
        };
        let end = i.min(b.len());
        toks.push(Token { kind, start, end });
        line_start = false;
    }
    toks
}

/// `ty` (the packet type as written, tokens joined by single spaces) as identifier characters:
/// letters and digits stay, every other byte becomes `_` and two hex digits.
pub fn encode_type(ty: &str) -> String {
    let mut s = String::new();
    for c in ty.bytes() {
        if c.is_ascii_alphanumeric() {
            s.push(c as char);
        } else {
            let _ = write!(s, "_{c:02x}");
        }
    }
    s
}

pub(crate) fn decode_type(enc: &str) -> Option<String> {
    let b = enc.as_bytes();
    let mut out = vec![];
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'_' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// For a kernel argument's type name as clspv reports it: `Some((writes, packet type))` when the
/// argument is a lowered pipe.
pub fn pipe_arg(type_name: &str) -> Option<(bool, String)> {
    let rest = type_name.strip_suffix('*')?.strip_prefix(TYPEDEF_PREFIX)?;
    let (access, enc) = rest.split_once('_')?;
    let writes = match access {
        "r" => false,
        "w" => true,
        _ => return None,
    };
    Some((writes, decode_type(enc)?))
}

const CL_KERNEL_ARG_ADDRESS_GLOBAL: u32 = 0x119B;
const CL_KERNEL_ARG_ACCESS_READ_ONLY: u32 = 0x11A0;
const CL_KERNEL_ARG_ACCESS_WRITE_ONLY: u32 = 0x11A1;
/// CL_KERNEL_ARG_TYPE_PIPE.
pub const TYPE_PIPE: u32 = 1 << 3;

/// An argument's info as the application wrote it: a lowered pipe argument is reported as
/// `[read_only|write_only] pipe TYPE` (type name TYPE, qualifier CL_KERNEL_ARG_TYPE_PIPE);
/// other arguments as they are.
pub fn arg_info(mut info: ArgInfo) -> ArgInfo {
    if let Some((writes, ty)) = pipe_arg(&info.type_name) {
        info.type_name = ty;
        info.address_qualifier = CL_KERNEL_ARG_ADDRESS_GLOBAL;
        info.access_qualifier = if writes {
            CL_KERNEL_ARG_ACCESS_WRITE_ONLY
        } else {
            CL_KERNEL_ARG_ACCESS_READ_ONLY
        };
        info.type_qualifier = TYPE_PIPE;
    }
    info
}

const TYPE_KEYWORDS: &[&str] = &[
    "char", "short", "int", "long", "float", "double", "half", "signed", "unsigned", "bool",
];

struct Lowering<'a> {
    src: &'a str,
    toks: Vec<Token>,
    /// Typedefs the declaration being lowered needs.
    typedefs: Vec<String>,
    /// The packet type of each pipe parameter of the declaration being lowered.
    packets: Vec<(String, String)>,
}

impl<'a> Lowering<'a> {
    fn text(&self, t: usize) -> &'a str {
        &self.src[self.toks[t].start..self.toks[t].end]
    }

    fn is(&self, t: usize, s: &str) -> bool {
        t < self.toks.len() && self.toks[t].kind == Kind::Ident && self.text(t) == s
    }

    fn punct(&self, t: usize) -> Option<u8> {
        match self.toks.get(t)?.kind {
            Kind::Punct(c) => Some(c),
            _ => None,
        }
    }

    /// The token after the bracket opened at `open` closes, or the end.
    fn close(&self, open: usize) -> usize {
        let mut depth = 0i32;
        for t in open..self.toks.len() {
            match self.punct(t) {
                Some(b'(' | b'{') => depth += 1,
                Some(b')' | b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        return t;
                    }
                }
                _ => {}
            }
        }
        self.toks.len()
    }

    /// The source text of tokens `from..to`, lowered, with the original spacing.
    fn emit(&mut self, from: usize, to: usize, out: &mut String) {
        let mut t = from;
        while t < to {
            if t > from {
                out.push_str(&self.src[self.toks[t - 1].end..self.toks[t].start]);
            }
            t = self.emit_one(t, to, out);
        }
    }

    /// Emits token `t` (or a construct starting there); returns the next token.
    fn emit_one(&mut self, t: usize, to: usize, out: &mut String) -> usize {
        let tok = self.toks[t];
        if tok.kind == Kind::Directive {
            out.push_str(&lower_directive(&self.src[tok.start..tok.end]));
            return t + 1;
        }
        if tok.kind != Kind::Ident {
            out.push_str(&self.src[tok.start..tok.end]);
            return t + 1;
        }
        let word = self.text(t);
        match word {
            "reserve_id_t" => out.push_str("__vkcl_reserve_id_t"),
            "CLK_NULL_RESERVE_ID" => out.push_str("__vkcl_make_rid(-1, 0u)"),
            "pipe" => return self.emit_pipe_param(t, to, out),
            _ if PIPE_WORDS.contains(&word) && self.punct(t + 1) == Some(b'(') => {
                let close = self.close(t + 1).min(to);
                let args = self.args(t + 1, close);
                if let Some(text) = self.call(word, &args) {
                    out.push_str(&text);
                    return close + 1;
                }
                out.push_str(word);
            }
            _ => out.push_str(word),
        }
        t + 1
    }

    /// The lowered text of each argument of the call whose parentheses are `open..close`.
    fn args(&mut self, open: usize, close: usize) -> Vec<String> {
        let mut args = vec![];
        let mut depth = 0;
        let mut first = open + 1;
        for t in open + 1..=close {
            match self.punct(t) {
                Some(b'(' | b'{') => depth += 1,
                Some(b')' | b'}') if t != close => depth -= 1,
                _ => {}
            }
            if (depth == 0 && self.punct(t) == Some(b',')) || t == close {
                let mut s = String::new();
                self.emit(first, t, &mut s);
                args.push(s);
                first = t + 1;
            }
        }
        if args.len() == 1 && args[0].trim().is_empty() {
            args.clear();
        }
        args
    }

    /// A pipe built-in call, lowered; None for an argument count no form has (clang reports it).
    fn call(&self, name: &str, a: &[String]) -> Option<String> {
        let h = |p: &str| format!("((volatile __global uint *)({p}))");
        // A 3-element vector as the 4-element vector whose size it has (clspv 0.0.1 fails on
        // long3 values: "Invalid bitcast"), padding included.
        let packet = a.first().and_then(|p| {
            let p = p.trim();
            let (_, ty) = self.packets.iter().find(|(name, _)| name == p)?;
            // A half value needs cl_khr_fp16 enabled: half packets go through a view.
            let (elem, _, n) = builtin_packet(ty).filter(|&(e, _, n)| (e, n) != ("half", 1))?;
            Some(if n == 3 {
                format!("{elem}4")
            } else {
                ty.clone()
            })
        });
        let packet = packet.as_deref();
        Some(match (name, a.len()) {
            ("read_pipe" | "write_pipe", 2) => {
                let writes = name == "write_pipe";
                let claim = claim1(&a[0], writes);
                let done = format!(
                    "__vkcl_done({}, (uint)vkcl_s_, 1u, {}u)",
                    h(&a[0]),
                    u8::from(writes)
                );
                copy(writes, &a[0], &claim, &a[1], packet, &done)
            }
            ("read_pipe" | "write_pipe", 4) => {
                let slot = format!("__vkcl_slot({}, {}, (uint)({}))", h(&a[0]), a[1], a[2]);
                // Nothing is done after the copy (a `0;` statement: -Wunused-value, an error
                // under -Werror).
                copy(name == "write_pipe", &a[0], &slot, &a[3], packet, "(void)0")
            }
            ("reserve_read_pipe" | "reserve_write_pipe", 2) => format!(
                "__vkcl_reserve({}, (uint)({}), {}u)",
                h(&a[0]),
                a[1],
                u8::from(name == "reserve_write_pipe")
            ),
            ("work_group_reserve_read_pipe" | "work_group_reserve_write_pipe", 2) => format!(
                "__vkcl_wg_reserve({}, (uint)({}), {}u, {WG_SLOT})",
                h(&a[0]),
                a[1],
                u8::from(name == "work_group_reserve_write_pipe")
            ),
            ("sub_group_reserve_read_pipe" | "sub_group_reserve_write_pipe", 2) => format!(
                "__vkcl_sg_reserve({}, (uint)({}), {}u)",
                h(&a[0]),
                a[1],
                u8::from(name == "sub_group_reserve_write_pipe")
            ),
            ("commit_read_pipe" | "commit_write_pipe", 2) => format!(
                "__vkcl_commit({}, {}, {}u)",
                h(&a[0]),
                a[1],
                u8::from(name == "commit_write_pipe")
            ),
            ("work_group_commit_read_pipe" | "work_group_commit_write_pipe", 2) => format!(
                "__vkcl_wg_commit({}, {}, {}u)",
                h(&a[0]),
                a[1],
                u8::from(name == "work_group_commit_write_pipe")
            ),
            ("sub_group_commit_read_pipe" | "sub_group_commit_write_pipe", 2) => format!(
                "__vkcl_sg_commit({}, {}, {}u)",
                h(&a[0]),
                a[1],
                u8::from(name == "sub_group_commit_write_pipe")
            ),
            ("is_valid_reserve_id", 1) => format!("(({}).count != 0u)", a[0]),
            ("get_pipe_num_packets", 1) => format!("__vkcl_num_packets({})", h(&a[0])),
            ("get_pipe_max_packets", 1) => format!("__vkcl_max_packets({})", h(&a[0])),
            _ => return None,
        })
    }

    /// `[read_only|write_only] pipe TYPE [name]` in a parameter list, with `pipe` at `t`.
    fn emit_pipe_param(&mut self, t: usize, to: usize, out: &mut String) -> usize {
        // The end of the parameter.
        let mut end = t + 1;
        let mut depth = 0;
        while end < to {
            match self.punct(end) {
                Some(b'(') => depth += 1,
                Some(b')') if depth == 0 => break,
                Some(b')') => depth -= 1,
                Some(b',') if depth == 0 => break,
                Some(b';' | b'{' | b'}') => break,
                _ => {}
            }
            end += 1;
        }
        if end == t + 1 || end >= self.toks.len() || !matches!(self.punct(end), Some(b',' | b')')) {
            // Not a parameter: left for clang to report.
            out.push_str("pipe");
            return t + 1;
        }
        let n = end - (t + 1);
        let last = end - 1;
        let has_name = n >= 2
            && self.toks[last].kind == Kind::Ident
            && !TYPE_KEYWORDS.contains(&self.text(last))
            && !["struct", "union", "enum"]
                .iter()
                .any(|k| self.is(last - 1, k));
        let type_end = if has_name { last } else { end };
        let ty: Vec<&str> = (t + 1..type_end).map(|i| self.text(i)).collect();
        // The access qualifier was emitted just before: take it back.
        let writes = strip_access(out);
        let name = format!(
            "{TYPEDEF_PREFIX}{}_{}",
            if writes { "w" } else { "r" },
            encode_type(&ty.join(" "))
        );
        // Before every declaration that names it (one may sit in an #if branch the
        // preprocessor drops); identical typedefs may repeat.
        if !self.typedefs.contains(&name) {
            self.typedefs.push(name.clone());
        }
        out.push_str(&format!("__global {name} *"));
        if has_name {
            out.push_str(self.text(last));
            self.packets
                .push((self.text(last).to_string(), ty.join(" ")));
        }
        end
    }
}

/// Removes a trailing access qualifier (and the spaces after it) from `out`; true for
/// write_only. Without one the pipe is read_only (the default).
fn strip_access(out: &mut String) -> bool {
    let trimmed = out.trim_end_matches(|c: char| c.is_ascii_whitespace());
    for (q, writes) in [
        ("__read_only", false),
        ("read_only", false),
        ("__write_only", true),
        ("write_only", true),
    ] {
        if let Some(rest) = trimmed.strip_suffix(q) {
            if !rest.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                let len = rest.len();
                out.truncate(len);
                return writes;
            }
        }
    }
    false
}

/// The claim of one packet (2-argument forms): the slot, or -1.
fn claim1(p: &str, writes: bool) -> String {
    format!(
        "__vkcl_claim((volatile __global uint *)({p}), 1u, {}u)",
        u8::from(writes)
    )
}

/// A read or write of one packet at the slot `slot` evaluates to (or -1), then `done` (an
/// expression that may use the slot, `vkcl_s_`) after a successful copy: 0 on success, -1
/// otherwise. The packet's slot in the ring (its size rounded up to 4 bytes) is only ever
/// accessed as words: clspv types a storage buffer from its accesses and mishandles one
/// accessed as both uint (the header) and another type. The application's packet is accessed
/// as its own type where the pipe's packet type is a built-in scalar or vector (`packet`:
/// [`typed_helpers`] convert the value to words), otherwise (structs, or a pipe whose
/// declaration the lowering does not see) in units of its alignment (bytes, half-words, words
/// or, from 8 on, 64-bit words), chosen at compile time (`__builtin_choose_expr`: the other
/// views are not emitted) and copied by [`view_helpers`]. Other views of a buffer are what
/// clspv gets wrong: words of a `long` buffer come from the wrong offsets, and a half3 or
/// float3 buffer accessed as 64-bit words never finishes compiling.
fn copy(writes: bool, p: &str, slot: &str, ptr: &str, packet: Option<&str>, done: &str) -> String {
    let (dir, c) = if writes {
        ("put", "const ")
    } else {
        ("get", "")
    };
    let ring = format!(
        "((__global uint *)({p}) + ((volatile __global uint *)({p}))[7] \
         + (uint)vkcl_s_ * ((vkcl_b_ + 3u) / 4u))"
    );
    let view = |unit: &str, letter: char, bytes: u32| {
        format!("__vkcl_{dir}_{letter}({ring}, ({c}{unit} *)({ptr}), vkcl_b_ / {bytes}u)")
    };
    let copy = match packet {
        Some(ty) => format!(
            "__vkcl_{dir}_t_{}({ring}, ({c}{ty} *)({ptr}))",
            encode_type(ty)
        ),
        None => format!(
            "__builtin_choose_expr(__alignof__(*({ptr})) >= 8, {}, \
             __builtin_choose_expr(__alignof__(*({ptr})) == 4, {}, \
             __builtin_choose_expr(__alignof__(*({ptr})) == 2, {}, {})))",
            view("ulong", 'l', 8),
            view("uint", 'w', 4),
            view("ushort", 'h', 2),
            view("uchar", 'b', 1)
        ),
    };
    format!(
        "({{ uint vkcl_b_ = (uint)sizeof(*({ptr})); \
         int vkcl_s_ = ((volatile __global uint *)({p}))[2] == vkcl_b_ ? {slot} : -1; \
         if (vkcl_s_ >= 0) {{ {copy}; {done}; }} __vkcl_status(vkcl_s_); }})"
    )
}

/// A built-in scalar or vector packet type: its element type, the element's size and the
/// number of elements.
fn builtin_packet(ty: &str) -> Option<(&str, usize, usize)> {
    let elem = ty.trim_end_matches(|c: char| c.is_ascii_digit());
    let n = match &ty[elem.len()..] {
        "" => 1,
        d => d.parse().ok().filter(|n| [2, 3, 4, 8, 16].contains(n))?,
    };
    let size = match elem {
        "char" | "uchar" => 1,
        "short" | "ushort" | "half" => 2,
        "int" | "uint" | "float" => 4,
        "long" | "ulong" | "double" => 8,
        _ => return None,
    };
    Some((elem, size, n))
}

/// `__vkcl_put_t_<T>(ring, packet)` and `__vkcl_get_t_<T>(ring, packet)` for a built-in
/// packet type `T` (not a 3-element vector): the packet is read or written as one value of its
/// type and reinterpreted (`as_type`) as the slot's words, so that the bytes are the host's.
/// (Element by element, clspv 0.0.1 fails on long4 values loaded from a long3 buffer:
/// "Invalid bitcast".)
fn typed_helpers(ty: &str) -> String {
    let Some((elem, size, n)) = builtin_packet(ty) else {
        return String::new();
    };
    let bytes = size * n;
    let name = encode_type(ty);
    let words = |w: usize| {
        if w == 1 {
            "uint".to_string()
        } else {
            format!("uint{w}")
        }
    };
    let list = |from: usize, w: usize| {
        let r: Vec<String> = (from..from + w).map(|i| format!("r[{i}]")).collect();
        format!("({})({})", words(w), r.join(", "))
    };
    let part = |v: &str, i: usize, w: usize| {
        if w == 1 {
            v.to_string()
        } else {
            format!("{v}.s{i:x}")
        }
    };
    let (put, get) = match bytes {
        1 | 2 => {
            let u = if bytes == 1 { "uchar" } else { "ushort" };
            (
                format!("r[0] = (uint)as_{u}(*u);"),
                format!("*u = as_{ty}(({u})r[0]);"),
            )
        }
        4..=64 => {
            let w = bytes / 4;
            let put: String = (0..w)
                .map(|i| format!("r[{i}] = {}; ", part("w", i, w)))
                .collect();
            (
                format!("{} w = as_{}(*u); {put}", words(w), words(w)),
                format!("*u = as_{ty}({});", list(0, w)),
            )
        }
        _ => {
            // 128 bytes: two halves of 16 words.
            let put: String = (0..16)
                .map(|i| format!("r[{i}] = a.s{i:x}; r[{}] = b.s{i:x}; ", 16 + i))
                .collect();
            (
                format!("{ty} v = *u; uint16 a = as_uint16(v.lo), b = as_uint16(v.hi); {put}"),
                format!(
                    "*u = ({ty})(as_{elem}8({}), as_{elem}8({}));",
                    list(0, 16),
                    list(16, 16)
                ),
            )
        }
    };
    format!(
        "static inline void __vkcl_put_t_{name}(__global uint *r, const {ty} *u) {{ {put} }} \
         static inline void __vkcl_get_t_{name}(__global uint *r, {ty} *u) {{ {get} }} "
    )
}

/// The packet copies through views: `__vkcl_put_<u>(ring, packet, n)` and
/// `__vkcl_get_<u>(ring, packet, n)` for units `u` of 8 (`l`), 4 (`w`), 2 (`h`) and 1 (`b`)
/// bytes, `n` units. Unrolled, with constant indices, for packets of up to
/// [`MAX_PACKET_SIZE`] bytes: clspv 0.0.1 never finishes compiling, or miscompiles, an access
/// at a variable index through a pointer to a struct cast to a unit wider than the struct's
/// first member (the conformance tests' `struct { char a; int b; }` viewed as words; measured
/// again with `struct { char c; int b[100]; }` and `struct { char c; short b[100]; }`). `n`
/// is a constant where the helper is inlined, so only the accesses of the packet's size
/// remain. Byte views of more than [`UNROLLED`] bytes loop instead: lavapipe's compile time
/// grows with the square of the stores (a `char[1024]` packet, the conformance suite's
/// pipe_max_packet_size, took it minutes; 0.1 s as a loop), and a struct of alignment 1
/// starts with a byte, unless it is packed (a packed struct led by a wider member and larger
/// than [`UNROLLED`] bytes is the case left: clspv does not finish its build).
fn view_helpers() -> String {
    let mut s = String::new();
    let words = MAX_PACKET_SIZE as usize / 4;
    // The helper: `body(i)` for each unit index below `count`, after `looped` (which copies
    // the packet and returns) for packets of more than `count` units.
    let f = |s: &mut String,
             head: &str,
             count: usize,
             looped: Option<&str>,
             body: &dyn Fn(usize) -> String| {
        s.push_str(head);
        if let Some(looped) = looped {
            s.push_str(&format!("if (n > {UNROLLED}u) {{ {looped} return; }} "));
        }
        for i in 0..count {
            s.push_str(&body(i));
        }
        s.push_str("} ");
    };
    let sig = |dir: &str, u: char, t: &str| {
        let c = if dir == "put" { "const " } else { "" };
        format!("static inline void __vkcl_{dir}_{u}(__global uint *r, {c}{t} *u, uint n) {{ ")
    };
    f(&mut s, &sig("put", 'l', "ulong"), words / 2, None, &|i| {
        format!(
            "if (n > {i}u) {{ ulong v = u[{i}]; r[{}] = (uint)v; r[{}] = (uint)(v >> 32); }} ",
            2 * i,
            2 * i + 1
        )
    });
    f(&mut s, &sig("get", 'l', "ulong"), words / 2, None, &|i| {
        format!(
            "if (n > {i}u) u[{i}] = (ulong)r[{}] | ((ulong)r[{}] << 32); ",
            2 * i,
            2 * i + 1
        )
    });
    f(&mut s, &sig("put", 'w', "uint"), words, None, &|i| {
        format!("if (n > {i}u) r[{i}] = u[{i}]; ")
    });
    f(&mut s, &sig("get", 'w', "uint"), words, None, &|i| {
        format!("if (n > {i}u) u[{i}] = r[{i}]; ")
    });
    for (u, t, per) in [('h', "ushort", 2), ('b', "uchar", 4)] {
        let bits = 32 / per;
        let (put_loop, get_loop) = (
            format!(
                "for (uint w = 0; w * 4u < n; w++) {{ uint v = 0; \
                 for (uint j = 0; j < 4u; j++) if (w * 4u + j < n) \
                 v |= (uint)u[w * 4u + j] << (8u * j); r[w] = v; }}"
            ),
            format!("for (uint i = 0; i < n; i++) u[i] = ({t})(r[i / 4u] >> (8u * (i % 4u)));"),
        );
        let bytes = u == 'b';
        let count = if bytes { UNROLLED } else { words * per };
        f(
            &mut s,
            &sig("put", u, t),
            count.div_ceil(per),
            bytes.then_some(put_loop.as_str()),
            &|w| {
                let parts: Vec<String> = (0..per)
                    .map(|j| {
                        let i = w * per + j;
                        format!("(n > {i}u ? (uint)u[{i}] << {} : 0u)", bits * j)
                    })
                    .collect();
                format!("if (n > {}u) r[{w}] = {}; ", w * per, parts.join(" | "))
            },
        );
        f(
            &mut s,
            &sig("get", u, t),
            count,
            bytes.then_some(get_loop.as_str()),
            &|i| {
                format!(
                    "if (n > {i}u) u[{i}] = ({t})(r[{}] >> {}); ",
                    i / per,
                    bits * (i % per)
                )
            },
        );
    }
    s
}

/// Bytes of a packet the byte view copies with constant indices ([`view_helpers`]); larger
/// packets of alignment 1 loop.
const UNROLLED: usize = 64;

/// A preprocessor directive: the body of a `#define` is lowered (so that macros may wrap the
/// pipe built-ins); other directives stay as they are.
fn lower_directive(text: &str) -> Cow<'_, str> {
    let rest = text[1..].trim_start();
    if !rest.starts_with("define") {
        return Cow::Borrowed(text);
    }
    // Lowered as a fragment: the text after '#' has no directive of its own, and the lowered
    // built-ins stay on one line.
    let body = &text[1..];
    let mut l = Lowering {
        src: body,
        toks: tokenize(body),
        typedefs: vec![],
        packets: vec![],
    };
    if l.toks.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::from("#");
    out.push_str(&body[..l.toks[0].start]);
    let n = l.toks.len();
    l.emit(0, n, &mut out);
    out.push_str(&body[l.toks[n - 1].end..]);
    Cow::Owned(out)
}

/// [`lower`] for a source as bytes (one that is not UTF-8 is left to clspv to refuse).
pub fn lower_bytes(source: &[u8]) -> Cow<'_, [u8]> {
    match std::str::from_utf8(source).map(lower) {
        Ok(Cow::Owned(text)) => Cow::Owned(text.into_bytes()),
        _ => Cow::Borrowed(source),
    }
}

/// Lowers the pipes of OpenCL C 2.0/3.0 `source` (see the module comment).
pub fn lower(source: &str) -> Cow<'_, str> {
    let toks = tokenize(source);
    let uses = toks.iter().any(|t| {
        let s = &source[t.start..t.end];
        match t.kind {
            Kind::Ident => PIPE_WORDS.contains(&s),
            Kind::Directive => s
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|w| PIPE_WORDS.contains(&w)),
            _ => false,
        }
    });
    if !uses {
        return Cow::Borrowed(source);
    }
    // Work-group reservations need a __local slot, declared in each kernel (also when the
    // reservation is in a function or macro the kernel calls).
    let work_groups = [
        "work_group_reserve_read_pipe",
        "work_group_reserve_write_pipe",
    ]
    .iter()
    .any(|w| source.contains(w));
    let mut l = Lowering {
        src: source,
        toks,
        typedefs: vec![],
        packets: vec![],
    };
    // Top-level declarations one by one: each gets the typedefs its pipe parameters name
    // before it, and a kernel body using work-group reservations gets their __local slot.
    let mut out = String::new();
    let mut t = 0;
    let n = l.toks.len();
    // The prelude goes before the first declaration outside any #if (one inside might be
    // dropped by the preprocessor), on its line; without such a declaration (a source inside
    // an include guard), on a line of its own at the top.
    let conditional = conditional_depths(source, &l.toks);
    let mut prelude = None;
    let mut copied = 0;
    while t < n {
        if l.toks[t].kind == Kind::Directive {
            let tok = l.toks[t];
            out.push_str(&source[copied..tok.start]);
            out.push_str(&lower_directive(&source[tok.start..tok.end]));
            copied = tok.end;
            t += 1;
            continue;
        }
        // One declaration: up to a top-level ';' or the end of a function body.
        let start = t;
        let mut end = t;
        let mut body = None;
        while end < n {
            match l.punct(end) {
                Some(b';') => break,
                Some(b'(') => end = l.close(end),
                Some(b'{') => {
                    let close = l.close(end);
                    let is_function = end > 0 && l.punct(end - 1) == Some(b')');
                    if is_function {
                        body = Some(end);
                        end = close;
                        break;
                    }
                    end = close;
                }
                _ => {}
            }
            end += 1;
        }
        let end = end.min(n.saturating_sub(1));
        out.push_str(&source[copied..l.toks[start].start]);
        if prelude.is_none() && conditional[start] == 0 {
            prelude = Some(out.len());
        }
        l.typedefs.clear();
        l.packets.clear();
        let mut decl = String::new();
        match body {
            Some(open) => {
                l.emit(start, open + 1, &mut decl);
                let is_kernel = (start..open).any(|i| l.is(i, "kernel") || l.is(i, "__kernel"));
                if is_kernel && work_groups {
                    decl.push_str(&format!(" __local uint {WG_SLOT}[2]; (void){WG_SLOT};"));
                }
                if open < end {
                    decl.push_str(&source[l.toks[open].end..l.toks[open + 1].start]);
                    l.emit(open + 1, end + 1, &mut decl);
                }
            }
            None => l.emit(start, end + 1, &mut decl),
        }
        for name in &l.typedefs {
            out.push_str(&format!("typedef uint {name}; "));
        }
        out.push_str(&decl);
        copied = l.toks[end].end;
        t = end + 1;
    }
    out.push_str(&source[copied..]);
    match prelude {
        Some(at) => out.insert_str(at, &prelude_text(&out)),
        None => out.insert_str(0, &format!("{}\n", prelude_text(&out))),
    }
    Cow::Owned(out)
}

/// For each token, how many #if/#ifdef/#ifndef blocks it is inside.
fn conditional_depths(src: &str, toks: &[Token]) -> Vec<u32> {
    let mut depth = 0u32;
    toks.iter()
        .map(|t| {
            let here = depth;
            if t.kind == Kind::Directive {
                let word = src[t.start + 1..t.end]
                    .trim_start()
                    .split(|c: char| !c.is_ascii_alphanumeric())
                    .next()
                    .unwrap_or("");
                match word {
                    "if" | "ifdef" | "ifndef" => depth += 1,
                    "endif" => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
            here
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_without_pipes_are_unchanged() {
        let src = "kernel void k(global int *pipes, int piped) { /* pipe */ pipes[0] = piped; }\n";
        assert!(matches!(lower(src), Cow::Borrowed(s) if s == src));
        let src = "// read_pipe(p, &x)\nkernel void k() { char *s = \"write_pipe(\"; }";
        assert!(matches!(lower(src), Cow::Borrowed(_)));
    }

    #[test]
    fn pipe_parameters_become_typed_buffers() {
        let src = "kernel void k(read_only pipe int in, __write_only pipe float4 out, pipe struct s q) {}";
        let out = lower(src);
        assert!(out.starts_with(PRELUDE.split(' ').next().unwrap()));
        assert!(!out.contains('\n'), "one line: {out}");
        let user = &out[prelude_text("").len()..];
        assert_eq!(
            user,
            "typedef uint vkcl_pipe_r_int; typedef uint vkcl_pipe_w_float4; \
             typedef uint vkcl_pipe_r_struct_20s; \
             kernel void k(__global vkcl_pipe_r_int *in, __global vkcl_pipe_w_float4 *out, \
             __global vkcl_pipe_r_struct_20s *q) {}"
        );
    }

    #[test]
    fn line_numbers_and_directives_are_kept() {
        let src = "#pragma OPENCL EXTENSION all : enable\n#define N 4\n\n// c\nkernel void k(\n  write_only pipe int p)\n{\n  int v = N;\n  write_pipe(p, &v);\n}\n";
        let out = lower(src);
        assert_eq!(out.lines().count(), src.lines().count());
        assert!(out.starts_with("#pragma OPENCL EXTENSION all : enable\n#define N 4\n\n// c\n"));
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[5].starts_with("  __global vkcl_pipe_w_int *p)"));
        assert!(lines[8].contains("__vkcl_claim((volatile __global uint *)(p), 1u, 1u)"));
        assert!(!out.contains("write_pipe("));
    }

    #[test]
    fn builtins_are_lowered() {
        let src = "kernel void k(read_only pipe int p, global int *o) { reserve_id_t r = reserve_read_pipe(p, 2); \
                   if (is_valid_reserve_id(r)) { read_pipe(p, r, 1, o); commit_read_pipe(p, r); } \
                   o[1] = get_pipe_num_packets(p) + get_pipe_max_packets(p); r = CLK_NULL_RESERVE_ID; \
                   reserve_id_t w = work_group_reserve_read_pipe(p, 4); work_group_commit_read_pipe(p, w); }";
        let out = lower(src);
        let user = &out[prelude_text("").len()..];
        for gone in [
            " reserve_id_t r",
            "reserve_read_pipe(",
            "is_valid_reserve_id",
            "commit_read_pipe",
            "get_pipe_",
            "CLK_NULL",
            "pipe int",
        ] {
            assert!(!user.contains(gone), "{gone} in {user}");
        }
        assert!(user.contains("__vkcl_reserve(((volatile __global uint *)(p)), (uint)(2), 0u)"));
        assert!(user.contains("__vkcl_slot(((volatile __global uint *)(p)), r, (uint)(1))"));
        assert!(user.contains("{ __local uint vkcl_wg_slot_[2];"));
        assert!(user.contains(
            "__vkcl_wg_reserve(((volatile __global uint *)(p)), (uint)(4), 0u, vkcl_wg_slot_)"
        ));
    }

    #[test]
    fn nested_calls_comments_and_strings() {
        let src = "void f(write_only pipe int p /* pipe */, int *v) { write_pipe(p, reserve_write_pipe(p, 1), 0, v + (1, 0)); }\n\
                   kernel void k(write_only pipe int p) { int v = 0; f(p, &v); printf(\"read_pipe(p)\"); }";
        let out = lower(src);
        let user = &out[prelude_text("").len()..];
        // Before each declaration naming it.
        assert_eq!(user.matches("typedef uint vkcl_pipe_w_int;").count(), 2);
        assert!(user.contains("__vkcl_reserve(((volatile __global uint *)(p)), (uint)(1), 1u)"));
        assert!(user.contains("*(v + (1, 0))"));
        assert!(user.contains("printf(\"read_pipe(p)\")"));
        assert!(user.contains("/* pipe */"));
    }

    #[test]
    fn macros_and_conditional_declarations() {
        let src = "#define READ(p, v) read_pipe(p, &(v))\n#define WG(p) \\\n  work_group_reserve_read_pipe(p, 2)\n\
                   #if A\nkernel void a(read_only pipe int p) {}\n#else\nkernel void b(read_only pipe int p, global int *o) { READ(p, o[0]); WG(p); }\n#endif\n";
        let out = lower(src);
        // Every declaration is inside #if: the prelude takes a line of its own at the top.
        assert_eq!(out.lines().count(), src.lines().count() + 1);
        let lines: Vec<&str> = out.lines().skip(1).collect();
        assert!(
            lines[0].starts_with("#define READ(p, v) ({"),
            "{}",
            lines[0]
        );
        assert!(lines[2].starts_with("  __vkcl_wg_reserve("), "{}", lines[2]);
        for (i, k) in [(4, "a"), (6, "b")] {
            assert!(lines[i].contains(&format!("typedef uint vkcl_pipe_r_int; kernel void {k}(")));
            assert!(lines[i].contains("{ __local uint vkcl_wg_slot_[2]; (void)vkcl_wg_slot_;"));
        }
    }

    #[test]
    fn the_prelude_is_outside_conditionals() {
        let src = "#if 0\nint x;\n#endif\nkernel void k(read_only pipe int p) {}\n";
        let out = lower(src);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[1], "int x;");
        assert!(lines[3].starts_with(PRELUDE));
        // All inside an include guard: the prelude gets a line of its own.
        let src = "#ifndef G\n#define G\nkernel void k(read_only pipe int p) {}\n#endif\n";
        let out = lower(src);
        assert!(out.starts_with(&format!("{}\n#ifndef G\n", prelude_text(""))));
        assert_eq!(out.matches("__vkcl_reserve_id_t;").count(), 1);
    }

    #[test]
    fn broken_sources_do_not_panic() {
        let src = "#define R(p) read_pipe(p, &x)\nkernel void k(__write_only pipe struct s p, global int *o) \
                   { reserve_id_t r = work_group_reserve_write_pipe(p, (2)); write_pipe(p, r, 0, o); \
                   /* c */ \"s\\\" ( \" '(' } void f(pipe) { read_pipe(read_pipe(p, x), ); }";
        for end in 0..=src.len() {
            let _ = lower(&src[..end]);
            let _ = lower(&src[end..]);
        }
    }

    #[test]
    fn pipe_args_are_recognised() {
        assert_eq!(pipe_arg("vkcl_pipe_r_int*"), Some((false, "int".into())));
        let ty = "struct my_packet";
        let name = format!("vkcl_pipe_w_{}*", encode_type(ty));
        assert_eq!(pipe_arg(&name), Some((true, ty.into())));
        assert_eq!(pipe_arg("int*"), None);
        assert_eq!(pipe_arg("vkcl_pipe_x_int*"), None);
        assert_eq!(pipe_arg("vkcl_pipe_r_int"), None);
    }

    #[test]
    fn header_and_sizes() {
        let h = header(16, 3);
        assert_eq!((h[PACKET_SIZE], h[MAX_PACKETS]), (16, 3));
        assert_eq!(
            h[READ_CLAIMS] + h[WRITE_CLAIMS] + h[READ_DONE] + h[WRITE_DONE],
            0
        );
        assert_eq!(h[SLOTS], 4);
        assert_eq!(h[PACKETS], 64);
        assert_eq!(initial_bytes(16, 3).len(), 256);
        assert_eq!(buffer_size(1, 10), 256 + 16 * 4);
        assert_eq!(buffer_size(12, 2), 256 + 24);
        assert_eq!(buffer_size(4, 1 << 30), 128 + (8 << 30));
    }
}
