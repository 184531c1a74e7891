//! Statistics throughput: pages → histogram at each parse model, on one
//! core (a one-thread rayon pool) and on all cores, over synthetic
//! memory-like pages (`cannery_trainer::testutil`), and over real pages
//! when `CANNERY_BENCH_PAGES` names a raw `.pages` file (its first 16 MiB).
//! Reported as bytes of pages per second, beside the peer the statistics
//! are held to: zstd -1 compressing the same pages one by one on one core
//! (`zstd-1/1-core`). Run briefly with
//! `cargo bench -p cannery-trainer --bench stats -- --warm-up-time 1 --measurement-time 3`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use cannery_engines::peer::{Peer, PeerKind};
use cannery_trainer::gather::gather_pages;
use cannery_trainer::testutil::synthetic_pages;
use cannery_trainer::ParseModel;

fn stats(c: &mut Criterion) {
    let mut sets = vec![("synthetic", synthetic_pages(1024, 1))];
    if let Ok(path) = std::env::var("CANNERY_BENCH_PAGES") {
        let data = std::fs::read(&path).expect("CANNERY_BENCH_PAGES names a readable file");
        let pages: Vec<Vec<u8>> = data
            .chunks_exact(4096)
            .take(4096)
            .map(|p| p.to_vec())
            .collect();
        sets.push(("real", pages));
    }
    for (name, pages) in &sets {
        bench_set(c, name, pages);
    }
}

fn bench_set(c: &mut Criterion, name: &str, pages: &[Vec<u8>]) {
    let bytes = (pages.len() * 4096) as u64;
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a thread pool");
    let mut g = c.benchmark_group(format!("stats-{name}"));
    g.throughput(Throughput::Bytes(bytes));
    g.sample_size(10);
    for model in [ParseModel::Fast, ParseModel::Default, ParseModel::Best] {
        g.bench_function(format!("{model}/1-core"), |b| {
            b.iter(|| one.install(|| gather_pages(pages, model, None, &|_| true).unwrap()))
        });
    }
    g.bench_function("fast/all-cores", |b| {
        b.iter(|| gather_pages(pages, ParseModel::Fast, None, &|_| true).unwrap())
    });
    let mut zstd = Peer::new(PeerKind::Zstd(1), None).expect("zstd");
    let mut out = Vec::with_capacity(8192);
    g.bench_function("zstd-1/1-core", |b| {
        b.iter(|| {
            pages
                .iter()
                .map(|p| zstd.compress(p, &mut out).expect("zstd").unwrap_or(4096))
                .sum::<usize>()
        })
    });
    g.finish();
}

criterion_group!(benches, stats);
criterion_main!(benches);
