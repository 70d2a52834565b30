//! A host model of sampled image reads, written from the OpenCL C specification, section 8.2
//! "Image addressing and filtering" (and 8.2.1 for normalized coordinates with REPEAT and
//! MIRRORED_REPEAT): per coordinate, the texel indices and weights the addressing and filter
//! modes select, then the weighted sum of the converted texels (the border colour outside).
use crate::common::*;
use crate::util::*;

#[derive(Clone, Copy, Debug)]
pub struct SamplerDesc {
    pub normalized: bool,
    pub addr: cl_uint,
    pub filter: cl_uint,
}

impl SamplerDesc {
    /// The CLK_ expression of a literal sampler.
    pub fn clk(self) -> String {
        let n = if self.normalized {
            "CLK_NORMALIZED_COORDS_TRUE"
        } else {
            "CLK_NORMALIZED_COORDS_FALSE"
        };
        let a = match self.addr {
            CL_ADDRESS_NONE => "CLK_ADDRESS_NONE",
            CL_ADDRESS_CLAMP_TO_EDGE => "CLK_ADDRESS_CLAMP_TO_EDGE",
            CL_ADDRESS_CLAMP => "CLK_ADDRESS_CLAMP",
            CL_ADDRESS_REPEAT => "CLK_ADDRESS_REPEAT",
            _ => "CLK_ADDRESS_MIRRORED_REPEAT",
        };
        let f = if self.filter == CL_FILTER_LINEAR {
            "CLK_FILTER_LINEAR"
        } else {
            "CLK_FILTER_NEAREST"
        };
        format!("{n} | {a} | {f}")
    }
}

/// Every sampler a kernel may use meaningfully: REPEAT and MIRRORED_REPEAT need normalized
/// coordinates.
pub fn all_samplers() -> Vec<SamplerDesc> {
    let mut v = vec![];
    for filter in [CL_FILTER_NEAREST, CL_FILTER_LINEAR] {
        for normalized in [false, true] {
            for addr in [
                CL_ADDRESS_NONE,
                CL_ADDRESS_CLAMP_TO_EDGE,
                CL_ADDRESS_CLAMP,
                CL_ADDRESS_REPEAT,
                CL_ADDRESS_MIRRORED_REPEAT,
            ] {
                if normalized || addr < CL_ADDRESS_REPEAT {
                    v.push(SamplerDesc {
                        normalized,
                        addr,
                        filter,
                    });
                }
            }
        }
    }
    v
}

/// (texel index, or None for the border colour; weight) along one axis.
type Taps = Vec<(Option<usize>, f64)>;

fn floor(x: f32) -> i64 {
    x.floor() as i64
}

fn frac(x: f32) -> f64 {
    (x - x.floor()) as f64
}

/// Addressing of an index for the non-wrapping modes.
fn address(addr: cl_uint, i: i64, size: usize) -> Option<usize> {
    let n = size as i64;
    match addr {
        CL_ADDRESS_CLAMP_TO_EDGE => Some(i.clamp(0, n - 1) as usize),
        CL_ADDRESS_CLAMP if i < 0 || i >= n => None,
        CL_ADDRESS_NONE => {
            assert!(i >= 0 && i < n, "test bug: ADDRESS_NONE read out of range");
            Some(i as usize)
        }
        _ => Some(i as usize),
    }
}

fn axis_taps(s: SamplerDesc, c: f32, size: usize) -> Taps {
    let w = size as f32;
    let n = size as i64;
    let linear = s.filter == CL_FILTER_LINEAR;
    match s.addr {
        CL_ADDRESS_REPEAT => {
            assert!(s.normalized);
            let u = (c - c.floor()) * w;
            if !linear {
                let mut i = floor(u);
                if i > n - 1 {
                    i -= n;
                }
                return vec![(Some(i as usize), 1.0)];
            }
            let mut i0 = floor(u - 0.5);
            let mut i1 = i0 + 1;
            if i0 < 0 {
                i0 += n;
            }
            if i1 > n - 1 {
                i1 -= n;
            }
            let a = frac(u - 0.5);
            vec![(Some(i0 as usize), 1.0 - a), (Some(i1 as usize), a)]
        }
        CL_ADDRESS_MIRRORED_REPEAT => {
            assert!(s.normalized);
            let sp = 2.0 * (0.5 * c).round_ties_even();
            let u = (c - sp).abs() * w;
            if !linear {
                return vec![(Some(floor(u).min(n - 1) as usize), 1.0)];
            }
            let i0 = floor(u - 0.5).max(0);
            let i1 = (floor(u - 0.5) + 1).min(n - 1);
            let a = frac(u - 0.5);
            vec![(Some(i0 as usize), 1.0 - a), (Some(i1 as usize), a)]
        }
        addr => {
            let u = if s.normalized { c * w } else { c };
            if !linear {
                return vec![(address(addr, floor(u), size), 1.0)];
            }
            let i0 = floor(u - 0.5);
            let a = frac(u - 0.5);
            vec![
                (address(addr, i0, size), 1.0 - a),
                (address(addr, i0 + 1, size), a),
            ]
        }
    }
}

/// The spatial axes of a type, and the coordinate component holding the array layer.
fn axes(ty: Ty) -> (usize, Option<usize>) {
    match ty {
        Ty::D1 | Ty::D1Buffer => (1, None),
        Ty::D1Array => (1, Some(1)),
        Ty::D2 => (2, None),
        Ty::D2Array => (2, Some(2)),
        Ty::D3 => (3, None),
    }
}

/// The expected value of read_image{f,i,ui}(img, s, coord) and its tolerance.
///
/// Tolerance: nearest filtering is exact up to the normalized → float conversion (1e-6
/// relative). For linear filtering the OpenCL specification sets no bound (its formulas say
/// which texels and weights, not how precisely they are combined); the conformance test's
/// bound (test_common/harness/imageHelpers.cpp, get_max_relative_error and
/// get_max_absolute_error) is used: 2^-7 of the largest magnitude among the texels that
/// contribute (plus 2 ulp), or one unit of the format where that is more (1/255 for
/// CL_UNORM_INT8: lavapipe filters 8-bit unorm formats with CLAMP_TO_EDGE or REPEAT in 8-bit
/// arithmetic and is up to 1.27/255 off, float formats it filters exactly; samplers.rs measures
/// both).
pub fn sample(img: &HostImage, s: SamplerDesc, coord: [f32; 4]) -> ([f64; 4], f64) {
    sample_with_border(img, s, coord, img.fmt.border())
}

/// `sample` with another border colour.
pub fn sample_with_border(
    img: &HostImage,
    s: SamplerDesc,
    coord: [f32; 4],
    border_color: [f64; 4],
) -> ([f64; 4], f64) {
    let (n_axes, layer_comp) = axes(img.shape.ty);
    let mut per_axis: Vec<Taps> = (0..n_axes)
        .map(|a| axis_taps(s, coord[a], img.shape.size[a]))
        .collect();
    if let Some(lc) = layer_comp {
        // "the layer ... computed as clamp(rint(coord.y|z), 0, array_size - 1)"
        let layers = img.shape.size[lc];
        let l = (coord[lc].round_ties_even() as i64).clamp(0, layers as i64 - 1);
        per_axis.push(vec![(Some(l as usize), 1.0)]);
    }
    let mut out = [0.0; 4];
    let mut max_mag: f64 = 0.0;
    // Cartesian product of the taps.
    let mut idx = vec![0usize; per_axis.len()];
    loop {
        let mut w = 1.0;
        let mut p = [0usize; 3];
        let mut border = false;
        for (a, taps) in per_axis.iter().enumerate() {
            let (i, wt) = taps[idx[a]];
            w *= wt;
            match i {
                Some(i) => p[a] = i,
                None => border = true,
            }
        }
        let t = if border { border_color } else { img.texel(p) };
        for c in 0..4 {
            out[c] += w * t[c];
            if w > 0.0 {
                max_mag = max_mag.max(t[c].abs());
            }
        }
        // next index
        let mut a = 0;
        loop {
            if a == idx.len() {
                let tol = if s.filter == CL_FILTER_LINEAR {
                    let relative = max_mag / 128.0 + 2.0 * f32::EPSILON as f64;
                    relative.max(format_unit(img.fmt.ty))
                } else {
                    1e-6 * max_mag.max(1.0)
                };
                return (out, tol);
            }
            idx[a] += 1;
            if idx[a] < per_axis[a].len() {
                break;
            }
            idx[a] = 0;
            a += 1;
        }
    }
}

/// One unit of a format's channel: the conformance test's absolute bound for linear filtering.
fn format_unit(ty: cl_uint) -> f64 {
    match ty {
        CL_UNORM_INT8 => 1.0 / 255.0,
        CL_SNORM_INT8 => 1.0 / 127.0,
        CL_UNORM_INT16 => 1.0 / 65535.0,
        CL_SNORM_INT16 => 1.0 / 32767.0,
        CL_FLOAT => f32::MIN_POSITIVE as f64,
        _ => 0.0,
    }
}

/// Coordinates (texel space, before normalization) along an axis of `size` texels: inside,
/// near both edges and outside, with fractions away from texel boundaries; exactly at texel
/// edges (integers: exact in both the unnormalized and, for the image edges 0 and `size`, the
/// normalized form); just outside the image (a thousandth of a texel); and a tiny negative
/// normalized coordinate (-7.7e-9, where REPEAT's `s - floor(s)` rounds to 1.0).
pub fn texel_coords(s: SamplerDesc, size: usize) -> Vec<f32> {
    let w = size as f32;
    let inside = [
        0.5,
        1.25,
        2.75,
        w - 0.25,
        w - 0.7,
        0.3,
        0.0,
        1.0,
        2.0,
        w - 1.0,
    ];
    let outside = [
        -0.75,
        -2.5,
        w + 0.75,
        w + 3.25,
        -w - 0.4,
        2.0 * w + 1.25,
        w,
        -1e-3,
        w + 1e-3,
        -7.7e-9 * w,
        -w,
        2.0 * w,
    ];
    let mut v: Vec<f32> = inside.to_vec();
    if s.addr == CL_ADDRESS_NONE {
        // ADDRESS_NONE is defined only in range: with linear filtering both taps must be.
        let (lo, hi) = if s.filter == CL_FILTER_LINEAR {
            (0.5, w - 0.75)
        } else {
            (0.0, w - 0.25)
        };
        v.retain(|&u| u >= lo && u <= hi);
    } else {
        v.extend_from_slice(&outside);
    }
    v
}

/// Coordinates for the sampler (normalized where it asks for it), one per axis per sample,
/// the layer (if any) from `layers`, as float4s.
pub fn coords(s: SamplerDesc, shape: Shape) -> Vec<[f32; 4]> {
    let (n_axes, layer_comp) = axes(shape.ty);
    let lists: Vec<Vec<f32>> = (0..n_axes)
        .map(|a| texel_coords(s, shape.size[a]))
        .collect();
    let n = lists.iter().map(|l| l.len()).max().unwrap() * 2;
    let layer_vals = [0.0f32, 1.2, 2.7, -1.0, 9.0, 1.0];
    (0..n)
        .map(|i| {
            let mut c = [0.0f32; 4];
            for a in 0..n_axes {
                let l = &lists[a];
                let u = l[(i * (2 * a + 1) + a) % l.len()];
                c[a] = if s.normalized {
                    u / shape.size[a] as f32
                } else {
                    u
                };
            }
            if let Some(lc) = layer_comp {
                c[lc] = layer_vals[i % layer_vals.len()];
            }
            c
        })
        .collect()
}

/// Coordinates one ULP below, at and one ULP above every texel edge `k` (texel space, `k / w`
/// for a normalized sampler), from `-w` to `2w` (only those inside the image for
/// ADDRESS_NONE): where a sampler that quantises coordinates reads a neighbour.
pub fn edge_coords(s: SamplerDesc, size: usize) -> Vec<f32> {
    let w = size as f32;
    let mut v = vec![];
    for k in -(size as i64)..=2 * size as i64 {
        let at = if s.normalized { k as f32 / w } else { k as f32 };
        v.extend([at.next_down(), at, at.next_up()]);
    }
    if s.addr == CL_ADDRESS_NONE {
        let lo = if s.filter == CL_FILTER_LINEAR {
            0.5
        } else {
            0.0
        };
        let hi = if s.filter == CL_FILTER_LINEAR {
            w - 0.5
        } else {
            w
        };
        v.retain(|&c| {
            let u = if s.normalized { c * w } else { c };
            u >= lo && u < hi
        });
    }
    v
}

/// [`edge_coords`] along every axis of `shape` (each axis through its own list, the lists
/// staggered), and for an array a layer just either side of the rounding points (exactly on
/// them too for nearest filtering, where vkcl rounds the layer itself).
pub fn edge_coord_sets(s: SamplerDesc, shape: Shape) -> Vec<[f32; 4]> {
    let (n_axes, layer_comp) = axes(shape.ty);
    let lists: Vec<Vec<f32>> = (0..n_axes).map(|a| edge_coords(s, shape.size[a])).collect();
    let mut layers = vec![];
    for l in [0.5f32, 1.5, 2.5] {
        layers.extend([l.next_down(), l.next_up()]);
        if s.filter == CL_FILTER_NEAREST {
            layers.push(l);
        }
    }
    let n = lists.iter().map(|l| l.len()).max().unwrap();
    (0..n)
        .map(|i| {
            let mut c = [0.0f32; 4];
            for a in 0..n_axes {
                c[a] = lists[a][(i + 7 * a) % lists[a].len()];
            }
            if let Some(lc) = layer_comp {
                c[lc] = layers[i % layers.len()];
            }
            c
        })
        .collect()
}

#[test]
fn host_sampler_model_follows_the_spec_formulas() {
    let s = |normalized, addr, filter| SamplerDesc {
        normalized,
        addr,
        filter,
    };
    let nearest = CL_FILTER_NEAREST;
    let linear = CL_FILTER_LINEAR;
    assert_eq!(
        axis_taps(s(false, CL_ADDRESS_CLAMP_TO_EDGE, nearest), -3.5, 5),
        vec![(Some(0), 1.0)]
    );
    assert_eq!(
        axis_taps(s(false, CL_ADDRESS_CLAMP, nearest), 5.2, 5),
        vec![(None, 1.0)]
    );
    assert_eq!(
        axis_taps(s(true, CL_ADDRESS_REPEAT, nearest), 1.1, 5),
        vec![(Some(0), 1.0)]
    );
    assert_eq!(
        axis_taps(s(true, CL_ADDRESS_REPEAT, nearest), -0.1, 5),
        vec![(Some(4), 1.0)]
    );
    // mirrored: 1.1 → 0.9 → 4.5 → texel 4; -0.3 → 0.3 → 1.5 → texel 1
    assert_eq!(
        axis_taps(s(true, CL_ADDRESS_MIRRORED_REPEAT, nearest), 1.1, 5),
        vec![(Some(4), 1.0)]
    );
    assert_eq!(
        axis_taps(s(true, CL_ADDRESS_MIRRORED_REPEAT, nearest), -0.3, 5),
        vec![(Some(1), 1.0)]
    );
    // linear: u = 1.25 → i0 = 0, a = 0.75
    assert_eq!(
        axis_taps(s(false, CL_ADDRESS_CLAMP, linear), 1.25, 5),
        vec![(Some(0), 0.25), (Some(1), 0.75)]
    );
    assert_eq!(
        axis_taps(s(false, CL_ADDRESS_CLAMP, linear), 0.25, 5),
        vec![(None, 0.25), (Some(0), 0.75)]
    );
    // repeat wraps i0 = -1 to 4
    assert_eq!(
        axis_taps(s(true, CL_ADDRESS_REPEAT, linear), 0.05, 5),
        vec![(Some(4), 0.25), (Some(0), 0.75)]
    );
}
