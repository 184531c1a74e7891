//! The ISA-L export against the real library: Debian's libisal-dev (stock
//! build, 32 KiB history, `LONGER_HUFFTABLE` off). Tables trained from real
//! pages of `corpora/fleet-snapshots` (+1 on every symbol, so all 316 are
//! coded), and the fixed code, are exported with `hufftables_c`, compiled
//! into a C driver linked with `-lisal`, which compresses 4 KiB pages one by
//! one and 64 KiB multi-page buffers (distances beyond 4096, up to ISA-L's
//! 32 KiB window) with `isal_deflate_stateless` at level 0, once with each
//! exported table (`IGZIP_HUFFTABLE_CUSTOM`) and once with ISA-L's default
//! tables. Every stream must start with the table's header and decode to the
//! input with cannery's inflater and with zlib. Sizes are printed and compared
//! with the default tables. Without libisal-dev the tests fail, saying so.
//!
//! Not covered: levels 1-3 (they ignore custom tables) and the streaming
//! `isal_deflate` API.

mod common;

use std::io::Read;
use std::path::Path;
use std::process::Command;

use cannery_codec::decode::{inflate, inflate_blocks, DecodeError};
use cannery_codec::encode::count_symbols;
use cannery_codec::huffman::limited_code_lengths;
use cannery_codec::lz77::MatchFinder;
use cannery_codec::{Level, Table};
use cannery_export::isal::{hufftables_c, isal_stock_violation};
use common::{require_libisal, CC_FLAGS};

/// Pages taken from each workload (every k-th page of the capture); even
/// positions train, odd positions are compressed.
const PAGES_PER_WORKLOAD: usize = 96;
/// Pages per multi-page buffer (64 KiB).
const BUFFER_PAGES: usize = 16;

/// The driver: `prog (default | INDEX | -INDEX) IN OUT`. IN and OUT are
/// records of a little-endian u32 length and that many bytes; each input
/// record becomes one raw deflate stream (level 0, end of stream) in OUT.
/// `-INDEX` first zeroes `dcodes_sizes[24..=29]` of table INDEX: what a
/// table with those symbols uncoded (kernel-2024) would give igzip.
const DRIVER_C: &str = r#"#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <isa-l/igzip_lib.h>

#include "tables.h"

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		exit(3);
	buf = malloc(n ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		exit(3);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

int main(int argc, char **argv)
{
	size_t len, pos = 0;
	uint8_t *in;
	FILE *out;
	int custom;

	if (argc != 4)
		return 2;
	custom = strcmp(argv[1], "default") != 0;
	if (custom && (abs(atoi(argv[1])) >= NUM_TABLES))
		return 2;
	if (argv[1][0] == '-')
		memset(&tables[-atoi(argv[1])]->dcodes_sizes[24], 0, 6);
	in = slurp(argv[2], &len);
	out = fopen(argv[3], "wb");
	if (!out)
		return 3;
	while (pos + 4 <= len) {
		uint32_t n, total;
		struct isal_zstream s;
		uint8_t *buf;
		size_t cap;
		int rc;

		memcpy(&n, in + pos, 4);
		pos += 4;
		cap = 2 * (size_t)n + 1024;
		buf = malloc(cap);
		if (!buf)
			return 3;
		isal_deflate_stateless_init(&s);
		if (custom) {
			rc = isal_deflate_set_hufftables(&s, tables[abs(atoi(argv[1]))],
							 IGZIP_HUFFTABLE_CUSTOM);
			if (rc != COMP_OK) {
				fprintf(stderr, "isal_deflate_set_hufftables: %d\n", rc);
				return 1;
			}
		}
		s.end_of_stream = 1;
		s.flush = NO_FLUSH;
		s.next_in = in + pos;
		s.avail_in = n;
		s.next_out = buf;
		s.avail_out = (uint32_t)cap;
		rc = isal_deflate_stateless(&s);
		if (rc != COMP_OK || s.avail_in != 0) {
			fprintf(stderr, "isal_deflate_stateless: %d (avail_in %u)\n", rc, s.avail_in);
			return 1;
		}
		total = s.total_out;
		fwrite(&total, 4, 1, out);
		fwrite(buf, 1, total, out);
		free(buf);
		pos += n;
	}
	fclose(out);
	return pos == len ? 0 : 4;
}
"#;

/// Up to [`PAGES_PER_WORKLOAD`] pages of each workload of the shipped corpus,
/// spread over the whole capture.
fn corpus_pages() -> Vec<(String, Vec<Vec<u8>>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/fleet-snapshots");
    let corpus = cannery_capture::Corpus::open(&root).expect("corpora/fleet-snapshots");
    corpus
        .workloads
        .iter()
        .map(|w| {
            let all: Vec<Vec<u8>> = w.pages().unwrap().map(|p| p.unwrap().data).collect();
            let step = (all.len() / PAGES_PER_WORKLOAD).max(1);
            let pages: Vec<Vec<u8>> = all
                .into_iter()
                .step_by(step)
                .take(PAGES_PER_WORKLOAD)
                .collect();
            assert!(pages.len() >= 2 * BUFFER_PAGES, "{}", w.name);
            (w.name.clone(), pages)
        })
        .collect()
}

/// A table from `pages`' symbol counts (Fast parse, one end-of-block per
/// page, +1 on every symbol): lengths ≤ 15, or ISA-L's own fallback limits
/// 13 (literal/length) and 12 (distance) if 15 breaks the 56-bit rule.
fn train<'a>(pages: impl Iterator<Item = &'a Vec<u8>>) -> Table {
    let mut mf = MatchFinder::new();
    let mut tokens = Vec::new();
    let (mut ll, mut d) = ([0u64; 286], [0u64; 30]);
    for page in pages {
        mf.parse(page, Level::Fast, None, &mut tokens);
        count_symbols(&tokens, &mut ll, &mut d);
    }
    for c in ll.iter_mut().chain(d.iter_mut()) {
        *c += 1;
    }
    let build = |lmax, dmax| {
        Table::from_lengths(
            &limited_code_lengths(&ll, lmax),
            &limited_code_lengths(&d, dmax),
        )
        .unwrap()
    };
    let t = build(15, 15);
    if isal_stock_violation(&t).is_none() {
        t
    } else {
        build(13, 12)
    }
}

fn records(inputs: &[Vec<u8>]) -> Vec<u8> {
    let mut v = Vec::new();
    for i in inputs {
        v.extend_from_slice(&(i.len() as u32).to_le_bytes());
        v.extend_from_slice(i);
    }
    v
}

fn parse_records(mut b: &[u8]) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    while !b.is_empty() {
        let n = u32::from_le_bytes(b[..4].try_into().unwrap()) as usize;
        v.push(b[4..4 + n].to_vec());
        b = &b[4 + n..];
    }
    v
}

/// Bit `i` of `b`, deflate order (LSB first).
fn bit(b: &[u8], i: usize) -> u8 {
    (b[i / 8] >> (i % 8)) & 1
}

/// The header igzip writes for `table` (BFINAL=1): bytes and bit count,
/// the fewest-bits encoding of its lengths.
fn header_of(table: &Table) -> (Vec<u8>, usize) {
    if table.is_fixed_code() {
        (vec![0x03], 3)
    } else {
        let h = cannery_codec::table::header::write_header_as(
            table.lengths(),
            cannery_codec::table::HeaderForm::Fewest,
        );
        (h.bytes, h.bits)
    }
}

/// Decodes `stream` with cannery's inflater and with zlib; both must give `want`.
fn check_round_trip(stream: &[u8], want: &[u8], what: &str) {
    let mut out = vec![0u8; want.len()];
    let n = inflate(stream, &mut out).unwrap_or_else(|e| panic!("{what}: cannery: {e}"));
    assert_eq!(n, want.len(), "{what}: cannery length");
    assert!(out == want, "{what}: cannery bytes differ");
    let mut z = Vec::new();
    flate2::read::DeflateDecoder::new(stream)
        .read_to_end(&mut z)
        .unwrap_or_else(|e| panic!("{what}: zlib: {e}"));
    assert_eq!(z.len(), want.len(), "{what}: zlib length");
    assert!(z == want, "{what}: zlib bytes differ");
}

#[test]
fn isal_compresses_real_pages_with_exported_tables() {
    require_libisal();
    let workloads = corpus_pages();

    // Tables: one per workload, one over all of them, and the fixed code.
    let mut tables: Vec<(String, Table)> = workloads
        .iter()
        .map(|(name, pages)| (name.clone(), train(pages.iter().step_by(2))))
        .collect();
    tables.push((
        "all-workloads".into(),
        train(workloads.iter().flat_map(|(_, p)| p.iter().step_by(2))),
    ));
    tables.push(("fixed".into(), Table::fixed()));
    for (name, t) in &tables {
        let l = t.lengths();
        println!(
            "table {name:>14}: longest codes {} (literal/length) / {} (distance), 56-bit sum {}",
            l.litlen.iter().max().unwrap(),
            l.dist.iter().max().unwrap(),
            cannery_codec::table::rules::BitBudget::of(t.lengths()).total()
        );
        assert!(
            l.litlen.iter().chain(l.dist.iter()).all(|&x| x > 0),
            "{name}: every symbol coded"
        );
        assert_eq!(isal_stock_violation(t), None, "{name}");
    }

    // Inputs: held-out pages one by one; per workload 16 consecutive held-out
    // pages, and 16 pages repeating 7 distinct ones (repeats 28 KiB back:
    // distance symbol 29).
    let mut pages: Vec<(usize, Vec<u8>)> = Vec::new();
    let mut buffers: Vec<(usize, Vec<u8>)> = Vec::new();
    for (w, (_, p)) in workloads.iter().enumerate() {
        let held: Vec<&Vec<u8>> = p.iter().skip(1).step_by(2).collect();
        pages.extend(held.iter().map(|&x| (w, x.clone())));
        buffers.push((
            w,
            held[..BUFFER_PAGES]
                .iter()
                .flat_map(|x| x.iter().copied())
                .collect(),
        ));
        let period: Vec<&Vec<u8>> = held[held.len() - 7..].to_vec();
        buffers.push((
            w,
            (0..BUFFER_PAGES)
                .flat_map(|i| period[i % 7].iter().copied())
                .collect(),
        ));
    }
    assert!(buffers.iter().all(|(_, b)| b.len() == 65536));

    // One driver with every table linked in.
    let dir = tempfile::tempdir().unwrap();
    let mut decls = String::new();
    let mut ptrs = Vec::new();
    let mut c_files = Vec::new();
    for (i, (_, t)) in tables.iter().enumerate() {
        let name = format!("t{i}");
        let f = dir.path().join(format!("{name}.c"));
        std::fs::write(&f, hufftables_c(t, &name, "test").unwrap()).unwrap();
        c_files.push(f);
        decls.push_str(&format!("extern struct isal_hufftables {name};\n"));
        ptrs.push(format!("&{name}"));
    }
    std::fs::write(
        dir.path().join("tables.h"),
        format!(
            "{decls}#define NUM_TABLES {}\nstatic struct isal_hufftables *const tables[] = {{ {} }};\n",
            tables.len(),
            ptrs.join(", ")
        ),
    )
    .unwrap();
    std::fs::write(dir.path().join("driver.c"), DRIVER_C).unwrap();
    let exe = dir.path().join("driver");
    // The exported files compile exactly as a user's would: no -D options.
    let cc = Command::new("cc")
        .args(CC_FLAGS)
        .arg("-I")
        .arg(dir.path())
        .arg("-o")
        .arg(&exe)
        .arg(dir.path().join("driver.c"))
        .args(&c_files)
        .arg("-lisal")
        .output()
        .expect("cc");
    assert!(
        cc.status.success(),
        "cc failed:\n{}",
        String::from_utf8_lossy(&cc.stderr)
    );

    let inputs: Vec<Vec<u8>> = pages
        .iter()
        .chain(buffers.iter())
        .map(|(_, b)| b.clone())
        .collect();
    let in_path = dir.path().join("in.rec");
    std::fs::write(&in_path, records(&inputs)).unwrap();
    let run = |which: &str| -> Vec<Vec<u8>> {
        let out_path = dir.path().join(format!("out-{which}.rec"));
        let o = Command::new(&exe)
            .arg(which)
            .arg(&in_path)
            .arg(&out_path)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "driver {which}: {:?} {}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        );
        let streams = parse_records(&std::fs::read(&out_path).unwrap());
        assert_eq!(streams.len(), inputs.len());
        streams
    };

    let np = pages.len();
    let default = run("default");
    for (i, s) in default.iter().enumerate() {
        check_round_trip(s, &inputs[i], &format!("default tables, input {i}"));
    }
    let sum = |v: &[Vec<u8>], range: std::ops::Range<usize>| -> usize {
        v[range].iter().map(|s| s.len()).sum()
    };
    let own_pages = |w: usize| -> Vec<usize> { (0..np).filter(|&i| pages[i].0 == w).collect() };
    let (d_pages, d_bufs) = (sum(&default, 0..np), sum(&default, np..inputs.len()));
    println!(
        "inputs: {np} held-out 4 KiB pages ({} bytes) from {} workloads, {} 64 KiB buffers ({} bytes)",
        np * 4096,
        workloads.len(),
        buffers.len(),
        buffers.len() * 65536
    );
    println!("ISA-L default tables: pages {d_pages} bytes, buffers {d_bufs} bytes");

    let mut far = 0;
    let mut stored = 0;
    for (ti, (name, table)) in tables.iter().enumerate() {
        let custom = run(&ti.to_string());
        let (hdr, bits) = header_of(table);
        for (i, s) in custom.iter().enumerate() {
            let what = format!("table {name}, input {i}");
            // The stream is a block under the exported header, or, for an
            // incompressible input, igzip's stored fallback (BFINAL=1,
            // BTYPE=00, no smaller than the input).
            if s[0] & 0x07 == 0x01 && s.len() > inputs[i].len() {
                // Only where the default tables, too, gain under 10 %.
                assert!(
                    default[i].len() * 10 >= inputs[i].len() * 9,
                    "{what}: stored, default tables {} bytes",
                    default[i].len()
                );
                stored += 1;
            } else {
                assert!(s.len() * 8 >= bits, "{what}: shorter than the header");
                assert!(
                    (0..bits).all(|b| bit(s, b) == bit(&hdr, b)),
                    "{what}: does not start with the table's header"
                );
            }
            check_round_trip(s, &inputs[i], &what);
            if i >= np {
                // Distances beyond 4096: the 4 KiB-window decoder refuses them.
                if let Err(DecodeError::DistanceBeyondWindow { .. }) =
                    inflate_blocks(s, inputs[i].len())
                {
                    far += 1;
                }
            }
        }
        let (c_pages, c_bufs) = (sum(&custom, 0..np), sum(&custom, np..inputs.len()));
        println!(
            "table {name:>14}: pages {c_pages} bytes ({:+.2} % vs default), buffers {c_bufs} bytes ({:+.2} %)",
            (c_pages as f64 / d_pages as f64 - 1.0) * 100.0,
            (c_bufs as f64 / d_bufs as f64 - 1.0) * 100.0
        );
        if let Some(w) = workloads.iter().position(|(n, _)| n == name) {
            // A workload's own table on its held-out pages: at most a few
            // percent worse than ISA-L's general-purpose default tables.
            let idx = own_pages(w);
            let c: usize = idx.iter().map(|&i| custom[i].len()).sum();
            let d: usize = idx.iter().map(|&i| default[i].len()).sum();
            println!(
                "    own workload's held-out pages: custom {c} bytes, default {d} bytes ({:+.2} %)",
                (c as f64 / d as f64 - 1.0) * 100.0
            );
            assert!(c * 100 <= d * 105, "{name}: {c} vs default {d}");
        }
        if name != "fixed" {
            assert!(
                c_pages * 100 <= d_pages * 115,
                "{name}: {c_pages} vs {d_pages}"
            );
            assert!(c_bufs * 100 <= d_bufs * 115, "{name}: {c_bufs} vs {d_bufs}");
        }
    }
    println!("stored fallbacks (incompressible inputs), all tables: {stored}");
    assert!(
        far >= tables.len() * workloads.len(),
        "only {far} multi-page streams used distances beyond 4096"
    );

    // The bug the refusal prevents: with distance symbols 24..=29 uncoded,
    // stock igzip still emits them (as zero bits); some 64 KiB streams then
    // fail to decode or decode to other bytes, although igzip reports success.
    let broken = run("-1");
    let mut bad = 0;
    for i in np..inputs.len() {
        let mut out = vec![0u8; inputs[i].len()];
        if inflate(&broken[i], &mut out) != Ok(inputs[i].len()) || out != inputs[i] {
            bad += 1;
        }
    }
    println!(
        "table {} with distance symbols 24..=29 zeroed: {bad} of {} 64 KiB streams corrupt",
        tables[1].0,
        inputs.len() - np
    );
    assert!(bad > 0, "uncoded far distance symbols went unnoticed");
}

#[test]
fn kernel_2024_is_refused_for_the_stock_library() {
    let err = hufftables_c(&Table::kernel_2024(), "k24", "test").unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("distance symbols 24..=29 have no code"),
        "{msg}"
    );
    assert!(msg.contains("32 KiB"), "{msg}");
}
