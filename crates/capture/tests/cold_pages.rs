//! Cold-page capture against the running kernel: a workload keeps reading
//! half of its pages; after `cold_after`, the captured pages must be mostly
//! the other half. Needs root and the kernel's idle page tracking, so it is
//! ignored by default; run it where `/sys/kernel/mm/page_idle/bitmap`
//! exists with
//!
//! ```sh
//! sudo cargo test -p cannery-capture --test cold_pages -- --ignored
//! ```

mod common;

use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::Duration;

use cannery_capture::capture::{CaptureOptions, Capturer};
use cannery_capture::PAGE_SIZE;
use common::{VecSink, TESTEE};

#[test]
#[ignore = "needs root and /sys/kernel/mm/page_idle (CONFIG_IDLE_PAGE_TRACKING)"]
fn the_cold_set_is_the_untouched_half() {
    let mut child = Command::new(TESTEE)
        .arg("half-hot")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let region =
        u64::from_str_radix(line.trim().strip_prefix("READY region=").unwrap(), 16).unwrap();
    let half = 128 * PAGE_SIZE as u64;
    let mut capturer = Capturer::new(CaptureOptions {
        cold_after: Some(Duration::from_secs(2)),
        address_range: Some((region, region + 2 * half)),
        ..CaptureOptions::default()
    });
    let mut sink = VecSink::default();
    let report = capturer.sample(child.id(), None, &mut sink);
    let _ = child.kill();
    let _ = child.wait();
    let report = report.unwrap();
    let untouched = sink
        .pages
        .iter()
        .filter(|(a, _, _)| *a >= region + half)
        .count();
    let touched = sink.pages.len() - untouched;
    assert!(
        untouched >= 120,
        "most untouched pages are cold: {untouched} of 128"
    );
    assert!(
        touched <= 6,
        "read pages are hot: {touched} of 128 taken as cold"
    );
    assert_eq!(report.cold as usize, sink.pages.len());
    assert!(report.hot >= 122, "{report:?}");
    assert_eq!(capturer.hot_cold(), (report.hot, report.cold));
}
