//! The reliability harness (issue #33): one table of cases, input class ×
//! command, each run against the built `cannery` in a fresh directory and
//! checked for its exit status, the files afterwards (contents, modes,
//! types, no `.partial` left) and, for resource cases, its peak RSS and CPU
//! time. Every leaf subcommand `cannery --help` lists must have a row, and
//! a cell that cannot apply says why ([`Cell::Na`]) instead of being absent.
//! Cases that need an unprivileged user run as `nobody` when the suite runs
//! as root.

mod common;

use common::measure::{
    closed_stdout_run, partials, run, subcommands, CPU_CEILING_S, RSS_CEILING_KIB,
};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};

/// What a command reads as `{IN}`.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Fixture {
    /// A table file (kernel-2024, JSON).
    Table,
    /// A table every target accepts (all 286 + 30 symbols coded).
    FullTable,
    /// 316 raw code lengths.
    Lengths,
    /// 64 compressible raw pages.
    Pages,
    /// Records of `compress --mode fixed` of those pages.
    Records,
    /// A histogram of those pages.
    Histogram,
    /// No input file.
    None,
}

/// One command's row: how it is run, and what it reads and writes.
struct Row {
    /// The subcommand path, as `--help` names it.
    cmd: &'static str,
    /// Arguments of a run that succeeds; `{IN}` is the input, `{OUT}` the
    /// output file, `{OUTDIR}` the directory of outputs named `out_name`.
    args: &'static str,
    input: Fixture,
    /// The output file's name, if the command writes one.
    out_name: Option<&'static str>,
    /// True if it prints a report on stdout when run as `args`.
    prints: bool,
    /// Cells this row cannot run, with the reason.
    na: &'static [(Class, &'static str)],
}

/// The input and output classes every command is tried with.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Class {
    MissingInput,
    DirectoryInput,
    DevZeroInput,
    UnreadableInput,
    OutputIsInput,
    OutputIsInputHardLink,
    ExistingOutput,
    ExistingOutputForce,
    OutputSymlinkForce,
    OutputFifo,
    OutputFullDevice,
    ClosedStdout,
    FullStdout,
}

const CLASSES: [Class; 13] = [
    Class::MissingInput,
    Class::DirectoryInput,
    Class::DevZeroInput,
    Class::UnreadableInput,
    Class::OutputIsInput,
    Class::OutputIsInputHardLink,
    Class::ExistingOutput,
    Class::ExistingOutputForce,
    Class::OutputSymlinkForce,
    Class::OutputFifo,
    Class::OutputFullDevice,
    Class::ClosedStdout,
    Class::FullStdout,
];

/// The outcome the table expects of one cell.
enum Cell {
    /// Run it; exit status wanted.
    Run(i32),
    /// Not applicable, and why.
    Na(String),
}

const STREAM: &str = "reads a stream to its end by design (as zstd does): /dev/zero never ends";
const MACHINE: &str =
    "changes the machine's swap and zswap (root, the machine lock): tests/zswap_kernel.rs";

const ZRAM: &str = "adds and removes a zram device (root, the machine lock): tests/zram_kernel.rs";

fn rows() -> Vec<Row> {
    use Class::*;
    use Fixture as F;
    let r = |cmd, args, input, out_name, prints, na| Row {
        cmd,
        args,
        input,
        out_name,
        prints,
        na,
    };
    vec![
        r("table show", "table show {IN}", F::Table, None, true, &[]),
        r("table import", "table import --from lengths {IN} -o {OUT}", F::Lengths, Some("o.json"), false, &[]),
        r("table builtin", "table builtin kernel-2024 -o {OUT}", F::None, Some("o.json"), false, &[]),
        r("compress", "compress --mode fixed --in {IN} -o {OUT}", F::Pages, Some("o.rec"), false, &[(DevZeroInput, STREAM)]),
        r("decompress", "decompress --mode fixed --in {IN} -o {OUT}", F::Records, Some("o.pages"), false, &[(DevZeroInput, STREAM)]),
        r("export kernel", "export kernel --table {IN} --name x -o {OUT}", F::Table, Some("o.h"), false, &[]),
        r("export fixed-kernel", "export fixed-kernel -o {OUT}", F::None, Some("o.h"), false, &[]),
        r("export qpl", "export qpl --table {IN} -o {OUT}", F::FullTable, Some("o.table"), false, &[]),
        r("export isal", "export isal --table {IN} -o {OUT}", F::FullTable, Some("o.c"), false, &[]),
        r("train", "train --histograms {IN} --name h -o {OUTDIR}", F::Histogram, Some("h.table.json"), false, &[]),
        r("stats", "stats --corpus {IN} -o {OUT}", F::Pages, Some("o.json"), false, &[]),
        r("merge", "merge {IN} -o {OUT}", F::Histogram, Some("o.json"), false, &[]),
        r("eval", "eval --table kernel-2024 --no-peers --corpus {IN}", F::Pages, None, true, &[]),
        r("capture", "capture --count 1 --interval 10ms -o {OUT} -- sleep 2", F::None, Some("o.cansnap"), false, &[
            (OutputFifo, "a snapshot is seekable (its header is written last); a FIFO is refused"),
            (OutputFullDevice, "a snapshot is seekable; a device is refused"),
        ]),
        r("corpus info", "corpus info {IN}", F::Pages, None, true, &[]),
        r("corpus export", "corpus export {IN} -o {OUT}", F::Pages, Some("o.pages"), false, &[]),
        r("corpus scan-secrets", "corpus scan-secrets --json {IN}", F::Pages, None, true, &[]),
        r("backends", "backends", F::None, None, true, &[]),
        r("validate", "validate --table kernel-2024 --max-pages 2 --backends software,miniz_oxide --corpus {IN}", F::Pages, None, true, &[]),
        r("fuzz", "fuzz --backend software --against miniz_oxide --iterations 3 --repro-dir rd --corpus {IN}", F::Pages, None, true, &[]),
        r("zswap-sim", "zswap-sim --mode fixed --corpus {IN}", F::Pages, None, true, &[]),
        r("zswap-kernel", "zswap-kernel --corpus {IN} -o {OUT}", F::Pages, Some("o.md"), false, &[
            (ExistingOutputForce, MACHINE),
            (OutputSymlinkForce, MACHINE),
            (OutputFifo, MACHINE),
            (OutputFullDevice, MACHINE),
            (ClosedStdout, MACHINE),
            (FullStdout, MACHINE),
            (UnreadableInput, MACHINE),
        ]),
        r("zram-kernel", "zram-kernel --corpus {IN} -o {OUT}", F::Pages, Some("o.md"), false, &[
            (ExistingOutputForce, ZRAM),
            (OutputSymlinkForce, ZRAM),
            (OutputFifo, ZRAM),
            (OutputFullDevice, ZRAM),
            (ClosedStdout, ZRAM),
            (FullStdout, ZRAM),
            (UnreadableInput, ZRAM),
        ]),
        r("restore", "restore", F::None, None, true, &[]),
        r("bench", "bench --max-pages 8 --reps 1 --cycled-mib 1 --corpus {IN} -o {OUT}", F::Pages, Some("o.md"), false, &[]),
        r("completions", "completions bash", F::None, None, true, &[]),
        r("man", "man -o {OUTDIR}", F::None, Some("cannery.1"), false, &[
            (OutputFifo, "writes a directory of pages"),
            (OutputFullDevice, "writes a directory of pages"),
        ]),
    ]
}

impl Row {
    /// What the table expects of `class` for this row.
    fn cell(&self, class: Class) -> Cell {
        use Class::*;
        if let Some((_, why)) = self.na.iter().find(|(c, _)| *c == class) {
            return Cell::Na(why.to_string());
        }
        let has_in = self.input != Fixture::None;
        let has_out = self.out_name.is_some();
        let dir_out = self.args.contains("{OUTDIR}");
        match class {
            MissingInput | DirectoryInput | DevZeroInput | UnreadableInput if !has_in => {
                Cell::Na("reads no input file".into())
            }
            OutputIsInput | OutputIsInputHardLink if !(has_in && has_out) => {
                Cell::Na("has no input file and output file both".into())
            }
            ExistingOutput | ExistingOutputForce | OutputSymlinkForce | OutputFifo
            | OutputFullDevice
                if !has_out =>
            {
                Cell::Na("writes no output file".into())
            }
            OutputFifo | OutputFullDevice if dir_out => Cell::Na("writes into a directory".into()),
            ClosedStdout | FullStdout if !self.prints => {
                Cell::Na("prints no report on stdout".into())
            }
            ExistingOutputForce | OutputSymlinkForce | OutputFifo | ClosedStdout => Cell::Run(0),
            _ => Cell::Run(2),
        }
    }
}

/// A directory with every fixture, readable by `nobody`.
fn fixtures() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
    // Compressible, varied pages: text-like runs with a page number.
    let mut pages = Vec::new();
    for i in 0..64u32 {
        let mut p = Vec::with_capacity(4096);
        while p.len() < 4096 {
            p.extend_from_slice(
                format!("page {i} row {} value {};", p.len() % 97, i * 31).as_bytes(),
            );
        }
        p.truncate(4096);
        pages.extend(p);
    }
    std::fs::write(d.join("in.pages"), &pages).unwrap();
    // A complete code over all 286 + 30 symbols: 226 × 8 + 60 × 9 bits,
    // 2 × 4 + 28 × 5 bits.
    let mut lengths = vec![8u8; 226];
    lengths.extend([9u8; 60]);
    lengths.extend([4u8; 2]);
    lengths.extend([5u8; 28]);
    std::fs::write(d.join("in.lengths"), &lengths).unwrap();
    let setup: [&[&str]; 4] = [
        &["table", "builtin", "kernel-2024", "-o", "in.json"],
        &[
            "table",
            "import",
            "--from",
            "lengths",
            "in.lengths",
            "-o",
            "full.json",
        ],
        &[
            "compress", "--mode", "fixed", "--in", "in.pages", "-o", "in.rec",
        ],
        &["stats", "--corpus", "in.pages", "-o", "hist.json"],
    ];
    for args in setup {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let r = run(d, &args, Stdio::null(), false);
        assert_eq!(r.code, Some(0), "fixture {args:?}: {}", r.stderr);
    }
    dir
}

fn fixture_file(f: Fixture) -> &'static str {
    match f {
        Fixture::Table => "in.json",
        Fixture::FullTable => "full.json",
        Fixture::Lengths => "in.lengths",
        Fixture::Pages => "in.pages",
        Fixture::Records => "in.rec",
        Fixture::Histogram => "hist.json",
        Fixture::None => "",
    }
}

/// Copies the fixtures into a fresh case directory.
fn case_dir(fx: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    for e in std::fs::read_dir(fx).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.path().join(e.file_name())).unwrap();
    }
    dir
}

fn args_of(row: &Row, input: &str, out: &str) -> Vec<String> {
    row.args
        .replace("{IN}", input)
        .replace("{OUTDIR}", ".")
        .replace("{OUT}", out)
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// Runs one cell; returns a failure message, or None.
fn check_cell(row: &Row, class: Class, want: i32, fx: &Path) -> Option<String> {
    use Class::*;
    let dir = case_dir(fx);
    let d = dir.path();
    let input = fixture_file(row.input).to_string();
    let out = row.out_name.unwrap_or("o").to_string();
    let input_bytes = std::fs::read(d.join(&input)).ok();
    let mut force = false;
    let mut stdout = Stdio::null();
    let mut drop_root = false;
    let (mut in_arg, mut out_arg) = (input.clone(), out.clone());
    let mut fifo_reader = None;
    match class {
        MissingInput => in_arg = "missing.file".into(),
        DirectoryInput => {
            std::fs::create_dir(d.join("emptydir")).unwrap();
            in_arg = "emptydir".into();
        }
        DevZeroInput => in_arg = "/dev/zero".into(),
        UnreadableInput => {
            std::fs::set_permissions(d.join(&input), std::fs::Permissions::from_mode(0o000))
                .unwrap();
            drop_root = true;
        }
        OutputIsInput | OutputIsInputHardLink => {
            force = true;
            if row.args.contains("{OUTDIR}") {
                // The command names its output: make the input that file.
                std::fs::rename(d.join(&input), d.join(&out)).unwrap();
                in_arg = out.clone();
            } else if class == OutputIsInput {
                out_arg = input.clone();
            } else {
                std::fs::hard_link(d.join(&input), d.join("link.in")).unwrap();
                out_arg = "link.in".into();
            }
            if class == OutputIsInputHardLink && row.args.contains("{OUTDIR}") {
                std::fs::hard_link(d.join(&out), d.join("other.in")).unwrap();
                in_arg = "other.in".into();
            }
        }
        ExistingOutput | ExistingOutputForce => {
            std::fs::write(d.join(&out), b"old").unwrap();
            std::fs::set_permissions(d.join(&out), std::fs::Permissions::from_mode(0o640)).unwrap();
            force = class == ExistingOutputForce;
        }
        OutputSymlinkForce => {
            std::fs::create_dir(d.join("real")).unwrap();
            std::fs::write(d.join("real").join(&out), b"old").unwrap();
            if row.args.contains("{OUTDIR}") {
                std::os::unix::fs::symlink("real", d.join("linkdir")).unwrap();
                out_arg = "linkdir".into();
            } else {
                std::os::unix::fs::symlink(Path::new("real").join(&out), d.join("link.out"))
                    .unwrap();
                out_arg = "link.out".into();
            }
            force = true;
        }
        OutputFifo => {
            let fifo = d.join("fifo");
            let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
            assert!(status.success());
            out_arg = "fifo".into();
            force = true;
            fifo_reader = Some(std::thread::spawn(move || {
                std::fs::read(fifo).map(|b| b.len())
            }));
        }
        OutputFullDevice => {
            out_arg = "/dev/full".into();
            force = true;
        }
        ClosedStdout => stdout = Stdio::piped(),
        FullStdout => stdout = Stdio::from(std::fs::File::create("/dev/full").unwrap()),
    }
    let mut args = args_of(row, &in_arg, &out_arg);
    if row.args.contains("{OUTDIR}") && out_arg != out {
        let i = args.iter().position(|a| a == ".").unwrap();
        args[i] = out_arg.clone();
    }
    if force {
        // Before a workload command's `--`, if any.
        let at = args.iter().position(|a| a == "--").unwrap_or(args.len());
        args.insert(at, "-f".into());
    }
    let r = if class == ClosedStdout {
        closed_stdout_run(d, &args)
    } else {
        run(d, &args, stdout, drop_root)
    };
    let what = format!("{} × {class:?} ({})", row.cmd, args.join(" "));
    if std::env::var_os("RELIABILITY_VERBOSE").is_some() {
        eprintln!(
            "{what}: exit {:?}, {} KiB, {:.2} s",
            r.code, r.rss_kib, r.cpu_s
        );
    }
    if r.code == Some(101) || r.stderr.contains("panicked") {
        return Some(format!("{what}: panicked: {}", r.stderr));
    }
    let ok_code = match class {
        // Killed by SIGPIPE like cat, or done before the first write.
        ClosedStdout => r.code == Some(0) || r.signal == Some(libc::SIGPIPE),
        _ => r.code == Some(want),
    };
    if !ok_code {
        return Some(format!(
            "{what}: exit {:?} signal {:?}, want {want}: {}",
            r.code, r.signal, r.stderr
        ));
    }
    if class == DevZeroInput && (r.rss_kib > RSS_CEILING_KIB || r.cpu_s > CPU_CEILING_S) {
        return Some(format!(
            "{what}: {} KiB RSS, {:.1} s CPU",
            r.rss_kib, r.cpu_s
        ));
    }
    if let Some(p) = partials(d).first() {
        return Some(format!("{what}: left {p}"));
    }
    // The input is never changed.
    if let Some(before) = &input_bytes {
        // The fixture, under the name the case gave it.
        let held = match class {
            OutputIsInput | OutputIsInputHardLink => d.join(&in_arg),
            _ => d.join(&input),
        };
        let now = std::fs::read(held).ok();
        if class != UnreadableInput && now.as_ref() != Some(before) {
            return Some(format!("{what}: the input changed"));
        }
    }
    let file_at = |p: &Path| std::fs::read(p).ok();
    match class {
        MissingInput | DirectoryInput | DevZeroInput | UnreadableInput => {
            if row.out_name.is_some() && d.join(&out).exists() && row.input != Fixture::None {
                return Some(format!("{what}: wrote an output after a bad input"));
            }
            if class == MissingInput && !r.stderr.contains("missing.file") {
                return Some(format!(
                    "{what}: the error does not name the file: {}",
                    r.stderr
                ));
            }
        }
        ExistingOutput => {
            if file_at(&d.join(&out)).as_deref() != Some(b"old") {
                return Some(format!("{what}: the existing output changed"));
            }
            if !r.stderr.contains("-f") {
                return Some(format!("{what}: no hint to pass -f: {}", r.stderr));
            }
        }
        ExistingOutputForce => {
            let m = std::fs::metadata(d.join(&out)).unwrap();
            if file_at(&d.join(&out)).as_deref() == Some(b"old") || !m.is_file() {
                return Some(format!("{what}: not replaced"));
            }
            // The old mode (0640), masked to 0600 for memory contents.
            let mode = m.mode() & 0o777;
            if mode != 0o640 && mode != 0o600 {
                return Some(format!("{what}: replaced with mode {mode:o}, was 640"));
            }
        }
        OutputSymlinkForce => {
            let link = if row.args.contains("{OUTDIR}") {
                "linkdir"
            } else {
                "link.out"
            };
            let lm = std::fs::symlink_metadata(d.join(link)).unwrap();
            if !lm.file_type().is_symlink() {
                return Some(format!("{what}: the symlink was replaced"));
            }
            if file_at(&d.join("real").join(&out)).as_deref() == Some(b"old") {
                return Some(format!("{what}: the link's target was not replaced"));
            }
            if !partials(&d.join("real")).is_empty() {
                return Some(format!("{what}: left a partial file beside the target"));
            }
        }
        OutputFifo => {
            let m = std::fs::symlink_metadata(d.join("fifo")).unwrap();
            let got = fifo_reader.take().unwrap().join().unwrap().unwrap_or(0);
            if !m.file_type().is_fifo() || got == 0 {
                return Some(format!(
                    "{what}: FIFO replaced or nothing written through ({got} bytes)"
                ));
            }
        }
        OutputFullDevice => {
            let m = std::fs::metadata("/dev/full").unwrap();
            if !m.file_type().is_char_device() {
                return Some(format!("{what}: /dev/full is no longer a device"));
            }
        }
        _ => {}
    }
    if let Some(t) = fifo_reader {
        // Unblock a reader whose writer never opened the FIFO.
        let _ = std::fs::OpenOptions::new().write(true).open(d.join("fifo"));
        let _ = t.join();
    }
    None
}

#[test]
fn every_subcommand_has_a_row() {
    let table: Vec<&str> = rows().iter().map(|r| r.cmd).collect();
    let listed = subcommands(&[]);
    assert!(listed.len() > 20, "{listed:?}");
    for c in &listed {
        assert!(
            table.contains(&c.as_str()),
            "subcommand {c:?} has no row in the harness"
        );
    }
    for c in &table {
        assert!(listed.iter().any(|l| l == c), "row {c:?} is no subcommand");
    }
}

#[test]
fn every_cell_of_the_table() {
    let fx = fixtures();
    let mut failures = Vec::new();
    let mut counts = std::collections::BTreeMap::<String, (u32, u32)>::new();
    for row in rows() {
        for class in CLASSES {
            let e = counts.entry(format!("{class:?}")).or_default();
            match row.cell(class) {
                Cell::Na(why) => {
                    assert!(!why.is_empty());
                    e.1 += 1;
                }
                Cell::Run(want) => {
                    e.0 += 1;
                    if let Some(f) = check_cell(&row, class, want, fx.path()) {
                        failures.push(f);
                    }
                }
            }
        }
    }
    for (class, (ran, na)) in &counts {
        eprintln!("{class}: {ran} run, {na} not applicable");
    }
    assert!(
        failures.is_empty(),
        "{} failing cells:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Ctrl-C and SIGTERM while a writer's output is still partial: the one
/// shared handler removes the partial file and the exit status says which
/// signal (128 + its number). The input is a FIFO kept open, so the
/// command is mid-write when the signal comes.
#[test]
fn interrupted_writers_leave_no_partial_file() {
    let fx = fixtures();
    let cases: &[(&[&str], i32)] = &[
        (
            &["compress", "--mode", "fixed", "--in", "fifo", "-o", "o.rec"],
            libc::SIGINT,
        ),
        (
            &["compress", "--mode", "fixed", "--in", "fifo", "-o", "o.rec"],
            libc::SIGTERM,
        ),
    ];
    for (args, sig) in cases {
        let dir = case_dir(fx.path());
        let d = dir.path();
        assert!(Command::new("mkfifo")
            .arg(d.join("fifo"))
            .status()
            .unwrap()
            .success());
        let mut child = Command::new(env!("CARGO_BIN_EXE_cannery"))
            .args(*args)
            .current_dir(d)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Feed a page's worth, keep the writing end open, wait for the
        // partial file to appear.
        let feed = "in.pages";
        let mut w = std::fs::OpenOptions::new()
            .write(true)
            .open(d.join("fifo"))
            .unwrap();
        std::io::Write::write_all(&mut w, &std::fs::read(d.join(feed)).unwrap()[..8192]).unwrap();
        let start = std::time::Instant::now();
        while partials(d).is_empty() && start.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(
            !partials(d).is_empty(),
            "{args:?}: no partial file while writing"
        );
        // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
        unsafe { libc::kill(child.id() as libc::pid_t, *sig) };
        let status = child.wait().unwrap();
        drop(w);
        assert_eq!(status.code(), Some(128 + sig), "{args:?} signal {sig}");
        assert!(partials(d).is_empty(), "{args:?}: left {:?}", partials(d));
        assert!(
            !d.join(args[args.len() - 1]).exists(),
            "{args:?}: an output appeared"
        );
    }
}
