//! Capturing a live helper process with known page contents: exactly the
//! expected pages and counts, nothing faulted in, special mappings skipped,
//! freeze, a target exiting mid-capture, spawn mode, permission denied,
//! stale handles, reproducible sampling.
//!
//! Tests that need root are `#[ignore]`d with the reason, not skipped
//! silently; run them with:
//!
//! ```text
//! sudo cargo test -p cannery-capture --test capture_process -- --ignored
//! ```

mod common;

use cannery_capture::capture::{CaptureOptions, Capturer, Progress};
use cannery_capture::corpus::open_pages;
use cannery_capture::session::{self, Job, Schedule, WorkloadSpec};
use cannery_capture::target::Target;
use cannery_capture::{ErrorKind, RegionKind, PAGE_SIZE};
use cannery_files::output::Existing;
use common::{pattern, Testee, VecSink, TESTEE};
use std::time::Duration;

fn zero_page_known() -> bool {
    cannery_capture::pagemap::zero_page_pfn().is_some()
}

fn region_opts(t: &Testee) -> CaptureOptions {
    CaptureOptions {
        address_range: Some((t.region, t.region + 64 * PAGE_SIZE as u64)),
        ..CaptureOptions::default()
    }
}

fn expected_pages(t: &Testee) -> Vec<(u64, Vec<u8>)> {
    let mut v: Vec<(u64, Vec<u8>)> = (0..8).map(|i| (t.region + i * 4096, pattern(i))).collect();
    v.extend((16..20).map(|i| (t.region + i * 4096, pattern(i - 16))));
    v
}

#[test]
fn captures_exactly_the_known_pages_without_faulting_any_in() {
    let mut t = Testee::start();
    // One round trip first, so the testee's own start-up allocations (its
    // stdin buffer) are done before resident memory is measured.
    assert!(t.ping());
    let map_before = t.region_pagemap();
    let rss_before = t.rss_anon_kb();
    let mut c = Capturer::new(region_opts(&t));
    let mut sink = VecSink::default();
    let r = c.sample(t.pid(), None, &mut sink).unwrap();
    let got: Vec<(u64, Vec<u8>)> = sink.pages.iter().map(|(a, _, d)| (*a, d.clone())).collect();
    assert_eq!(got, expected_pages(&t));
    assert!(sink.pages.iter().all(|(_, k, _)| *k == RegionKind::Anon));
    let cn = r.counts;
    // Pages 20..24 were only read (mapped to the shared zero page); they are
    // recognised and skipped when page frame numbers are visible (root),
    // else read and counted as zero pages.
    let zp = if zero_page_known() { 0 } else { 4 };
    assert_eq!(
        (cn.scanned, cn.stored, cn.zero, cn.same_filled),
        (20 + zp, 12, 4 + zp, 4)
    );
    assert_eq!(
        (cn.duplicate, cn.unreadable, cn.sampled_out, cn.redacted),
        (0, 0, 0, 0)
    );
    assert_eq!(
        sink.processes,
        vec![(0, t.pid(), "cannery-capture".to_string())]
    );
    // Nothing was faulted in: the page map of the region is unchanged
    // (pages 20..64 still absent or zero-page), and anonymous RSS did not grow.
    let map_after = t.region_pagemap();
    let present = |m: &[u64]| m.iter().map(|e| e >> 63).collect::<Vec<_>>();
    assert_eq!(present(&map_before), present(&map_after));
    assert!(
        map_after[24..].iter().all(|e| e >> 63 == 0),
        "untouched pages stay absent"
    );
    assert!(t.rss_anon_kb() <= rss_before, "RssAnon grew");
    t.stop();
}

#[test]
fn dedup_counts_duplicates_once() {
    let t = Testee::start();
    let mut c = Capturer::new(CaptureOptions {
        dedup: true,
        ..region_opts(&t)
    });
    let mut sink = VecSink::default();
    let r = c.sample(t.pid(), None, &mut sink).unwrap();
    assert_eq!(sink.pages.len(), 8);
    assert_eq!((r.counts.stored, r.counts.duplicate), (8, 4));
    // A second sample: everything is now a duplicate.
    let r2 = c.sample(t.pid(), None, &mut sink).unwrap();
    assert_eq!((r2.counts.stored, r2.counts.duplicate), (0, 12));
    assert_eq!(c.counts().duplicate, 16);
}

#[test]
fn full_capture_skips_dontdump_shared_and_guard_mappings() {
    let t = Testee::start();
    let mut c = Capturer::new(CaptureOptions::default());
    let mut sink = VecSink::default();
    let r = c.sample(t.pid(), None, &mut sink).unwrap();
    let inside = |a: u64, base: u64, n: u64| a >= base && a < base + n * 4096;
    for (a, _, _) in &sink.pages {
        assert!(!inside(*a, t.dontdump, 4), "MADV_DONTDUMP page captured");
        assert!(!inside(*a, t.shared, 2), "shared page captured");
        assert!(!inside(*a, t.guard, 4), "guard page captured");
    }
    for (addr, data) in expected_pages(&t) {
        assert!(sink.pages.iter().any(|(a, _, d)| *a == addr && *d == data));
    }
    assert!(sink.pages.iter().any(|(_, k, _)| *k == RegionKind::Stack));
    let c = r.counts;
    assert_eq!(
        c.scanned,
        c.stored + c.zero + c.same_filled + c.duplicate + c.unreadable + c.sampled_out + c.redacted
    );
}

#[test]
fn freeze_measures_pause_and_leaves_target_running() {
    let mut t = Testee::start();
    let mut c = Capturer::new(CaptureOptions {
        freeze: true,
        max_pause: Duration::from_secs(30),
        ..region_opts(&t)
    });
    let mut sink = VecSink::default();
    let r = c.sample(t.pid(), None, &mut sink).unwrap();
    assert!(r.pause_max > Duration::ZERO);
    assert!(!r.pause_limited);
    assert_eq!(sink.pages.len(), 12);
    assert_eq!(c.pauses().0, r.pause_max);
    // All threads run again: the target answers.
    assert!(t.ping(), "target did not answer after thaw");
    let status = std::fs::read_to_string(format!("/proc/{}/status", t.pid())).unwrap();
    assert!(status.contains("TracerPid:\t0"), "still traced");
}

#[test]
fn file_private_mappings_give_only_their_written_pages_when_asked() {
    let t = Testee::start();
    let range = Some((t.filemap, t.filemap + 2 * PAGE_SIZE as u64));
    let run = |include_file_private: bool| {
        let mut c = Capturer::new(CaptureOptions {
            include_file_private,
            address_range: range,
            ..CaptureOptions::default()
        });
        let mut sink = VecSink::default();
        c.sample(t.pid(), None, &mut sink).unwrap();
        sink.pages
    };
    assert!(run(false).is_empty());
    let pages = run(true);
    assert_eq!(pages.len(), 1, "only the written (copy-on-write) page");
    let mut want = pattern(400);
    want[0] ^= 0xff;
    assert_eq!(pages[0], (t.filemap, RegionKind::FilePrivate, want));
}

#[test]
fn freeze_stops_reading_at_the_pause_limit() {
    let mut t = Testee::start();
    let mut c = Capturer::new(CaptureOptions {
        freeze: true,
        max_pause: Duration::ZERO,
        ..CaptureOptions::default()
    });
    let mut sink = VecSink::default();
    let r = c.sample(t.pid(), None, &mut sink).unwrap();
    assert!(r.pause_limited);
    assert_eq!(r.counts.scanned, 0);
    assert!(t.ping(), "target did not answer after thaw");
}

#[test]
fn target_exiting_mid_capture_ends_gracefully() {
    let t = Testee::start();
    let pid = t.pid();
    let mut c = Capturer::new(CaptureOptions::default());
    let mut killed = false;
    c.set_progress(Box::new(move |p: &Progress<'_>| {
        if let Progress::MappingDone { .. } = p {
            if !killed {
                // SAFETY: kill has no memory preconditions.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                killed = true;
                // SIGKILL is delivered asynchronously: wait until the target
                // is a zombie, so the rest of the capture sees it gone.
                loop {
                    let stat =
                        std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                    let state = stat
                        .rsplit(')')
                        .next()
                        .and_then(|r| r.split_whitespace().next());
                    if matches!(state, Some("Z") | Some("X") | None) {
                        break;
                    }
                    std::thread::yield_now();
                }
            }
        }
    }));
    let mut sink = VecSink::default();
    let r = c
        .sample(pid, None, &mut sink)
        .expect("capture should end gracefully");
    assert_eq!(r.exited, 1);
    assert_eq!(r.processes, 1);
    // Sampling again reports the target gone.
    let e = c.sample(pid, None, &mut sink).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoSuchProcess);
}

#[test]
fn stale_handle_never_reads_a_new_process() {
    let mut child = std::process::Command::new(TESTEE)
        .arg("sleep-env")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let target = Target::attach(child.id()).unwrap();
    assert!(target.is_alive());
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!target.is_alive());
    // Whatever now has that pid, the handle refers to the dead process.
    let e = target.read_to_string("maps").unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::NoSuchProcess | ErrorKind::NotFound),
        "{e}"
    );
}

#[test]
fn sampling_is_reproducible_with_a_seed() {
    let t = Testee::start();
    let run = |seed: u64, rate: f64, max: Option<u64>| {
        let mut c = Capturer::new(CaptureOptions {
            seed,
            sample_rate: rate,
            ..region_opts(&t)
        });
        let mut sink = VecSink::default();
        let r = c.sample(t.pid(), max, &mut sink).unwrap();
        (sink.pages.iter().map(|p| p.0).collect::<Vec<_>>(), r.counts)
    };
    let (a, ca) = run(1, 1.0, Some(5));
    assert_eq!(a.len(), 5);
    assert_eq!((ca.stored, ca.sampled_out), (5, 7));
    assert_eq!(a, run(1, 1.0, Some(5)).0);
    assert!(a.windows(2).all(|w| w[0] < w[1]), "kept in address order");
    let others: Vec<Vec<u64>> = (2..6).map(|s| run(s, 1.0, Some(5)).0).collect();
    assert!(others.iter().any(|o| *o != a), "seed has no effect");
    let (b, cb) = run(3, 0.5, None);
    assert_eq!(b, run(3, 0.5, None).0);
    assert_eq!(cb.stored + cb.sampled_out, 12);
}

#[test]
fn session_writes_metadata_and_pages() {
    let t = Testee::start();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.cansnap");
    let sched = Schedule {
        count: 2,
        interval: Duration::from_millis(10),
    };
    let opts = CaptureOptions {
        dedup: true,
        ..region_opts(&t)
    };
    let mut heard = Vec::new();
    let rep = session::capture_pid(
        t.pid(),
        &Job {
            label: Some("testee"),
            opts: &opts,
            sched: &sched,
            out: &out,
            existing: Existing::Keep,
            level: 3,
        },
        &mut |done, of| heard.push((done, of)),
    )
    .unwrap();
    assert_eq!(rep.end_reason, "completed");
    assert_eq!(heard, [(1, 2), (2, 2)], "progress after each sample");
    let mut reader = open_pages(&out).unwrap();
    let h = reader.header().clone();
    assert!(h.finalized);
    assert_eq!(h.samples, 2);
    assert_eq!(h.page_size, 4096);
    assert_eq!(h.meta.label, "testee");
    assert_eq!(h.meta.command, "cannery-capture");
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(h.meta.kernel_release, release.trim());
    assert!(h.meta.sampling.dedup);
    assert_eq!(h.meta.count, 2);
    let c = h.counts;
    let zp = if zero_page_known() { 0 } else { 8 };
    assert_eq!(
        (c.scanned, c.stored, c.zero, c.same_filled, c.duplicate),
        (40 + zp, 8, 8 + zp, 8, 16)
    );
    let pages: Vec<_> = reader.by_ref().map(|p| p.unwrap()).collect();
    assert_eq!(pages.len(), 8);
    for (i, p) in pages.iter().enumerate() {
        assert_eq!(p.data, pattern(i as u64));
        assert_eq!(p.region, RegionKind::Anon);
    }
    assert_eq!(reader.process().unwrap().pid, t.pid());
}

#[test]
fn spawn_mode_uses_a_clean_environment_and_stops_the_workload() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("w.cansnap");
    let log = dir.path().join("w.log");
    let spec = WorkloadSpec {
        program: TESTEE.into(),
        args: vec!["sleep-env".into()],
        env: vec![("FOO".into(), "bar".into())],
        log: Some(log.clone()),
        ..WorkloadSpec::default()
    };
    let sched = Schedule {
        count: 2,
        interval: Duration::from_millis(50),
    };
    let opts = CaptureOptions {
        dedup: true,
        ..CaptureOptions::default()
    };
    let rep = session::run_workload(
        &spec,
        &Job {
            label: Some("sleeper"),
            opts: &opts,
            sched: &sched,
            out: &out,
            existing: Existing::Keep,
            level: 3,
        },
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(rep.end_reason, "completed");
    assert!(
        rep.killed,
        "workload should be stopped after the last sample"
    );
    assert!(rep.exit_status.is_some());
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "FOO=bar\n");
    let r = open_pages(&out).unwrap();
    assert_eq!(r.header().samples, 2);
    assert_eq!(r.header().meta.label, "sleeper");
    let pages: Vec<_> = r.map(|p| p.unwrap().data).collect();
    for i in 0..16 {
        assert!(
            pages.contains(&pattern(300 + i)),
            "page {i} of the workload missing"
        );
    }
}

#[test]
fn a_workload_exiting_before_the_first_sample_writes_nothing_and_keeps_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("e.cansnap");
    std::fs::write(&out, b"an older snapshot").unwrap();
    let spec = WorkloadSpec {
        program: TESTEE.into(),
        args: vec!["exit".into()],
        ..WorkloadSpec::default()
    };
    let sched = Schedule {
        count: 3,
        interval: Duration::from_millis(200),
    };
    let opts = CaptureOptions::default();
    // Without replacing, an existing file is refused before anything runs.
    let e = session::run_workload(
        &spec,
        &Job {
            label: Some("quick"),
            opts: &opts,
            sched: &sched,
            out: &out,
            existing: Existing::Keep,
            level: 3,
        },
        &mut |_, _| {},
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e}");
    // Replacing, the workload exits before the first sample: nothing is
    // written and the old file stays.
    let e = session::run_workload(
        &spec,
        &Job {
            label: Some("quick"),
            opts: &opts,
            sched: &sched,
            out: &out,
            existing: Existing::Replace,
            level: 3,
        },
        &mut |_, _| {},
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoSample, "{e}");
    assert!(e.to_string().contains("exited"), "{e}");
    assert_eq!(std::fs::read(&out).unwrap(), b"an older snapshot");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [std::ffi::OsString::from("e.cansnap")]);
    // A program that does not exist: the same.
    let missing = WorkloadSpec {
        program: "/nonexistent/bin".into(),
        ..WorkloadSpec::default()
    };
    session::run_workload(
        &missing,
        &Job {
            label: Some("x"),
            opts: &opts,
            sched: &sched,
            out: &out,
            existing: Existing::Replace,
            level: 3,
        },
        &mut |_, _| {},
    )
    .unwrap_err();
    assert_eq!(std::fs::read(&out).unwrap(), b"an older snapshot");
}

#[test]
#[ignore = "needs root (runs a helper as user nobody to be refused ptrace access): run with sudo cargo test -p cannery-capture -- --ignored"]
fn permission_denied_for_another_users_process() {
    let t = Testee::start();
    // Run a copy from a world-readable directory: the build directory may sit
    // under a home directory that user nobody cannot enter.
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let helper = dir.path().join("testee");
    std::fs::copy(TESTEE, &helper).unwrap();
    std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = std::process::Command::new(&helper)
        .args(["try-capture", &t.pid().to_string()])
        .uid(65534)
        .gid(65534)
        .output();
    let out =
        out.unwrap_or_else(|e| panic!("cannot run the helper as user nobody (run as root): {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("ERR PermissionDenied"),
        "got {stdout:?} {:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("belongs to uid 0"), "{stdout}");
    assert!(stdout.contains("CAP_SYS_PTRACE"), "{stdout}");
}

use std::os::unix::process::CommandExt;
