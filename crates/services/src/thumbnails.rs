//! Thumbnails of picture files: made once, on the first request for one, from the file's bytes,
//! and kept in the database beside the file (which deletes them with it). Never counted as a
//! download; never made for a file with a gate of its own (`domain::has_thumbnail`).
//!
//! Memory stays bounded: one thumbnail is made at a time, from a file of at most
//! `MAX_THUMBNAIL_SOURCE`, and a picture whose declared size would decode to more than
//! `MAX_DECODED_BYTES` (a decompression bomb: a few KiB that claim 100,000 x 100,000 pixels) is
//! refused from its header, before anything is decoded. What comes out is always a new picture
//! encoded here (JPEG, or PNG where the picture is transparent), never the uploaded bytes.

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits};
use tokio::sync::Semaphore;

use crate::domain::{FileRecord, THUMBNAIL_SIDE, Thumbnail, has_thumbnail};
use crate::store::StoreError;
use crate::{Context, files};

/// The most pixels a picture may declare: 50 megapixels (an 8,660 x 5,773 photo).
const MAX_PIXELS: u64 = 50_000_000;
/// The most a decoded picture may take: `MAX_PIXELS` at 4 bytes (RGBA) a pixel.
const MAX_DECODED_BYTES: u64 = MAX_PIXELS * 4;
/// The longest side a picture may declare, whatever its area (a 1 x 1,000,000 strip).
const MAX_SIDE: u32 = 20_000;
/// JPEG quality of a thumbnail: small, and no visible blocks at 320 px.
const JPEG_QUALITY: u8 = 80;

/// One thumbnail is made at a time in the process, so a page of a hundred new pictures costs one
/// decoded picture's memory at a time, not a hundred.
static MAKING: Semaphore = Semaphore::const_new(1);

/// `file`'s thumbnail (its type and bytes), made now if it never was; `None` when the file gets
/// none or none can be made of it.
pub async fn thumbnail(ctx: &Context, file: &FileRecord) -> Result<Option<(String, Vec<u8>)>, StoreError> {
    if !has_thumbnail(file) {
        return Ok(None);
    }
    if let Some(kept) = ctx.store.files().thumbnail(&file.id).await? {
        return Ok(kept.into_made());
    }
    // `MAKING` is never closed, so the turn always comes.
    let _turn = MAKING.acquire().await.ok();
    // Made while this request waited its turn (the grid asks for many at once)?
    if let Some(kept) = ctx.store.files().thumbnail(&file.id).await? {
        return Ok(kept.into_made());
    }
    let bytes = files::first_bytes(ctx, file, file.file_size as usize).await?;
    // A decoder that panics on a crafted picture makes no thumbnail; it does not take the server.
    let made = tokio::task::spawn_blocking(move || make(&bytes)).await.unwrap_or(Thumbnail::Unmakeable);
    ctx.store.files().save_thumbnail(&file.id, &made).await?;
    Ok(made.into_made())
}

/// The thumbnail of a picture's bytes: at most `THUMBNAIL_SIDE` on its longer side, the right way
/// up (EXIF orientation applied); `Unmakeable` for bytes that are not a picture this decodes, or
/// one over the limits above.
pub fn make(bytes: &[u8]) -> Thumbnail {
    decode(bytes).and_then(|picture| encode(&picture)).unwrap_or(Thumbnail::Unmakeable)
}

/// The picture in `bytes`, refused from its header when it declares more than the limits allow.
fn decode(bytes: &[u8]) -> Option<DynamicImage> {
    let mut reader = ImageReader::new(Cursor::new(bytes)).with_guessed_format().ok()?;
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_DECODED_BYTES);
    reader.limits(limits);
    let mut decoder = reader.into_decoder().ok()?;
    let (width, height) = decoder.dimensions();
    if u64::from(width) * u64::from(height) > MAX_PIXELS || decoder.total_bytes() > MAX_DECODED_BYTES {
        return None;
    }
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let mut picture = DynamicImage::from_decoder(decoder).ok()?;
    picture.apply_orientation(orientation);
    Some(picture)
}

/// `picture` made small and encoded: PNG if it has transparency (JPEG has none), else JPEG.
fn encode(picture: &DynamicImage) -> Option<Thumbnail> {
    // `thumbnail` would make a small picture larger; one that fits is kept at its size.
    let fits = picture.width() <= THUMBNAIL_SIDE && picture.height() <= THUMBNAIL_SIDE;
    let small = if fits { picture.clone() } else { picture.thumbnail(THUMBNAIL_SIDE, THUMBNAIL_SIDE) };
    let mut bytes = Vec::new();
    let content_type = match small.color().has_alpha() {
        true => {
            small.to_rgba8().write_to(&mut Cursor::new(&mut bytes), ImageFormat::Png).ok()?;
            "image/png"
        }
        false => {
            JpegEncoder::new_with_quality(&mut bytes, JPEG_QUALITY).encode_image(&small.to_rgb8()).ok()?;
            "image/jpeg"
        }
    };
    Some(Thumbnail::Made { content_type: content_type.to_owned(), bytes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Rgb, RgbImage, Rgba, RgbaImage};

    fn png_of(width: u32, height: u32) -> Vec<u8> {
        let picture = RgbImage::from_fn(width, height, |x, y| Rgb([(x % 256) as u8, (y % 256) as u8, 128]));
        let mut bytes = Vec::new();
        picture.write_to(&mut Cursor::new(&mut bytes), ImageFormat::Png).unwrap();
        bytes
    }

    fn decoded(thumbnail: &Thumbnail) -> DynamicImage {
        let Thumbnail::Made { bytes, .. } = thumbnail else { panic!("no thumbnail made") };
        image::load_from_memory(bytes).unwrap()
    }

    #[test]
    fn a_picture_becomes_a_jpeg_at_most_320_pixels_on_its_longer_side_in_proportion() {
        let thumbnail = make(&png_of(1200, 600));
        assert!(matches!(&thumbnail, Thumbnail::Made { content_type, .. } if content_type == "image/jpeg"));
        let small = decoded(&thumbnail);
        assert_eq!((small.width(), small.height()), (320, 160));
    }

    #[test]
    fn a_small_picture_is_not_made_larger() {
        let small = decoded(&make(&png_of(100, 40)));
        assert_eq!((small.width(), small.height()), (100, 40));
    }

    #[test]
    fn a_transparent_picture_stays_transparent_as_a_png() {
        let picture = RgbaImage::from_pixel(640, 640, Rgba([10, 20, 30, 0]));
        let mut bytes = Vec::new();
        picture.write_to(&mut Cursor::new(&mut bytes), ImageFormat::Png).unwrap();
        let thumbnail = make(&bytes);
        assert!(matches!(&thumbnail, Thumbnail::Made { content_type, .. } if content_type == "image/png"));
        assert_eq!(decoded(&thumbnail).to_rgba8().get_pixel(0, 0)[3], 0);
    }

    #[test]
    fn a_gif_gives_its_first_frame() {
        let mut bytes = Vec::new();
        let frame = RgbaImage::from_pixel(400, 200, Rgba([200, 0, 0, 255]));
        image::codecs::gif::GifEncoder::new(&mut bytes).encode_frame(image::Frame::new(frame)).unwrap();
        let small = decoded(&make(&bytes));
        assert_eq!((small.width(), small.height()), (320, 160));
    }

    #[test]
    fn bytes_that_are_not_a_picture_make_none() {
        assert_eq!(make(b"just some text, called photo.jpg"), Thumbnail::Unmakeable);
        let mut cut = png_of(300, 300);
        cut.truncate(cut.len() / 2);
        assert_eq!(make(&cut), Thumbnail::Unmakeable);
    }

    #[test]
    fn an_exif_orientation_turns_the_thumbnail_the_right_way_up() {
        let picture = DynamicImage::ImageRgb8(RgbImage::from_pixel(400, 200, Rgb([0, 0, 255])));
        let mut jpeg = Vec::new();
        let mut encoder = JpegEncoder::new(&mut jpeg);
        // EXIF with Orientation = 6 (turned 90 degrees clockwise), little-endian TIFF.
        let exif: Vec<u8> = [
            b"II*\0".as_slice(),
            &8u32.to_le_bytes(),
            &1u16.to_le_bytes(),
            &0x0112u16.to_le_bytes(),
            &3u16.to_le_bytes(),
            &1u32.to_le_bytes(),
            &6u32.to_le_bytes(),
            &0u32.to_le_bytes(),
        ]
        .concat();
        image::ImageEncoder::set_exif_metadata(&mut encoder, exif).unwrap();
        encoder.encode_image(&picture.to_rgb8()).unwrap();
        let small = decoded(&make(&jpeg));
        assert_eq!((small.width(), small.height()), (160, 320));
    }
}
