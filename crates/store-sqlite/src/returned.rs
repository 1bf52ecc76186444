//! Reading what a write's `RETURNING` gave, without losing the write's own error.
//!
//! A write with `RETURNING` is read with `fetch_all`, never `fetch_one` or `fetch_optional`: those
//! stop at the first row, and sqlx then resets the statement and drops the reset's error. Outside
//! an explicit transaction that reset is where SQLite commits the write, so a COMMIT that failed
//! (SQLITE_FULL on a full disk) was lost: the upload's 201 went out and its row stayed
//! 'uploading' (tests/api/full_disk.rs, after_sqlite_itself_ran_out_of_disk...). `fetch_all` steps
//! the statement to its end, where the commit's error is the statement's error. The test below
//! keeps every `RETURNING` of this store on that path; the shared methods (blobdrop-store-core's
//! `methods`) read theirs with `rows::only_row` and `rows::at_most_one_row`.

#[cfg(test)]
mod tests {
    /// Every statement with `RETURNING` in this store's sources is read to its end.
    #[test]
    fn every_returning_write_is_read_to_its_end() {
        // The shared methods' bodies (blobdrop-store-core's `methods`) read what this store's SQL returns.
        let crate_folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let folders = [crate_folder.join("src"), crate_folder.join("../store-core/src/methods")];
        for entry in folders.iter().flat_map(|folder| std::fs::read_dir(folder).unwrap()) {
            let path = entry.unwrap().path();
            let source = std::fs::read_to_string(&path).unwrap();
            for (at, _) in source.match_indices("RETURNING ") {
                let after = &source[at..];
                let fetch = after.find(".fetch_").map(|start| &after[start..start + 12]);
                if let Some(fetch) = fetch {
                    assert!(
                        !fetch.starts_with(".fetch_one") && !fetch.starts_with(".fetch_optio"),
                        "{}: a RETURNING read with {fetch}: use fetch_all (see crates/store-sqlite/src/returned.rs)",
                        path.display()
                    );
                }
            }
        }
    }
}
