//! Criterion benches of every stage on pages of the shipped corpus, with the
//! peer compressors on the same pages in the same run, so figures compare as
//! ratios. Benchmark ids name the stage, the page set and the codec:
//! `encode/fleet-mix/canned-fast`, `decode/fleet-mix/libdeflate-6`,
//! `stats/fleet-mix/iaa`, `code_lengths/package-merge/316`.
//!
//! The page set `fleet-mix` is 64 pages from each workload of
//! `corpora/fleet-snapshots` (or `CANNERY_BENCH_CORPUS`). The canned table is
//! trained on those pages with the fast parse. Run with
//! `cargo bench -p cannery-benches --bench codec` (add `-- encode` to filter).

use std::time::Duration;

use cannery_codec::encode::count_symbols;
use cannery_codec::huffman::limited_code_lengths;
use cannery_codec::lz77::MatchFinder;
use cannery_codec::{Decoder, Encoder, Format, Level, Mode, Outcome, Table};
use cannery_engines::peer::{train_zstd_dictionary, Peer, PeerKind, BENCH_PEERS};
use cannery_trainer::gather::Parser;
use cannery_trainer::histogram::SymbolCounts;
use cannery_trainer::ParseModel;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const SET: &str = "fleet-mix";

fn pages() -> Vec<Vec<u8>> {
    cannery_benches::corpus_pages(64)
        .expect("corpus pages")
        .into_iter()
        .flat_map(|(_, p)| p)
        .collect()
}

/// The optimal table for the pages' fast-parse statistics, every symbol coded.
fn trained_table(pages: &[Vec<u8>]) -> Table {
    let mut mf = MatchFinder::new();
    let mut tokens = Vec::new();
    let mut ll = [1u64; 286];
    let mut d = [1u64; 30];
    for p in pages {
        mf.parse(p, Level::Fast, None, &mut tokens);
        count_symbols(&tokens, &mut ll, &mut d);
    }
    Table::from_lengths(
        &limited_code_lengths(&ll, 15),
        &limited_code_lengths(&d, 15),
    )
    .expect("valid")
}

fn cannery_codecs(table: &Table) -> Vec<(String, Mode, Level, Option<Table>)> {
    let mut v = Vec::new();
    for level in Level::ALL {
        v.push((
            format!("canned-{level}"),
            Mode::Canned,
            level,
            Some(table.clone()),
        ));
    }
    v.push((
        "canned-kernel2024-fast".into(),
        Mode::Canned,
        Level::Fast,
        Some(Table::kernel_2024()),
    ));
    v.push(("fixed-fast".into(), Mode::Fixed, Level::Fast, None));
    v.push((
        "dynamic-default".into(),
        Mode::Dynamic,
        Level::Default,
        None,
    ));
    v
}

/// `cannery bench`'s peers, and zstd with a dictionary.
fn peer_kinds() -> Vec<PeerKind> {
    let mut v = BENCH_PEERS.to_vec();
    v.push(PeerKind::ZstdDict(1));
    v
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20)
}

fn bench(c: &mut Criterion) {
    let pages = pages();
    let bytes = (pages.len() * 4096) as u64;
    let table = trained_table(&pages);
    let refs: Vec<&[u8]> = pages.iter().map(|p| &p[..]).collect();
    let dict = train_zstd_dictionary(&refs, 16 << 10);

    // The trainer's own statistics path: each page parsed and its symbols
    // counted as they are found (`Parser::count`), one thread.
    let mut g = c.benchmark_group("stats");
    g.throughput(Throughput::Bytes(bytes));
    for model in [ParseModel::Fast, ParseModel::Default, ParseModel::Best] {
        g.bench_function(BenchmarkId::new(SET, model.to_string()), |b| {
            let mut parser = Parser::new(model, Some(&table));
            b.iter(|| {
                let mut counts = SymbolCounts::default();
                for p in &pages {
                    parser.count(p, &mut counts).unwrap();
                }
                counts.litlen[256]
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("code_lengths");
    let mut ll = [1u64; 286];
    let mut d = [1u64; 30];
    let mut mf = MatchFinder::new();
    let mut tokens = Vec::new();
    for p in &pages {
        mf.parse(p, Level::Fast, None, &mut tokens);
        count_symbols(&tokens, &mut ll, &mut d);
    }
    g.bench_function(BenchmarkId::new("package-merge", 316), |b| {
        b.iter(|| (limited_code_lengths(&ll, 15), limited_code_lengths(&d, 15)))
    });
    g.bench_function(BenchmarkId::new("table-with-header", 316), |b| {
        b.iter(|| {
            Table::from_lengths(
                table.lengths().litlen.as_slice(),
                table.lengths().dist.as_slice(),
            )
        })
    });
    g.finish();

    let mut enc_g = c.benchmark_group("encode");
    enc_g.throughput(Throughput::Bytes(bytes));
    for (name, mode, level, t) in cannery_codecs(&table) {
        let mut e = Encoder::new(mode, Format::Iaa, level, t.as_ref()).expect("encoder");
        let mut out = Vec::new();
        enc_g.bench_function(BenchmarkId::new(SET, &name), |b| {
            b.iter(|| {
                pages
                    .iter()
                    .map(|p| matches!(e.compress(p, &mut out), Ok(Outcome::Compressed(_))) as usize)
                    .sum::<usize>()
            })
        });
    }
    for kind in peer_kinds() {
        let Ok(mut p) = Peer::new(kind.clone(), dict.as_deref()) else {
            continue;
        };
        let mut out = Vec::new();
        enc_g.bench_function(BenchmarkId::new(SET, kind.to_string()), |b| {
            b.iter(|| {
                pages
                    .iter()
                    .map(|pg| p.compress(pg, &mut out).ok().flatten().is_some() as usize)
                    .sum::<usize>()
            })
        });
    }
    enc_g.finish();

    let mut dec_g = c.benchmark_group("decode");
    for (name, mode, level, t) in cannery_codecs(&table) {
        if level != Level::Fast && mode == Mode::Canned {
            continue; // decoding does not depend on the encoder's level
        }
        let mut e = Encoder::new(mode, Format::Iaa, level, t.as_ref()).expect("encoder");
        let d = Decoder::new(mode, Format::Iaa, t.as_ref()).expect("decoder");
        let streams: Vec<Vec<u8>> = pages
            .iter()
            .filter_map(|p| {
                let mut out = Vec::new();
                matches!(e.compress(p, &mut out), Ok(Outcome::Compressed(_))).then_some(out)
            })
            .collect();
        dec_g.throughput(Throughput::Bytes((streams.len() * 4096) as u64));
        let mut buf = vec![0u8; 4096];
        dec_g.bench_function(
            BenchmarkId::new(SET, name.replace("-fast", "").replace("-default", "")),
            |b| {
                b.iter(|| {
                    streams
                        .iter()
                        .map(|s| d.decompress(s, &mut buf).unwrap_or(0))
                        .sum::<usize>()
                })
            },
        );
    }
    for kind in peer_kinds() {
        let Ok(mut p) = Peer::new(kind.clone(), dict.as_deref()) else {
            continue;
        };
        let streams: Vec<Vec<u8>> = pages
            .iter()
            .filter_map(|pg| {
                let mut out = Vec::new();
                p.compress(pg, &mut out).ok().flatten().map(|_| out)
            })
            .collect();
        dec_g.throughput(Throughput::Bytes((streams.len() * 4096) as u64));
        let mut buf = vec![0u8; 4096];
        dec_g.bench_function(BenchmarkId::new(SET, kind.to_string()), |b| {
            b.iter(|| {
                streams
                    .iter()
                    .map(|s| p.decompress(s, &mut buf).unwrap_or(0))
                    .sum::<usize>()
            })
        });
    }
    dec_g.finish();
}

criterion_group! { name = benches; config = config(); targets = bench }
criterion_main!(benches);
