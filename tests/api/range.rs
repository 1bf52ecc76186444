use reqwest::StatusCode;

use crate::helpers::{spawn_app, test_bytes};

async fn range(app: &crate::helpers::TestApp, url: &str, spec: &str) -> (StatusCode, Option<String>, Vec<u8>) {
    let response = app.client.get(url).header("Range", spec).send().await.unwrap();
    let status = response.status();
    let content_range = response.headers().get("content-range").map(|v| v.to_str().unwrap().to_owned());
    let length: Option<usize> = response.headers().get("content-length").map(|v| v.to_str().unwrap().parse().unwrap());
    let body = response.bytes().await.unwrap().to_vec();
    if let Some(length) = length {
        assert_eq!(length, body.len(), "{spec}");
    }
    (status, content_range, body)
}

#[tokio::test]
async fn ranges_return_exactly_the_requested_bytes() {
    let app = spawn_app().await;
    let size = 100_000;
    let bytes = test_bytes(size);
    let url = app.upload("ranges.bin", bytes.clone()).await;
    let cases: [(&str, usize, usize); 6] = [
        ("bytes=0-0", 0, 0),                       // first byte
        ("bytes=32000-33000", 32_000, 33_000),     // across the first chunk boundary
        ("bytes=32768-65535", 32_768, 65_535),     // exactly one chunk
        ("bytes=-500", size - 500, size - 1),      // suffix
        ("bytes=99000-", 99_000, size - 1),        // open-ended
        ("bytes=99999-99999", size - 1, size - 1), // last byte
    ];
    for (spec, first, last) in cases {
        let (status, content_range, body) = range(&app, &url, spec).await;
        assert_eq!(status, StatusCode::PARTIAL_CONTENT, "{spec}");
        assert_eq!(content_range.as_deref(), Some(format!("bytes {first}-{last}/{size}").as_str()), "{spec}");
        assert_eq!(body, &bytes[first..=last], "{spec}");
    }
}

#[tokio::test]
async fn a_range_across_many_chunks_and_read_batches_returns_exactly_its_bytes() {
    let app = spawn_app().await;
    let size = 2 * 1024 * 1024 + 12_345; // several read batches, a short last chunk
    let bytes = test_bytes(size);
    let url = app.upload("long.bin", bytes.clone()).await;
    for (first, last) in [(100_000, 2_000_000), (1_048_575, 1_048_576), (5, size - 1), (0, size - 2)] {
        let (status, _, body) = range(&app, &url, &format!("bytes={first}-{last}")).await;
        assert_eq!(status, StatusCode::PARTIAL_CONTENT);
        assert!(body == bytes[first..=last], "bytes {first}-{last} differ");
    }
    let whole = app.client.get(&url).send().await.unwrap().bytes().await.unwrap();
    assert!(whole == bytes, "the whole file differs");
}

#[tokio::test]
async fn an_unsatisfiable_range_is_416_with_the_size() {
    let app = spawn_app().await;
    let url = app.upload("short.bin", test_bytes(1000)).await;
    let (status, content_range, _) = range(&app, &url, "bytes=1000-").await;
    assert_eq!(status, StatusCode::RANGE_NOT_SATISFIABLE);
    assert_eq!(content_range.as_deref(), Some("bytes */1000"));
    let empty = app.upload("empty.bin", Vec::new()).await;
    let (status, content_range, _) = range(&app, &empty, "bytes=0-").await;
    assert_eq!(status, StatusCode::RANGE_NOT_SATISFIABLE);
    assert_eq!(content_range.as_deref(), Some("bytes */0"));
}

#[tokio::test]
async fn several_ranges_or_nonsense_get_the_whole_file() {
    let app = spawn_app().await;
    let url = app.upload("whole.bin", test_bytes(1000)).await;
    for spec in ["bytes=0-1,5-6", "bytes=oops", "lines=1-2"] {
        let (status, _, body) = range(&app, &url, spec).await;
        assert_eq!(status, StatusCode::OK, "{spec}");
        assert_eq!(body.len(), 1000, "{spec}");
    }
}
