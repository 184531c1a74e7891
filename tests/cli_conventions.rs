//! The command line's conventions, as README documents them: exit status 0
//! (success), 1 (a finding), 2 (usage, input or I/O error); `-q` leaves
//! stderr empty on success; status goes to stderr and reports to stdout;
//! `completions`, `man` and `--version` say what they should.

mod common;

use common::{cannery, stderr, stdout};

#[test]
fn exit_status_tells_success_findings_and_errors_apart() {
    let dir = tempfile::tempdir().unwrap();
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    // 0: a command that did its job.
    assert_eq!(
        cannery(&["table", "show", "kernel-2024"]).status.code(),
        Some(0)
    );
    // 1: a finding. A planted private key is a secret found by the scan.
    let pages = dir.path().join("secret.pages");
    let mut page = vec![0u8; 4096];
    let key =
        b"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----\n";
    page[100..100 + key.len()].copy_from_slice(key);
    std::fs::write(&pages, &page).unwrap();
    let o = cannery(&["corpus", "scan-secrets", &s(&pages)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // 2: a usage error (clap), an unknown table, a missing input, an
    // output that exists.
    assert_eq!(cannery(&["train", "--no-such-flag"]).status.code(), Some(2));
    let o = cannery(&["table", "show", "no-such-table"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = cannery(&["compress", "--in", "/no/such/file", "-o", "-"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let out = dir.path().join("k.json");
    std::fs::write(&out, "keep me").unwrap();
    let o = cannery(&["table", "builtin", "kernel-2024", "-o", &s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me");
}

#[test]
fn quiet_leaves_stderr_empty_and_verbose_says_more() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k.json");
    let out = out.to_str().unwrap();
    let o = cannery(&["table", "builtin", "kernel-2024", "-o", out]);
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("written to"),
        "status on stderr: {}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty(), "no report: {}", stdout(&o));
    let o = cannery(&["-q", "table", "builtin", "kernel-2024", "-o", out, "-f"]);
    assert!(o.status.success());
    assert_eq!(stderr(&o), "", "-q: nothing on stderr");
    // The flag is global: after the subcommand too.
    let o = cannery(&[
        "train",
        "--corpus",
        "fleet-snapshots",
        "-o",
        dir.path().join("t").to_str().unwrap(),
        "--no-peers",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "-q train: nothing on stderr");
    assert!(
        stdout(&o).contains("fleet"),
        "the report is still on stdout"
    );
    // -v: each training step (no terminal here, so no bar) as a line.
    let o = cannery(&[
        "train",
        "--corpus",
        "fleet-snapshots",
        "-o",
        dir.path().join("v").to_str().unwrap(),
        "--no-peers",
        "-v",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for step in ["scanning redis", "training redis", "evaluating redis"] {
        assert!(
            stderr(&o).contains(step),
            "-v says {step:?}: {}",
            stderr(&o)
        );
    }
    // Errors are said even with -q.
    let o = cannery(&["-q", "table", "show", "no-such-table"]);
    assert!(stderr(&o).contains("no-such-table"), "{}", stderr(&o));
    // -q and -v together are a usage error.
    assert_eq!(cannery(&["-q", "-v", "backends"]).status.code(), Some(2));
}

#[test]
fn completions_man_and_version() {
    let o = cannery(&["completions", "bash"]);
    assert!(o.status.success());
    let text = stdout(&o);
    assert!(
        text.contains("_cannery()") && text.contains("zswap-kernel"),
        "bash completion"
    );
    let o = cannery(&["completions", "zsh"]);
    assert!(stdout(&o).starts_with("#compdef cannery"), "{}", stdout(&o));
    assert_eq!(cannery(&["completions", "tcsh"]).status.code(), Some(2));

    let o = cannery(&["man"]);
    assert!(o.status.success());
    let page = stdout(&o);
    assert!(page.contains(".TH cannery 1"), "{page}");
    assert!(
        page.contains("Exit status"),
        "the exit codes are in the page"
    );
    let dir = tempfile::tempdir().unwrap();
    let o = cannery(&["man", "-o", dir.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    for name in [
        "cannery.1",
        "cannery-train.1",
        "cannery-corpus-scan-secrets.1",
    ] {
        let p = dir.path().join(name);
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains(".TH"), "{name}");
    }

    let o = cannery(&["--version"]);
    let v = stdout(&o);
    assert!(
        v.starts_with(&format!("cannery {}", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    assert!(v.contains("commit: ") && v.contains("features: "), "{v}");
    let short = stdout(&cannery(&["-V"]));
    assert!(
        short.contains('(') && short.trim_end().ends_with(')'),
        "{short}"
    );
}

#[test]
fn corpus_export_writes_pages_and_records_that_other_commands_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let export = |extra: &[&str]| {
        let mut args = vec!["corpus", "export", "fleet-snapshots", "--workload", "redis"];
        args.extend_from_slice(extra);
        cannery(&args)
    };
    let o = export(&["--sample", "50", "--seed", "3", "-o", &p("a.pages")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let a = std::fs::read(p("a.pages")).unwrap();
    assert_eq!(a.len(), 50 * 4096);
    // Every exported page is a page of the workload, none twice.
    let all = export(&["-o", &p("all.pages")]);
    assert!(all.status.success(), "{}", stderr(&all));
    let all = std::fs::read(p("all.pages")).unwrap();
    assert_eq!(all.len() % 4096, 0);
    let pages: std::collections::HashSet<&[u8]> = all.chunks(4096).collect();
    assert!(a.chunks(4096).all(|c| pages.contains(c)));
    // The same seed gives the same sample; another seed another one.
    assert!(
        export(&["--sample", "50", "--seed", "3", "-o", &p("b.pages")])
            .status
            .success()
    );
    assert_eq!(std::fs::read(p("b.pages")).unwrap(), a);
    assert!(
        export(&["--sample", "50", "--seed", "4", "-o", &p("c.pages")])
            .status
            .success()
    );
    assert_ne!(std::fs::read(p("c.pages")).unwrap(), a);
    // Records carry the same pages, in hex, with where they came from.
    let o = export(&[
        "--sample", "50", "--seed", "3", "--emit", "records", "-o", "-",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut from_records = Vec::new();
    for line in stdout(&o).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["workload"], "redis");
        assert!(v["index"].as_u64().unwrap() < (all.len() / 4096) as u64);
        let hex = v["data"].as_str().unwrap();
        from_records.extend(
            (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()),
        );
    }
    assert_eq!(from_records, a);
    // compress reads the export; decompress gives it back.
    let o = cannery(&[
        "compress",
        "--mode",
        "dynamic",
        "-i",
        &p("a.pages"),
        "-o",
        &p("a.rec"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = cannery(&[
        "decompress",
        "--mode",
        "dynamic",
        "-i",
        &p("a.rec"),
        "-o",
        &p("a.back"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(p("a.back")).unwrap(), a);
    // An existing output is kept; an unknown workload is an error.
    let o = export(&["-o", &p("a.pages")]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(p("a.pages")).unwrap(), a);
    let o = cannery(&[
        "corpus",
        "export",
        "fleet-snapshots",
        "--workload",
        "nope",
        "-o",
        &p("n.pages"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("it has: gcc-build"), "{}", stderr(&o));
    assert!(!dir.path().join("n.pages").exists());
}
