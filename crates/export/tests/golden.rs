//! Golden files: the exported text for the fixed code, the 2024 kernel table
//! and the frozen trained table is compared byte for byte with
//! `tests/golden/`. Regenerate deliberately with
//! `CANNERY_BLESS=1 cargo test -p cannery-export --test golden` and review
//! the diff (see tests/golden/README.md).

mod common;

use cannery_codec::Table;
use cannery_export::c_header::kernel_header;
use cannery_export::qpl::QplExport;
use cannery_export::{isal, Api, KernelOptions};
use common::{check_golden, trained_table, GOLDEN_GENERATOR};

fn kernel(table: &Table, name: &str, api: Api) -> String {
    kernel_header(
        table,
        &KernelOptions::new(name)
            .with_api(api)
            .with_generator(GOLDEN_GENERATOR),
    )
    .unwrap()
}

#[test]
fn fixed_kernel_header() {
    check_golden(
        "fixed-kernel.h",
        &kernel(&Table::fixed(), "fixed", Api::HeaderTable),
    );
}

#[test]
fn kernel_2024_headers_in_all_three_forms() {
    let t = Table::kernel_2024();
    check_golden("kernel-2024.h", &kernel(&t, "canned", Api::HeaderTable));
    check_golden(
        "kernel-2024-mainline.h",
        &kernel(&t, "canned", Api::Mainline),
    );
    check_golden("kernel-2024-builtin.h", &kernel(&t, "canned", Api::Builtin));
}

#[test]
fn trained_header_isal_and_qpl_sidecar() {
    let t = trained_table();
    check_golden("trained.h", &kernel(&t, "trained", Api::HeaderTable));
    check_golden(
        "trained-isal.c",
        &isal::hufftables_c(&t, "trained_hufftables", GOLDEN_GENERATOR).unwrap(),
    );
    let q = QplExport::new(&t).unwrap();
    check_golden("trained-qpl.json", &q.sidecar_json(&t, GOLDEN_GENERATOR));
}

#[test]
fn output_is_deterministic() {
    let t = trained_table();
    let a = kernel(&t, "trained", Api::Builtin);
    let b = kernel(&t.clone(), "trained", Api::Builtin);
    assert_eq!(a, b);
    assert!(!a.contains("Generated on"));
}
