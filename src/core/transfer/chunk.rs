//! Planning a host transfer: its contiguous pieces (a row each, or one for the whole region)
//! and their grouping into chunks of bounded staging memory.

use super::rect::{rows, Rect};
use crate::core::memory::Mem;
use crate::vk::staging::CHUNK;

/// One contiguous part of a host transfer: `len` bytes at `dev` in the buffer's storage and
/// at `host` from the application's pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Piece {
    pub(super) dev: u64,
    pub(super) host: usize,
    pub(super) len: usize,
}

/// The pieces of a transfer between `mem`'s rect `dev` and the host's rect `host`: one per
/// row, or one for the whole region where both sides are contiguous.
pub(super) fn pieces(mem: &Mem, dev: Rect, host: Rect, region: [usize; 3]) -> Vec<Piece> {
    let base = mem.at(0);
    if dev.contiguous(region) && host.contiguous(region) {
        return vec![Piece {
            dev: base + dev.row(0, 0) as u64,
            host: host.row(0, 0),
            len: region.iter().product(),
        }];
    }
    rows(dev, host, region)
        .map(|(d, h)| Piece {
            dev: base + d as u64,
            host: h,
            len: region[0],
        })
        .collect()
}

/// The one piece of a contiguous transfer of `size` bytes at `offset` in `mem`, from host
/// offset 0.
pub(super) fn linear(mem: &Mem, offset: usize, size: usize) -> Vec<Piece> {
    vec![Piece {
        dev: mem.at(offset),
        host: 0,
        len: size,
    }]
}

/// Groups pieces into chunks of at most `max` bytes, splitting longer pieces.
pub(super) fn chunks(pieces: Vec<Piece>, max: usize) -> Vec<Vec<Piece>> {
    let mut out: Vec<Vec<Piece>> = vec![];
    let mut used = max;
    for mut p in pieces {
        while p.len > 0 {
            if used == max {
                out.push(vec![]);
                used = 0;
            }
            let len = p.len.min(max - used);
            out.last_mut()
                .expect("pushed above")
                .push(Piece { len, ..p });
            used += len;
            p.dev += len as u64;
            p.host += len;
            p.len -= len;
        }
    }
    out
}

/// The chunk size of a staged read of `total` bytes. Below 8 MiB, where the host copies out of
/// staging memory on one thread (`copy_bytes`), a quarter of it, at least 512 KiB: the host's
/// copy of one chunk overlaps the GPU's copy of the next (H200, a 4 MiB read: 9.6 GB/s in one
/// chunk, 10.2 in four). Larger reads go in `CHUNK`s copied out on several threads (16 MiB in
/// four chunks: 11.0 GB/s, in one: 17.5). Writes return once the data is staged, so smaller
/// chunks only add submissions to them.
pub(super) fn read_chunk(total: usize) -> usize {
    if total < 8 << 20 {
        (total / 4).max(512 << 10)
    } else {
        CHUNK
    }
}

#[cfg(test)]
mod tests {
    use super::{chunks, Piece};

    #[test]
    fn chunks_split_and_group_pieces() {
        let p = |dev, host, len| Piece { dev, host, len };
        let got = chunks(vec![p(0, 0, 10), p(100, 50, 3), p(200, 60, 4)], 8);
        assert_eq!(
            got,
            vec![
                vec![p(0, 0, 8)],
                vec![p(8, 8, 2), p(100, 50, 3), p(200, 60, 3)],
                vec![p(203, 63, 1)],
            ]
        );
        assert!(chunks(vec![], 8).is_empty());
    }
}
