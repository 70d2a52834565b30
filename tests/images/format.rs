//! Image formats on the host, written from the spec's conversion rules (OpenCL C 3.0, "Conversion
//! Rules" for normalized, half, float and integer channel data types).
//!
//! Pixels are handled in the kernel's view: four components (r, g, b, a) as f64. For integer
//! formats the components are exact integers (what read_imagei/read_imageui return); for the
//! others the float read_imagef returns.
use crate::common::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// read_imagef / write_imagef: normalized, half and float data types.
    Float,
    /// read_imagei / write_imagei: CL_SIGNED_INT*.
    Int,
    /// read_imageui / write_imageui: CL_UNSIGNED_INT*.
    Uint,
}

impl Class {
    /// The OpenCL C suffix of the read/write built-ins and the component type.
    pub fn suffix(self) -> &'static str {
        match self {
            Class::Float => "f",
            Class::Int => "i",
            Class::Uint => "ui",
        }
    }
    pub fn vec4(self) -> &'static str {
        match self {
            Class::Float => "float4",
            Class::Int => "int4",
            Class::Uint => "uint4",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    pub order: cl_uint,
    pub ty: cl_uint,
}

pub const fn fmt(order: cl_uint, ty: cl_uint) -> Format {
    Format { order, ty }
}

pub const RGBA_UNORM8: Format = fmt(CL_RGBA, CL_UNORM_INT8);
pub const RGBA_UNORM16: Format = fmt(CL_RGBA, CL_UNORM_INT16);
pub const RGBA_SNORM8: Format = fmt(CL_RGBA, CL_SNORM_INT8);
pub const RGBA_SNORM16: Format = fmt(CL_RGBA, CL_SNORM_INT16);
pub const RGBA_INT8: Format = fmt(CL_RGBA, CL_SIGNED_INT8);
pub const RGBA_INT16: Format = fmt(CL_RGBA, CL_SIGNED_INT16);
pub const RGBA_INT32: Format = fmt(CL_RGBA, CL_SIGNED_INT32);
pub const RGBA_UINT8: Format = fmt(CL_RGBA, CL_UNSIGNED_INT8);
pub const RGBA_UINT16: Format = fmt(CL_RGBA, CL_UNSIGNED_INT16);
pub const RGBA_UINT32: Format = fmt(CL_RGBA, CL_UNSIGNED_INT32);
pub const RGBA_HALF: Format = fmt(CL_RGBA, CL_HALF_FLOAT);
pub const RGBA_FLOAT: Format = fmt(CL_RGBA, CL_FLOAT);
pub const BGRA_UNORM8: Format = fmt(CL_BGRA, CL_UNORM_INT8);
pub const R_FLOAT: Format = fmt(CL_R, CL_FLOAT);
pub const R_UINT32: Format = fmt(CL_R, CL_UNSIGNED_INT32);
pub const RG_INT8: Format = fmt(CL_RG, CL_SIGNED_INT8);
pub const RG_HALF: Format = fmt(CL_RG, CL_HALF_FLOAT);

/// OpenCL 3.0 minimum list for reading or writing in a kernel (CL_MEM_READ_ONLY, WRITE_ONLY and
/// READ_WRITE), 5.3.2.1 "Minimum List of Supported Image Formats", table "Minimum list of
/// required image formats for reading or writing" (full profile, not OpenCL 2.x).
pub const MIN_READ_OR_WRITE: [Format; 11] = [
    RGBA_UNORM8,
    RGBA_UNORM16,
    RGBA_INT8,
    RGBA_INT16,
    RGBA_INT32,
    RGBA_UINT8,
    RGBA_UINT16,
    RGBA_UINT32,
    RGBA_HALF,
    RGBA_FLOAT,
    BGRA_UNORM8,
];

/// The same section's list for reading and writing in the same kernel instance
/// (CL_MEM_KERNEL_READ_AND_WRITE), required where CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS > 0.
pub fn min_read_and_write() -> Vec<Format> {
    let tys = [
        CL_UNORM_INT8,
        CL_SIGNED_INT8,
        CL_SIGNED_INT16,
        CL_SIGNED_INT32,
        CL_UNSIGNED_INT8,
        CL_UNSIGNED_INT16,
        CL_UNSIGNED_INT32,
        CL_HALF_FLOAT,
        CL_FLOAT,
    ];
    [CL_R, CL_RGBA]
        .iter()
        .flat_map(|&o| tys.iter().map(move |&t| fmt(o, t)))
        .collect()
}

impl Format {
    pub fn cl(self) -> cl_image_format {
        cl_image_format {
            image_channel_order: self.order,
            image_channel_data_type: self.ty,
        }
    }

    pub fn from_cl(f: cl_image_format) -> Format {
        fmt(f.image_channel_order, f.image_channel_data_type)
    }

    /// Kernel-view component (0 = r .. 3 = a) of each stored channel, in memory order.
    pub fn stored(self) -> &'static [usize] {
        match self.order {
            CL_R => &[0],
            CL_A => &[3],
            CL_RG => &[0, 1],
            CL_RA => &[0, 3],
            CL_RGBA => &[0, 1, 2, 3],
            CL_BGRA => &[2, 1, 0, 3],
            CL_ARGB => &[3, 0, 1, 2],
            CL_ABGR => &[3, 2, 1, 0],
            CL_sRGBA => &[0, 1, 2, 3],
            CL_sBGRA => &[2, 1, 0, 3],
            o => panic!("channel order {o:#x} not modelled"),
        }
    }

    pub fn has_alpha(self) -> bool {
        self.stored().contains(&3)
    }

    pub fn channel_size(self) -> usize {
        match self.ty {
            CL_SNORM_INT8 | CL_UNORM_INT8 | CL_SIGNED_INT8 | CL_UNSIGNED_INT8 => 1,
            CL_SNORM_INT16 | CL_UNORM_INT16 | CL_SIGNED_INT16 | CL_UNSIGNED_INT16
            | CL_HALF_FLOAT => 2,
            CL_SIGNED_INT32 | CL_UNSIGNED_INT32 | CL_FLOAT => 4,
            t => panic!("data type {t:#x} not modelled"),
        }
    }

    pub fn elem_size(self) -> usize {
        self.channel_size() * self.stored().len()
    }

    pub fn class(self) -> Class {
        match self.ty {
            CL_SIGNED_INT8 | CL_SIGNED_INT16 | CL_SIGNED_INT32 => Class::Int,
            CL_UNSIGNED_INT8 | CL_UNSIGNED_INT16 | CL_UNSIGNED_INT32 => Class::Uint,
            _ => Class::Float,
        }
    }

    /// The CLK_ names get_image_channel_order / get_image_channel_data_type are compared with.
    pub fn clk_names(self) -> (&'static str, &'static str) {
        let o = match self.order {
            CL_R => "CLK_R",
            CL_A => "CLK_A",
            CL_RG => "CLK_RG",
            CL_RA => "CLK_RA",
            CL_RGBA => "CLK_RGBA",
            CL_BGRA => "CLK_BGRA",
            CL_ARGB => "CLK_ARGB",
            _ => "?",
        };
        let t = match self.ty {
            CL_SNORM_INT8 => "CLK_SNORM_INT8",
            CL_SNORM_INT16 => "CLK_SNORM_INT16",
            CL_UNORM_INT8 => "CLK_UNORM_INT8",
            CL_UNORM_INT16 => "CLK_UNORM_INT16",
            CL_SIGNED_INT8 => "CLK_SIGNED_INT8",
            CL_SIGNED_INT16 => "CLK_SIGNED_INT16",
            CL_SIGNED_INT32 => "CLK_SIGNED_INT32",
            CL_UNSIGNED_INT8 => "CLK_UNSIGNED_INT8",
            CL_UNSIGNED_INT16 => "CLK_UNSIGNED_INT16",
            CL_UNSIGNED_INT32 => "CLK_UNSIGNED_INT32",
            CL_HALF_FLOAT => "CLK_HALF_FLOAT",
            CL_FLOAT => "CLK_FLOAT",
            _ => "?",
        };
        (o, t)
    }

    /// Border colour of CL_ADDRESS_CLAMP: (0,0,0,0) when the order has alpha, else (0,0,0,1).
    pub fn border(self) -> [f64; 4] {
        [0.0, 0.0, 0.0, if self.has_alpha() { 0.0 } else { 1.0 }]
    }

    /// Element bytes → kernel view (missing components are 0, alpha 1).
    pub fn decode(self, px: &[u8]) -> [f64; 4] {
        let mut v = [0.0, 0.0, 0.0, 1.0];
        let cs = self.channel_size();
        for (i, &comp) in self.stored().iter().enumerate() {
            let mut raw = [0u8; 4];
            raw[..cs].copy_from_slice(&px[i * cs..(i + 1) * cs]);
            v[comp] = decode_channel(self.ty, u32::from_le_bytes(raw));
            if matches!(self.order, CL_sRGBA | CL_sBGRA) && comp < 3 {
                // sRGB → linear (OpenCL C spec, section 8.3.1.1).
                let c = v[comp];
                v[comp] = if c <= 0.04045 {
                    c / 12.92
                } else {
                    ((c + 0.055) / 1.055).powf(2.4)
                };
            }
        }
        v
    }

    /// Kernel view → element bytes, by write_image's conversion (round to nearest even).
    pub fn encode(self, v: [f64; 4]) -> Vec<u8> {
        let cs = self.channel_size();
        self.stored()
            .iter()
            .flat_map(|&comp| encode_channel(self.ty, v[comp]).to_le_bytes()[..cs].to_vec())
            .collect()
    }

    /// Whether `px` is a valid conversion of `want` (kernel view) by the spec's rules and
    /// precision (see `channel_ok`). Returns a description of the first mismatch.
    pub fn check_encoded(self, want: [f64; 4], px: &[u8]) -> Result<(), String> {
        self.check_encoded_tol(want, px, 0.6)
    }

    /// `check_encoded` with `norm_tol` in place of the spec's 0.6 for normalized types.
    pub fn check_encoded_tol(self, want: [f64; 4], px: &[u8], norm_tol: f64) -> Result<(), String> {
        let cs = self.channel_size();
        let mut want = want;
        if matches!(self.order, CL_sRGBA | CL_sBGRA) {
            // linear → sRGB (OpenCL C spec, section 8.3.1.1), then as UNORM_INT8.
            for c in want.iter_mut().take(3) {
                let l = c.clamp(0.0, 1.0);
                *c = if l <= 0.0031308 {
                    12.92 * l
                } else {
                    1.055 * l.powf(1.0 / 2.4) - 0.055
                };
            }
        }
        for (i, &comp) in self.stored().iter().enumerate() {
            let mut raw = [0u8; 4];
            raw[..cs].copy_from_slice(&px[i * cs..(i + 1) * cs]);
            let got = u32::from_le_bytes(raw);
            if !channel_ok_tol(self.ty, want[comp], got, norm_tol) {
                return Err(format!(
                    "component {comp}: wanted {} (encoded {:#x}), got {got:#x} ({})",
                    want[comp],
                    encode_channel(self.ty, want[comp]),
                    decode_channel(self.ty, got)
                ));
            }
        }
        Ok(())
    }

    /// Deterministic valid element bytes for pixel `i` (finite, normal halves and floats, so
    /// that every transfer path must preserve them bit for bit).
    pub fn pattern_pixel(self, i: usize, seed: u32) -> Vec<u8> {
        let cs = self.channel_size();
        (0..self.stored().len())
            .flat_map(|c| {
                let h = hash(i as u32 * 4 + c as u32, seed);
                let raw = match self.ty {
                    // sign, exponent 10..20, any mantissa: |v| in [2^-5, 64)
                    CL_HALF_FLOAT => (h & 0x83FF) | ((10 + (h >> 10) % 11) << 10),
                    CL_FLOAT => {
                        let v = ((h % 20001) as f32 - 10000.0) / 64.0;
                        v.to_bits()
                    }
                    _ => h,
                };
                raw.to_le_bytes()[..cs].to_vec()
            })
            .collect()
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let o = match self.order {
            CL_R => "R",
            CL_A => "A",
            CL_RG => "RG",
            CL_RA => "RA",
            CL_RGBA => "RGBA",
            CL_BGRA => "BGRA",
            CL_ARGB => "ARGB",
            _ => "?",
        };
        let t = self.clk_names().1.trim_start_matches("CLK_");
        write!(f, "{o}/{t}")
    }
}

pub fn hash(i: u32, seed: u32) -> u32 {
    let mut x = i.wrapping_mul(0x9E37_79B1) ^ seed.wrapping_mul(0x85EB_CA77);
    x ^= x >> 15;
    x = x.wrapping_mul(0x2C1B_3C6D);
    x ^= x >> 12;
    x
}

/// A channel's raw bits (low `channel_size` bytes) → kernel value. Normalized types per the
/// spec: unorm c / (2^n - 1); snorm max(-1, c / (2^(n-1) - 1)).
pub fn decode_channel(ty: cl_uint, raw: u32) -> f64 {
    match ty {
        CL_UNORM_INT8 => (raw & 0xFF) as f64 / 255.0,
        CL_UNORM_INT16 => (raw & 0xFFFF) as f64 / 65535.0,
        CL_SNORM_INT8 => (raw as u8 as i8 as f64 / 127.0).max(-1.0),
        CL_SNORM_INT16 => (raw as u16 as i16 as f64 / 32767.0).max(-1.0),
        CL_SIGNED_INT8 => raw as u8 as i8 as f64,
        CL_SIGNED_INT16 => raw as u16 as i16 as f64,
        CL_SIGNED_INT32 => raw as i32 as f64,
        CL_UNSIGNED_INT8 => (raw & 0xFF) as f64,
        CL_UNSIGNED_INT16 => (raw & 0xFFFF) as f64,
        CL_UNSIGNED_INT32 => raw as f64,
        CL_HALF_FLOAT => half_to_f32(raw as u16) as f64,
        CL_FLOAT => f32::from_bits(raw) as f64,
        t => panic!("data type {t:#x} not modelled"),
    }
}

/// Normalized scale and range: (max code, min value) for unorm/snorm types.
fn norm(ty: cl_uint) -> Option<(f64, f64)> {
    match ty {
        CL_UNORM_INT8 => Some((255.0, 0.0)),
        CL_UNORM_INT16 => Some((65535.0, 0.0)),
        CL_SNORM_INT8 => Some((127.0, -1.0)),
        CL_SNORM_INT16 => Some((32767.0, -1.0)),
        _ => None,
    }
}

/// Integer range of the integer types.
fn int_range(ty: cl_uint) -> Option<(f64, f64)> {
    match ty {
        CL_SIGNED_INT8 => Some((-128.0, 127.0)),
        CL_SIGNED_INT16 => Some((-32768.0, 32767.0)),
        CL_SIGNED_INT32 => Some((i32::MIN as f64, i32::MAX as f64)),
        CL_UNSIGNED_INT8 => Some((0.0, 255.0)),
        CL_UNSIGNED_INT16 => Some((0.0, 65535.0)),
        CL_UNSIGNED_INT32 => Some((0.0, u32::MAX as f64)),
        _ => None,
    }
}

/// Kernel value → raw channel bits: convert_<type>_sat_rte(f * scale) for normalized types,
/// convert_<type>_sat for integers, round to nearest even for half.
pub fn encode_channel(ty: cl_uint, v: f64) -> u32 {
    if let Some((scale, lo)) = norm(ty) {
        return (v.clamp(lo, 1.0) * scale).round_ties_even() as i64 as u32;
    }
    if let Some((lo, hi)) = int_range(ty) {
        return v.clamp(lo, hi) as i64 as u32;
    }
    match ty {
        CL_HALF_FLOAT => f32_to_half(v as f32, true) as u32,
        CL_FLOAT => (v as f32).to_bits(),
        t => panic!("data type {t:#x} not modelled"),
    }
}

/// The spec's tolerance for a conversion to a channel:
/// - normalized: "the precision of the above conversions [float → normalized] is ≤ 0.6 ulp"
///   (i.e. within 0.6 of the exact scaled value, so either neighbour of an exact .5);
/// - half: "Conversions from float to half round the mantissa using the round to nearest even
///   or round to zero rounding mode";
/// - integers saturate exactly; float is exact.
pub fn channel_ok(ty: cl_uint, want: f64, raw: u32) -> bool {
    channel_ok_tol(ty, want, raw, 0.6)
}

pub fn channel_ok_tol(ty: cl_uint, want: f64, raw: u32, norm_tol: f64) -> bool {
    let cs_mask = match ty {
        CL_SNORM_INT8 | CL_UNORM_INT8 | CL_SIGNED_INT8 | CL_UNSIGNED_INT8 => 0xFF,
        CL_SNORM_INT16 | CL_UNORM_INT16 | CL_SIGNED_INT16 | CL_UNSIGNED_INT16 | CL_HALF_FLOAT => {
            0xFFFF
        }
        _ => u32::MAX,
    };
    let raw = raw & cs_mask;
    if let Some((scale, lo)) = norm(ty) {
        let code = match ty {
            CL_SNORM_INT8 => raw as u8 as i8 as f64,
            CL_SNORM_INT16 => raw as u16 as i16 as f64,
            _ => raw as f64,
        };
        return (code - want.clamp(lo, 1.0) * scale).abs() <= norm_tol;
    }
    match ty {
        CL_HALF_FLOAT => {
            let w = want as f32;
            let (rte, rtz) = (f32_to_half(w, true) as u32, f32_to_half(w, false) as u32);
            // "Denormalized numbers for the half data type which may be generated when
            // converting a float to a half may be flushed to zero."
            let flushed = rte & 0x7C00 == 0 && raw & 0x7FFF == 0;
            raw == rte || raw == rtz || flushed
        }
        _ => raw == encode_channel(ty, want) & cs_mask,
    }
}

pub fn half_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((h >> 10) & 0x1F) as i32;
    let m = (h & 0x3FF) as f32;
    sign * match e {
        0 => m * 2f32.powi(-24),
        31 if m == 0.0 => f32::INFINITY,
        31 => f32::NAN,
        _ => (1024.0 + m) * 2f32.powi(e - 25),
    }
}

/// float → half with round to nearest even (`rte`) or round toward zero, subnormals kept.
pub fn f32_to_half(f: f32, rte: bool) -> u16 {
    let sign = if f.is_sign_negative() { 0x8000u16 } else { 0 };
    let a = f.abs() as f64;
    if f.is_nan() {
        return sign | 0x7E00;
    }
    if f.is_infinite() {
        return sign | 0x7C00;
    }
    let round = |q: f64| if rte { q.round_ties_even() } else { q.floor() };
    let bits = if a < 2f64.powi(-14) {
        round(a * 2f64.powi(24)) as u32 // subnormal: units of 2^-24 (may round up to normal)
    } else {
        let e = ((f.to_bits() >> 23) & 0xFF) as i32 - 127;
        let m = round(a * 2f64.powi(10 - e)) as u32; // in [1024, 2048]
        (((e + 15) as u32) << 10) + (m - 1024)
    };
    if bits >= 0x7C00 {
        // overflow: infinity when rounding to nearest, the largest finite half toward zero
        return sign | if rte { 0x7C00 } else { 0x7BFF };
    }
    sign | bits as u16
}

#[test]
fn host_conversions_follow_the_spec_examples() {
    assert_eq!(encode_channel(CL_UNORM_INT8, 0.5), 128); // 127.5 → even
    assert_eq!(encode_channel(CL_UNORM_INT8, -3.0), 0);
    assert_eq!(encode_channel(CL_UNORM_INT8, 7.0), 255);
    assert_eq!(encode_channel(CL_SNORM_INT8, -1.5) as u8, 0x81); // -127
    assert_eq!(encode_channel(CL_SNORM_INT16, 0.5) as u16, 16384); // 16383.5 → even
    assert_eq!(decode_channel(CL_SNORM_INT8, 0x80), -1.0);
    assert_eq!(encode_channel(CL_SIGNED_INT8, 300.0) as u8, 127);
    assert_eq!(encode_channel(CL_UNSIGNED_INT16, -5.0), 0);
    assert_eq!(f32_to_half(1.0, true), 0x3C00);
    assert_eq!(f32_to_half(65504.0, true), 0x7BFF);
    assert_eq!(f32_to_half(65520.0, true), 0x7C00);
    assert_eq!(f32_to_half(65520.0, false), 0x7BFF);
    assert_eq!(f32_to_half(1.0 + 2f32.powi(-11), true), 0x3C00); // tie → even
    assert_eq!(f32_to_half(1.0 + 3.0 * 2f32.powi(-11), true), 0x3C02); // tie → even (up)
    assert_eq!(f32_to_half(1.0 + 3.0 * 2f32.powi(-11), false), 0x3C01);
    assert_eq!(f32_to_half(2f32.powi(-24), true), 1);
    assert_eq!(f32_to_half(-2.0, true), 0xC000);
    for h in [0x0001u16, 0x03FF, 0x0400, 0x3C00, 0x7BFF, 0xC123] {
        assert_eq!(f32_to_half(half_to_f32(h), true), h);
        assert_eq!(f32_to_half(half_to_f32(h), false), h);
    }
    assert!(channel_ok(CL_UNORM_INT8, 0.5, 127) && channel_ok(CL_UNORM_INT8, 0.5, 128));
    assert!(!channel_ok(CL_UNORM_INT8, 0.5, 126));
    assert!(channel_ok(CL_SNORM_INT8, -1.0, 0x81) && !channel_ok(CL_SNORM_INT8, -1.0, 0x80));
    let bgra = BGRA_UNORM8.encode([1.0, 0.0, 0.2, 0.4]);
    assert_eq!(bgra, [51, 0, 255, 102]);
    assert_eq!(BGRA_UNORM8.decode(&bgra), [1.0, 0.0, 0.2, 0.4]);
    assert_eq!(R_FLOAT.decode(&2.5f32.to_le_bytes()), [2.5, 0.0, 0.0, 1.0]);
    assert_eq!(R_FLOAT.border(), [0.0, 0.0, 0.0, 1.0]);
}
