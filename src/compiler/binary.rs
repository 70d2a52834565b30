//! vkcl's program binary container (docs/BINARY.md): what CL_PROGRAM_BINARIES returns and
//! clCreateProgramWithBinary accepts. It carries the SPIR-V and build options of one device's
//! executable, stamped with the device's identity; anything malformed, truncated, corrupted
//! or made for another device or driver is refused.

/// Which device and driver a binary is for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Identity {
    pub device_uuid: [u8; 16],
    pub driver_uuid: [u8; 16],
    pub driver_version: u32,
}

/// What a binary holds: an executable (one SPIR-V module), a compiled object (one LLVM bitcode
/// module) or a library (any number of bitcode modules).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Executable,
    Object,
    Library,
}

impl Kind {
    /// The CL_PROGRAM_BINARY_TYPE_* value, which is also the type field of the container.
    pub fn binary_type(self) -> u32 {
        match self {
            Kind::Object => 0x1,
            Kind::Library => 0x2,
            Kind::Executable => 0x4,
        }
    }

    fn from_binary_type(t: u32) -> Option<Kind> {
        [Kind::Object, Kind::Library, Kind::Executable]
            .into_iter()
            .find(|k| k.binary_type() == t)
    }
}

/// A decoded binary.
pub struct Contents {
    pub kind: Kind,
    pub options: String,
    /// clspv arguments the bitcode modules need (`-arch=spir64` for modules from 64-bit IL).
    pub bitcode_args: String,
    /// The executable's SPIR-V (and, where it has one, the OpenCL C source its
    /// physical-addressing build is made from), or the bitcode modules of an object or library.
    pub sections: Vec<Vec<u8>>,
}

const MAGIC: &[u8; 8] = b"VKCLPRG\0";
// 3: objects of source programs are 64-bit on devices with 64 address bits.
const VERSION: u32 = 3;

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The binary of `contents` for the device `id`. `compiler` identifies the compiler that wrote
/// the bitcode of objects and libraries (bitcode is only linked by the same one).
pub fn encode(id: &Identity, compiler: &str, contents: &Contents) -> Vec<u8> {
    let Contents {
        kind,
        options,
        bitcode_args,
        sections,
    } = contents;
    let mut out = Vec::with_capacity(
        96 + options.len()
            + compiler.len()
            + bitcode_args.len()
            + sections.iter().map(|s| s.len() + 4).sum::<usize>(),
    );
    let mut bytes = |b: &[u8]| {
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        out.extend_from_slice(b);
    };
    bytes(options.as_bytes());
    bytes(compiler.as_bytes());
    bytes(bitcode_args.as_bytes());
    let tail = std::mem::take(&mut out);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&kind.binary_type().to_le_bytes());
    out.extend_from_slice(&id.device_uuid);
    out.extend_from_slice(&id.driver_uuid);
    out.extend_from_slice(&id.driver_version.to_le_bytes());
    out.extend_from_slice(&tail);
    out.extend_from_slice(&(sections.len() as u32).to_le_bytes());
    for s in sections {
        out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        out.extend_from_slice(s);
    }
    let sum = fnv1a(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("truncated".into());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    /// A length-prefixed byte string.
    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let len = self.u32()? as usize;
        self.take(len)
    }
}

/// Whether a binary written by the compiler `written_by` may be read where the compiler is
/// `compiler` (both [`super::binary_identity`] strings: "<clspv>; vkcl <version> compiler
/// <hash>"): the same compiler; or an executable read where no clspv is installed at all
/// ("none; ..."), written by the same vkcl and compiler layer with whichever clspv: its SPIR-V
/// needs no compiler, and there is none to build it again (a machine given binaries only).
fn readable(written_by: &[u8], compiler: &str, kind: Kind) -> bool {
    if written_by == compiler.as_bytes() {
        return true;
    }
    let vkcl_part = |s: &str| s.split_once("; ").map(|(_, v)| v.to_string());
    let written_by = String::from_utf8_lossy(written_by);
    matches!(kind, Kind::Executable)
        && compiler.starts_with("none; ")
        && vkcl_part(&written_by).is_some_and(|v| Some(v) == vkcl_part(compiler))
}

/// Decodes a binary for the device `id` and the compiler `compiler`; Err says why it is refused.
pub fn decode(bytes: &[u8], id: &Identity, compiler: &str) -> Result<Contents, String> {
    if bytes.len() < 8 || &bytes[..8] != MAGIC {
        return Err("not a vkcl program binary".into());
    }
    let (body, sum) = bytes.split_at(bytes.len().saturating_sub(8));
    if sum.len() != 8 || fnv1a(body) != u64::from_le_bytes(sum.try_into().expect("8 bytes")) {
        return Err("checksum mismatch (corrupt or truncated)".into());
    }
    let mut r = Reader(&body[8..]);
    let version = r.u32()?;
    if version != VERSION {
        return Err(format!("container version {version}, vkcl reads {VERSION}"));
    }
    let kind = Kind::from_binary_type(r.u32()?).ok_or("unknown binary type")?;
    let device_uuid: [u8; 16] = r.take(16)?.try_into().expect("16 bytes");
    let driver_uuid: [u8; 16] = r.take(16)?.try_into().expect("16 bytes");
    let driver_version = r.u32()?;
    if (Identity {
        device_uuid,
        driver_uuid,
        driver_version,
    }) != *id
    {
        return Err("built for another device or driver".into());
    }
    let options =
        String::from_utf8(r.bytes()?.to_vec()).map_err(|_| "options are not UTF-8".to_string())?;
    let written_by = r.bytes()?;
    if !readable(written_by, compiler, kind) {
        return Err(format!(
            "written by another compiler ({}; this is {compiler})",
            String::from_utf8_lossy(written_by)
        ));
    }
    let bitcode_args = String::from_utf8(r.bytes()?.to_vec())
        .map_err(|_| "bitcode arguments are not UTF-8".to_string())?;
    let count = r.u32()? as usize;
    let sections = (0..count)
        .map(|_| r.bytes().map(<[u8]>::to_vec))
        .collect::<Result<Vec<_>, _>>()?;
    let valid = match kind {
        Kind::Executable => {
            (1..=2).contains(&sections.len())
                && sections[0].len() % 4 == 0
                && sections
                    .get(1)
                    .is_none_or(|s| std::str::from_utf8(s).is_ok())
        }
        Kind::Object => sections.len() == 1,
        Kind::Library => true,
    };
    if !valid || !r.0.is_empty() {
        return Err("malformed sections".into());
    }
    Ok(Contents {
        kind,
        options,
        bitcode_args,
        sections,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: Identity = Identity {
        device_uuid: [1; 16],
        driver_uuid: [2; 16],
        driver_version: 3,
    };

    #[test]
    fn round_trip_and_every_corruption_is_refused() {
        let spirv: Vec<u8> = [0x0723_0203u32, 1, 2, 3]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        for (kind, sections) in [
            (Kind::Executable, vec![&spirv[..]]),
            (Kind::Object, vec![&b"BC\xc0\xde1"[..]]),
            (
                Kind::Library,
                vec![&b"BC\xc0\xde1"[..], &b"BC\xc0\xde22"[..]],
            ),
        ] {
            let contents = Contents {
                kind,
                options: "-DX=1".into(),
                bitcode_args: "-arch=spir64".into(),
                sections: sections.iter().map(|s| s.to_vec()).collect(),
            };
            let bin = encode(&ID, "clspv 1", &contents);
            let c = decode(&bin, &ID, "clspv 1").unwrap();
            assert_eq!((c.kind, c.options.as_str()), (kind, "-DX=1"));
            assert_eq!(c.bitcode_args, "-arch=spir64");
            assert_eq!(
                c.sections,
                sections.iter().map(|s| s.to_vec()).collect::<Vec<_>>()
            );
            for i in 0..bin.len() {
                let mut bad = bin.clone();
                bad[i] ^= 0x40;
                assert!(
                    decode(&bad, &ID, "clspv 1").is_err(),
                    "byte {i} flipped was accepted"
                );
            }
            for n in 0..bin.len() {
                assert!(
                    decode(&bin[..n], &ID, "clspv 1").is_err(),
                    "truncated to {n} was accepted"
                );
            }
            let other = Identity {
                driver_version: 4,
                ..ID
            };
            assert!(decode(&bin, &other, "clspv 1").is_err());
            // Bitcode is only for the compiler that wrote it, and so is SPIR-V (another vkcl
            // compiles the source differently).
            assert!(decode(&bin, &ID, "clspv 2").is_err());
        }
    }
}
