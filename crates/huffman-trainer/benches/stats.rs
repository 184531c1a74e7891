//! Statistics throughput: pages → histogram at each parse model, on one
//! core (a one-thread rayon pool) and on all cores, over synthetic
//! memory-like pages (`cannery_trainer::testutil`). Reported as bytes of
//! pages per second. Run briefly with
//! `cargo bench -p cannery-trainer --bench stats -- --warm-up-time 1 --measurement-time 3`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use cannery_trainer::gather::gather_pages;
use cannery_trainer::testutil::synthetic_pages;
use cannery_trainer::ParseModel;

fn stats(c: &mut Criterion) {
    let pages = synthetic_pages(1024, 1);
    let bytes = (pages.len() * 4096) as u64;
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a thread pool");
    let mut g = c.benchmark_group("stats");
    g.throughput(Throughput::Bytes(bytes));
    g.sample_size(10);
    for model in [ParseModel::Iaa, ParseModel::Default, ParseModel::Best] {
        g.bench_function(format!("{model}/1-core"), |b| {
            b.iter(|| one.install(|| gather_pages(&pages, model, None, &|_| true)))
        });
    }
    g.bench_function("iaa/all-cores", |b| {
        b.iter(|| gather_pages(&pages, ParseModel::Iaa, None, &|_| true))
    });
    g.finish();
}

criterion_group!(benches, stats);
criterion_main!(benches);
