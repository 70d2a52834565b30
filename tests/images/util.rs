//! Image types and shapes, a host model of an image's contents and host memory layout (origin,
//! region, row and slice pitches as clEnqueueReadImage defines them), and thin wrappers over the
//! image entry points.
use crate::common::*;
use crate::format::Format;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

#[allow(dead_code)]
mod info {
    use crate::common::*;
    info_fn!(image_info, image_str, image_val, clGetImageInfo, cl_mem);
    info_fn!(
        sampler_info,
        sampler_str,
        sampler_val,
        clGetSamplerInfo,
        cl_sampler
    );
}
pub use info::{image_val, sampler_info, sampler_val};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    D1,
    D1Buffer,
    D1Array,
    D2,
    D2Array,
    D3,
}

pub const ALL_TYPES: [Ty; 6] = [
    Ty::D1,
    Ty::D1Buffer,
    Ty::D1Array,
    Ty::D2,
    Ty::D2Array,
    Ty::D3,
];

impl Ty {
    pub fn cl(self) -> cl_uint {
        match self {
            Ty::D1 => CL_MEM_OBJECT_IMAGE1D,
            Ty::D1Buffer => CL_MEM_OBJECT_IMAGE1D_BUFFER,
            Ty::D1Array => CL_MEM_OBJECT_IMAGE1D_ARRAY,
            Ty::D2 => CL_MEM_OBJECT_IMAGE2D,
            Ty::D2Array => CL_MEM_OBJECT_IMAGE2D_ARRAY,
            Ty::D3 => CL_MEM_OBJECT_IMAGE3D,
        }
    }

    /// The OpenCL C type.
    pub fn cl_c(self) -> &'static str {
        match self {
            Ty::D1 => "image1d_t",
            Ty::D1Buffer => "image1d_buffer_t",
            Ty::D1Array => "image1d_array_t",
            Ty::D2 => "image2d_t",
            Ty::D2Array => "image2d_array_t",
            Ty::D3 => "image3d_t",
        }
    }

    /// The integer coordinate expression for work-item (x, y, z).
    pub fn int_coord(self) -> &'static str {
        match self {
            Ty::D1 | Ty::D1Buffer => "x",
            Ty::D1Array | Ty::D2 => "(int2)(x, y)",
            Ty::D2Array | Ty::D3 => "(int4)(x, y, z, 0)",
        }
    }

    /// A small shape with odd sizes (region form: 1D arrays keep layers in [1], 2D arrays in [2]).
    pub fn small(self) -> Shape {
        let size = match self {
            Ty::D1 | Ty::D1Buffer => [13, 1, 1],
            Ty::D1Array => [9, 3, 1],
            Ty::D2 => [7, 5, 1],
            Ty::D2Array => [5, 4, 3],
            Ty::D3 => [5, 4, 3],
        };
        Shape { ty: self, size }
    }

    pub fn is_array(self) -> bool {
        matches!(self, Ty::D1Array | Ty::D2Array)
    }

    /// The number of region dimensions that may be larger than 1.
    pub fn dims(self) -> usize {
        match self {
            Ty::D1 | Ty::D1Buffer => 1,
            Ty::D1Array | Ty::D2 => 2,
            Ty::D2Array | Ty::D3 => 3,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub ty: Ty,
    /// (width, height or layers, depth or layers), as an origin/region covers it.
    pub size: [usize; 3],
}

impl Shape {
    pub fn pixels(self) -> usize {
        self.size.iter().product()
    }

    /// The descriptor, with the fields the type does not use left 0.
    pub fn desc(self, rp: usize, sp: usize, buffer: cl_mem) -> cl_image_desc {
        let [w, h, d] = self.size;
        let (height, depth, array) = match self.ty {
            Ty::D1 | Ty::D1Buffer => (0, 0, 0),
            Ty::D1Array => (0, 0, h),
            Ty::D2 => (h, 0, 0),
            Ty::D2Array => (h, 0, d),
            Ty::D3 => (h, d, 0),
        };
        cl_image_desc {
            image_type: self.ty.cl(),
            image_width: w,
            image_height: height,
            image_depth: depth,
            image_array_size: array,
            image_row_pitch: rp,
            image_slice_pitch: sp,
            num_mip_levels: 0,
            num_samples: 0,
            mem_object: buffer,
        }
    }
}

/// Host memory layout of a region: the pitches the spec computes when 0 is passed
/// ("row_pitch = width * element size", "slice_pitch = row_pitch * height"; for a 1D array each
/// image is one row) and the byte offset of a pixel. In a 1D image array the layers are
/// `slice_pitch` apart, in 2D/3D the rows are `row_pitch` apart.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub ty: Ty,
    pub elem: usize,
    pub rp: usize,
    pub sp: usize,
}

impl Layout {
    pub fn new(ty: Ty, elem: usize, region: [usize; 3], rp: usize, sp: usize) -> Layout {
        let rp = if rp == 0 { region[0] * elem } else { rp };
        let sp = match (sp, ty) {
            (0, Ty::D1Array) => rp,
            (0, Ty::D2Array | Ty::D3) => rp * region[1],
            _ => sp,
        };
        Layout { ty, elem, rp, sp }
    }

    pub fn offset(&self, p: [usize; 3]) -> usize {
        match self.ty {
            Ty::D1Array => p[0] * self.elem + p[1] * self.sp,
            _ => p[0] * self.elem + p[1] * self.rp + p[2] * self.sp,
        }
    }

    /// Bytes needed to hold `region`.
    pub fn len(&self, region: [usize; 3]) -> usize {
        self.offset([region[0] - 1, region[1] - 1, region[2] - 1]) + self.elem
    }
}

/// Every point of a region, x fastest.
pub fn points(region: [usize; 3]) -> impl Iterator<Item = [usize; 3]> {
    (0..region[2])
        .flat_map(move |z| (0..region[1]).flat_map(move |y| (0..region[0]).map(move |x| [x, y, z])))
}

pub fn add(a: [usize; 3], b: [usize; 3]) -> [usize; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// An image's contents on the host, packed.
#[derive(Clone, Debug, PartialEq)]
pub struct HostImage {
    pub fmt: Format,
    pub shape: Shape,
    pub data: Vec<u8>,
}

impl HostImage {
    pub fn pattern(fmt: Format, shape: Shape, seed: u32) -> HostImage {
        let data = (0..shape.pixels())
            .flat_map(|i| fmt.pattern_pixel(i, seed))
            .collect();
        HostImage { fmt, shape, data }
    }

    pub fn from_fn(fmt: Format, shape: Shape, f: impl Fn([usize; 3]) -> Vec<u8>) -> HostImage {
        let data: Vec<u8> = points(shape.size).flat_map(f).collect();
        assert_eq!(data.len(), shape.pixels() * fmt.elem_size());
        HostImage { fmt, shape, data }
    }

    pub fn packed(&self) -> Layout {
        Layout::new(self.shape.ty, self.fmt.elem_size(), self.shape.size, 0, 0)
    }

    pub fn px(&self, p: [usize; 3]) -> &[u8] {
        let o = self.packed().offset(p);
        &self.data[o..o + self.fmt.elem_size()]
    }

    pub fn px_mut(&mut self, p: [usize; 3]) -> &mut [u8] {
        let o = self.packed().offset(p);
        let n = self.fmt.elem_size();
        &mut self.data[o..o + n]
    }

    /// The kernel view of a texel.
    pub fn texel(&self, p: [usize; 3]) -> [f64; 4] {
        self.fmt.decode(self.px(p))
    }

    /// `region` at `origin` laid out in host memory with pitches `rp`/`sp` (0: packed), the
    /// bytes between rows and slices set to `pad`.
    pub fn region_bytes(
        &self,
        origin: [usize; 3],
        region: [usize; 3],
        rp: usize,
        sp: usize,
        pad: u8,
    ) -> Vec<u8> {
        let l = Layout::new(self.shape.ty, self.fmt.elem_size(), region, rp, sp);
        let mut out = vec![pad; l.len(region)];
        for p in points(region) {
            let o = l.offset(p);
            out[o..o + l.elem].copy_from_slice(self.px(add(origin, p)));
        }
        out
    }

    /// Stores `src` (laid out with `rp`/`sp`) into `region` at `origin`.
    pub fn set_region(
        &mut self,
        origin: [usize; 3],
        region: [usize; 3],
        src: &[u8],
        rp: usize,
        sp: usize,
    ) {
        let l = Layout::new(self.shape.ty, self.fmt.elem_size(), region, rp, sp);
        for p in points(region) {
            let o = l.offset(p);
            self.px_mut(add(origin, p))
                .copy_from_slice(&src[o..o + l.elem]);
        }
    }
}

// ---------------------------------------------------------------- CL wrappers

pub fn create_image(
    e: &Env,
    flags: cl_bitfield,
    fmt: Format,
    desc: &cl_image_desc,
    host: *mut c_void,
) -> Result<cl_mem, cl_int> {
    let mut err = 1;
    let f = fmt.cl();
    let m = unsafe { clCreateImage(e.ctx, flags, &f, desc, host, &mut err) };
    if err == CL_SUCCESS {
        assert!(!m.is_null());
        Ok(m)
    } else {
        assert!(
            m.is_null(),
            "an image handle returned with {}",
            err_name(err)
        );
        Err(err)
    }
}

/// The formats clGetSupportedImageFormats lists, through its two calls.
pub fn supported(e: &Env, flags: cl_bitfield, ty: cl_uint) -> Vec<Format> {
    let mut n = 0;
    check!(clGetSupportedImageFormats(
        e.ctx,
        flags,
        ty,
        0,
        null_mut(),
        &mut n
    ));
    let mut v = vec![cl_image_format::default(); n as usize];
    let mut n2 = 0;
    check!(clGetSupportedImageFormats(
        e.ctx,
        flags,
        ty,
        n,
        v.as_mut_ptr(),
        &mut n2
    ));
    assert_eq!(n, n2);
    v.into_iter().map(Format::from_cl).collect()
}

/// The `candidates` the device lists for (flags, ty): asserting that those of the OpenCL 3.0
/// minimum list are all there, so that a test never skips a required format.
pub fn usable(e: &Env, flags: cl_bitfield, ty: Ty, candidates: &[Format]) -> Vec<Format> {
    let list = supported(e, flags, ty.cl());
    for f in candidates {
        if crate::format::MIN_READ_OR_WRITE.contains(f) {
            assert!(list.contains(f), "{ty:?}: required format {f} not listed");
        }
    }
    candidates
        .iter()
        .copied()
        .filter(|f| list.contains(f))
        .collect()
}

pub fn is_supported(e: &Env, flags: cl_bitfield, ty: Ty, f: Format) -> bool {
    supported(e, flags, ty.cl()).contains(&f)
}

/// An image (with its buffer for image1d_buffer), released on drop.
pub struct Img {
    pub mem: cl_mem,
    pub buf: cl_mem,
    pub fmt: Format,
    pub shape: Shape,
}

impl Img {
    pub fn new(e: &Env, flags: cl_bitfield, fmt: Format, shape: Shape) -> Img {
        let buf = if shape.ty == Ty::D1Buffer {
            e.buffer(
                CL_MEM_READ_WRITE,
                shape.pixels() * fmt.elem_size(),
                null_mut(),
            )
        } else {
            null_mut()
        };
        let mem = create_image(e, flags, fmt, &shape.desc(0, 0, buf), null_mut())
            .unwrap_or_else(|c| panic!("clCreateImage({fmt}, {shape:?}): {}", err_name(c)));
        Img {
            mem,
            buf,
            fmt,
            shape,
        }
    }

    /// A new image holding `h`.
    pub fn from_host(e: &Env, flags: cl_bitfield, h: &HostImage) -> Img {
        let img = Img::new(e, flags, h.fmt, h.shape);
        img.write(e, [0; 3], h.shape.size, 0, 0, &h.data);
        img
    }

    /// Blocking clEnqueueWriteImage.
    pub fn write(&self, e: &Env, o: [usize; 3], r: [usize; 3], rp: usize, sp: usize, d: &[u8]) {
        check!(clEnqueueWriteImage(
            e.queue,
            self.mem,
            CL_TRUE,
            o.as_ptr(),
            r.as_ptr(),
            rp,
            sp,
            d.as_ptr().cast(),
            0,
            null(),
            null_mut()
        ));
    }

    /// Blocking clEnqueueReadImage into `len` bytes preset to `pad`.
    pub fn read_into(
        &self,
        e: &Env,
        o: [usize; 3],
        r: [usize; 3],
        rp: usize,
        sp: usize,
        d: &mut [u8],
    ) {
        check!(clEnqueueReadImage(
            e.queue,
            self.mem,
            CL_TRUE,
            o.as_ptr(),
            r.as_ptr(),
            rp,
            sp,
            d.as_mut_ptr().cast(),
            0,
            null(),
            null_mut()
        ));
    }

    /// The whole image, packed.
    pub fn download(&self, e: &Env) -> HostImage {
        let mut data = vec![0xCD; self.shape.pixels() * self.fmt.elem_size()];
        self.read_into(e, [0; 3], self.shape.size, 0, 0, &mut data);
        HostImage {
            fmt: self.fmt,
            shape: self.shape,
            data,
        }
    }
}

impl Drop for Img {
    fn drop(&mut self) {
        unsafe {
            clReleaseMemObject(self.mem);
            if !self.buf.is_null() {
                clReleaseMemObject(self.buf);
            }
        }
    }
}

/// A sampler from clCreateSamplerWithProperties, released on drop.
pub struct Sampler(pub cl_sampler);

impl Sampler {
    pub fn new(e: &Env, normalized: bool, addr: cl_uint, filter: cl_uint) -> Sampler {
        let props = sampler_props(normalized, addr, filter);
        let mut err = 1;
        let s = unsafe { clCreateSamplerWithProperties(e.ctx, props.as_ptr(), &mut err) };
        assert_eq!(
            err,
            CL_SUCCESS,
            "clCreateSamplerWithProperties: {}",
            err_name(err)
        );
        Sampler(s)
    }
}

pub fn sampler_props(normalized: bool, addr: cl_uint, filter: cl_uint) -> [u64; 7] {
    [
        CL_SAMPLER_NORMALIZED_COORDS as u64,
        normalized as u64,
        CL_SAMPLER_ADDRESSING_MODE as u64,
        addr as u64,
        CL_SAMPLER_FILTER_MODE as u64,
        filter as u64,
        0,
    ]
}

impl Drop for Sampler {
    fn drop(&mut self) {
        unsafe { clReleaseSampler(self.0) };
    }
}

/// The device's extension string contains `ext`.
pub fn has_extension(e: &Env, ext: &str) -> bool {
    device_str(e.dev, CL_DEVICE_EXTENSIONS)
        .split_whitespace()
        .any(|x| x == ext)
}

/// Kernels may write 3D images: cl_khr_3d_image_writes (or the OpenCL C 3.0 feature
/// __opencl_c_3d_image_writes, which a device reporting the extension must also report).
pub fn has_3d_writes(e: &Env) -> bool {
    has_extension(e, "cl_khr_3d_image_writes")
}

/// Asserts an event's command type, then releases it.
pub fn expect_command(ev: cl_event, ty: cl_uint) {
    assert_eq!(event_val::<cl_uint>(ev, CL_EVENT_COMMAND_TYPE), ty);
    check!(clReleaseEvent(ev));
}

/// Compares two packed images pixel by pixel, naming the first differing pixel.
pub fn assert_same(got: &HostImage, want: &HostImage, what: &str) {
    assert_eq!(got.shape, want.shape, "{what}");
    for p in points(want.shape.size) {
        assert_eq!(got.px(p), want.px(p), "{what}: pixel {p:?}");
    }
}

/// The description of a `w`×`h` 2D image (over `mem`, a buffer or image, when not null).
pub fn desc_2d(w: usize, h: usize, row_pitch: usize, mem: cl_mem) -> cl_image_desc {
    cl_image_desc {
        image_type: CL_MEM_OBJECT_IMAGE2D,
        image_width: w,
        image_height: h,
        image_depth: 0,
        image_array_size: 0,
        image_row_pitch: row_pitch,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        mem_object: mem,
    }
}
