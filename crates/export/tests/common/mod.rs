//! Helpers shared by the integration tests: the frozen "trained" golden
//! table (and the recipe that made it), the system C compiler, golden-file
//! comparison with `CANNERY_BLESS=1`, the kernel-patch-style text of a
//! table's arrays, and the check that Debian's libisal-dev is installed.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use cannery_codec::encode::{count_symbols, encode_canned_tokens};
use cannery_codec::huffman::limited_code_lengths;
use cannery_codec::lz77::MatchFinder;
use cannery_codec::{Level, Table};

/// The exact compiler command the tests use (before the file arguments).
pub const CC_FLAGS: &[&str] = &["-Wall", "-Wextra", "-Werror", "-std=gnu11"];

/// Generator string in golden files, so they do not change with the version.
pub const GOLDEN_GENERATOR: &str = "cannery (golden test)";

pub fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

pub fn blessing() -> bool {
    std::env::var_os("CANNERY_BLESS").is_some_and(|v| v == "1")
}

/// Compares `actual` with the golden file `name`, or rewrites it when blessing.
pub fn check_golden(name: &str, actual: &str) {
    let path = golden_dir().join(name);
    if blessing() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with CANNERY_BLESS=1 to create it)",
            path.display()
        )
    });
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .map_or(
                expected.lines().count().min(actual.lines().count()) + 1,
                |p| p + 1,
            );
        panic!(
            "{} differs from the generated output from line {line}; if the change is intended, \
             regenerate with CANNERY_BLESS=1 cargo test -p cannery-export",
            path.display()
        );
    }
}

/// 32 deterministic synthetic 4 KiB pages: English-like text, little-endian
/// integer records with pointer-like values, and zero runs (xorshift64).
pub fn synthetic_pages() -> Vec<Vec<u8>> {
    let mut rng = cannery_codec::rng::XorShift64::new(0x2545_f491_4f6c_dd1d);
    let mut next = move || rng.next_u64();
    const WORDS: &[&str] = &[
        "the", "page", "of", "memory", "swap", "zswap", "table", "canned", "huffman", "code",
        "deflate", "kernel", "compress", "and", "a", "to", "in", "is", "for", "struct",
    ];
    let mut pages = Vec::new();
    for p in 0..32 {
        let mut page = Vec::with_capacity(4096);
        while page.len() < 4096 {
            match (p + next() as usize) % 3 {
                0 => {
                    for _ in 0..(next() % 40) {
                        page.extend_from_slice(
                            WORDS[(next() % WORDS.len() as u64) as usize].as_bytes(),
                        );
                        page.push(if next() % 9 == 0 { b'\n' } else { b' ' });
                    }
                }
                1 => {
                    for _ in 0..(next() % 16) {
                        let v: u64 = 0x0000_7f00_0000_0000 | (next() & 0xffff_fff8);
                        page.extend_from_slice(&v.to_le_bytes());
                        page.extend_from_slice(&((next() % 300) as u32).to_le_bytes());
                        page.extend_from_slice(&[0; 4]);
                    }
                }
                _ => page.resize(page.len() + (next() % 200) as usize, 0),
            }
        }
        page.truncate(4096);
        pages.push(page);
    }
    pages
}

/// The recipe of the golden "trained" table: Fast-level parse of
/// [`synthetic_pages`], symbol counts (one end-of-block per page), +1 on every
/// symbol, package-merge lengths ≤ 15. Only used when blessing; the tests
/// load the frozen `tests/golden/trained.table.json`, so a change in the
/// codec's match finder does not silently change the golden headers.
pub fn build_trained_table() -> Table {
    let pages = synthetic_pages();
    let mut mf = MatchFinder::new();
    let mut tokens = Vec::new();
    let mut ll = [0u64; 286];
    let mut d = [0u64; 30];
    for page in &pages {
        mf.parse(page, Level::Fast, None, &mut tokens);
        count_symbols(&tokens, &mut ll, &mut d);
    }
    for c in ll.iter_mut().chain(d.iter_mut()) {
        *c += 1;
    }
    let mut t = Table::from_lengths(
        &limited_code_lengths(&ll, 15),
        &limited_code_lengths(&d, 15),
    )
    .unwrap();
    let (mut inp, mut out) = (0usize, 0usize);
    for page in &pages {
        mf.parse(page, Level::Fast, None, &mut tokens);
        inp += page.len();
        out += encode_canned_tokens(&tokens, &t).len();
    }
    t.name = Some("golden-trained".into());
    t.provenance.source = Some("cannery-export golden test recipe (tests/common/mod.rs)".into());
    t.provenance.corpus =
        Some("32 synthetic 4 KiB pages: text, integer records, zero runs (xorshift64)".into());
    t.provenance.created = Some("2026-11-22T00:00:00Z".into());
    t.provenance.generator = Some("cannery-export tests".into());
    t.provenance.training.insert("level".into(), "fast".into());
    t.provenance
        .training
        .insert("max_code_len".into(), 15.into());
    t.provenance
        .training
        .insert("pages".into(), pages.len().into());
    t.provenance
        .training
        .insert("smoothing".into(), "+1 on every symbol".into());
    let ratio = (inp as f64 / out as f64 * 1e4).round() / 1e4;
    t.provenance.ratios.insert("canned".into(), ratio);
    t
}

/// The frozen trained table (rebuilt and rewritten when blessing).
pub fn trained_table() -> Table {
    let path = golden_dir().join("trained.table.json");
    if blessing() {
        let t = build_trained_table();
        std::fs::write(&path, t.to_json()).unwrap();
        return t;
    }
    Table::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The tables every exporter test runs on.
pub fn tables() -> Vec<(&'static str, Table)> {
    vec![
        ("fixed", Table::fixed()),
        ("kernel-2024", Table::kernel_2024()),
        ("trained", trained_table()),
    ]
}

/// Compiles `files` (in `dir`) with `cc` + [`CC_FLAGS`] into `dir/prog`, runs
/// it and returns its stdout. Panics with the compiler's output on failure.
pub fn compile_and_run(dir: &Path, main_c: &str, extra: &[&str]) -> String {
    let exe = dir.join("prog");
    let out = Command::new("cc")
        .args(CC_FLAGS)
        .args(extra)
        .arg("-I")
        .arg(dir)
        .arg("-o")
        .arg(&exe)
        .arg(dir.join(main_c))
        .output()
        .expect("the system C compiler `cc` is needed for these tests");
    assert!(
        out.status.success(),
        "cc failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success(), "harness failed: {:?}", run);
    String::from_utf8(run.stdout).unwrap()
}

/// The arrays of `table` written the way the 2024 canned patch
/// (`iaa_crypto_comp_canned.c`) writes them: `0x%x` values, two spaces after
/// each comma, 8 per line, no indent; header bytes `0x%02x`, 8 per line; and
/// an init function around them.
pub fn kernel_patch_style(ll: &[u32], d: &[u32], header: &[u8], bits: usize) -> String {
    let arr = |vals: &[u32]| {
        vals.chunks(8)
            .map(|c| {
                c.iter()
                    .map(|v| format!("0x{v:x},"))
                    .collect::<Vec<_>>()
                    .join("  ")
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let bytes = header
        .chunks(8)
        .map(|c| {
            c.iter()
                .map(|v| format!("0x{v:02x},"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n");
    format!(
        "// SPDX-License-Identifier: GPL-2.0\n\n#include \"iaa_crypto.h\"\n#include \"idxd.h\"\n\n\
         #define IAA_AECS_ALIGN\t32\n\n/*\n * Tables for the 'canned' mode.\n */\n\n\
         static const u32 canned_ll_iaa[286] = {{\n{}\n}};\n\n\
         static const u32 canned_d_iaa[30] = {{\n{}\n}};\n\n\
         #define HEADER_SIZE_IN_BITS {bits}\nstatic const u8 canned_header[] = {{\n{bytes}\n}};\n\n\
         #define CEIL(a, b)\t(((a) + ((b) - 1)) / (b))\n\n\
         int iaa_aecs_init_canned(void)\n{{\n\tu16 gen_decomp_table_flags;\n\tunsigned int slen;\n\n\
         \tslen = CEIL(HEADER_SIZE_IN_BITS, 8);\n\tgen_decomp_table_flags = 0x1;\n\
         \tgen_decomp_table_flags |= 1 << 9;\n\
         \tgen_decomp_table_flags |= (((slen * 8) - HEADER_SIZE_IN_BITS) << 6);\n\n\
         \treturn add_iaa_compression_mode(\"canned\", canned_ll_iaa, sizeof(canned_ll_iaa),\n\
         \t\t\t\tcanned_d_iaa, sizeof(canned_d_iaa), canned_header, sizeof(canned_header),\n\
         \t\t\t\tgen_decomp_table_flags, NULL, NULL);\n}}\n",
        arr(ll),
        arr(d)
    )
}

/// Panics (failing the test, never skipping it) unless ISA-L's development
/// files are installed: `<isa-l/igzip_lib.h>` must compile and `-lisal` link.
pub fn require_libisal() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("probe.c"),
        "#include <isa-l/igzip_lib.h>\nint main(void) { struct isal_zstream s; \
         isal_deflate_stateless_init(&s); return 0; }\n",
    )
    .unwrap();
    let out = Command::new("cc")
        .arg("-o")
        .arg(dir.path().join("probe"))
        .arg(dir.path().join("probe.c"))
        .arg("-lisal")
        .output()
        .expect("the system C compiler `cc` is needed for these tests");
    assert!(
        out.status.success(),
        "ISA-L's headers and library are missing: install libisal-dev \
         (`apt-get install libisal-dev`; scripts/test does it when run as root).\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
