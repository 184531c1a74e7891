//! Reading small input files (tables, histograms, C headers, JSON) with a
//! size limit, so a wrong path such as `/dev/zero` or a multi-gigabyte file
//! gives one clear error instead of filling memory. Works on regular files,
//! pipes and `/dev/stdin` alike: it reads at most one byte past the limit.
//!
//! Page files (snapshots, `.pages`) are streamed by [`crate::corpus`], not
//! read whole here.

#![forbid(unsafe_code)]

use crate::error::{Error, ErrorKind, Result};
use std::io::Read;
use std::path::Path;

/// The limit for table, histogram and report files (JSON or binary).
pub const SMALL_FILE_LIMIT: u64 = 16 << 20;

/// Reads all of `path`, failing if it holds more than `limit` bytes; `what`
/// names the file in messages ("table", "histogram", ...).
pub fn read_limited(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>> {
    let file = std::fs::File::open(path)
        .map_err(|e| Error::io(path, &format!("cannot open {what}"), e))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, &format!("cannot read {what}"), e))?;
    if bytes.len() as u64 > limit {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{what} {}: larger than {} bytes; not a {what} file",
                path.display(),
                limit
            ),
        ));
    }
    Ok(bytes)
}

/// [`read_limited`] as UTF-8 text.
pub fn read_text_limited(path: &Path, limit: u64, what: &str) -> Result<String> {
    String::from_utf8(read_limited(path, limit, what)?).map_err(|e| {
        Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{what} {}: not UTF-8 text (invalid byte at offset {})",
                path.display(),
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_device_is_refused_after_the_limit() {
        let e = read_limited(Path::new("/dev/zero"), 1 << 16, "table").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert!(e.to_string().contains("larger than 65536 bytes"), "{e}");
    }

    #[test]
    fn files_up_to_the_limit_are_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.json");
        std::fs::write(&p, b"{}").unwrap();
        assert_eq!(read_limited(&p, 2, "table").unwrap(), b"{}");
        assert_eq!(read_text_limited(&p, 2, "table").unwrap(), "{}");
        assert!(read_limited(&p, 1, "table").is_err());
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert!(read_text_limited(&p, 2, "table").is_err());
        let e = read_limited(&dir.path().join("missing"), 2, "table").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
    }
}
