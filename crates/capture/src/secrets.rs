//! Finds secret-looking strings in captured memory: private key blocks,
//! `Authorization: Bearer` headers, well-known token formats (GitHub, Slack,
//! GitLab, AWS access key ids) and `NAME=value` variables whose name ends in
//! KEY, TOKEN, SECRET, PASSWORD, PASSWD or CREDENTIALS.
//!
//! Snapshots hold raw process memory, so they can hold whatever secrets the
//! process held. This scanner is a safety net for reviewing a corpus before
//! sharing it (`cannery corpus scan-secrets`) and, with `--redact-secrets`, a
//! capture-time filter that drops matching pages. It is a heuristic: it can
//! miss secrets in unknown formats and flag harmless text. Matches report an
//! offset and a short preview, never the whole secret.

#![forbid(unsafe_code)]

use serde::Serialize;

/// What kind of secret-looking string was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum SecretKind {
    /// A `-----BEGIN ... PRIVATE KEY` block.
    PrivateKey,
    /// An `Authorization: Bearer` header.
    BearerToken,
    /// A token in a well-known vendor format.
    TokenFormat,
    /// A `NAME=value` assignment with a secret-sounding name.
    SecretVariable,
}

impl SecretKind {
    /// Its name in text and JSON (`private-key`, `secret-variable`, ...).
    pub fn name(self) -> &'static str {
        match self {
            SecretKind::PrivateKey => "private-key",
            SecretKind::BearerToken => "bearer-token",
            SecretKind::TokenFormat => "token-format",
            SecretKind::SecretVariable => "secret-variable",
        }
    }
}

/// One match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Byte offset of the match in the scanned buffer.
    pub offset: usize,
    /// The kind of match.
    pub kind: SecretKind,
    /// The first few characters, the rest elided.
    pub preview: String,
}

fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/' | b'+' | b'~')
}

fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn starts_with_ci(hay: &[u8], needle: &[u8]) -> bool {
    hay.len() >= needle.len() && hay[..needle.len()].eq_ignore_ascii_case(needle)
}

fn preview(buf: &[u8], at: usize) -> String {
    let end = (at + 12).min(buf.len());
    let shown: String = buf[at..end]
        .iter()
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '.'
            }
        })
        .collect();
    format!("{shown}...")
}

/// The length of the run of bytes matching `pred` from `from`, counted up
/// to `max` at most: every caller compares it with a bound of at most `max`,
/// and an uncapped count would make a scan of one long run (1 MiB of
/// `AKIA…`) quadratic.
fn run_len(buf: &[u8], from: usize, max: usize, pred: impl Fn(u8) -> bool) -> usize {
    buf.get(from..)
        .map_or(0, |s| s.iter().take(max).take_while(|&&b| pred(b)).count())
}

/// The longest variable name looked at before an `=`.
const MAX_NAME: usize = 256;

const TOKEN_PREFIXES: &[(&[u8], usize, bool)] = &[
    // (prefix, minimum length of what follows, followers may include '_' and '-')
    (b"ghp_", 30, false),
    (b"gho_", 30, false),
    (b"ghs_", 30, false),
    (b"ghu_", 30, false),
    (b"github_pat_", 40, true),
    (b"glpat-", 20, true),
    (b"xoxb-", 20, true),
    (b"xoxp-", 20, true),
    (b"sk_live_", 24, false),
];

const SECRET_NAME_ENDINGS: &[&[u8]] = &[
    b"KEY",
    b"TOKEN",
    b"SECRET",
    b"PASSWORD",
    b"PASSWD",
    b"CREDENTIALS",
];

const LOOSE_ENDINGS: &[&[u8]] = &[b"TOKEN", b"SECRET", b"PASSWORD", b"PASSWD"];

/// Scan a buffer; returns every match, in offset order.
pub fn scan_bytes(buf: &[u8]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < buf.len() {
        let rest = &buf[i..];
        let b = rest[0];
        let mut found = None;
        match b {
            b'B' | b'b' if starts_with_ci(rest, b"BEGIN ") => {
                let window = &rest[6..rest.len().min(6 + 24)];
                if window
                    .windows(11)
                    .any(|w| w.eq_ignore_ascii_case(b"PRIVATE KEY"))
                {
                    found = Some(SecretKind::PrivateKey);
                }
            }
            b'A' | b'a' if starts_with_ci(rest, b"authorization: bearer") => {
                if rest.starts_with(b"Authorization: Bearer")
                    || run_len(rest, 22, 8, is_token_char) >= 8
                {
                    found = Some(SecretKind::BearerToken);
                }
            }
            b'A' if rest.starts_with(b"AKIA") => {
                if run_len(rest, 4, 17, |c| {
                    c.is_ascii_uppercase() || c.is_ascii_digit()
                }) == 16
                    && (i == 0 || !is_name_char(buf[i - 1]))
                {
                    found = Some(SecretKind::TokenFormat);
                }
            }
            b'=' => {
                // Walk back over the variable name.
                let mut s = i;
                while s > 0 && i - s < MAX_NAME && is_name_char(buf[s - 1]) {
                    s -= 1;
                }
                let name = &buf[s..i];
                let upper: Vec<u8> = name.to_ascii_uppercase();
                let value = run_len(buf, i + 1, 6, is_token_char);
                let strong = [
                    b"APIKEY" as &[u8],
                    b"API_KEY",
                    b"SECRETKEY",
                    b"SECRET_KEY",
                    b"ACCESSKEY",
                    b"ACCESS_KEY",
                ]
                .iter()
                .any(|e| upper.ends_with(e))
                    && name.iter().all(|c| !c.is_ascii_lowercase());
                let starts_alnum = buf.get(i + 1).is_some_and(|c| c.is_ascii_alphanumeric());
                // Upper-case names (environment style): any ending.
                let env_style = name.len() >= 3
                    && !name.iter().any(|c| c.is_ascii_lowercase())
                    && SECRET_NAME_ENDINGS.iter().any(|e| upper.ends_with(e))
                    && value >= 1
                    && starts_alnum;
                // Other names (query strings, config files): not "key", which
                // is everywhere in code, and a value of 6 characters or more.
                let other = name.len() >= 5
                    && LOOSE_ENDINGS.iter().any(|e| upper.ends_with(e))
                    && value >= 6
                    && starts_alnum;
                let weak = env_style || other;
                if strong || weak {
                    out.push(Finding {
                        offset: s,
                        kind: SecretKind::SecretVariable,
                        preview: preview(buf, s),
                    });
                }
            }
            _ => {
                for (prefix, min, dashes) in TOKEN_PREFIXES {
                    if rest.starts_with(prefix) {
                        let n = run_len(rest, prefix.len(), *min, |c| {
                            c.is_ascii_alphanumeric() || (*dashes && (c == b'_' || c == b'-'))
                        });
                        if n >= *min {
                            found = Some(SecretKind::TokenFormat);
                            break;
                        }
                    }
                }
            }
        }
        if let Some(kind) = found {
            out.push(Finding {
                offset: i,
                kind,
                preview: preview(buf, i),
            });
        }
        i += 1;
    }
    out
}

/// A finding located in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Located {
    /// The file.
    pub path: std::path::PathBuf,
    /// For snapshot and `.pages` files, the index of the page (in stored
    /// order); `None` for other files.
    pub page: Option<u64>,
    /// Byte offset within the page, or within the file for other files.
    pub offset: u64,
    /// What was found.
    pub finding: Finding,
}

/// What a scan looked at and found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ScanReport {
    /// The findings, in path order.
    pub findings: Vec<Located>,
    /// Snapshot and `.pages` files scanned.
    pub corpus_files: u64,
    /// Pages of those files scanned.
    pub pages: u64,
    /// Other files scanned as raw bytes.
    pub other_files: u64,
}

impl ScanReport {
    /// The findings as text, one line each (at most `max`, then a count of
    /// the rest); kinds named as in JSON.
    pub fn render_text(&self, max: usize) -> String {
        let mut out = String::new();
        for (i, f) in self.findings.iter().enumerate() {
            if i == max {
                out += &format!("... and {} more\n", self.findings.len() - max);
                break;
            }
            let place = match f.page {
                Some(p) => format!("page {p} offset {}", f.offset),
                None => format!("byte {}", f.offset),
            };
            out += &format!(
                "{}: {place}: {} {}\n",
                f.path.display(),
                f.finding.kind.name(),
                f.finding.preview
            );
        }
        out
    }
}

/// Scan a file or, recursively, a directory (skipping hidden and partial
/// entries such as `.git`, by the rule of every corpus reader,
/// [`crate::corpus::is_skipped_name`]). Snapshots and `.pages` files are scanned page by page after
/// decoding; other files as raw bytes. The report counts what was scanned,
/// so a caller can tell "clean" from "there was no corpus here".
pub fn scan_path(path: &std::path::Path) -> crate::Result<ScanReport> {
    let mut report = ScanReport::default();
    scan_into(path, &mut report)?;
    Ok(report)
}

fn scan_into(path: &std::path::Path, report: &mut ScanReport) -> crate::Result<()> {
    use crate::error::Error;
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, "cannot scan", e))?;
    if meta.is_dir() {
        for p in crate::corpus::read_dir_sorted(path)? {
            match scan_into(&p, report) {
                Err(e)
                    if e.kind() == crate::ErrorKind::PermissionDenied
                        && crate::corpus::skip_unreadable(&p) => {}
                r => r?,
            }
        }
        return Ok(());
    }
    if !meta.is_file() {
        // A device, FIFO or socket: /dev/zero would never end.
        return Err(Error::new(
            crate::ErrorKind::InvalidInput,
            format!(
                "cannot scan {}: not a regular file or directory",
                path.display()
            ),
        ));
    }
    let out = &mut report.findings;
    if crate::snapshot::is_snapshot(path) || crate::corpus::is_raw_pages(path) {
        report.corpus_files += 1;
        let mut reader = crate::corpus::open_pages(path)?;
        if !reader.header().raw {
            scan_metadata(path, out)?;
        }
        let mut process: Option<String> = None;
        let mut next_index = 0u64;
        while let Some(page) = reader.next() {
            let page = page?;
            let i = next_index;
            next_index += 1;
            report.pages += 1;
            // Each process name the records give, once in a row.
            if let Some(p) = reader.process() {
                if process.as_deref() != Some(p.comm.as_str()) {
                    for f in scan_bytes(p.comm.as_bytes()) {
                        out.push(Located {
                            path: path.to_path_buf(),
                            page: Some(i),
                            offset: 0,
                            finding: f,
                        });
                    }
                    process = Some(p.comm.clone());
                }
            }
            for f in scan_bytes(&page.data) {
                out.push(Located {
                    path: path.to_path_buf(),
                    page: Some(i),
                    offset: f.offset as u64,
                    finding: f,
                });
            }
        }
        return Ok(());
    }
    // Other files: in 1 MiB chunks overlapping by 256 bytes; a match is
    // reported by the chunk it starts in, before the overlap.
    report.other_files += 1;
    use std::io::Read;
    const CHUNK: usize = 1 << 20;
    const OVERLAP: usize = 256;
    let mut file = cannery_files::input::open_input(path, "cannot open")?;
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK + OVERLAP);
    let mut base = 0u64;
    loop {
        let keep = buf.len();
        buf.resize(keep + CHUNK, 0);
        let mut got = 0;
        while got < CHUNK {
            let n = file
                .read(&mut buf[keep + got..])
                .map_err(|e| Error::io(path, "cannot read", e))?;
            if n == 0 {
                break;
            }
            got += n;
        }
        buf.truncate(keep + got);
        let last = got < CHUNK;
        let limit = if last {
            buf.len()
        } else {
            buf.len().saturating_sub(OVERLAP)
        };
        for f in scan_bytes(&buf) {
            if f.offset < limit {
                out.push(Located {
                    path: path.to_path_buf(),
                    page: None,
                    offset: base + f.offset as u64,
                    finding: f,
                });
            }
        }
        if last {
            return Ok(());
        }
        buf.drain(..limit);
        base += limit as u64;
    }
}

/// Scans a snapshot's metadata (label, command, and every other string it
/// records, such as a command line or environment a writer put there): each
/// string value, prefixed by its key as `KEY=value` so a recorded
/// environment variable is judged by its name. Findings carry no page; their
/// offset is that of the key (else of the metadata block) in the file.
fn scan_metadata(path: &std::path::Path, out: &mut Vec<Located>) -> crate::Result<()> {
    use crate::error::Error;
    use crate::snapshot::{FIXED_LEN, MAX_META_LEN};
    use std::io::Read;
    let mut file = cannery_files::input::open_input(path, "cannot open")?;
    let mut fixed = [0u8; FIXED_LEN];
    file.read_exact(&mut fixed)
        .map_err(|e| Error::io(path, "cannot read", e))?;
    let len = u32::from_le_bytes([fixed[16], fixed[17], fixed[18], fixed[19]]).min(MAX_META_LEN);
    let mut meta = Vec::new();
    file.take(u64::from(len))
        .read_to_end(&mut meta)
        .map_err(|e| Error::io(path, "cannot read", e))?;
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&meta) else {
        return Ok(()); // The reader already refused a file it cannot parse.
    };
    let mut strings = Vec::new();
    metadata_strings("", &value, &mut strings);
    for (key, text) in strings {
        let at = find_bytes(&meta, format!("\"{key}\"").as_bytes()).unwrap_or(0);
        let line = if key.is_empty() {
            text
        } else {
            format!("{key}={text}")
        };
        for f in scan_bytes(line.as_bytes()) {
            out.push(Located {
                path: path.to_path_buf(),
                page: None,
                offset: (FIXED_LEN + at) as u64,
                finding: f,
            });
        }
    }
    Ok(())
}

/// Every string in `v` with the key it is stored under ("" in an array).
fn metadata_strings(key: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::String(s) => out.push((key.to_string(), s.clone())),
        serde_json::Value::Array(a) => a.iter().for_each(|x| metadata_strings("", x, out)),
        serde_json::Value::Object(o) => o.iter().for_each(|(k, x)| metadata_strings(k, x, out)),
        _ => {}
    }
}

/// Where `needle` first occurs in `hay`.
fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &[u8]) -> Vec<SecretKind> {
        scan_bytes(s).into_iter().map(|f| f.kind).collect()
    }

    #[test]
    fn finds_planted_secrets() {
        use SecretKind::*;
        assert_eq!(
            kinds(b"xx-----BEGIN RSA PRIVATE KEY-----\nMII"),
            vec![PrivateKey]
        );
        assert_eq!(
            kinds(b"-----BEGIN OPENSSH PRIVATE KEY-----"),
            vec![PrivateKey]
        );
        assert_eq!(kinds(b"\0Authorization: Bearer abc.def"), vec![BearerToken]);
        assert_eq!(
            kinds(b"authorization: bearer eyJhbGciOiJI"),
            vec![BearerToken]
        );
        assert_eq!(kinds(b"\0GITHUB_TOKEN=abc123\0"), vec![SecretVariable]);
        assert_eq!(kinds(b"AWS_SECRET_ACCESS_KEY=wJalr"), vec![SecretVariable]);
        assert_eq!(kinds(b"API_KEY="), vec![SecretVariable]);
        assert_eq!(kinds(b"DB_PASSWORD=hunter2"), vec![SecretVariable]);
        assert_eq!(kinds(b"?user=x&password=hunter2"), vec![SecretVariable]);
        assert_eq!(kinds(b"auth_token=abcdef12"), vec![SecretVariable]);
        assert_eq!(kinds(b" AKIAIOSFODNN7EXAMPLE "), vec![TokenFormat]);
        let gh = format!("token ghp_{}", "a1B2".repeat(9));
        assert_eq!(kinds(gh.as_bytes()), vec![TokenFormat]);
        let f = &scan_bytes(b"....DB_PASSWORD=hunter2")[0];
        assert_eq!(f.offset, 4);
        assert!(!f.preview.contains("hunter2"));
    }

    #[test]
    fn clean_data_passes() {
        let text = b"PATH=/usr/bin:/bin\0HOME=/root\0LANG=C.UTF-8\0KEY= \0TOKEN=\0x = a == b;\
            sorted(d, key=lambda k: k) token=tok password=pw\
            the key is in the token bucket; BEGIN TRANSACTION; Authorization header; AKIA short";
        assert_eq!(kinds(text), vec![]);
        let mut rng = crate::sample::SplitMix64::new(1);
        let noise: Vec<u8> = (0..1 << 16).map(|_| rng.next_u64() as u8).collect();
        assert_eq!(kinds(&noise), vec![]);
        assert_eq!(kinds(&[0u8; 4096]), vec![]);
    }

    #[test]
    fn snapshot_metadata_and_process_names_are_scanned() {
        use crate::snapshot::writer::SnapshotWriter;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.cansnap");
        let meta = crate::Metadata {
            label: "GITHUB_TOKEN=abc123".into(),
            command: "server".into(),
            ..Default::default()
        };
        let existing = cannery_files::output::Existing::Keep;
        let mut w = SnapshotWriter::create(&p, meta, 3, existing).unwrap();
        w.begin_process(0, 42, "API_KEY=pw").unwrap();
        w.write_page(crate::RegionKind::Anon, &[7u8; crate::PAGE_SIZE])
            .unwrap();
        w.set_counts(crate::PageCounts {
            scanned: 1,
            stored: 1,
            ..Default::default()
        });
        w.finish().unwrap();
        let r = scan_path(&p).unwrap();
        assert_eq!(r.pages, 1);
        let found: Vec<_> = r
            .findings
            .iter()
            .map(|f| (f.page, f.finding.kind))
            .collect();
        assert_eq!(
            found,
            [
                (None, SecretKind::SecretVariable),
                (Some(0), SecretKind::SecretVariable)
            ],
            "{:?}",
            r.findings
        );
        // The label's finding points into the metadata block.
        let at = r.findings[0].offset as usize;
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(&bytes[at..at + 7], b"\"label\"");
    }
}
