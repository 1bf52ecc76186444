//! The byte layout of a share's tar, from stored metadata alone like its zip: POSIX ustar headers
//! (pax `path`/`size` records where a name or size does not fit), each member's bytes padded to
//! 512, two zero blocks at the end. Every header is known up front, so the length is too.

use bytes::{BufMut, Bytes, BytesMut};

use super::zip_layout::{Segment, ZipLayout, ZipMember};

const BLOCK: u64 = 512;
/// Largest size the ustar field holds in octal (11 digits); larger ones go in a pax record.
const USTAR_MAX_SIZE: u64 = 0o77_777_777_777;
/// A regular file, rw-r--r--.
const MODE: u32 = 0o644;

/// The tar of `members` (paths already cleaned and unique, as for the zip). Owner, group and
/// their names are empty or 0, so the same members always give the same bytes.
pub fn tar_layout(members: &[ZipMember]) -> ZipLayout {
    let mut segments = Vec::with_capacity(members.len() * 3 + 1);
    let mut identity = BytesMut::new();
    for (index, member) in members.iter().enumerate() {
        let headers = headers(member);
        identity.put_slice(&headers);
        segments.push(Segment::Bytes(headers));
        segments.push(Segment::File { index, size: member.size });
        let padding = padding(member.size);
        if padding > 0 {
            segments.push(Segment::Bytes(Bytes::from(vec![0; padding as usize])));
        }
    }
    segments.push(Segment::Bytes(Bytes::from(vec![0; 2 * BLOCK as usize])));
    ZipLayout::from_segments(segments, identity.freeze())
}

/// Zero bytes after `size` bytes up to the next block.
fn padding(size: u64) -> u64 {
    (BLOCK - size % BLOCK) % BLOCK
}

/// The member's pax extended header, when it needs one, then its ustar header.
fn headers(member: &ZipMember) -> Bytes {
    let mut records = Vec::new();
    let name = match ustar_name(&member.path) {
        Some((name, prefix)) if prefix.is_empty() => name,
        Some((name, prefix)) => format!("{prefix}/{name}"),
        None => {
            records.push(pax_record("path", &member.path));
            ascii_stand_in(&member.path)
        }
    };
    if member.size > USTAR_MAX_SIZE {
        records.push(pax_record("size", &member.size.to_string()));
    }
    let mut out = BytesMut::new();
    if !records.is_empty() {
        let data = records.concat();
        out.put_slice(&ustar_header("PaxHeaders/entry", data.len() as u64, member.modified, tar::EntryType::XHeader));
        out.put_slice(&data);
        out.put_bytes(0, padding(data.len() as u64) as usize);
    }
    let size = member.size.min(USTAR_MAX_SIZE);
    out.put_slice(&ustar_header(&name, size, member.modified, tar::EntryType::Regular));
    out.freeze()
}

/// One 512-byte ustar header. The crate splits `path` into prefix and name (it fits: see
/// `ustar_name`, or it is a stand-in of at most 100 ASCII bytes).
fn ustar_header(path: &str, size: u64, modified: i64, kind: tar::EntryType) -> [u8; 512] {
    let mut header = tar::Header::new_ustar();
    // Checked to fit above; were it refused, the name stays empty rather than wrong.
    let _ = header.set_path(path);
    header.set_size(size);
    header.set_mtime(modified.max(0) as u64);
    header.set_mode(MODE);
    header.set_uid(0);
    header.set_gid(0);
    header.set_entry_type(kind);
    header.set_cksum();
    *header.as_bytes()
}

/// `(name, prefix)` when `path` fits the ustar fields as it is: ASCII, a name of at most 100 bytes
/// and a folder prefix of at most 155; `None` when only a pax `path` record can hold it.
fn ustar_name(path: &str) -> Option<(String, String)> {
    if !path.is_ascii() {
        return None;
    }
    if path.len() <= 100 {
        return Some((path.to_owned(), String::new()));
    }
    let bytes = path.as_bytes();
    // The last `/` that leaves a prefix of at most 155 bytes and a name of at most 100.
    (0..bytes.len())
        .rev()
        .filter(|at| bytes[*at] == b'/')
        .find(|at| *at <= 155 && bytes.len() - at - 1 <= 100 && bytes.len() - at > 1)
        .map(|at| (path[at + 1..].to_owned(), path[..at].to_owned()))
}

/// What a tool that ignores pax records extracts instead: the name's ASCII characters, cut to fit.
fn ascii_stand_in(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ascii: String = name.chars().map(|c| if c.is_ascii() && !c.is_ascii_control() { c } else { '_' }).collect();
    ascii.chars().rev().take(100).collect::<Vec<_>>().into_iter().rev().collect()
}

/// `"%d key=value\n"`, where the decimal length counts the whole record, itself included.
fn pax_record(key: &str, value: &str) -> Vec<u8> {
    let rest = key.len() + value.len() + 3; // space, '=', newline
    let mut len = rest + 1;
    while len != rest + len.to_string().len() {
        len = rest + len.to_string().len();
    }
    format!("{len} {key}={value}\n").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ByteRange, Piece};

    fn member(path: &str, size: u64) -> ZipMember {
        ZipMember { path: path.into(), size, crc32: 0, modified: 1_700_000_000 }
    }

    #[test]
    fn pax_records_count_their_own_length() {
        assert_eq!(pax_record("path", "a"), b"9 path=a\n");
        let long = "x".repeat(95);
        let record = pax_record("path", &long);
        assert_eq!(record.len().to_string(), String::from_utf8_lossy(&record).split(' ').next().unwrap());
    }

    #[test]
    fn the_length_is_headers_padded_bytes_and_the_end_blocks() {
        let layout = tar_layout(&[member("a.txt", 1), member("b/c.bin", 512), member("e", 0)]);
        assert_eq!(layout.len(), 512 + 512 + 512 + 512 + 512 + 1024);
        let names = [member("ä/long.txt", 3)];
        assert_eq!(tar_layout(&names).len(), 512 + 512 + 512 + 512 + 1024, "a pax header and its record");
    }

    #[test]
    fn long_ascii_paths_split_into_prefix_and_name() {
        let folder = "f".repeat(120);
        let (name, prefix) = ustar_name(&format!("{folder}/name.txt")).unwrap();
        assert_eq!((name.as_str(), prefix.len()), ("name.txt", 120));
        assert!(ustar_name(&"n".repeat(101)).is_none());
    }

    #[test]
    fn ranges_map_to_header_and_file_pieces() {
        let layout = tar_layout(&[member("a.txt", 10)]);
        let pieces = layout.pieces(ByteRange { first: 510, last: 515 });
        assert!(matches!(&pieces[0], Piece::Bytes(bytes) if bytes.len() == 2));
        assert_eq!(pieces[1], Piece::File { index: 0, range: ByteRange { first: 0, last: 3 } });
    }
}
