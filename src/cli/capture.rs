//! `cannery capture`: sample resident anonymous pages of a running process
//! (`--pid`) or of a workload it starts itself (`-- CMD ARGS...`) into a
//! snapshot file. Glue and reporting only (its arguments are
//! `cannery_cli::capture`); the work is done by
//! `cannery_capture::session`.

use anyhow::{bail, Context};
use cannery_capture::cold;
use cannery_capture::session::{self, Job, Schedule, SessionReport, WorkloadSpec};
use cannery_capture::CaptureOptions;
use cannery_cli::capture::{CaptureArgs, Include};
use cannery_files::output::Existing;

pub fn run(args: CaptureArgs) -> anyhow::Result<()> {
    if !(0.0..=1.0).contains(&args.sample) {
        bail!("--sample must be between 0 and 1, got {}", args.sample);
    }
    let opts = CaptureOptions {
        include_file_private: args.include.contains(&Include::FilePrivate),
        include_children: args.children,
        freeze: args.freeze,
        max_pause: args.max_pause,
        dedup: args.dedup,
        sample_rate: args.sample,
        max_pages: args.max_pages,
        seed: args.seed,
        redact_secrets: args.redact_secrets,
        address_range: None,
        cold_after: args.cold_after,
    };
    let sched = Schedule {
        count: args.count,
        interval: args.interval,
    };
    let job = Job {
        label: args.label.as_deref(),
        opts: &opts,
        sched: &sched,
        out: &args.out,
        existing: Existing::replace_if(args.force),
        level: args.level,
    };
    let spec = (!args.command.is_empty()).then(|| WorkloadSpec {
        program: args.command[0].clone(),
        args: args.command[1..].to_vec(),
        env: args.env.clone(),
        cwd: args.cwd.clone(),
        log: args.log.clone(),
        wait_exit: args.wait_exit,
    });
    if let Some(amount) = args.cold {
        return run_cold(&args, &job, spec.as_ref(), amount);
    }
    if args.cold_after.is_some() {
        // Say so before starting a workload, not after its first wait.
        cannery_capture::idle::IdleBitmap::open(std::path::Path::new(
            cannery_capture::idle::PAGE_IDLE_BITMAP,
        ))?;
    }
    let bar = crate::cli::out::bar(u64::from(args.count), "capture", "samples");
    let mut progress = |done: u32, _count: u32| bar.set_position(u64::from(done));
    let report = match (args.pid, &spec) {
        (Some(pid), None) => session::capture_pid(pid, &job, &mut progress)?,
        (None, Some(spec)) => session::run_workload(spec, &job, &mut progress)
            .with_context(|| format!("capturing workload {:?}", spec.program))?,
        (Some(_), Some(_)) => bail!("give either --pid or a command after --, not both"),
        (None, None) => {
            bail!("nothing to capture: give --pid PID or a command after -- (see --help)")
        }
    };
    bar.finish_and_clear();
    print_report(&args, &report)?;
    exit_if_interrupted(&report)
}

/// `--cold reclaim:AMOUNT`: the work is `cannery_capture::cold`.
fn run_cold(
    args: &CaptureArgs,
    job: &Job<'_>,
    spec: Option<&WorkloadSpec>,
    amount: cold::Amount,
) -> anyhow::Result<()> {
    if spec.is_some() == args.pid.is_some() {
        bail!("give either --pid or a command after --");
    }
    let cold_opts = cold::ColdOptions {
        amount,
        setup: args.setup,
        swap_file: args
            .swap_file
            .clone()
            .unwrap_or_else(cold::default_swap_file),
        keep_hot: args.keep_hot.clone(),
        reclaim_own_cgroup: args.reclaim_own_cgroup,
    };
    let status = &mut |l: &str| crate::cli::out::status(l);
    let (report, cold) = cold::capture_cold(spec, args.pid, job, &cold_opts, status)?;
    print_report(args, &report)?;
    for line in cold.status_lines(args.keep_hot.as_deref()) {
        crate::cli::out::status(line);
    }
    if !cold.restore_failures.is_empty() {
        bail!("the machine was not fully restored: run `cannery restore`");
    }
    exit_if_interrupted(&report)
}

/// Status lines on stderr, and the snapshot's header with `--json`.
fn print_report(args: &CaptureArgs, r: &SessionReport) -> anyhow::Result<()> {
    for line in r.status_lines(&args.out) {
        crate::cli::out::status(line);
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&r.header)?)?;
    }
    Ok(())
}

/// An interrupted capture (its snapshot finalized) exits like an
/// interrupted command.
fn exit_if_interrupted(r: &SessionReport) -> anyhow::Result<()> {
    if r.end_reason == "interrupted" {
        std::process::exit(130);
    }
    Ok(())
}
