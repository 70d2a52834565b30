//! The Vulkan side of image formats: the Vulkan format and component swizzle each OpenCL
//! channel order / data type pair is stored as, and whether a device supports images of it
//! for a use. core/format.rs has the OpenCL side (which pairs exist, sizes, fill colors).

#![allow(non_upper_case_globals)] // CL_sRGBA and friends

use super::instance::Instance;
use super::probe::Caps;
use super::vk;
use crate::cl::*;

/// How the texels of an OpenCL format are stored in Vulkan: the format, and how its
/// components become the OpenCL (r, g, b, a) of a read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Texel {
    pub(super) format: vk::Format,
    pub(super) swizzle: [vk::ComponentSwizzle; 4],
}

/// The Vulkan format of `channels` (1, 2 or 4) unpacked channels of `data_type`.
fn unpacked(channels: usize, data_type: cl_channel_type) -> Option<vk::Format> {
    use vk::Format as F;
    let [one, two, four] = match data_type {
        CL_UNORM_INT8 => [F::R8_UNORM, F::R8G8_UNORM, F::R8G8B8A8_UNORM],
        CL_SNORM_INT8 => [F::R8_SNORM, F::R8G8_SNORM, F::R8G8B8A8_SNORM],
        CL_UNSIGNED_INT8 => [F::R8_UINT, F::R8G8_UINT, F::R8G8B8A8_UINT],
        CL_SIGNED_INT8 => [F::R8_SINT, F::R8G8_SINT, F::R8G8B8A8_SINT],
        CL_UNORM_INT16 => [F::R16_UNORM, F::R16G16_UNORM, F::R16G16B16A16_UNORM],
        CL_SNORM_INT16 => [F::R16_SNORM, F::R16G16_SNORM, F::R16G16B16A16_SNORM],
        CL_UNSIGNED_INT16 => [F::R16_UINT, F::R16G16_UINT, F::R16G16B16A16_UINT],
        CL_SIGNED_INT16 => [F::R16_SINT, F::R16G16_SINT, F::R16G16B16A16_SINT],
        CL_HALF_FLOAT => [F::R16_SFLOAT, F::R16G16_SFLOAT, F::R16G16B16A16_SFLOAT],
        CL_UNSIGNED_INT32 => [F::R32_UINT, F::R32G32_UINT, F::R32G32B32A32_UINT],
        CL_SIGNED_INT32 => [F::R32_SINT, F::R32G32_SINT, F::R32G32B32A32_SINT],
        CL_FLOAT => [F::R32_SFLOAT, F::R32G32_SFLOAT, F::R32G32B32A32_SFLOAT],
        _ => return None,
    };
    Some(match channels {
        1 => one,
        2 => two,
        _ => four,
    })
}

impl Texel {
    /// The storage of an OpenCL format vkcl exposes (core/format.rs decides which), holding
    /// `channels` channels in memory; None where Vulkan has no such format.
    pub fn of(
        order: cl_channel_order,
        data_type: cl_channel_type,
        channels: usize,
    ) -> Option<Texel> {
        use vk::ComponentSwizzle as S;
        let identity = [S::IDENTITY; 4];
        let (format, swizzle) = match (order, data_type) {
            // Packed RGB, the unused bits read as alpha 1.
            (CL_RGB | CL_RGBx, CL_UNORM_SHORT_565) => (vk::Format::R5G6B5_UNORM_PACK16, identity),
            (CL_RGB | CL_RGBx, CL_UNORM_SHORT_555) => (
                vk::Format::A1R5G5B5_UNORM_PACK16,
                [S::IDENTITY, S::IDENTITY, S::IDENTITY, S::ONE],
            ),
            (CL_RGB | CL_RGBx, _) => (
                vk::Format::A2R10G10B10_UNORM_PACK32,
                [S::IDENTITY, S::IDENTITY, S::IDENTITY, S::ONE],
            ),
            (CL_sBGRA, _) => (vk::Format::B8G8R8A8_SRGB, identity),
            (CL_BGRA, CL_UNORM_INT8) => (vk::Format::B8G8R8A8_UNORM, identity),
            (CL_BGRA, CL_SNORM_INT8) => (vk::Format::B8G8R8A8_SNORM, identity),
            (CL_BGRA, CL_UNSIGNED_INT8) => (vk::Format::B8G8R8A8_UINT, identity),
            (CL_BGRA, _) => (vk::Format::B8G8R8A8_SINT, identity),
            (CL_sRGBA, _) => (vk::Format::R8G8B8A8_SRGB, identity),
            _ => {
                let swizzle = match order {
                    CL_A => [S::ZERO, S::ZERO, S::ZERO, S::R],
                    CL_RA => [S::R, S::ZERO, S::ZERO, S::G],
                    CL_INTENSITY => [S::R, S::R, S::R, S::R],
                    CL_LUMINANCE => [S::R, S::R, S::R, S::ONE],
                    // Bytes (a, r, g, b) and (a, b, g, r) read as RGBA.
                    CL_ARGB => [S::G, S::B, S::A, S::R],
                    CL_ABGR => [S::A, S::B, S::G, S::R],
                    _ => identity,
                };
                (unpacked(channels, data_type)?, swizzle)
            }
        };
        Some(Texel { format, swizzle })
    }

    /// Reads see the format's components as they are (storage views, which have no swizzle,
    /// need this).
    pub fn unswizzled(&self) -> bool {
        self.swizzle == [vk::ComponentSwizzle::IDENTITY; 4]
    }
}

/// What images of a format are used for, to check a device's support.
#[derive(Clone, Copy, Debug)]
pub struct Need {
    pub read: bool,
    pub write: bool,
    /// Reads with linear filtering (float and normalized formats).
    pub filter: bool,
}

impl Instance {
    /// Whether images of `texel` and `image_type` can be used as `need` says on the device of
    /// `caps`: sampled (with linear filtering where asked) to read, storage to write, copies
    /// both ways; texel buffers for 1D buffer images; and the image type itself (3D, arrays)
    /// for that format.
    pub fn supports(
        &self,
        caps: &Caps,
        texel: Texel,
        image_type: cl_mem_object_type,
        need: Need,
    ) -> bool {
        use vk::FormatFeatureFlags as F;
        // SAFETY: a valid physical device of this instance.
        let props = unsafe {
            self.raw
                .get_physical_device_format_properties(caps.physical, texel.format)
        };
        if image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER {
            // A VkBufferView has no component swizzle: the channel orders made by swizzling
            // (CL_A, CL_RA, CL_INTENSITY, CL_LUMINANCE, CL_ARGB, CL_ABGR) would read their
            // components in the wrong places, so 1D buffer images do not offer them.
            if !texel.unswizzled() {
                return false;
            }
            let mut features = F::empty();
            if need.read {
                features |= F::UNIFORM_TEXEL_BUFFER;
            }
            // A view's format must support every texel usage of its buffer
            // (VUID-VkBufferViewCreateInfo-buffer-00934), and buffers have both: a 1D buffer
            // image of a format kernels cannot write is refused even for reading. (A view
            // declaring fewer usages needs VK_KHR_maintenance5, which the validation layer of
            // Debian 12 does not know.)
            if need.write || need.read {
                features |= F::STORAGE_TEXEL_BUFFER;
            }
            return props.buffer_features.contains(features);
        }
        let mut features = F::TRANSFER_SRC | F::TRANSFER_DST | F::SAMPLED_IMAGE;
        if need.filter {
            features |= F::SAMPLED_IMAGE_FILTER_LINEAR;
        }
        if need.write {
            features |= F::STORAGE_IMAGE;
        }
        if !props.optimal_tiling_features.contains(features) {
            return false;
        }
        let (ty, _, arrayed) = super::image::shape(image_type);
        // SAFETY: a valid physical device of this instance.
        let limits = unsafe {
            self.raw.get_physical_device_image_format_properties(
                caps.physical,
                texel.format,
                ty,
                vk::ImageTiling::OPTIMAL,
                super::image::usage(need.write),
                vk::ImageCreateFlags::empty(),
            )
        };
        limits.is_ok_and(|m| !arrayed || m.max_array_layers > 1)
    }
}
