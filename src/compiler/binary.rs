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

/// A decoded binary.
pub struct Contents {
    pub options: String,
    pub spirv: Vec<u32>,
}

const MAGIC: &[u8; 8] = b"VKCLPRG\0";
const VERSION: u32 = 1;
/// CL_PROGRAM_BINARY_TYPE_EXECUTABLE: the only type vkcl writes today.
const TYPE_EXECUTABLE: u32 = 0x4;

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

pub fn encode(id: &Identity, options: &str, spirv: &[u32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(80 + options.len() + spirv.len() * 4);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&TYPE_EXECUTABLE.to_le_bytes());
    out.extend_from_slice(&id.device_uuid);
    out.extend_from_slice(&id.driver_uuid);
    out.extend_from_slice(&id.driver_version.to_le_bytes());
    out.extend_from_slice(&(options.len() as u32).to_le_bytes());
    out.extend_from_slice(options.as_bytes());
    out.extend_from_slice(&((spirv.len() * 4) as u32).to_le_bytes());
    out.extend(spirv.iter().flat_map(|w| w.to_le_bytes()));
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
}

/// Decodes a binary for the device `id`; Err says why it is refused.
pub fn decode(bytes: &[u8], id: &Identity) -> Result<Contents, String> {
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
    if r.u32()? != TYPE_EXECUTABLE {
        return Err("not an executable".into());
    }
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
    let len = r.u32()? as usize;
    let options = String::from_utf8(r.take(len)?.to_vec())
        .map_err(|_| "options are not UTF-8".to_string())?;
    let len = r.u32()? as usize;
    let code = r.take(len)?;
    if len % 4 != 0 || !r.0.is_empty() {
        return Err("malformed SPIR-V section".into());
    }
    let spirv = code
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    Ok(Contents { options, spirv })
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
        let bin = encode(&ID, "-DX=1", &[0x0723_0203, 1, 2, 3]);
        let c = decode(&bin, &ID).unwrap();
        assert_eq!(
            (c.options.as_str(), c.spirv.as_slice()),
            ("-DX=1", &[0x0723_0203, 1, 2, 3][..])
        );
        for i in 0..bin.len() {
            let mut bad = bin.clone();
            bad[i] ^= 0x40;
            assert!(decode(&bad, &ID).is_err(), "byte {i} flipped was accepted");
        }
        for n in 0..bin.len() {
            assert!(
                decode(&bin[..n], &ID).is_err(),
                "truncated to {n} was accepted"
            );
        }
        let other = Identity {
            driver_version: 4,
            ..ID
        };
        assert!(decode(&bin, &other).is_err());
    }
}
