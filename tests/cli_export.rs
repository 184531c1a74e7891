//! CLI tests of `cannery export ...` and `cannery table import --from
//! kernel-header`: files written, round trip, exact error messages on
//! stderr and the QPL 56-bit warning.

use std::path::Path;
use std::process::{Command, Output};

use cannery_codec::huffman::limited_code_lengths;
use cannery_codec::table::rules::{self, BitBudget, Rule};
use cannery_codec::Table;
use cannery_export::c_header::kernel_header;
use cannery_export::KernelOptions;

fn cannery(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cannery"))
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A complete table with every symbol coded whose codes are long enough to
/// break the 56-bit rule (rare symbols get 15-bit codes).
fn long_code_table() -> Table {
    let ll: Vec<u64> = (0..286u64)
        .map(|i| if i < 200 { 1 << 20 } else { 1 + (285 - i) })
        .collect();
    let d: Vec<u64> = (0..30u32).map(|i| 1u64 << (30 - i).min(20)).collect();
    Table::from_lengths(
        &limited_code_lengths(&ll, 15),
        &limited_code_lengths(&d, 15),
    )
    .unwrap()
}

#[test]
fn kernel_header_round_trips_through_table_import() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().join("canned.h");
    let o = cannery(&[
        "export",
        "kernel",
        "--table",
        "kernel-2024",
        "--name",
        "canned",
        "-o",
        s(&h),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&h).unwrap();
    let want = kernel_header(&Table::kernel_2024(), &KernelOptions::new("canned")).unwrap();
    assert_eq!(text, want);

    let t = dir.path().join("canned.table.json");
    let o = cannery(&[
        "table",
        "import",
        "--from",
        "kernel-header",
        s(&h),
        "-o",
        s(&t),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let back = Table::from_json(&std::fs::read_to_string(&t).unwrap()).unwrap();
    assert_eq!(back, Table::kernel_2024());
    assert_eq!(
        stderr(&o),
        format!(
            "cannery: imported table {} (canned) from {}\n",
            back.id(),
            h.display()
        )
    );
}

#[test]
fn every_api_and_table_files_work() {
    let dir = tempfile::tempdir().unwrap();
    let tf = dir.path().join("long.table.json");
    std::fs::write(&tf, long_code_table().to_json()).unwrap();
    for api in ["mainline", "header-table", "builtin"] {
        let o = cannery(&[
            "export",
            "kernel",
            "--table",
            s(&tf),
            "--name",
            "wide",
            "--api",
            api,
        ]);
        assert!(o.status.success(), "{api}: {}", stderr(&o));
        let text = String::from_utf8(o.stdout.clone()).unwrap();
        assert!(text.contains("static const u32 wide_ll_iaa[286]"), "{api}");
        assert!(text.contains("#define WIDE_HEADER_SIZE_IN_BITS"), "{api}");
        assert_eq!(
            stderr(&o).contains("the header in the file is informational"),
            api == "mainline",
            "{api}"
        );
    }
    let o = cannery(&[
        "export",
        "kernel",
        "--table",
        s(&tf),
        "--name",
        "x",
        "--api",
        "9arg",
    ]);
    assert!(!o.status.success());
}

#[test]
fn fixed_kernel_writes_the_kernel_fixed_arrays() {
    let o = cannery(&["export", "fixed-kernel"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("static const u32 fixed_ll_iaa[286] = {\n\t/*   0 */ 0x40030, 0x40031,"));
    assert!(text.contains("\t/* 144 */ 0x48190, 0x48191,"));
    assert!(text.contains("static const u32 fixed_d_iaa[30] = {\n\t/*   0 */ 0x28000, 0x28001,"));
    let same = cannery(&["export", "kernel", "--table", "fixed", "--name", "fixed"]);
    assert_eq!(same.stdout, text.as_bytes());
}

#[test]
fn bad_names_and_unsafe_tables_are_refused_with_clear_messages() {
    let o = cannery(&[
        "export",
        "kernel",
        "--table",
        "kernel-2024",
        "--name",
        "my-table",
    ]);
    assert_eq!(o.status.code(), Some(2), "a refused input is exit status 2");
    assert_eq!(
        stderr(&o),
        "cannery: \"my-table\" is not a valid C identifier: only ASCII letters, digits and '_' are allowed\n"
    );
    let (mut ll, d) = cannery_codec::table::builtin::kernel_2024_lengths();
    ll[100] = 0;
    let t = Table::from_lengths(&ll, &d).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let tf = dir.path().join("bad.table.json");
    std::fs::write(&tf, t.to_json()).unwrap();
    let o = cannery(&["export", "kernel", "--table", s(&tf), "--name", "bad"]);
    assert_eq!(o.status.code(), Some(2), "a refused input is exit status 2");
    assert_eq!(
        stderr(&o),
        format!(
            "cannery: table {} cannot be used by IAA: literal/length symbol 100 has no code; IAA needs all of 0..=285 coded\n",
            t.id()
        )
    );
}

#[test]
fn import_of_a_tampered_header_names_the_symbol() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().join("c.h");
    let text = kernel_header(&Table::kernel_2024(), &KernelOptions::new("c")).unwrap();
    std::fs::write(&h, text.replacen("0x28002,", "0x28003,", 1)).unwrap();
    let o = cannery(&[
        "table",
        "import",
        "--from",
        "kernel-header",
        s(&h),
        "-o",
        s(&dir.path().join("t.json")),
    ]);
    assert_eq!(o.status.code(), Some(2), "a refused input is exit status 2");
    assert_eq!(
        stderr(&o),
        format!(
            "cannery: cannot import {}: literal/length symbol 0: code 0x3 but canonical code for length 5 is 0x2\n",
            h.display()
        )
    );
}

#[test]
fn qpl_export_writes_counts_and_sidecar_and_refuses_what_qpl_would_change() {
    let dir = tempfile::tempdir().unwrap();
    // A table QPL loads unchanged: the counts reproduce its lengths.
    let t = rules::qpl_loadable_variant(&Table::kernel_2024());
    assert!(Rule::QplLoadable.check(&t).is_ok());
    let tf = dir.path().join("ok.table.json");
    std::fs::write(&tf, t.to_json()).unwrap();
    let out = dir.path().join("ok.qpl");
    let o = cannery(&["export", "qpl", "--table", s(&tf), "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let counts = std::fs::read(&out).unwrap();
    let (ll, d) = cannery_export::qpl::parse_counts(&counts).unwrap();
    assert_eq!(limited_code_lengths(&ll, 15), t.lengths().litlen.to_vec());
    assert_eq!(limited_code_lengths(&d, 15), t.lengths().dist.to_vec());
    let side: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("ok.qpl.json")).unwrap())
            .unwrap();
    assert_eq!(side["table"]["id"], t.id());
    assert_eq!(
        side["bit_budget"]["total"],
        BitBudget::of(t.lengths()).total()
    );

    // Over the 56-bit budget: QPL would rebuild it with 13/12, so refused.
    let long = long_code_table();
    assert!(
        !BitBudget::of(long.lengths()).fits(),
        "test table must break the budget"
    );
    let tf = dir.path().join("long.table.json");
    std::fs::write(&tf, long.to_json()).unwrap();
    let refused = dir.path().join("long.qpl");
    let o = cannery(&["export", "qpl", "--table", s(&tf), "-o", s(&refused)]);
    assert_eq!(o.status.code(), Some(2), "a refused input is exit status 2");
    let err = stderr(&o);
    assert!(err.contains("56-bit budget is exceeded"), "{err}");
    assert!(err.contains("13/12"), "{err}");
    assert!(!refused.exists());

    let o = cannery(&["export", "qpl", "--table", "kernel-2024", "-o", s(&refused)]);
    assert_eq!(o.status.code(), Some(2), "a refused input is exit status 2");
    assert!(
        stderr(&o).contains("distance symbols 24..=29 have no code"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn isal_export_and_its_refusals() {
    let o = cannery(&["export", "isal", "--table", "fixed", "--name", "fx"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("struct isal_hufftables fx = {"));
    assert!(text.contains("#include <isa-l/igzip_lib.h>"));
    assert!(!text.contains("IGZIP_HIST_SIZE !="));
    // kernel-2024 leaves distance symbols 24..=29 uncoded; the stock 32 KiB
    // igzip can emit them, so it is refused, saying why.
    let o = cannery(&["export", "isal", "--table", "kernel-2024", "--name", "k24"]);
    assert_eq!(o.status.code(), Some(2), "a refused input is exit status 2");
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).contains("distance symbols 24..=29 have no code"),
        "{}",
        stderr(&o)
    );
    let dir = tempfile::tempdir().unwrap();
    let tf = dir.path().join("k24q.table.json");
    std::fs::write(
        &tf,
        rules::qpl_loadable_variant(&Table::kernel_2024()).to_json(),
    )
    .unwrap();
    let o = cannery(&["export", "isal", "--table", s(&tf), "--name", "k24q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("struct isal_hufftables k24q = {"));
    // The long-code table breaks igzip's 56-bit write: refused for ISA-L.
    let tf = dir.path().join("long.table.json");
    std::fs::write(&tf, long_code_table().to_json()).unwrap();
    let o = cannery(&["export", "isal", "--table", s(&tf)]);
    assert_eq!(o.status.code(), Some(2), "a refused input is exit status 2");
    assert!(
        stderr(&o).contains("56-bit budget is exceeded"),
        "{}",
        stderr(&o)
    );
}
