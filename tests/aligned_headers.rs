//! Byte-aligned kernel headers on real tables and real pages: for the
//! built-in kernel-2024 table and every table `cannery train` writes for
//! the shipped corpus, the header is a whole number of bytes, `export
//! kernel` says so (0 bits to ignore), and the header bytes followed by a
//! page's canned body bytes are raw deflate that zlib inflates to the page.

use std::io::Read;
use std::path::Path;
use std::process::Command;

use cannery_codec::{Encoder, Format, Level, Mode, Outcome, Table};

fn corpus_pages(per_workload: usize) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/fleet-snapshots");
    let corpus = cannery_capture::Corpus::open(&dir).expect("the shipped corpus");
    let mut v = Vec::new();
    for w in &corpus.workloads {
        v.extend(
            w.pages()
                .unwrap()
                .skip(500)
                .take(per_workload)
                .map(|p| p.unwrap().data),
        );
    }
    v
}

fn zlib_raw(stream: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::DeflateDecoder::new(stream)
        .read_to_end(&mut out)
        .expect("zlib inflates header bytes + canned body");
    out
}

#[test]
fn header_bytes_then_canned_body_bytes_inflate_with_zlib() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tables");
    let o = Command::new(env!("CARGO_BIN_EXE_cannery"))
        .args([
            "train",
            "--corpus",
            "fleet-snapshots",
            "--no-peers",
            "--no-dicts",
            "--eval-pages",
            "20",
        ])
        .arg("--out")
        .arg(&out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut tables = vec![Table::kernel_2024()];
    for e in std::fs::read_dir(&out).unwrap() {
        tables.push(Table::from_bytes(&std::fs::read(e.unwrap().path()).unwrap()).unwrap());
    }
    assert_eq!(tables.len(), 8, "kernel-2024, six workloads and the fleet");
    let pages = corpus_pages(30);
    assert_eq!(pages.len(), 180);
    for t in &tables {
        let h = t.header();
        assert_eq!(h.bits % 8, 0, "table {} header {} bits", t.id(), h.bits);
        assert_eq!(h.gen_decomp_table_flags() & (7 << 6), 0, "0 bits to ignore");
        let text = cannery_export::c_header::kernel_header(
            t,
            &cannery_export::KernelOptions::new("t")
                .with_api(cannery_export::c_header::Api::HeaderTable),
        )
        .unwrap();
        assert!(
            text.contains(&format!("#define T_HEADER_SIZE_IN_BITS {}", h.bits)),
            "{text}"
        );
        let mut enc = Encoder::new(Mode::Canned, Format::Iaa, Level::Fast, Some(t)).unwrap();
        let mut body = Vec::new();
        let mut checked = 0;
        for p in &pages {
            if let Outcome::Compressed(n) = enc.compress(p, &mut body).unwrap() {
                let stream = [&h.bytes[..], &body[..n]].concat();
                assert!(zlib_raw(&stream) == *p, "table {}", t.id());
                checked += 1;
            }
        }
        assert!(checked > 100, "table {}: {checked} pages", t.id());
    }
}
