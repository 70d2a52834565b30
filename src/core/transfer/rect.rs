//! The geometry of rect transfers: each side's origin and pitches, its rows, the copies
//! between two rects and whether two rects overlap.

use crate::cl::*;
use crate::core::error::{check, CLResult};
use crate::vk::submit::CopyRegion;

/// The geometry of one side of a rect transfer: origin (bytes, rows, slices) and pitches,
/// 0 pitches already replaced by the spec's defaults.
#[derive(Clone, Copy, Debug)]
pub struct Rect {
    pub origin: [usize; 3],
    pub row_pitch: usize,
    pub slice_pitch: usize,
}

impl Rect {
    /// With the spec's defaults for 0 pitches; CL_INVALID_VALUE for pitches too small or a
    /// slice pitch that is not a multiple of the row pitch.
    pub fn new(
        origin: [usize; 3],
        region: [usize; 3],
        row_pitch: usize,
        slice_pitch: usize,
    ) -> CLResult<Rect> {
        let row_pitch = if row_pitch == 0 { region[0] } else { row_pitch };
        check(row_pitch >= region[0], CL_INVALID_VALUE)?;
        let slice_pitch = if slice_pitch == 0 {
            region[1] * row_pitch
        } else {
            slice_pitch
        };
        check(
            slice_pitch >= region[1] * row_pitch && slice_pitch % row_pitch == 0,
            CL_INVALID_VALUE,
        )?;
        Ok(Rect {
            origin,
            row_pitch,
            slice_pitch,
        })
    }

    /// A contiguous range from `offset`, as a one-row rect.
    pub fn linear(offset: usize, size: usize) -> Rect {
        Rect {
            origin: [offset, 0, 0],
            row_pitch: size,
            slice_pitch: size,
        }
    }

    /// Whether the region's rows follow each other with no gap.
    pub(super) fn contiguous(&self, region: [usize; 3]) -> bool {
        (region[1] == 1 || self.row_pitch == region[0])
            && (region[2] == 1 || self.slice_pitch == region[0] * region[1])
    }

    /// Offset of the first byte of row `y` of slice `z` of the region.
    pub(super) fn row(&self, y: usize, z: usize) -> usize {
        (self.origin[2] + z) * self.slice_pitch
            + (self.origin[1] + y) * self.row_pitch
            + self.origin[0]
    }

    /// The bytes the region spans: the offset of its first and the length to one past its
    /// last (what a command on it uses, for `residence`).
    pub(super) fn span(&self, region: [usize; 3]) -> (usize, usize) {
        let start = self.row(0, 0);
        let end = self.end(region).unwrap_or(start);
        (start, end.saturating_sub(start))
    }

    /// One past the last byte the region touches.
    pub fn end(&self, region: [usize; 3]) -> Option<usize> {
        let last = (self.origin[2] + region[2] - 1)
            .checked_mul(self.slice_pitch)?
            .checked_add((self.origin[1] + region[1] - 1).checked_mul(self.row_pitch)?)?;
        last.checked_add(self.origin[0] + region[0])
    }
}

/// Every row of a region: (offset in `a`, offset in `b`).
pub(super) fn rows(a: Rect, b: Rect, region: [usize; 3]) -> impl Iterator<Item = (usize, usize)> {
    (0..region[2]).flat_map(move |z| (0..region[1]).map(move |y| (a.row(y, z), b.row(y, z))))
}

/// One buffer copy per row of the region, between `src` (based at `src_base`) and `dst`.
pub(super) fn copies(
    src: Rect,
    src_base: u64,
    dst: Rect,
    dst_base: u64,
    region: [usize; 3],
) -> Vec<CopyRegion> {
    rows(src, dst, region)
        .map(|(s, d)| CopyRegion {
            src_offset: src_base + s as u64,
            dst_offset: dst_base + d as u64,
            size: region[0] as u64,
        })
        .collect()
}

/// Whether two rects of the same storage share a byte (the spec's CL_MEM_COPY_OVERLAP).
pub fn rects_overlap(a: &Rect, a_base: usize, b: &Rect, b_base: usize, region: [usize; 3]) -> bool {
    let mut spans: Vec<(usize, usize, bool)> = rows(*a, *b, region)
        .flat_map(|(x, y)| {
            [
                (a_base + x, a_base + x + region[0], false),
                (b_base + y, b_base + y + region[0], true),
            ]
        })
        .collect();
    spans.sort_unstable();
    // Sweep: a span of one side starting before the furthest end of the other side overlaps.
    let (mut end_a, mut end_b) = (0usize, 0usize);
    for (start, end, is_b) in spans {
        if (is_b && start < end_a) || (!is_b && start < end_b) {
            return true;
        }
        if is_b {
            end_b = end_b.max(end);
        } else {
            end_a = end_a.max(end);
        }
    }
    false
}
