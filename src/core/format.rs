//! Image formats: which OpenCL channel order / data type pairs exist (section 5.3.1.1 of the
//! OpenCL 3.0 API spec), their sizes, which of them a device supports for which use, and the
//! host-side conversion of a fill color (section 8.3 of the OpenCL C spec, "Conversion rules").
//! The Vulkan format and component swizzle of each, and the probing, are vk::format's.

#![allow(non_upper_case_globals)] // CL_sRGBA and friends

use super::device::Device;
use crate::cl::*;
use crate::vk::format::{Need, Texel};

/// An OpenCL image format and how it is stored in Vulkan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    pub order: cl_channel_order,
    pub data_type: cl_channel_type,
    /// Its Vulkan storage. Formats whose reads swizzle the components are read-only (storage
    /// views have no swizzle).
    pub texel: Texel,
}

/// The channel orders vkcl exposes. Not CL_DEPTH: clspv 0.0.1 emits invalid SPIR-V for
/// reads of depth images (a scalar OpImageFetch).
const ORDERS: [cl_channel_order; 12] = [
    CL_R,
    CL_A,
    CL_RG,
    CL_RA,
    CL_RGBA,
    CL_BGRA,
    CL_INTENSITY,
    CL_LUMINANCE,
    CL_sRGBA,
    CL_sBGRA,
    CL_ARGB,
    CL_ABGR,
];

const TYPES: [cl_channel_type; 12] = [
    CL_SNORM_INT8,
    CL_SNORM_INT16,
    CL_UNORM_INT8,
    CL_UNORM_INT16,
    CL_SIGNED_INT8,
    CL_SIGNED_INT16,
    CL_SIGNED_INT32,
    CL_UNSIGNED_INT8,
    CL_UNSIGNED_INT16,
    CL_UNSIGNED_INT32,
    CL_HALF_FLOAT,
    CL_FLOAT,
];

/// Whether the spec defines this channel order / data type pair (Table 16 and the notes after
/// it): CL_INVALID_IMAGE_FORMAT_DESCRIPTOR otherwise.
pub fn valid(order: cl_channel_order, data_type: cl_channel_type) -> bool {
    let packed_rgb = [CL_UNORM_SHORT_565, CL_UNORM_SHORT_555, CL_UNORM_INT_101010];
    let eight = [
        CL_UNORM_INT8,
        CL_SNORM_INT8,
        CL_SIGNED_INT8,
        CL_UNSIGNED_INT8,
    ];
    let norm_or_float = [
        CL_UNORM_INT8,
        CL_UNORM_INT16,
        CL_SNORM_INT8,
        CL_SNORM_INT16,
        CL_HALF_FLOAT,
        CL_FLOAT,
    ];
    match order {
        CL_R | CL_Rx | CL_A | CL_RG | CL_RGx | CL_RA => TYPES.contains(&data_type),
        CL_RGBA => TYPES.contains(&data_type) || data_type == CL_UNORM_INT_101010_2,
        CL_INTENSITY | CL_LUMINANCE => norm_or_float.contains(&data_type),
        CL_DEPTH => data_type == CL_UNORM_INT16 || data_type == CL_FLOAT,
        CL_DEPTH_STENCIL => data_type == CL_UNORM_INT24 || data_type == CL_FLOAT,
        CL_RGB | CL_RGBx => packed_rgb.contains(&data_type),
        CL_ARGB | CL_BGRA | CL_ABGR => eight.contains(&data_type),
        CL_sRGB | CL_sRGBx | CL_sRGBA | CL_sBGRA => data_type == CL_UNORM_INT8,
        _ => false,
    }
}

/// Bytes per channel of the (unpacked) data types.
pub fn channel_size(data_type: cl_channel_type) -> usize {
    match data_type {
        CL_SNORM_INT8 | CL_UNORM_INT8 | CL_SIGNED_INT8 | CL_UNSIGNED_INT8 => 1,
        CL_SNORM_INT16 | CL_UNORM_INT16 | CL_SIGNED_INT16 | CL_UNSIGNED_INT16 | CL_HALF_FLOAT => 2,
        _ => 4,
    }
}

/// The channels stored per element, in memory order.
fn stored_channels(order: cl_channel_order) -> usize {
    match order {
        CL_RG | CL_RA => 2,
        CL_RGBA | CL_BGRA | CL_sRGBA | CL_sBGRA | CL_ARGB | CL_ABGR => 4,
        _ => 1,
    }
}

impl Format {
    /// The Vulkan form of a valid OpenCL format; None for formats vkcl does not map (packed,
    /// ARGB/ABGR, sRGB without alpha, depth-stencil): CL_IMAGE_FORMAT_NOT_SUPPORTED.
    pub fn new(order: cl_channel_order, data_type: cl_channel_type) -> Option<Format> {
        let packed = matches!(order, CL_RGB | CL_RGBx);
        let exposed = packed || (ORDERS.contains(&order) && TYPES.contains(&data_type));
        if !exposed || !valid(order, data_type) {
            return None;
        }
        Some(Format {
            order,
            data_type,
            texel: Texel::of(order, data_type, stored_channels(order))?,
        })
    }

    /// Every format vkcl can map, whatever the device.
    pub fn all() -> impl Iterator<Item = Format> {
        let packed = [CL_UNORM_SHORT_565, CL_UNORM_SHORT_555, CL_UNORM_INT_101010];
        let packed = [CL_RGB, CL_RGBx]
            .into_iter()
            .flat_map(move |o| packed.into_iter().filter_map(move |t| Format::new(o, t)));
        ORDERS
            .iter()
            .flat_map(|&o| TYPES.iter().filter_map(move |&t| Format::new(o, t)))
            .chain(packed)
    }

    pub fn cl(&self) -> cl_image_format {
        cl_image_format {
            image_channel_order: self.order,
            image_channel_data_type: self.data_type,
        }
    }

    /// Bytes per element (pixel).
    pub fn element_size(&self) -> usize {
        match self.data_type {
            CL_UNORM_SHORT_565 | CL_UNORM_SHORT_555 => 2,
            CL_UNORM_INT_101010 => 4,
            t => stored_channels(self.order) * channel_size(t),
        }
    }

    pub fn is_integer(&self) -> bool {
        matches!(
            self.data_type,
            CL_SIGNED_INT8
                | CL_SIGNED_INT16
                | CL_SIGNED_INT32
                | CL_UNSIGNED_INT8
                | CL_UNSIGNED_INT16
                | CL_UNSIGNED_INT32
        )
    }

    /// The format of the same data with the other channel order of an sRGB / linear pair (the
    /// pairs section 5.3.1 allows for a 2D image created from another); None for others.
    pub fn twin(&self) -> Option<Format> {
        let order = match self.order {
            CL_sRGBA => CL_RGBA,
            CL_RGBA => CL_sRGBA,
            CL_sBGRA => CL_BGRA,
            CL_BGRA => CL_sBGRA,
            _ => return None,
        };
        Format::new(order, self.data_type)
    }

    /// Whether kernels can write it (a storage view: no swizzle, no sRGB).
    pub fn writable(&self) -> bool {
        self.texel.unswizzled() && !matches!(self.order, CL_sRGBA | CL_sBGRA)
    }

    /// One element holding `color` (the fill color of clEnqueueFillImage: four floats, ints
    /// or uints as the data type says, in (r, g, b, a) order),
    /// converted by the spec's rules: normalized values scaled, rounded to nearest even and
    /// saturated, integers saturated, half rounded to nearest even.
    pub fn pack(&self, color: [u32; 4]) -> Vec<u8> {
        let f = color.map(f32::from_bits);
        // Packed RGB: red in the high bits (section 5.3.1.1).
        let bits = |v: f32, n: u32| norm(v, 0.0, ((1u32 << n) - 1) as f32) as u32;
        match self.data_type {
            CL_UNORM_SHORT_565 => {
                let v = bits(f[0], 5) << 11 | bits(f[1], 6) << 5 | bits(f[2], 5);
                return (v as u16).to_le_bytes().to_vec();
            }
            CL_UNORM_SHORT_555 => {
                let v = bits(f[0], 5) << 10 | bits(f[1], 5) << 5 | bits(f[2], 5);
                return (v as u16).to_le_bytes().to_vec();
            }
            CL_UNORM_INT_101010 => {
                let v = bits(f[0], 10) << 20 | bits(f[1], 10) << 10 | bits(f[2], 10);
                return v.to_le_bytes().to_vec();
            }
            _ => {}
        }
        // The stored channels, in memory order.
        let channels: Vec<usize> = match self.order {
            CL_A => vec![3],
            CL_RG => vec![0, 1],
            CL_RA => vec![0, 3],
            CL_RGBA | CL_sRGBA => vec![0, 1, 2, 3],
            CL_BGRA | CL_sBGRA => vec![2, 1, 0, 3],
            CL_ARGB => vec![3, 0, 1, 2],
            CL_ABGR => vec![3, 2, 1, 0],
            _ => vec![0],
        };
        let srgb = matches!(self.order, CL_sRGBA | CL_sBGRA);
        let mut out = Vec::with_capacity(self.element_size());
        for c in channels {
            let v = if srgb && c < 3 {
                linear_to_srgb(f[c])
            } else {
                f[c]
            };
            match self.data_type {
                CL_UNORM_INT8 => out.push(norm(v, 0.0, 255.0) as u8),
                CL_SNORM_INT8 => out.push(norm(v, -127.0, 127.0) as i8 as u8),
                CL_UNORM_INT16 => out.extend((norm(v, 0.0, 65535.0) as u16).to_le_bytes()),
                CL_SNORM_INT16 => out.extend((norm(v, -32767.0, 32767.0) as i16).to_le_bytes()),
                CL_HALF_FLOAT => out.extend(f32_to_f16(v).to_le_bytes()),
                CL_FLOAT => out.extend(v.to_le_bytes()),
                CL_UNSIGNED_INT8 => out.push(color[c].min(u8::MAX as u32) as u8),
                CL_UNSIGNED_INT16 => {
                    out.extend((color[c].min(u16::MAX as u32) as u16).to_le_bytes())
                }
                CL_UNSIGNED_INT32 => out.extend(color[c].to_le_bytes()),
                CL_SIGNED_INT8 => out.push((color[c] as i32).clamp(-128, 127) as i8 as u8),
                CL_SIGNED_INT16 => {
                    out.extend(((color[c] as i32).clamp(-32768, 32767) as i16).to_le_bytes())
                }
                _ => out.extend(color[c].to_le_bytes()),
            }
        }
        out
    }
}

/// A normalized value scaled (`v * hi`), rounded to nearest even and clamped to [lo, hi]
/// (section 8.3.1.2: -1.0 is the smallest signed normalized value).
fn norm(v: f32, lo: f32, hi: f32) -> f32 {
    if v.is_nan() {
        return 0.0;
    }
    (v * hi).round_ties_even().clamp(lo, hi)
}

/// The sRGB encoding of a linear value (section 8.3.1.4 of the OpenCL C spec).
fn linear_to_srgb(v: f32) -> f32 {
    if v.is_nan() || v <= 0.0 {
        0.0
    } else if v < 0.0031308 {
        12.92 * v
    } else if v < 1.0 {
        1.055 * v.powf(1.0 / 2.4) - 0.055
    } else {
        1.0
    }
}

/// A float converted to half precision, rounded to nearest even.
pub fn f32_to_f16(v: f32) -> u16 {
    let bits = v.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let mant = bits & 0x7f_ffff;
    if exp == 0xff {
        // Infinity, or NaN (kept a quiet NaN).
        return sign | 0x7c00 | if mant != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    let (m, shift) = if e <= 0 {
        // A half denormal (or zero): the implicit bit joins the mantissa.
        if e < -10 {
            return sign;
        }
        (mant | 0x80_0000, (14 - e) as u32)
    } else {
        (mant, 13)
    };
    let half_mant = m >> shift;
    let rest = m & ((1 << shift) - 1);
    let halfway = 1 << (shift - 1);
    let mut h = if e <= 0 {
        half_mant
    } else {
        ((e as u32) << 10) | half_mant
    };
    if rest > halfway || (rest == halfway && h & 1 == 1) {
        // Carries into the exponent where the mantissa overflows (correctly).
        h += 1;
    }
    sign | h as u16
}

/// A device's image limits (clGetDeviceInfo).
#[derive(Clone, Copy, Debug, Default)]
pub struct ImageLimits {
    pub max_2d: usize,
    pub max_3d: usize,
    pub max_array: usize,
    pub max_buffer: usize,
    pub read_args: u32,
    pub write_args: u32,
    pub read_write_args: u32,
    pub samplers: u32,
}

/// What an image of a format is used for, to check a device's support.
#[derive(Clone, Copy)]
pub struct Use {
    pub read: bool,
    pub write: bool,
}

impl Use {
    /// The kernel accesses `flags` allow (section 5.3.2: CL_MEM_READ_WRITE and
    /// CL_MEM_KERNEL_READ_AND_WRITE need both).
    pub fn of(flags: cl_mem_flags) -> Use {
        Use {
            read: flags & CL_MEM_WRITE_ONLY == 0,
            write: flags & CL_MEM_READ_ONLY == 0,
        }
    }
}

impl Device {
    /// Whether images of `format` and `image_type` can be used as `usage` says on this device:
    /// sampled (with linear filtering for float and normalized formats) to read, storage
    /// to write, copies both ways; texel buffers for 1D buffer images; and the image type
    /// itself (3D, arrays) for that format.
    ///
    /// CL_UNORM_SHORT_565 and CL_UNORM_SHORT_555 are listed only on lavapipe
    /// ([`Device::samples_5_bit_exactly`]): elsewhere sampled reads
    /// may widen their 5- and 6-bit channels to 8-bit unorm first (13/31 reads as 107/255, up to
    /// 2.8e-3 off where the spec converts `field / (2^n - 1)` to float precision), and no Vulkan
    /// query tells which devices do (tests/images/packed.rs).
    pub fn supports(&self, format: &Format, image_type: cl_mem_object_type, usage: Use) -> bool {
        let widened = matches!(format.data_type, CL_UNORM_SHORT_565 | CL_UNORM_SHORT_555)
            && !self.samples_5_bit_exactly();
        if !self.has_images() || widened || (usage.write && !format.writable()) {
            return false;
        }
        let need = Need {
            read: usage.read,
            write: usage.write,
            filter: !format.is_integer(),
        };
        self.instance
            .supports(&self.caps, format.texel, image_type, need)
    }

    /// Whether sampled reads of 5- and 6-bit unorm channels give the spec's values in every
    /// sampler mode (issue 16, measured by tests/images/packed.rs). lavapipe samples formats
    /// whose channels fit 8-bit unorm on gallivm's AoS path, in 8-bit fixed point (1/31 reads as
    /// 8/255), with CLAMP_TO_EDGE or REPEAT addressing and equal filters; vkcl's samplers keep
    /// its reads off that path (normalized ones with `minFilter` unlike `magFilter`, unnormalized
    /// CLAMP_TO_EDGE ones as CLAMP with the coordinates kept inside the image by
    /// compiler::sampler_wrap), and then every mode is exact. NVIDIA widens even sampler-less
    /// reads; other drivers are unmeasured.
    pub fn samples_5_bit_exactly(&self) -> bool {
        self.caps.workarounds.unequal_sampler_filters
    }

    /// Images: kernels write them through storage images without a declared format, and
    /// read_write images read them that way too.
    pub fn has_images(&self) -> bool {
        self.caps.features.storage_image_write_without_format
    }

    pub fn has_read_write_images(&self) -> bool {
        self.has_images() && self.caps.features.storage_image_read_without_format
    }

    /// CL_DEVICE_IMAGE_* and the image argument limits, from Vulkan's (0 without images).
    pub fn image_limits(&self) -> ImageLimits {
        if !self.has_images() {
            return ImageLimits::default();
        }
        let l = &self.caps.limits;
        let read = l.max_per_stage_descriptor_sampled_images;
        let write = l.max_per_stage_descriptor_storage_images;
        ImageLimits {
            max_2d: l.max_image_dimension2_d as usize,
            max_3d: l.max_image_dimension3_d as usize,
            max_array: l.max_image_array_layers as usize,
            max_buffer: l.max_texel_buffer_elements as usize,
            read_args: read.min(128),
            write_args: write.min(64),
            read_write_args: if self.has_read_write_images() {
                write.min(64)
            } else {
                0
            },
            samplers: l.max_per_stage_descriptor_samplers.min(16),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_rounds_to_nearest_even() {
        assert_eq!(f32_to_f16(1.0), 0x3c00);
        assert_eq!(f32_to_f16(-2.0), 0xc000);
        assert_eq!(f32_to_f16(65504.0), 0x7bff);
        assert_eq!(f32_to_f16(65520.0), 0x7c00); // rounds up to infinity
        assert_eq!(f32_to_f16(1.0 + 1.0 / 2048.0), 0x3c00); // halfway: even
        assert_eq!(f32_to_f16(1.0 + 3.0 / 2048.0), 0x3c02); // halfway: even (up)
        assert_eq!(f32_to_f16(5.960_464_5e-8), 0x0001); // smallest denormal
        assert_eq!(f32_to_f16(0.0), 0);
        assert_eq!(f32_to_f16(f32::INFINITY), 0x7c00);
        assert!(f32_to_f16(f32::NAN) & 0x7fff > 0x7c00);
    }

    #[test]
    fn fill_colors_convert_by_the_spec() {
        let f = |x: [f32; 4]| x.map(f32::to_bits);
        let rgba8 = Format::new(CL_RGBA, CL_UNORM_INT8).unwrap();
        assert_eq!(rgba8.pack(f([0.5, 1.5, -1.0, 0.25])), [128, 255, 0, 64]);
        let bgra8 = Format::new(CL_BGRA, CL_UNORM_INT8).unwrap();
        assert_eq!(bgra8.pack(f([1.0, 0.0, 0.0, 1.0])), [0, 0, 255, 255]);
        let snorm = Format::new(CL_R, CL_SNORM_INT16).unwrap();
        assert_eq!(
            snorm.pack(f([-1.0, 0.0, 0.0, 0.0])),
            (-32767i16).to_le_bytes()
        );
        let u8x2 = Format::new(CL_RG, CL_UNSIGNED_INT8).unwrap();
        assert_eq!(u8x2.pack([300, 7, 0, 0]), [255, 7]);
        let s16 = Format::new(CL_RA, CL_SIGNED_INT16).unwrap();
        let neg = (-40000i32) as u32;
        assert_eq!(s16.pack([neg, 0, 0, 5]), [0x00, 0x80, 5, 0]);
        assert_eq!(
            Format::new(CL_A, CL_FLOAT)
                .unwrap()
                .pack(f([0.0, 0.0, 0.0, 2.5])),
            2.5f32.to_le_bytes()
        );
    }

    #[test]
    fn formats_map_and_validate() {
        assert!(valid(CL_RGB, CL_UNORM_SHORT_565));
        let f565 = Format::new(CL_RGB, CL_UNORM_SHORT_565).unwrap();
        assert_eq!(f565.element_size(), 2);
        let f = |x: [f32; 4]| x.map(f32::to_bits);
        assert_eq!(f565.pack(f([1.0, 0.0, 1.0, 0.0])), 0xf81fu16.to_le_bytes());
        let f1010 = Format::new(CL_RGBx, CL_UNORM_INT_101010).unwrap();
        assert_eq!(
            f1010.pack(f([0.0, 1.0, 0.0, 0.0])),
            (0x3ffu32 << 10).to_le_bytes()
        );
        assert!(!f1010.writable());
        assert!(Format::new(CL_RGBA, CL_UNORM_INT_101010_2).is_none());
        assert!(!valid(CL_RGBA, CL_UNORM_SHORT_565));
        assert!(!valid(CL_INTENSITY, CL_UNSIGNED_INT8));
        assert!(!valid(CL_BGRA, CL_FLOAT));
        let a = Format::new(CL_A, CL_UNORM_INT8).unwrap();
        assert!(!a.writable() && a.element_size() == 1);
        assert_eq!(Format::new(CL_RGBA, CL_FLOAT).unwrap().element_size(), 16);
        assert_eq!(Format::all().count(), 92);
        let argb = Format::new(CL_ARGB, CL_UNORM_INT8).unwrap();
        assert!(!argb.writable());
        assert_eq!(argb.pack(f([1.0, 0.0, 0.0, 0.5])), [128, 255, 0, 0]);
    }
}
