//! The reclaim step: make the kernel push a workload's pages out with its
//! own reclaim until `target` of its anonymous pages are swapped out.
//!
//! - v1 ([`squeeze_v1`]): lower the cgroup's `memory.limit_in_bytes` in
//!   steps (half of what is left to swap, at least [`MIN_STEP`]). It stops
//!   when a limit write of the smallest step returns `EBUSY`
//!   [`BUSY_TRIES`] times in a row (the kernel could not reclaim down to
//!   it; a larger step that does is halved and tried again), when the cgroup is under OOM (its OOM killer is off, so its
//!   tasks wait instead of dying), at the floor [`MIN_LIMIT`], or after
//!   [`STALLS`] steps without progress. The caller sets the limit back
//!   before reading the swapped pages.
//! - v2 ([`reclaim_v2`]): write what is left to `memory.reclaim`, until
//!   the target is reached or [`STALLS`] writes bring nothing.
//!
//! Progress is counted by the caller (`swapped`: the workload's pages
//! swapped out since the step began, from its page map), so page cache,
//! which reclaim takes first, never counts. The knobs are a trait
//! ([`Knobs`]) so the stepping is tested against a model.

use std::io;

use crate::cgroup::MemoryCgroup;
use crate::guard::Restore;
use crate::system::System;

/// The smallest limit step, bytes.
pub const MIN_STEP: u64 = 1 << 20;
/// v1 never lowers the limit below this, bytes.
pub const MIN_LIMIT: u64 = 4 << 20;
/// Steps in a row without progress before the step gives up.
pub const STALLS: u32 = 6;
/// Writes of one limit that return `EBUSY` before the step stops there.
pub const BUSY_TRIES: u32 = 4;
/// Steps at most.
pub const MAX_STEPS: u32 = 400;

/// What the step can read and turn.
pub trait Knobs {
    /// Memory charged to the cgroup, bytes.
    fn usage(&mut self) -> io::Result<u64>;
    /// v1: sets the limit; `EBUSY` when the kernel cannot reclaim down to it.
    fn set_limit(&mut self, bytes: u64) -> io::Result<()>;
    /// v1: the cgroup's tasks wait at the limit (OOM killer off).
    fn under_oom(&mut self) -> bool;
    /// v2: asks for `bytes` to be reclaimed (`EAGAIN`: less was).
    fn reclaim(&mut self, bytes: u64) -> io::Result<()>;
    /// The workload's pages swapped out since the step began.
    fn swapped(&mut self) -> io::Result<u64>;
    /// True when the run was interrupted (SIGINT/SIGTERM).
    fn interrupted(&mut self) -> bool;
}

/// How a step ended.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    /// Pages swapped out by the step (the last count).
    pub swapped: u64,
    /// Limit writes (v1) or reclaim requests (v2) made.
    pub steps: u32,
    /// v1: the lowest limit the kernel accepted, bytes.
    pub lowest_limit: Option<u64>,
    /// Why it stopped: `reached`, or where and why it stopped short.
    pub stopped: String,
    /// True when the target was reached.
    pub reached: bool,
}

/// True for the OS error `errno`, also when a caller rewrapped it with a
/// message (which keeps only its `kind`).
fn is(e: &io::Error, errno: i32, kind: io::ErrorKind) -> bool {
    e.raw_os_error() == Some(errno) || (e.raw_os_error().is_none() && e.kind() == kind)
}

/// The checks before each step: the target reached, an interruption or
/// [`MAX_STEPS`] `steps` end the step, with `out` saying why.
fn finished(k: &mut dyn Knobs, out: &mut Outcome, last: u64, target: u64, steps: &str) -> bool {
    out.swapped = last;
    out.stopped = if last >= target {
        out.reached = true;
        "reached".into()
    } else if k.interrupted() {
        "interrupted".into()
    } else if out.steps >= MAX_STEPS {
        format!("stopped after {MAX_STEPS} {steps}")
    } else {
        return false;
    };
    true
}

fn page_bytes(pages: u64) -> u64 {
    pages.saturating_mul(4096)
}

/// v1: lowers the limit in steps until `target` pages are swapped out (see
/// the module doc for where it stops). The limit is left at its lowest:
/// the caller sets it back.
pub fn squeeze_v1(k: &mut dyn Knobs, target: u64) -> io::Result<Outcome> {
    let mut out = Outcome::default();
    let mut last = k.swapped()?;
    let mut stalls = 0;
    // Halved at each EBUSY, so the kernel gets smaller steps to make.
    let mut cap = u64::MAX;
    loop {
        if finished(k, &mut out, last, target, "limit steps") {
            return Ok(out);
        }
        let usage = k.usage()?;
        let step = (page_bytes(target - last) / 2).min(cap).max(MIN_STEP);
        let current = out.lowest_limit.map_or(usage, |l| l.min(usage));
        let limit = current.saturating_sub(step) & !4095;
        if limit < MIN_LIMIT {
            out.stopped = format!(
                "stopped at the floor: the next limit ({} KiB) would be under {} MiB",
                limit >> 10,
                MIN_LIMIT >> 20
            );
            return Ok(out);
        }
        out.steps += 1;
        // One reclaim pass that frees nothing makes the write fail with
        // EBUSY; a pass also clears the accessed bits it finds, so pages
        // touched just before (the last cycle's reads) may go on the next
        // try: up to BUSY_TRIES in a row.
        let mut set = k.set_limit(limit);
        for _ in 1..BUSY_TRIES {
            match &set {
                Err(e) if is(e, libc::EBUSY, io::ErrorKind::ResourceBusy) => {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    set = k.set_limit(limit);
                }
                _ => break,
            }
        }
        match set {
            Ok(()) => out.lowest_limit = Some(limit),
            Err(e) if is(&e, libc::EBUSY, io::ErrorKind::ResourceBusy) && step > MIN_STEP => {
                cap = step / 2;
                last = k.swapped()?;
                continue;
            }
            Err(e) if is(&e, libc::EBUSY, io::ErrorKind::ResourceBusy) => {
                out.swapped = k.swapped()?;
                out.reached = out.swapped >= target;
                out.stopped = format!(
                    "stopped where the kernel could reclaim no further: the limit {} KiB \
                     returned EBUSY (usage {} KiB)",
                    limit >> 10,
                    usage >> 10
                );
                return Ok(out);
            }
            Err(e) => return Err(e),
        }
        let now = k.swapped()?;
        if k.under_oom() {
            out.swapped = now;
            out.reached = now >= target;
            out.stopped = format!(
                "stopped before OOM: the cgroup waited for memory at the limit {} KiB",
                limit >> 10
            );
            return Ok(out);
        }
        if now > last {
            stalls = 0;
        } else {
            stalls += 1;
            if stalls >= STALLS {
                out.swapped = now;
                out.stopped = format!(
                    "stopped after {STALLS} limit steps without a page swapped (limit {} KiB)",
                    limit >> 10
                );
                return Ok(out);
            }
        }
        last = now;
    }
}

/// v2: asks `memory.reclaim` for what is left until `target` pages are
/// swapped out or [`STALLS`] requests in a row bring nothing.
pub fn reclaim_v2(k: &mut dyn Knobs, target: u64) -> io::Result<Outcome> {
    let mut out = Outcome::default();
    let mut last = k.swapped()?;
    let mut stalls = 0;
    loop {
        if finished(k, &mut out, last, target, "reclaim requests") {
            return Ok(out);
        }
        out.steps += 1;
        match k.reclaim(page_bytes(target - last).max(4096)) {
            Ok(()) => {}
            // Less than asked was reclaimed: the count says how much.
            Err(e) if is(&e, libc::EAGAIN, io::ErrorKind::WouldBlock) => {}
            Err(e) => return Err(e),
        }
        let now = k.swapped()?;
        if now > last {
            stalls = 0;
        } else {
            stalls += 1;
            if stalls >= STALLS {
                out.swapped = now;
                out.stopped =
                    format!("stopped after {STALLS} reclaim requests without a page swapped");
                return Ok(out);
            }
        }
        last = now;
    }
}

/// The real knobs: a cgroup's files (limits through the guard, so they are
/// set back on restore), with the swapped count and interruption from the
/// caller.
pub struct CgroupKnobs<'a> {
    /// The guard the limit writes go through.
    pub guard: &'a mut Restore,
    /// The cgroup.
    pub cgroup: &'a MemoryCgroup,
    /// The workload's pages swapped out since the step began.
    pub swapped: &'a mut dyn FnMut() -> io::Result<u64>,
    /// True when the run was interrupted.
    pub interrupted: &'a dyn Fn() -> bool,
    /// v2: the `memory.reclaim` request the kernel accepted last.
    pub request: Option<String>,
}

impl CgroupKnobs<'_> {
    fn system(&self) -> System {
        self.guard.system().clone()
    }
}

impl Knobs for CgroupKnobs<'_> {
    fn usage(&mut self) -> io::Result<u64> {
        self.cgroup.usage(&self.system())
    }
    fn set_limit(&mut self, bytes: u64) -> io::Result<()> {
        let file = self.cgroup.limit_file();
        self.guard.set(&file, &bytes.to_string()).map(|_| ())
    }
    fn under_oom(&mut self) -> bool {
        self.cgroup.under_oom(&self.system())
    }
    fn reclaim(&mut self, bytes: u64) -> io::Result<()> {
        let req = self.cgroup.reclaim(&self.system(), bytes)?;
        self.request = Some(req);
        Ok(())
    }
    fn swapped(&mut self) -> io::Result<u64> {
        (self.swapped)()
    }
    fn interrupted(&mut self) -> bool {
        (self.interrupted)()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cgroup model: `anon` pages resident plus `cache` pages of page
    /// cache; a limit under usage reclaims cache first, then anonymous
    /// pages, but never below `locked` resident bytes (EBUSY); when
    /// `oom_below` is set, a limit under it puts the cgroup under OOM.
    #[derive(Default)]
    struct Model {
        anon: u64,
        cache: u64,
        swapped: u64,
        locked: u64,
        oom_below: Option<u64>,
        limit: u64,
        limits: Vec<u64>,
        oom: bool,
        stuck: bool,
        interrupt_after: Option<u32>,
        calls: u32,
    }

    impl Model {
        fn usage_bytes(&self) -> u64 {
            (self.anon + self.cache) * 4096
        }
        fn shrink_to(&mut self, bytes: u64) {
            let mut over = self.usage_bytes().saturating_sub(bytes).div_ceil(4096);
            let c = over.min(self.cache);
            self.cache -= c;
            over -= c;
            let a = over.min(self.anon);
            self.anon -= a;
            self.swapped += a;
        }
    }

    impl Knobs for Model {
        fn usage(&mut self) -> io::Result<u64> {
            Ok(self.usage_bytes())
        }
        fn set_limit(&mut self, bytes: u64) -> io::Result<()> {
            self.limits.push(bytes);
            if bytes < self.locked {
                // As the guard returns it: the kind kept, a message added.
                let e = io::Error::from_raw_os_error(libc::EBUSY);
                return Err(io::Error::new(e.kind(), format!("cannot write: {e}")));
            }
            if !self.stuck {
                self.shrink_to(bytes);
            }
            self.limit = bytes;
            self.oom = self.oom_below.is_some_and(|o| bytes < o);
            Ok(())
        }
        fn under_oom(&mut self) -> bool {
            self.oom
        }
        fn reclaim(&mut self, bytes: u64) -> io::Result<()> {
            if self.stuck {
                return Err(io::Error::from_raw_os_error(libc::EAGAIN));
            }
            let target = self.usage_bytes().saturating_sub(bytes);
            self.shrink_to(target.max(self.locked));
            Ok(())
        }
        fn swapped(&mut self) -> io::Result<u64> {
            Ok(self.swapped)
        }
        fn interrupted(&mut self) -> bool {
            self.calls += 1;
            self.interrupt_after.is_some_and(|n| self.calls > n)
        }
    }

    #[test]
    fn v1_lowers_the_limit_until_half_the_anonymous_pages_are_out() {
        let mut m = Model {
            anon: 20_000,
            cache: 1_000,
            ..Model::default()
        };
        let o = squeeze_v1(&mut m, 10_000).unwrap();
        assert!(o.reached, "{o:?}");
        assert_eq!(o.stopped, "reached");
        assert!(m.swapped >= 10_000);
        // Page cache went first and did not count; the overshoot is at
        // most one step.
        assert_eq!(m.cache, 0);
        assert!(m.swapped < 10_000 + 5_000 + 256, "{}", m.swapped);
        // Each limit is below the one before, all page aligned.
        assert!(m.limits.windows(2).all(|w| w[1] < w[0]));
        assert!(m.limits.iter().all(|l| l % 4096 == 0));
        assert_eq!(o.lowest_limit, m.limits.last().copied());
    }

    #[test]
    fn v1_stops_at_ebusy_without_going_further() {
        let mut m = Model {
            anon: 20_000,
            locked: 15_000 * 4096,
            ..Model::default()
        };
        let o = squeeze_v1(&mut m, 10_000).unwrap();
        assert!(!o.reached);
        assert!(o.stopped.contains("EBUSY"), "{}", o.stopped);
        // The refused limit is the last one tried, BUSY_TRIES times.
        let refused = *m.limits.last().unwrap();
        assert!(refused < m.locked);
        assert_eq!(
            m.limits.iter().filter(|&&l| l == refused).count() as u32,
            BUSY_TRIES
        );
        assert!(o.lowest_limit.unwrap() >= m.locked);
        assert!(o.swapped >= 5_000 - 1 && o.swapped < 10_000);
    }

    #[test]
    fn v1_stops_before_oom_and_at_the_floor() {
        let mut m = Model {
            anon: 20_000,
            oom_below: Some(16_000 * 4096),
            ..Model::default()
        };
        let o = squeeze_v1(&mut m, 10_000).unwrap();
        assert!(o.stopped.contains("before OOM"), "{}", o.stopped);
        // It stopped at the first limit that showed OOM: no step after it.
        assert_eq!(m.limits.iter().filter(|&&l| l < 16_000 * 4096).count(), 1);
        let mut small = Model {
            anon: 1_200,
            ..Model::default()
        };
        let o = squeeze_v1(&mut small, 1_100).unwrap();
        assert!(o.stopped.contains("floor"), "{}", o.stopped);
        assert!(small.limits.iter().all(|&l| l >= MIN_LIMIT));
    }

    #[test]
    fn no_progress_and_interruption_end_the_step() {
        let mut m = Model {
            anon: 200_000,
            stuck: true,
            ..Model::default()
        };
        let o = squeeze_v1(&mut m, 10_000).unwrap();
        assert!(
            o.stopped.contains("without a page swapped"),
            "{}",
            o.stopped
        );
        assert_eq!(o.steps, STALLS);
        let o = reclaim_v2(&mut m, 10_000).unwrap();
        assert!(
            o.stopped.contains("without a page swapped"),
            "{}",
            o.stopped
        );
        let mut m = Model {
            anon: 20_000,
            stuck: true,
            interrupt_after: Some(2),
            ..Model::default()
        };
        assert_eq!(squeeze_v1(&mut m, 10_000).unwrap().stopped, "interrupted");
        // An already reached target needs no step at all.
        let mut m = Model {
            anon: 10,
            swapped: 50,
            ..Model::default()
        };
        let o = squeeze_v1(&mut m, 50).unwrap();
        assert!(o.reached && o.steps == 0 && m.limits.is_empty());
    }

    #[test]
    fn v2_asks_for_what_is_left_until_reached() {
        let mut m = Model {
            anon: 20_000,
            cache: 3_000,
            ..Model::default()
        };
        let o = reclaim_v2(&mut m, 10_000).unwrap();
        assert!(o.reached, "{o:?}");
        assert!(o.steps >= 2, "the cache took the first request: {o:?}");
        assert!(m.swapped >= 10_000 && m.swapped < 10_000 + 3_000);
    }
}
