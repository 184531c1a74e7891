//! README's shell examples, run as a reader would run them: every command
//! line of every `sh` block is either run (in a scratch directory of its
//! block, with `corpora/` linked in and `cannery` on PATH) and must exit as
//! README says, or is listed in [`RULES`] with the reason it is not run here
//! (it needs root and changes the machine, or it builds or runs the test
//! suite itself). A README line with no rule, and a rule whose line is no
//! longer in README, fail the test: a new example cannot go unchecked.
//!
//! What a block needs that README leaves to the reader (a `pages.bin`, a
//! `./myjob`, a live PID for `--pid 1234`, a QPL-loadable table) is made by
//! [`setup`] before the block runs; placeholders are replaced as [`RULES`]
//! says.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};

/// What to do with one README command line.
enum Action {
    /// Run it as shown; it must exit 0.
    Run,
    /// Run it as shown; it must exit with this code, printing this on stderr.
    Fails(i32, &'static str),
    /// Run this instead, for the reason given (a placeholder or a system path).
    As(&'static str, &'static str),
    /// Not run here, for the reason given.
    Skip(&'static str),
}

use Action::*;

const ROOT: &str = "needs root and changes the machine (swap, zswap, zram, cgroups): the \
                    root tests (tests/zswap_kernel.rs, zram_kernel.rs, cold_reclaim.rs) run \
                    it under the restore guard, with the commands README gives";

/// One rule per README command line (continuations joined, comment dropped).
const RULES: &[(&str, Action)] = &[
    (
        "cargo run --release -- train --corpus fleet-snapshots",
        As("cannery train --corpus fleet-snapshots", "the same command without a release build inside the test"),
    ),
    ("./scripts/test", Skip("the test suite itself (this test runs inside it)")),
    ("cannery --version", Run),
    (
        "cannery completions bash > /etc/bash_completion.d/cannery",
        As("cannery completions bash > cannery.bash", "writes into /etc"),
    ),
    ("cannery man | man -l -", As("cannery man > cannery.1 && cannery man -o man", "man(1) may be missing")),
    ("cannery table show kernel-2024", Run),
    ("cannery table builtin kernel-2024 -o k.table.json", Run),
    ("cannery table import --from lengths lengths.bin -o t.table", Run),
    ("cannery compress --table k.table.json --mode canned --format iaa --level fast -i pages.bin -o pages.records", Run),
    ("cannery compress --mode dynamic -i corpora/fleet-snapshots/redis/redis.cansnap -o redis.records", Run),
    ("cat pages.bin | cannery compress --mode fixed -i - -o - > pages.records2", Run),
    ("cannery corpus export fleet-snapshots --workload redis --sample 1000 --seed 1 -o redis.pages", Run),
    ("cannery corpus export fleet-snapshots --sample 10 --emit records -o - | head -1", Run),
    ("cannery decompress --table k.table.json --mode canned --format iaa -i pages.records -o pages.back", Run),
    ("cannery capture --label myjob --out myjob.cansnap --count 6 --interval 2s --freeze -- ./myjob --flag", Run),
    ("cannery capture --pid 1234 --out live.cansnap", Run),
    ("cannery corpus info corpora/fleet-snapshots --json", Run),
    ("cannery corpus scan-secrets corpora/", Run),
    (
        "cannery train --corpus fleet-snapshots --out tables/ [--parse best] [--tables 4] [--qpl-compatible] [--json]",
        As("cannery train --corpus fleet-snapshots --out tables/ --tables 4 --json", "brackets mark optional flags"),
    ),
    (
        "cannery train --corpus big-fleet --eval-pages 500",
        As("cannery train --corpus fleet-snapshots --eval-pages 500 -o big", "big-fleet stands for the reader's own large corpus"),
    ),
    ("cannery stats --corpus corpora/fleet-snapshots/redis --out redis.hist.json", Run),
    ("cannery stats --pid 1234 --out host1.hist.json", Run),
    ("cannery merge host1.hist.json host2.hist.json --out fleet.hist.json", Run),
    ("cannery train --histograms fleet.hist.json --out fleet-tables/", Run),
    ("cannery eval --table tables/fleet.table.json --corpus fleet-snapshots", Run),
    ("cannery eval --table tables/redis.table.json --corpus fleet-snapshots --part test", Run),
    ("cannery eval --table tables/fleet.table.json --histograms host*.hist.json", Run),
    ("cannery export kernel --table tables/redis.table.json --name redis --api header-table -o redis_canned.h", Run),
    ("cannery export fixed-kernel -o fixed.h", Run),
    ("cannery export qpl --table qpl/redis.table.json -o redis.qplhist", Run),
    ("cannery export isal --table qpl/redis.table.json -o redis_hufftables.c", Run),
    ("cannery table import --from kernel-header redis_canned.h -o redis.table.json", Run),
    (
        "cargo build --release --features isal",
        Skip("builds cannery; this test's binary is built by cargo test, and the next lines check both builds"),
    ),
    (
        "cannery train --corpus fleet-snapshots --parse isal -o isal-tables/",
        if cfg!(feature = "isal") { Run } else { Fails(2, "isal") },
    ),
    (
        "cannery train --corpus fleet-snapshots --parse qpl-default -o qpl-tables/ --target-matrix",
        if cfg!(feature = "qpl") { Run } else { Fails(2, "qpl") },
    ),
    (
        "cannery stats --corpus corpora/fleet-snapshots/redis --parse qpl-high -o redis.qplhigh.hist.json",
        if cfg!(feature = "qpl") { Run } else { Fails(2, "qpl") },
    ),
    ("cannery zswap-sim --corpus fleet-snapshots --table tables/fleet.table.json --mode canned --engines 2 --json", Run),
    ("cannery zswap-sim --corpus fleet-snapshots --table tables/fleet.table.json --mode canned --compress-batch 8 --max-pages 500 --beside lz4 zstd-1", Run),
    ("cannery backends", Run),
    (
        "cannery validate --table tables/fleet.table.json --corpus fleet-snapshots --repro-dir repro/",
        // The fleet table is not QPL-loadable, so with QPL built its qpl rows
        // cannot run, and a check that did not run is not a pass.
        if cfg!(feature = "qpl") { Fails(1, "cells did not run") } else { Run },
    ),
    (
        "cannery fuzz --backend software --iterations 1000 --seed 1",
        // The default table is kernel-2024, which QPL cannot load: with QPL
        // built its canned row cannot run (`--backend qpl` picks a table it can).
        if cfg!(feature = "qpl") { Fails(1, "cells did not run") } else { Run },
    ),
    (
        "cannery bench --corpus fleet-snapshots --out BENCHMARKS.md",
        As(
            "cannery bench --corpus fleet-snapshots --out BENCHMARKS.md --cycled-mib 4",
            "the cycled pass over twice the last-level cache (64 MiB or more) takes minutes; 4 MiB runs the same code",
        ),
    ),
    ("cargo bench -p cannery-benches", Skip("criterion benchmarks take minutes; cargo test --all-targets builds them")),
    (
        "sudo cannery zswap-kernel --setup --corpus fleet-snapshots --compressor deflate lzo lzo-rle --compare-sim --tables tables/",
        Skip(ROOT),
    ),
    ("sudo cannery restore", Skip(ROOT)),
    ("fallocate -l 1G /var/tmp/cannery.swap && chmod 600 /var/tmp/cannery.swap", Skip(ROOT)),
    ("mkswap /var/tmp/cannery.swap && swapon /var/tmp/cannery.swap", Skip(ROOT)),
    ("echo Y > /sys/module/zswap/parameters/enabled", Skip(ROOT)),
    ("cannery train --corpus fleet-snapshots -o t", Run),
    ("sudo cannery zram-kernel --corpus fleet-snapshots --tables t --compare", Skip(ROOT)),
    ("sudo cannery zswap-kernel --setup --corpus fleet-snapshots --json -o zswap.json", Skip(ROOT)),
    (
        "sudo cannery capture --cold reclaim:50% --setup --interval 30s --count 2 --keep-hot myjob.hot.cansnap -o myjob.cansnap -- ./myjob --flag",
        Skip(ROOT),
    ),
    ("sudo cannery capture --cold reclaim:50% --setup --interval 30s -o cold/myjob/myjob.cansnap -- ./myjob", Skip(ROOT)),
    ("cannery train --corpus cold --out cold-tables/", Skip("needs the cold capture above (root)")),
    (
        "sudo cannery zswap-kernel --setup --corpus cold --compressor deflate lzo --compare-sim --tables cold-tables/",
        Skip(ROOT),
    ),
    (
        "cannery zswap-sim --corpus cold/myjob --mode canned --table cold-tables/myjob.table.json",
        Skip("needs the cold capture and its tables above (root)"),
    ),
    ("sudo cargo test --release --features lzo --test zswap_kernel -- --ignored --test-threads 1", Skip(ROOT)),
    (
        "sudo cargo test --release --features lzo --test zswap_kernel small_pools_are_predicted_within_two_percent -- --ignored",
        Skip(ROOT),
    ),
    ("sudo cargo test -p cannery-capture --test cold_pages -- --ignored", Skip(ROOT)),
    (
        "sudo flock /tmp/cannery-machine.lock cargo test --release --test cold_reclaim -- --ignored --test-threads 1",
        Skip(ROOT),
    ),
];

/// README's `sh` blocks, each a list of command lines: `\` continuations
/// joined, comments and blank lines dropped, spaces collapsed.
fn blocks(readme: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut lines = readme.lines();
    while let Some(l) = lines.next() {
        if l.trim() != "```sh" {
            continue;
        }
        let mut block = Vec::new();
        let mut pending = String::new();
        for l in lines.by_ref() {
            if l.trim() == "```" {
                break;
            }
            let code = match l.find(" #") {
                Some(i) => &l[..i],
                None if l.trim_start().starts_with('#') => "",
                None => l,
            };
            let code = code.trim_end();
            if let Some(head) = code.strip_suffix('\\') {
                pending.push_str(head);
                pending.push(' ');
                continue;
            }
            pending.push_str(code);
            let line = pending.split_whitespace().collect::<Vec<_>>().join(" ");
            pending.clear();
            if !line.is_empty() {
                block.push(line);
            }
        }
        out.push(block);
    }
    out
}

/// Runs `sh -c line` in `dir` with `cannery` first on PATH.
fn sh(dir: &Path, line: &str) -> std::process::Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_cannery")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("sh")
        .args(["-c", line])
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// A live process whose PID replaces `1234`: it outlives however long the
/// block's commands take on a loaded machine, and is killed when dropped
/// (also when an example fails).
struct Live(Child);

impl Drop for Live {
    fn drop(&mut self) {
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

/// Makes what the block's lines take for granted, in `dir`; returns the
/// live process for `1234`, if the block uses one.
fn setup(dir: &Path, block: &[String]) -> Option<Live> {
    std::os::unix::fs::symlink(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora"),
        dir.join("corpora"),
    )
    .unwrap();
    let uses = |s: &str| block.iter().any(|l| l.contains(s));
    let prep = |line: &str| {
        let o = sh(dir, line);
        assert!(o.status.success(), "setup `{line}`: {}", common::stderr(&o));
    };
    if uses("lengths.bin") {
        let (ll, d) = cannery_codec::table::builtin::kernel_2024_lengths();
        std::fs::write(dir.join("lengths.bin"), [&ll[..], &d[..]].concat()).unwrap();
    }
    if uses("pages.bin") {
        prep("cannery corpus export fleet-snapshots --workload redis --sample 16 --seed 1 -o pages.bin -q");
    }
    if uses("./myjob") {
        std::fs::write(dir.join("myjob"), "#!/bin/sh\nexec sleep 30\n").unwrap();
        prep("chmod +x myjob");
    }
    if uses("host2.hist.json") {
        prep("cannery stats --corpus corpora/fleet-snapshots/jvm-index --out host2.hist.json -q");
    }
    if uses("qpl/redis.table.json") {
        prep("cannery train --corpus corpora/fleet-snapshots/redis --qpl-compatible --no-dicts -o qpl -q");
    }
    if uses("tables/") && !uses("--out tables/") {
        prep("cannery train --corpus fleet-snapshots --no-dicts -o tables -q");
    }
    uses("1234").then(|| Live(Command::new("sleep").arg("3600").spawn().unwrap()))
}

#[test]
fn readme_shell_examples_work_as_shown() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let blocks = blocks(&readme);
    let all: Vec<&String> = blocks.iter().flatten().collect();
    let unruled: Vec<_> = all
        .iter()
        .filter(|l| !RULES.iter().any(|(r, _)| *r == l.as_str()))
        .collect();
    assert!(
        unruled.is_empty(),
        "README lines with no rule in tests/readme_examples.rs: {unruled:#?}"
    );
    let stale: Vec<_> = RULES
        .iter()
        .map(|(r, _)| r)
        .filter(|r| !all.iter().any(|l| l.as_str() == **r))
        .collect();
    assert!(
        stale.is_empty(),
        "rules whose line is no longer in README: {stale:#?}"
    );
    let (mut ran, mut skipped) = (0, 0);
    for block in &blocks {
        let dir = tempfile::tempdir().unwrap();
        let live = setup(dir.path(), block);
        let pid = live.as_ref().map(|c| c.0.id().to_string());
        for line in block {
            let action = &RULES.iter().find(|(r, _)| *r == line.as_str()).unwrap().1;
            let (cmd, want) = match action {
                Skip(why) => {
                    eprintln!("not run: `{line}`: {why}");
                    skipped += 1;
                    continue;
                }
                Run => (line.to_string(), None),
                Fails(code, says) => (line.to_string(), Some((*code, *says))),
                As(cmd, why) => {
                    eprintln!("`{line}` runs as `{cmd}`: {why}");
                    (cmd.to_string(), None)
                }
            };
            let cmd = match &pid {
                Some(p) => cmd.replace("1234", p),
                None => cmd,
            };
            let o = sh(dir.path(), &cmd);
            let err = common::stderr(&o);
            match want {
                None => assert!(o.status.success(), "README example `{cmd}` failed: {err}"),
                Some((code, says)) => {
                    assert_eq!(o.status.code(), Some(code), "README example `{cmd}`: {err}");
                    assert!(
                        err.contains(says),
                        "README example `{cmd}` should name {says}: {err}"
                    );
                }
            }
            ran += 1;
        }
        drop(live);
    }
    assert!(
        ran >= 35,
        "only {ran} README examples ran ({skipped} skipped)"
    );
    eprintln!("README examples: {ran} ran, {skipped} not run here (reasons in RULES)");
}
