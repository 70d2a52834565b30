//! Images: a VkImage (optimal tiling, one mip level) with its memory and views, always in the
//! GENERAL layout (kernels sample and store it, copies read and write it; the queue's full
//! memory barriers between commands order all of it); the commands that copy into and out of
//! images; samplers, one per OpenCL sampler bitmask and device.

use super::device::Device;
use super::format::Texel;
use super::submit::{AsBuffer, Recorder};
use super::vk;
use super::{Error, Result};
use crate::cl::*;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;
use std::sync::Arc;

/// The Vulkan image type and view type of an OpenCL image type, and whether it is arrayed.
pub(super) fn shape(image_type: cl_mem_object_type) -> (vk::ImageType, vk::ImageViewType, bool) {
    use vk::{ImageType as T, ImageViewType as V};
    match image_type {
        CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_BUFFER => (T::TYPE_1D, V::TYPE_1D, false),
        CL_MEM_OBJECT_IMAGE1D_ARRAY => (T::TYPE_1D, V::TYPE_1D_ARRAY, true),
        CL_MEM_OBJECT_IMAGE2D_ARRAY => (T::TYPE_2D, V::TYPE_2D_ARRAY, true),
        CL_MEM_OBJECT_IMAGE3D => (T::TYPE_3D, V::TYPE_3D, false),
        _ => (T::TYPE_2D, V::TYPE_2D, false),
    }
}

/// Whether images of this OpenCL type have array layers.
pub fn arrayed(image_type: cl_mem_object_type) -> bool {
    shape(image_type).2
}

/// The usage of every image vkcl creates (storage only for formats kernels may write).
pub(super) fn usage(storage: bool) -> vk::ImageUsageFlags {
    let mut u = vk::ImageUsageFlags::SAMPLED
        | vk::ImageUsageFlags::TRANSFER_SRC
        | vk::ImageUsageFlags::TRANSFER_DST;
    if storage {
        u |= vk::ImageUsageFlags::STORAGE;
    }
    u
}

const COLOR: vk::ImageSubresourceRange = vk::ImageSubresourceRange {
    aspect_mask: vk::ImageAspectFlags::COLOR,
    base_mip_level: 0,
    level_count: 1,
    base_array_layer: 0,
    layer_count: vk::REMAINING_ARRAY_LAYERS,
};

/// What an image is made of: its type, size in texels and layers, format.
#[derive(Clone, Copy, Debug)]
pub struct ImageShape {
    pub image_type: cl_mem_object_type,
    pub extent: [u32; 3],
    pub layers: u32,
    pub texel: Texel,
    /// Kernels may write it (a storage view).
    pub storage: bool,
    /// The image has the storage usage (it or another view of it may be written).
    pub storage_usage: bool,
}

/// The 8-bit RGBA and BGRA formats, whose UNORM and sRGB forms can view one image (2D images
/// from images change the channel order between them): such images are created with the
/// UNORM format and mutable.
fn creation_format(format: vk::Format) -> (vk::Format, vk::ImageCreateFlags) {
    use vk::Format as F;
    match format {
        F::R8G8B8A8_UNORM | F::R8G8B8A8_SRGB => {
            (F::R8G8B8A8_UNORM, vk::ImageCreateFlags::MUTABLE_FORMAT)
        }
        F::B8G8R8A8_UNORM | F::B8G8R8A8_SRGB => {
            (F::B8G8R8A8_UNORM, vk::ImageCreateFlags::MUTABLE_FORMAT)
        }
        f => (f, vk::ImageCreateFlags::empty()),
    }
}

pub struct Image {
    pub device: Arc<Device>,
    pub(super) raw: vk::Image,
    pub shape: ImageShape,
    allocation: Option<Allocation>,
    /// For another view of an image (a 2D image from an image): the image that owns `raw`.
    owner: Option<Arc<Image>>,
    /// For reads: sampled images (with the format's swizzle).
    pub(super) sampled: vk::ImageView,
    /// For writes and read_write images: storage images.
    pub(super) storage: Option<vk::ImageView>,
}

impl Image {
    /// A new image, in the GENERAL layout, holding `data` (tightly packed texels of the whole
    /// image) or zeros; waits for the GPU (there is no queue at creation).
    pub fn new(device: &Arc<Device>, shape: ImageShape, data: Option<&[u8]>) -> Result<Image> {
        let (ty, _, _) = shape.shape_types();
        let [w, h, d] = shape.extent;
        let (format, flags) = creation_format(shape.texel.format);
        let info = vk::ImageCreateInfo::default()
            .flags(flags)
            .image_type(ty)
            .format(format)
            .extent(vk::Extent3D {
                width: w,
                height: h,
                depth: d,
            })
            .mip_levels(1)
            .array_layers(shape.layers)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage(shape.storage_usage))
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        // SAFETY: valid device; the format and type were checked as supported.
        let raw = unsafe { device.raw.create_image(&info, None) }?;
        let mut image = Image {
            device: device.clone(),
            raw,
            shape,
            allocation: None,
            owner: None,
            sampled: vk::ImageView::null(),
            storage: None,
        };
        // SAFETY: raw was just created on this device.
        let requirements = unsafe { device.raw.get_image_memory_requirements(raw) };
        let alloc = {
            let mut guard = device.allocator.lock();
            let allocator = guard
                .as_mut()
                .ok_or(Error::Other(vk::Result::ERROR_INITIALIZATION_FAILED))?;
            allocator.allocate(&AllocationCreateDesc {
                name: "image",
                requirements,
                location: MemoryLocation::GpuOnly,
                linear: false,
                allocation_scheme: AllocationScheme::GpuAllocatorManaged,
            })?
        };
        // SAFETY: the allocation satisfies the image's requirements and is not bound elsewhere.
        let bound = unsafe {
            device
                .raw
                .bind_image_memory(raw, alloc.memory(), alloc.offset())
        };
        image.allocation = Some(alloc);
        bound?;
        image.make_views()?;
        image.initialize(data)?;
        Ok(image)
    }

    /// Another view of `owner`'s texels as `texel` (a format of the same size class: the
    /// owner is mutable); a storage view if `storage` and the owner has the usage.
    pub fn view_of(owner: &Arc<Image>, texel: Texel, storage: bool) -> Result<Image> {
        let shape = ImageShape {
            texel,
            storage: storage && owner.shape.storage_usage,
            ..owner.shape
        };
        let mut image = Image {
            device: owner.device.clone(),
            raw: owner.raw,
            shape,
            allocation: None,
            owner: Some(owner.clone()),
            sampled: vk::ImageView::null(),
            storage: None,
        };
        image.make_views()?;
        Ok(image)
    }

    /// The sampled view (with the format's swizzle) and, where kernels may write, the storage
    /// view.
    fn make_views(&mut self) -> Result<()> {
        let (_, view_type, _) = self.shape.shape_types();
        let view = |swizzle: [vk::ComponentSwizzle; 4], storage: bool| {
            // Each view declares only its own use: a sampled sRGB view of an image with the
            // storage usage would otherwise need storage support of the sRGB format.
            let mut usage = vk::ImageViewUsageCreateInfo::default().usage(if storage {
                vk::ImageUsageFlags::STORAGE
            } else {
                vk::ImageUsageFlags::SAMPLED
            });
            let info = vk::ImageViewCreateInfo::default()
                .push_next(&mut usage)
                .image(self.raw)
                .view_type(view_type)
                .format(self.shape.texel.format)
                .components(vk::ComponentMapping {
                    r: swizzle[0],
                    g: swizzle[1],
                    b: swizzle[2],
                    a: swizzle[3],
                })
                .subresource_range(COLOR);
            // SAFETY: the image is bound to memory; the view fits it (a mutable image for
            // another format of its class).
            unsafe { self.device.raw.create_image_view(&info, None) }
        };
        self.sampled = view(self.shape.texel.swizzle, false)?;
        if self.shape.storage {
            self.storage = Some(view([vk::ComponentSwizzle::IDENTITY; 4], true)?);
        }
        Ok(())
    }

    /// Moves the image to the GENERAL layout, with `data` in it if given (else its contents
    /// are undefined, as the spec allows), and waits.
    fn initialize(&self, data: Option<&[u8]>) -> Result<()> {
        let device = &self.device;
        let stage = match data {
            Some(data) => {
                let b = super::memory::Buffer::new(
                    device,
                    data.len() as u64,
                    super::memory::Placement::Upload,
                    "initial image data",
                )?;
                // SAFETY: the buffer is new; no GPU work uses it.
                unsafe { b.write(0, data) };
                Some(b)
            }
            None => None,
        };
        let mut rec = Recorder::one_off(device)?;
        rec.enter_general_layout(self.raw);
        if let Some(stage) = &stage {
            let whole = self.region([0; 3], self.cl_region());
            // Both outlive the wait below.
            rec.buffer_to_image_raw(stage.raw, self.raw, &[whole.at(0)]);
        }
        rec.submit_and_wait()
    }

    /// Kernels may write it (it has a storage view).
    pub fn writable(&self) -> bool {
        self.storage.is_some()
    }

    /// The whole image as an OpenCL region (width, height or layers, depth or layers).
    pub fn cl_region(&self) -> [usize; 3] {
        let [w, h, d] = self.shape.extent.map(|x| x as usize);
        let layers = self.shape.layers as usize;
        match self.shape.image_type {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => [w, layers, 1],
            CL_MEM_OBJECT_IMAGE2D_ARRAY => [w, h, layers],
            _ => [w, h, d],
        }
    }

    /// The Vulkan form of an OpenCL origin and region of this image (in texels; the array
    /// index is the last coordinate used by the type).
    pub fn region(&self, origin: [usize; 3], region: [usize; 3]) -> Region {
        let u = |x: usize| x as u32;
        let (offset, extent, layers) = match self.shape.image_type {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => {
                ([origin[0], 0, 0], [region[0], 1, 1], (origin[1], region[1]))
            }
            CL_MEM_OBJECT_IMAGE2D_ARRAY => (
                [origin[0], origin[1], 0],
                [region[0], region[1], 1],
                (origin[2], region[2]),
            ),
            _ => (origin, region, (0, 1)),
        };
        Region {
            offset: vk::Offset3D {
                x: offset[0] as i32,
                y: offset[1] as i32,
                z: offset[2] as i32,
            },
            extent: vk::Extent3D {
                width: u(extent[0]),
                height: u(extent[1]),
                depth: u(extent[2]),
            },
            layers: vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: u(layers.0),
                layer_count: u(layers.1),
            },
        }
    }
}

impl ImageShape {
    fn shape_types(&self) -> (vk::ImageType, vk::ImageViewType, bool) {
        shape(self.image_type)
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        let d = &self.device.raw;
        // SAFETY: the last user of the image is gone (commands hold an Arc until complete).
        unsafe {
            if self.sampled != vk::ImageView::null() {
                d.destroy_image_view(self.sampled, None);
            }
            if let Some(v) = self.storage {
                d.destroy_image_view(v, None);
            }
            if self.owner.is_none() {
                d.destroy_image(self.raw, None);
            }
        }
        if let Some(alloc) = self.allocation.take() {
            if let Some(a) = self.device.allocator.lock().as_mut() {
                let _ = a.free(alloc);
            }
        }
    }
}

/// A texel-buffer view of a buffer range (1D buffer images), bound as a uniform texel
/// buffer for reads and a storage texel buffer for writes.
pub struct TexelView {
    device: Arc<Device>,
    pub(super) raw: vk::BufferView,
}

impl TexelView {
    pub fn new(
        device: &Arc<Device>,
        buffer: &super::memory::Buffer,
        offset: u64,
        texel: Texel,
        range: u64,
    ) -> Result<TexelView> {
        let info = vk::BufferViewCreateInfo::default()
            .buffer(buffer.raw)
            .format(texel.format)
            .offset(offset)
            .range(range);
        // SAFETY: the buffer has the texel-buffer usages; the range is inside it.
        let raw = unsafe { device.raw.create_buffer_view(&info, None) }?;
        Ok(TexelView {
            device: device.clone(),
            raw,
        })
    }
}

impl Drop for TexelView {
    fn drop(&mut self) {
        // SAFETY: the last command using the view is complete (commands keep its image alive).
        unsafe { self.device.raw.destroy_buffer_view(self.raw, None) };
    }
}

/// A part of an image in Vulkan's terms.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    offset: vk::Offset3D,
    extent: vk::Extent3D,
    layers: vk::ImageSubresourceLayers,
}

impl Region {
    /// The copy of this region to or from tightly packed texels at `buffer_offset`.
    pub fn at(&self, buffer_offset: u64) -> TexelCopy {
        TexelCopy {
            region: *self,
            buffer_offset,
            row_length: 0,
        }
    }
}

/// A copy between an image region and texels in a buffer.
#[derive(Clone, Copy, Debug)]
pub struct TexelCopy {
    region: Region,
    buffer_offset: u64,
    /// Texels between rows in the buffer; 0: tightly packed.
    row_length: u32,
}

impl TexelCopy {
    /// The same copy with the buffer's rows `texels` texels apart.
    pub fn with_row_length(self, texels: u32) -> TexelCopy {
        TexelCopy {
            row_length: texels,
            ..self
        }
    }

    fn vk(&self) -> vk::BufferImageCopy {
        vk::BufferImageCopy {
            buffer_offset: self.buffer_offset,
            buffer_row_length: self.row_length,
            buffer_image_height: 0,
            image_subresource: self.region.layers,
            image_offset: self.region.offset,
            image_extent: self.region.extent,
        }
    }
}

/// A copy of a region between two images of the same format.
#[derive(Clone, Copy, Debug)]
pub struct ImageCopy {
    src: Region,
    dst: Region,
}

impl ImageCopy {
    fn vk(&self) -> vk::ImageCopy {
        vk::ImageCopy {
            src_subresource: self.src.layers,
            src_offset: self.src.offset,
            dst_subresource: self.dst.layers,
            dst_offset: self.dst.offset,
            extent: self.src.extent,
        }
    }
}

impl Image {
    /// The copies of OpenCL `region` of `self` at `origin` to `dst` at `dst_origin`: one where
    /// both images count the region alike, else one per row (a 1D array's layers are another
    /// image's rows, a 2D array's layers a 3D image's slices: each row maps to a row).
    pub fn copies_to(
        &self,
        origin: [usize; 3],
        dst: &Image,
        dst_origin: [usize; 3],
        region: [usize; 3],
    ) -> Vec<ImageCopy> {
        let copy = |o: [usize; 3], d: [usize; 3], r: [usize; 3]| ImageCopy {
            src: self.region(o, r),
            dst: dst.region(d, r),
        };
        if self.shape.image_type == dst.shape.image_type {
            return vec![copy(origin, dst_origin, region)];
        }
        let mut out = vec![];
        for z in 0..region[2] {
            for y in 0..region[1] {
                let at = |o: [usize; 3]| [o[0], o[1] + y, o[2] + z];
                out.push(copy(at(origin), at(dst_origin), [region[0], 1, 1]));
            }
        }
        out
    }
}

impl Recorder {
    /// The image's first use: from UNDEFINED to GENERAL (the caller keeps it alive until the
    /// batch completes).
    fn enter_general_layout(&mut self, image: vk::Image) {
        let barrier = vk::ImageMemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::empty())
            .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE)
            .old_layout(vk::ImageLayout::UNDEFINED)
            .new_layout(vk::ImageLayout::GENERAL)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(image)
            .subresource_range(COLOR);
        // SAFETY: cmd is recording; the image is alive until the batch completes.
        unsafe {
            self.device().raw.cmd_pipeline_barrier(
                self.cmd(),
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[barrier],
            )
        };
    }

    /// One command copying buffer ranges into image regions.
    pub fn buffer_to_image(
        &mut self,
        buffer: &Arc<impl AsBuffer>,
        image: &Arc<Image>,
        regions: &[TexelCopy],
    ) {
        self.hold(buffer);
        self.hold(image);
        self.buffer_to_image_raw(buffer.raw_buffer(), image.raw, regions);
    }

    /// `buffer_to_image` of objects the caller keeps alive until the batch completes.
    fn buffer_to_image_raw(&mut self, buffer: vk::Buffer, image: vk::Image, regions: &[TexelCopy]) {
        let regions: Vec<_> = regions.iter().map(TexelCopy::vk).collect();
        self.command(|d, cmd| {
            // SAFETY: cmd is recording; both are alive until completion (held, or the
            // caller's contract).
            unsafe {
                d.cmd_copy_buffer_to_image(cmd, buffer, image, vk::ImageLayout::GENERAL, &regions)
            }
        });
    }

    /// One command copying image regions into buffer ranges.
    pub fn image_to_buffer(
        &mut self,
        image: &Arc<Image>,
        buffer: &Arc<impl AsBuffer>,
        regions: &[TexelCopy],
    ) {
        self.hold(image);
        self.hold(buffer);
        let buffer = buffer.raw_buffer();
        let regions: Vec<_> = regions.iter().map(TexelCopy::vk).collect();
        self.command(|d, cmd| {
            // SAFETY: cmd is recording; both are held until completion.
            unsafe {
                d.cmd_copy_image_to_buffer(
                    cmd,
                    image.raw,
                    vk::ImageLayout::GENERAL,
                    buffer,
                    &regions,
                )
            }
        });
    }

    /// One command copying a region between images of the same format.
    pub fn copy_image(&mut self, src: &Arc<Image>, dst: &Arc<Image>, region: ImageCopy) {
        self.hold(src);
        self.hold(dst);
        let region = region.vk();
        self.command(|d, cmd| {
            // SAFETY: cmd is recording; both are held until completion.
            unsafe {
                d.cmd_copy_image(
                    cmd,
                    src.raw,
                    vk::ImageLayout::GENERAL,
                    dst.raw,
                    vk::ImageLayout::GENERAL,
                    &[region],
                )
            }
        });
    }
}

impl Device {
    /// The sampler of an OpenCL sampler bitmask (CLK_NORMALIZED_COORDS_*, CLK_ADDRESS_*,
    /// CLK_FILTER_*: the literal samplers' encoding), created once per device.
    pub fn sampler(&self, mask: u32) -> Result<Sampler> {
        let mut samplers = self.samplers.lock();
        if let Some(&s) = samplers.get(&mask) {
            return Ok(Sampler(s));
        }
        let normalized = mask & SAMPLER_NORMALIZED != 0;
        let address = match mask & SAMPLER_ADDRESS_MASK {
            // CLK_ADDRESS_NONE: out-of-range coordinates are undefined; clamping is one answer.
            0 | 4 => vk::SamplerAddressMode::CLAMP_TO_BORDER,
            2 => vk::SamplerAddressMode::CLAMP_TO_EDGE,
            6 => vk::SamplerAddressMode::REPEAT,
            _ => vk::SamplerAddressMode::MIRRORED_REPEAT,
        };
        let filter = if mask & SAMPLER_FILTER_LINEAR != 0 {
            vk::Filter::LINEAR
        } else {
            vk::Filter::NEAREST
        };
        // Reads are at lod 0, magnified: they use magFilter whatever minFilter is. lavapipe
        // filters formats whose channels fit 8-bit unorm in 8-bit fixed point on its AoS path
        // (linear filtering up to 1.27/255 off) except where the two differ (docs/IMAGES.md).
        // Only for linear filtering: a LINEAR minFilter needs formats that can be filtered, and
        // nearest reads are kept off that path by their CLAMP samplers (core::kernel); an
        // unnormalized sampler must have equal filters.
        let min_filter = if normalized
            && filter == vk::Filter::LINEAR
            && self.caps.workarounds.unequal_sampler_filters
        {
            vk::Filter::NEAREST
        } else {
            filter
        };
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(filter)
            .min_filter(min_filter)
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(address)
            .address_mode_v(address)
            .address_mode_w(address)
            .max_lod(0.0)
            .border_color(vk::BorderColor::FLOAT_TRANSPARENT_BLACK)
            .unnormalized_coordinates(!normalized);
        // SAFETY: valid device and create info; destroyed with the device.
        let s = unsafe { self.raw.create_sampler(&info, None) }?;
        samplers.insert(mask, s);
        Ok(Sampler(s))
    }
}

/// A sampler of a device (`Device::sampler`): it lives as long as the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampler(pub(super) vk::Sampler);

/// The OpenCL C sampler bitmask (the values of the CLK_* sampler constants).
pub const SAMPLER_NORMALIZED: u32 = 0x1;
pub const SAMPLER_ADDRESS_MASK: u32 = 0xe;
pub const SAMPLER_FILTER_LINEAR: u32 = 0x20;
pub const SAMPLER_FILTER_NEAREST: u32 = 0x10;
