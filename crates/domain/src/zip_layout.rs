//! The byte layout of a share's zip, computed from stored metadata alone: stored (uncompressed)
//! entries with known sizes, CRC-32s, names and times, so the archive's length is known before its
//! first byte and any byte range maps to spans of header bytes and of member files.
//!
//! Layout (APPNOTE 6.3.x): for each member a local file header and its bytes (no data descriptor:
//! the CRC is known up front), then the central directory, then, where a size, offset or count
//! does not fit its field, the ZIP64 end of central directory record and locator, then the end of
//! central directory record. Names are UTF-8 (flag bit 11); times are DOS times plus the extended
//! timestamp field (0x5455), both in UTC.

use std::collections::{HashMap, HashSet};

use bytes::{BufMut, Bytes, BytesMut};

use super::byte_range::ByteRange;
use super::file_name::comparable;

const LOCAL_HEADER: u32 = 0x0403_4b50;
const CENTRAL_HEADER: u32 = 0x0201_4b50;
const ZIP64_END: u32 = 0x0606_4b50;
const ZIP64_LOCATOR: u32 = 0x0706_4b50;
const END: u32 = 0x0605_4b50;
/// General purpose flag bit 11: the name is UTF-8.
const UTF8_NAME: u16 = 0x0800;
/// Made by: Unix (3), APPNOTE 6.3, so extractors apply the external attributes' mode bits.
const VERSION_MADE_BY: u16 = (3 << 8) | 63;
const VERSION_PLAIN: u16 = 20;
const VERSION_ZIP64: u16 = 45;
/// A regular file, rw-r--r--, in the high half of the external attributes.
const EXTERNAL_ATTRIBUTES: u32 = 0o100_644 << 16;
const EXTENDED_TIMESTAMP: u16 = 0x5455;
const ZIP64_EXTRA: u16 = 0x0001;

/// From which value a size, offset or count goes into the ZIP64 records. The real limits are the
/// fields' widths (the all-ones value is the "see ZIP64" marker, so it counts as too large); tests
/// lower them to force every ZIP64 record with small files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zip64Limits {
    pub size: u64,
    pub count: u64,
}

impl Zip64Limits {
    pub const STANDARD: Zip64Limits = Zip64Limits { size: 0xFFFF_FFFF, count: 0xFFFF };

    /// ZIP64 for every size, offset and count from `threshold` on (never later than the standard).
    pub fn from_threshold(threshold: u64) -> Self {
        Zip64Limits { size: threshold.min(0xFFFF_FFFF), count: threshold.min(0xFFFF) }
    }

    fn size_needs(&self, value: u64) -> bool {
        value >= self.size
    }
}

impl Default for Zip64Limits {
    fn default() -> Self {
        Zip64Limits::STANDARD
    }
}

/// One file of the archive as its metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZipMember {
    /// The path inside the archive, `folder/name`: already cleaned (see `FolderPath`) and made
    /// unique by `unique_paths`.
    pub path: String,
    pub size: u64,
    pub crc32: u32,
    /// Unix seconds.
    pub modified: i64,
}

/// Where a byte of the archive comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Bytes computed here (headers, the central directory, the end records).
    Bytes(Bytes),
    /// A span of member `index`'s file.
    File { index: usize, range: ByteRange },
}

#[derive(Debug, Clone)]
pub(super) enum Segment {
    Bytes(Bytes),
    File { index: usize, size: u64 },
}

impl Segment {
    fn len(&self) -> u64 {
        match self {
            Segment::Bytes(bytes) => bytes.len() as u64,
            Segment::File { size, .. } => *size,
        }
    }
}

/// The whole archive as a sequence of segments with their start offsets: a share's zip, or its
/// tar (`tar_layout`), which maps byte ranges the same way.
#[derive(Debug, Clone)]
pub struct ZipLayout {
    segments: Vec<(u64, Segment)>,
    len: u64,
    central_directory: Bytes,
}

impl ZipLayout {
    pub fn new(members: &[ZipMember], limits: Zip64Limits) -> Self {
        let mut segments = Vec::with_capacity(members.len() * 2 + 1);
        let mut central = BytesMut::new();
        let mut offset = 0u64;
        for (index, member) in members.iter().enumerate() {
            let local = local_header(member, limits);
            central_header(&mut central, member, offset, limits);
            let header_len = local.len() as u64;
            segments.push((offset, Segment::Bytes(local)));
            segments.push((offset + header_len, Segment::File { index, size: member.size }));
            offset += header_len + member.size;
        }
        let central_directory = central.freeze();
        let mut trailer = BytesMut::from(&central_directory[..]);
        end_records(&mut trailer, members.len() as u64, central_directory.len() as u64, offset, limits);
        let trailer = trailer.freeze();
        let len = offset + trailer.len() as u64;
        segments.push((offset, Segment::Bytes(trailer)));
        ZipLayout { segments, len, central_directory }
    }

    /// An archive of `segments` in order; `identity` is what names its version (see
    /// `central_directory`).
    pub(super) fn from_segments(parts: Vec<Segment>, identity: Bytes) -> Self {
        let mut segments = Vec::with_capacity(parts.len());
        let mut offset = 0;
        for segment in parts {
            let len = segment.len();
            segments.push((offset, segment));
            offset += len;
        }
        ZipLayout { segments, len: offset, central_directory: identity }
    }

    /// The archive's length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The central directory's bytes: with the members' SHA-256s, what identifies this version of
    /// the archive (names, sizes, CRCs, times and offsets are all in it).
    pub fn central_directory(&self) -> &Bytes {
        &self.central_directory
    }

    /// Where the bytes of `range` come from, in order. Empty member files yield no piece.
    pub fn pieces(&self, range: ByteRange) -> Vec<Piece> {
        let first = self.segments.partition_point(|(start, segment)| start + segment.len() <= range.first);
        let mut pieces = Vec::new();
        for (start, segment) in &self.segments[first..] {
            if *start > range.last {
                break;
            }
            let len = segment.len();
            if len == 0 {
                continue;
            }
            let from = range.first.saturating_sub(*start);
            let to = (range.last - start).min(len - 1);
            pieces.push(match segment {
                Segment::Bytes(bytes) => Piece::Bytes(bytes.slice(from as usize..=to as usize)),
                Segment::File { index, .. } => {
                    Piece::File { index: *index, range: ByteRange { first: from, last: to } }
                }
            });
        }
        pieces
    }
}

/// Makes every path unique as extractors compare them (Windows and macOS extract `A.jpg` and
/// `a.jpg`, or a composed and a decomposed `café.txt`, to one file: `file_name::comparable`): a
/// later duplicate becomes `name (2).ext`, `name (3).ext`, ... Folders come first, so a file named
/// like a folder of another member is the one renamed. Empty paths become `file`. Linear: each
/// name goes on from the last number its spelling got, so 10,000 same-named files try about
/// 10,000 candidates rather than 50 million.
pub fn unique_paths(paths: &[String]) -> Vec<String> {
    unique_paths_counting(paths).0
}

/// `unique_paths`, and how many candidate names it tried.
fn unique_paths_counting(paths: &[String]) -> (Vec<String>, usize) {
    let folders: HashSet<String> = paths
        .iter()
        .flat_map(|path| {
            let parts: Vec<&str> = path.split('/').collect();
            (1..parts.len()).map(move |n| comparable(&parts[..n].join("/")))
        })
        .collect();
    let mut taken = HashSet::with_capacity(paths.len());
    // For each spelling (as compared) that was taken: the next number to try for it.
    let mut next_number: HashMap<String, u32> = HashMap::new();
    let mut tried = 0;
    let unique = paths
        .iter()
        .map(|path| {
            let path = if path.is_empty() { "file" } else { path.as_str() };
            let (mut candidate, mut key) = (path.to_owned(), comparable(path));
            tried += 1;
            if folders.contains(&key) || taken.contains(&key) {
                let n = next_number.entry(key).or_insert(2);
                loop {
                    candidate = numbered(path, *n);
                    key = comparable(&candidate);
                    *n += 1;
                    tried += 1;
                    if !folders.contains(&key) && !taken.contains(&key) {
                        break;
                    }
                }
            }
            taken.insert(key);
            candidate
        })
        .collect();
    (unique, tried)
}

/// `a/b.txt` as `a/b (n).txt`; a name whose only dot leads it (`.env`) keeps it.
fn numbered(path: &str, n: u32) -> String {
    let (folder, name) = path.rsplit_once('/').map_or(("", path), |(folder, name)| (folder, name));
    let name = match name.rfind('.').filter(|dot| *dot > 0) {
        Some(dot) => format!("{} ({n}){}", &name[..dot], &name[dot..]),
        None => format!("{name} ({n})"),
    };
    if folder.is_empty() { name } else { format!("{folder}/{name}") }
}

fn local_header(member: &ZipMember, limits: Zip64Limits) -> Bytes {
    let zip64 = limits.size_needs(member.size);
    let name = member.path.as_bytes();
    let mut extra = BytesMut::new();
    if zip64 {
        // In a local header the ZIP64 field holds both sizes, whichever needed it.
        extra.put_u16_le(ZIP64_EXTRA);
        extra.put_u16_le(16);
        extra.put_u64_le(member.size);
        extra.put_u64_le(member.size);
    }
    extended_timestamp(&mut extra, member.modified);
    let (time, date) = dos_time(member.modified);
    let size32 = if zip64 { u32::MAX } else { member.size as u32 };
    let mut header = BytesMut::with_capacity(30 + name.len() + extra.len());
    header.put_u32_le(LOCAL_HEADER);
    header.put_u16_le(if zip64 { VERSION_ZIP64 } else { VERSION_PLAIN });
    header.put_u16_le(UTF8_NAME);
    header.put_u16_le(0); // stored
    header.put_u16_le(time);
    header.put_u16_le(date);
    header.put_u32_le(member.crc32);
    header.put_u32_le(size32); // compressed
    header.put_u32_le(size32); // uncompressed
    header.put_u16_le(name.len() as u16);
    header.put_u16_le(extra.len() as u16);
    header.put_slice(name);
    header.put_slice(&extra);
    header.freeze()
}

fn central_header(out: &mut BytesMut, member: &ZipMember, offset: u64, limits: Zip64Limits) {
    let (size64, offset64) = (limits.size_needs(member.size), limits.size_needs(offset));
    let name = member.path.as_bytes();
    let mut extra = BytesMut::new();
    if size64 || offset64 {
        // Only the fields that hold the marker, in this order: sizes, then the offset.
        let fields = if size64 { 2 } else { 0 } + u16::from(offset64);
        extra.put_u16_le(ZIP64_EXTRA);
        extra.put_u16_le(8 * fields);
        if size64 {
            extra.put_u64_le(member.size);
            extra.put_u64_le(member.size);
        }
        if offset64 {
            extra.put_u64_le(offset);
        }
    }
    extended_timestamp(&mut extra, member.modified);
    let (time, date) = dos_time(member.modified);
    let size32 = if size64 { u32::MAX } else { member.size as u32 };
    out.put_u32_le(CENTRAL_HEADER);
    out.put_u16_le(VERSION_MADE_BY);
    // Needed: the same as the local header says, or 4.5 for an offset in ZIP64.
    out.put_u16_le(if size64 || offset64 { VERSION_ZIP64 } else { VERSION_PLAIN });
    out.put_u16_le(UTF8_NAME);
    out.put_u16_le(0);
    out.put_u16_le(time);
    out.put_u16_le(date);
    out.put_u32_le(member.crc32);
    out.put_u32_le(size32);
    out.put_u32_le(size32);
    out.put_u16_le(name.len() as u16);
    out.put_u16_le(extra.len() as u16);
    out.put_u16_le(0); // comment
    out.put_u16_le(0); // disk
    out.put_u16_le(0); // internal attributes
    out.put_u32_le(EXTERNAL_ATTRIBUTES);
    out.put_u32_le(if offset64 { u32::MAX } else { offset as u32 });
    out.put_slice(name);
    out.put_slice(&extra);
}

/// The ZIP64 end record and locator where a field needs them, then the end record.
fn end_records(out: &mut BytesMut, count: u64, central_len: u64, central_offset: u64, limits: Zip64Limits) {
    let count64 = count >= limits.count;
    let (len64, offset64) = (limits.size_needs(central_len), limits.size_needs(central_offset));
    if count64 || len64 || offset64 {
        let record_offset = central_offset + central_len;
        out.put_u32_le(ZIP64_END);
        out.put_u64_le(44); // the record's size after this field
        out.put_u16_le(VERSION_MADE_BY);
        out.put_u16_le(VERSION_ZIP64);
        out.put_u32_le(0); // this disk
        out.put_u32_le(0); // the central directory's disk
        out.put_u64_le(count);
        out.put_u64_le(count);
        out.put_u64_le(central_len);
        out.put_u64_le(central_offset);
        out.put_u32_le(ZIP64_LOCATOR);
        out.put_u32_le(0); // the ZIP64 end record's disk
        out.put_u64_le(record_offset);
        out.put_u32_le(1); // disks
    }
    let count16 = if count64 { u16::MAX } else { count as u16 };
    out.put_u32_le(END);
    out.put_u16_le(0);
    out.put_u16_le(0);
    out.put_u16_le(count16);
    out.put_u16_le(count16);
    out.put_u32_le(if len64 { u32::MAX } else { central_len as u32 });
    out.put_u32_le(if offset64 { u32::MAX } else { central_offset as u32 });
    out.put_u16_le(0); // comment
}

/// The extended timestamp field with the modification time (unix seconds, clamped to 32 bits).
fn extended_timestamp(out: &mut BytesMut, modified: i64) {
    out.put_u16_le(EXTENDED_TIMESTAMP);
    out.put_u16_le(5);
    out.put_u8(1); // modification time present
    out.put_u32_le(modified.clamp(0, i64::from(i32::MAX)) as u32);
}

/// MS-DOS time and date (2-second resolution, 1980-2107) of a unix time, in UTC.
fn dos_time(unix: i64) -> (u16, u16) {
    const FIRST: i64 = 315_532_800; // 1980-01-01T00:00:00Z
    const LAST: i64 = 4_354_819_198; // 2107-12-31T23:59:58Z
    let Ok(at) = time::OffsetDateTime::from_unix_timestamp(unix.clamp(FIRST, LAST)) else {
        return (0, 0x21); // unreachable for the clamped range; 1980-01-01
    };
    let time = (u16::from(at.hour()) << 11) | (u16::from(at.minute()) << 5) | (u16::from(at.second()) / 2);
    let date = (((at.year() - 1980) as u16) << 9) | (u16::from(u8::from(at.month())) << 5) | u16::from(at.day());
    (time, date)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(path: &str, size: u64) -> ZipMember {
        ZipMember { path: path.into(), size, crc32: 0x1234_5678, modified: 1_700_000_000 }
    }

    fn u16_at(bytes: &[u8], at: usize) -> u16 {
        u16::from_le_bytes([bytes[at], bytes[at + 1]])
    }

    fn u32_at(bytes: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
    }

    fn u64_at(bytes: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
    }

    /// The whole archive, with each member's bytes filled by `fill(index)`.
    fn materialize(layout: &ZipLayout, files: &[Vec<u8>]) -> Vec<u8> {
        let Some(whole) = ByteRange::whole(layout.len()) else { return Vec::new() };
        let mut out = Vec::new();
        for piece in layout.pieces(whole) {
            match piece {
                Piece::Bytes(bytes) => out.extend_from_slice(&bytes),
                Piece::File { index, range } => {
                    out.extend_from_slice(&files[index][range.first as usize..=range.last as usize])
                }
            }
        }
        out
    }

    #[test]
    fn offsets_and_length_add_up() {
        let members = [member("a.txt", 5), member("dir/b.bin", 0), member("c", 70_000)];
        let layout = ZipLayout::new(&members, Zip64Limits::STANDARD);
        // Local header: 30 + name + 9 (extended timestamp); central: 46 + name + 9; end: 22.
        let locals: u64 = [5, 9, 1].iter().map(|name| 30 + name + 9).sum();
        let central: u64 = [5, 9, 1].iter().map(|name| 46 + name + 9).sum();
        assert_eq!(layout.len(), locals + 70_005 + central + 22);
        assert_eq!(layout.central_directory().len() as u64, central);
        let files = vec![b"hello".to_vec(), Vec::new(), vec![7; 70_000]];
        let zip = materialize(&layout, &files);
        assert_eq!(zip.len() as u64, layout.len());
        // The end record points at the central directory, whose entries point at local headers.
        let end = zip.len() - 22;
        assert_eq!(u32_at(&zip, end), END);
        assert_eq!(u16_at(&zip, end + 10), 3);
        let (cd_len, cd_offset) = (u32_at(&zip, end + 12) as usize, u32_at(&zip, end + 16) as usize);
        assert_eq!(cd_offset + cd_len, end);
        let mut at = cd_offset;
        let mut expected_offset = 0;
        for (m, file) in members.iter().zip(&files) {
            assert_eq!(u32_at(&zip, at), CENTRAL_HEADER);
            assert_eq!(u16_at(&zip, at + 8), UTF8_NAME);
            assert_eq!(u32_at(&zip, at + 16), m.crc32);
            assert_eq!(u32_at(&zip, at + 24), m.size as u32);
            let local = u32_at(&zip, at + 42) as usize;
            assert_eq!(local, expected_offset);
            assert_eq!(u32_at(&zip, local), LOCAL_HEADER);
            let name_len = u16_at(&zip, local + 26) as usize;
            let extra_len = u16_at(&zip, local + 28) as usize;
            assert_eq!(&zip[local + 30..local + 30 + name_len], m.path.as_bytes());
            let data = local + 30 + name_len + extra_len;
            assert_eq!(&zip[data..data + file.len()], &file[..]);
            expected_offset = data + file.len();
            at += 46 + u16_at(&zip, at + 28) as usize + u16_at(&zip, at + 30) as usize;
        }
        assert_eq!(at, end);
    }

    #[test]
    fn every_range_is_the_same_bytes_as_the_whole() {
        let members = [member("a", 3), member("b", 0), member("c", 10)];
        let files = vec![b"abc".to_vec(), Vec::new(), b"0123456789".to_vec()];
        for limits in [Zip64Limits::STANDARD, Zip64Limits::from_threshold(0)] {
            let layout = ZipLayout::new(&members, limits);
            let zip = materialize(&layout, &files);
            for first in 0..zip.len() as u64 {
                for last in first..zip.len() as u64 {
                    let mut part = Vec::new();
                    for piece in layout.pieces(ByteRange { first, last }) {
                        match piece {
                            Piece::Bytes(bytes) => part.extend_from_slice(&bytes),
                            Piece::File { index, range } => {
                                assert!(range.last < files[index].len() as u64);
                                part.extend_from_slice(&files[index][range.first as usize..=range.last as usize])
                            }
                        }
                    }
                    assert_eq!(part, &zip[first as usize..=last as usize], "{first}-{last}");
                }
            }
        }
    }

    #[test]
    fn a_forced_zip64_archive_has_every_zip64_record() {
        let members = [member("a", 3), member("b", 4)];
        let layout = ZipLayout::new(&members, Zip64Limits::from_threshold(0));
        let zip = materialize(&layout, &[b"abc".to_vec(), b"defg".to_vec()]);
        let end = zip.len() - 22;
        assert_eq!(u16_at(&zip, end + 10), u16::MAX);
        assert_eq!(u32_at(&zip, end + 12), u32::MAX);
        assert_eq!(u32_at(&zip, end + 16), u32::MAX);
        let locator = end - 20;
        assert_eq!(u32_at(&zip, locator), ZIP64_LOCATOR);
        let record = u64_at(&zip, locator + 8) as usize;
        assert_eq!(u32_at(&zip, record), ZIP64_END);
        assert_eq!(u64_at(&zip, record + 32), 2);
        let (cd_len, cd_offset) = (u64_at(&zip, record + 40) as usize, u64_at(&zip, record + 48) as usize);
        assert_eq!(cd_offset + cd_len, record);
        // The first central entry: sizes in ZIP64 (the offset, 0, is under the threshold too).
        assert_eq!(u32_at(&zip, cd_offset + 24), u32::MAX);
        assert_eq!(u32_at(&zip, cd_offset + 42), u32::MAX);
        let extra = cd_offset + 46 + 1;
        assert_eq!(u16_at(&zip, extra), ZIP64_EXTRA);
        assert_eq!(u16_at(&zip, extra + 2), 24);
        assert_eq!(u64_at(&zip, extra + 4), 3);
        assert_eq!(u64_at(&zip, extra + 20), 0);
        // The second entry's local header offset is in its ZIP64 field.
        let second = cd_offset + 46 + 1 + 28 + 9;
        assert_eq!(u32_at(&zip, second), CENTRAL_HEADER);
        assert_eq!(u64_at(&zip, second + 46 + 1 + 20), (30 + 1 + 20 + 9 + 3) as u64);
    }

    #[test]
    fn the_standard_limits_use_zip64_only_where_a_field_is_too_small() {
        let big = member("big", 5 * 1024 * 1024 * 1024);
        let layout = ZipLayout::new(&[big.clone(), member("after", 1)], Zip64Limits::STANDARD);
        let dir = layout.central_directory();
        assert_eq!(u32_at(dir, 24), u32::MAX);
        assert_eq!(u32_at(dir, 42), 0); // the first offset fits
        assert_eq!(layout.len(), layout.len()); // no overflow building a 5 GiB layout
        let pieces = layout.pieces(ByteRange { first: layout.len() - 1, last: layout.len() - 1 });
        assert!(matches!(&pieces[..], [Piece::Bytes(bytes)] if bytes.len() == 1));
        let small = ZipLayout::new(&[member("a", 1)], Zip64Limits::STANDARD);
        assert_eq!(u32_at(small.central_directory(), 24), 1);
    }

    #[test]
    fn an_empty_share_is_an_empty_archive() {
        let layout = ZipLayout::new(&[], Zip64Limits::STANDARD);
        assert_eq!(layout.len(), 22);
        assert_eq!(materialize(&layout, &[]).len(), 22);
    }

    #[test]
    fn dos_times_are_utc_and_clamped() {
        // 2023-11-14T22:13:20Z
        assert_eq!(dos_time(1_700_000_000), ((22 << 11) | (13 << 5) | 10, (43 << 9) | (11 << 5) | 14));
        assert_eq!(dos_time(0), (0, (1 << 5) | 1));
    }

    #[test]
    fn duplicate_and_clashing_paths_are_made_unique() {
        let paths: Vec<String> =
            ["a.jpg", "A.JPG", "a.jpg", "dir", "dir/x", ".env", ".env", ""].iter().map(|p| p.to_string()).collect();
        assert_eq!(
            unique_paths(&paths),
            ["a.jpg", "A (2).JPG", "a (3).jpg", "dir (2)", "dir/x", ".env", ".env (2)", "file"]
        );
    }

    /// bsdtar merged a composed and a decomposed `café.txt` into one file; Windows merges fullwidth
    /// and case variants.
    #[test]
    fn names_equal_after_normalization_and_case_folding_are_made_unique() {
        let paths: Vec<String> =
            ["caf\u{E9}.txt", "cafe\u{301}.txt", "CAF\u{C9}.TXT", "\u{FF21}/x", "a", "Stra\u{DF}e", "STRASSE"]
                .iter()
                .map(|p| p.to_string())
                .collect();
        assert_eq!(
            unique_paths(&paths),
            [
                "caf\u{E9}.txt",
                "cafe\u{301} (2).txt",
                "CAF\u{C9} (3).TXT",
                "\u{FF21}/x",
                "a (2)",
                "Stra\u{DF}e",
                "STRASSE (2)"
            ]
        );
    }

    /// 10,000 files of one name made one HEAD of a share's zip take 58 s: every duplicate tried
    /// every number from 2 up. Counted in candidates, not timed: linear is a few per path.
    #[test]
    fn ten_thousand_same_named_files_are_renamed_in_linear_time() {
        let same = |n: usize| vec!["photo.jpg".to_owned(); n];
        let (unique, tried) = unique_paths_counting(&same(10_000));
        assert_eq!(unique.iter().collect::<HashSet<_>>().len(), 10_000);
        assert_eq!(unique[9_999], "photo (10000).jpg");
        assert!(tried <= 2 * 10_000, "{tried} candidates for 10,000 names");
        // The same for names that clash with numbered ones already taken.
        let mut mixed: Vec<String> = (2..5_000).map(|n| format!("photo ({n}).jpg")).collect();
        mixed.extend(same(5_000));
        let (unique, tried) = unique_paths_counting(&mixed);
        assert_eq!(unique.iter().map(|p| comparable(p)).collect::<HashSet<_>>().len(), mixed.len());
        assert!(tried <= 3 * mixed.len(), "{tried} candidates for {} names", mixed.len());
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Paths of a few spellings that clash: case, composed and decomposed accents, fullwidth
        /// letters, numbered names, folders.
        fn clashing_paths() -> impl Strategy<Value = Vec<String>> {
            let part = prop::sample::select(vec![
                "a",
                "A",
                "\u{FF21}",
                "caf\u{E9}",
                "cafe\u{301}",
                "CAF\u{C9}",
                "a (2)",
                "d",
                "D",
                "x.txt",
                "X.TXT",
            ]);
            let path = prop::collection::vec(part, 0..3).prop_map(|parts| parts.join("/"));
            prop::collection::vec(path, 0..40)
        }

        proptest! {
            #![proptest_config(crate::properties::config())]

            /// No two paths, nor a path and a folder of another, are one name to an extractor
            /// that compares as `comparable` does; every path is kept or numbered, in order.
            #[test]
            fn unique_paths_never_clash_as_extractors_compare(paths in clashing_paths()) {
                let unique = unique_paths(&paths);
                prop_assert_eq!(unique.len(), paths.len());
                let keys: HashSet<String> = unique.iter().map(|path| comparable(path)).collect();
                prop_assert_eq!(keys.len(), unique.len(), "{:?}", unique);
                for path in &unique {
                    let parts: Vec<&str> = path.split('/').collect();
                    for n in 1..parts.len() {
                        let folder = comparable(&parts[..n].join("/"));
                        prop_assert!(unique.iter().all(|other| comparable(other) != folder), "{:?}", unique);
                    }
                }
                let (_, tried) = unique_paths_counting(&paths);
                prop_assert!(tried <= 3 * paths.len() + 1, "{} candidates for {:?}", tried, paths);
            }
        }
    }
}
