//! OpenCL C printf: decoding what kernels wrote into the printf buffer.
//!
//! clspv's layout: word 0 counts the 32-bit words written after it; then records, each the
//! printf's id (a `PrintfInfo` of the reflection) and its arguments packed with the sizes the
//! reflection lists. A `%s` argument is the id of the string literal, itself a `PrintfInfo`.
//! Each conversion is formatted by the C library's snprintf, so the output is exactly C's
//! (OpenCL C printf follows C99), with the OpenCL vector forms (`%v4hlf`) expanded element by
//! element, separated by commas.

use crate::compiler::reflection::PrintfFormat;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, CString};

extern "C" {
    fn snprintf(buf: *mut c_char, size: usize, format: *const c_char, ...) -> c_int;
}

/// The text the records in `buffer` print. Records cut short by the end of the buffer (it was
/// too small) are left out.
pub fn decode(buffer: &[u8], formats: &[PrintfFormat]) -> String {
    let by_id: HashMap<u32, &PrintfFormat> = formats.iter().map(|f| (f.id, f)).collect();
    let Some(count) = buffer.get(..4) else {
        return String::new();
    };
    let words = u32::from_le_bytes(count.try_into().expect("4 bytes")) as usize;
    let end = buffer.len().min(4 + words.saturating_mul(4));
    let mut data = &buffer[4.min(end)..end];
    let mut out = String::new();
    while data.len() >= 4 {
        let id = u32::from_le_bytes(data[..4].try_into().expect("4 bytes"));
        data = &data[4..];
        let Some(format) = by_id.get(&id) else {
            break;
        };
        let size: usize = format.arg_sizes.iter().map(|&s| s as usize).sum();
        if data.len() < size {
            break;
        }
        out += &record(format, &data[..size], &by_id);
        data = &data[size..];
    }
    out
}

/// One printf call: the format with its packed arguments.
fn record(format: &PrintfFormat, mut args: &[u8], strings: &HashMap<u32, &PrintfFormat>) -> String {
    let fmt = &format.format;
    let mut out = String::new();
    let mut sizes = format.arg_sizes.iter().map(|&s| s as usize);
    let mut rest = fmt.as_str();
    while let Some(pos) = rest.find('%') {
        out += &rest[..pos];
        rest = &rest[pos..];
        if let Some(after) = rest.strip_prefix("%%") {
            out.push('%');
            rest = after;
            continue;
        }
        let Some(len) = spec_len(rest) else {
            out += rest;
            return out;
        };
        let (spec, after) = rest.split_at(len);
        rest = after;
        let Some(size) = sizes.next() else {
            out += spec;
            continue;
        };
        let arg = &args[..size.min(args.len())];
        args = &args[arg.len()..];
        out += &conversion(spec, arg, strings);
    }
    out + rest
}

/// The length of the conversion specification at the start of `s` ("%...c"), if it is one.
fn spec_len(s: &str) -> Option<usize> {
    s.char_indices()
        .skip(1)
        .find(|&(_, c)| "diouxXfFeEgGaAcsp".contains(c))
        .map(|(i, _)| i + 1)
}

/// One conversion of one argument (a vector's elements separated by commas).
fn conversion(spec: &str, arg: &[u8], strings: &HashMap<u32, &PrintfFormat>) -> String {
    let conv = spec.chars().last().unwrap_or('d');
    // The OpenCL vector form: %[flags][width][.precision]v<n><length><conversion>.
    let Some(v) = spec.find('v') else {
        return scalar(spec, conv, arg, strings);
    };
    let digits = spec[v + 1..]
        .find(|c: char| !c.is_ascii_digit())
        .map_or(spec.len(), |i| v + 1 + i);
    let n: usize = spec[v + 1..digits].parse().unwrap_or(1).max(1);
    let length = &spec[digits..spec.len() - 1];
    let element = match length {
        "hh" => 1,
        "h" => 2,
        "hl" => 4,
        "l" => 8,
        _ => arg.len() / n,
    }
    .max(1);
    // snprintf does not know "hl"; the element size is handled here.
    let c_length = if length == "hl" { "" } else { length };
    let elem_spec = format!("{}{c_length}{conv}", &spec[..v]);
    arg.chunks(element)
        .take(n)
        .map(|e| scalar(&elem_spec, conv, e, strings))
        .collect::<Vec<_>>()
        .join(",")
}

fn scalar(spec: &str, conv: char, arg: &[u8], strings: &HashMap<u32, &PrintfFormat>) -> String {
    let mut bytes = [0u8; 8];
    let n = arg.len().min(8);
    bytes[..n].copy_from_slice(&arg[..n]);
    let raw = u64::from_le_bytes(bytes);
    let Ok(cspec) = CString::new(spec) else {
        return String::new();
    };
    let mut buf = vec![0u8; 512 + spec.len()];
    loop {
        let size = buf.len();
        let out = buf.as_mut_ptr() as *mut c_char;
        let f = cspec.as_ptr();
        // SAFETY: `out` has `size` bytes; each call passes one argument of the type the
        // conversion reads (doubles for floating point, a NUL-terminated string for %s, the
        // integer widened to the width its length modifier names).
        let written = unsafe {
            match conv {
                's' => {
                    let id = raw as u32;
                    let text = strings.get(&id).map_or("", |f| f.format.as_str());
                    let text = CString::new(text).unwrap_or_default();
                    snprintf(out, size, f, text.as_ptr())
                }
                'f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A' => {
                    let x = match n {
                        2 => half_to_f32(raw as u16) as f64,
                        4 => f32::from_bits(raw as u32) as f64,
                        _ => f64::from_bits(raw),
                    };
                    snprintf(out, size, f, x)
                }
                _ if spec.contains('l') => snprintf(out, size, f, raw),
                _ => snprintf(out, size, f, raw as u32),
            }
        };
        if written < 0 {
            return String::new();
        }
        if (written as usize) < size {
            return String::from_utf8_lossy(&buf[..written as usize]).into_owned();
        }
        buf.resize(written as usize + 1, 0);
    }
}

fn half_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let mant = (h & 0x3ff) as f32;
    sign * match exp {
        0 => mant * 2f32.powi(-24),
        31 if mant == 0.0 => f32::INFINITY,
        31 => f32::NAN,
        e => (1.0 + mant / 1024.0) * 2f32.powi(e - 15),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(id: u32, format: &str, sizes: &[u32]) -> PrintfFormat {
        PrintfFormat {
            id,
            format: format.into(),
            arg_sizes: sizes.to_vec(),
        }
    }

    fn buffer(records: &[&[u32]]) -> Vec<u8> {
        let words: Vec<u32> = records.iter().flat_map(|r| r.iter().copied()).collect();
        let mut out = (words.len() as u32).to_le_bytes().to_vec();
        out.extend(words.iter().flat_map(|w| w.to_le_bytes()));
        out
    }

    #[test]
    fn formats_like_c_with_vectors_strings_and_truncation() {
        let formats = [
            f(0, "int %d, hex %#x, 100%%\n", &[4, 4]),
            f(1, "float %.2f %s\n", &[4, 4]),
            f(2, "world", &[]),
            f(3, "v %v4hld|%5.1v2hlf\n", &[16, 8]),
            f(4, "long %ld\n", &[8]),
        ];
        let b = buffer(&[
            &[0, (-7i32) as u32, 255],
            &[1, 2.5f32.to_bits(), 2],
            &[3, 1, 2, 3, 4, 1.5f32.to_bits(), (-2.0f32).to_bits()],
            &[4, 5, 1],
        ]);
        assert_eq!(
            decode(&b, &formats),
            "int -7, hex 0xff, 100%\nfloat 2.50 world\nv 1,2,3,4|  1.5, -2.0\nlong 4294967301\n"
        );
        // A buffer that overflowed: the count says more than it holds; whole records only.
        let mut cut = b.clone();
        cut.truncate(4 + 4 * 5);
        assert_eq!(decode(&cut, &formats), "int -7, hex 0xff, 100%\n");
        assert_eq!(decode(&[], &formats), "");
    }
}
