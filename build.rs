//! Build script of the `cannery` CLI: records the commit (`git describe`,
//! when built from a repository with git installed; "commit unknown"
//! otherwise) and the enabled cargo features, for `cannery --version`.

use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["describe", "--always", "--dirty", "--abbrev=12"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "commit unknown".into());
    println!("cargo:rustc-env=CANNERY_COMMIT={commit}");
    let features: Vec<&str> = ["qpl", "isal", "qat", "lzo"]
        .into_iter()
        .filter(|f| std::env::var(format!("CARGO_FEATURE_{}", f.to_uppercase())).is_ok())
        .collect();
    let features = if features.is_empty() {
        "none (qpl, isal, qat and lzo are off)".to_string()
    } else {
        features.join(", ")
    };
    println!("cargo:rustc-env=CANNERY_FEATURES={features}");
    // A new commit (HEAD, or the branch it names) or a changed index
    // changes the description.
    let mut watched = vec![".git/HEAD".to_string(), ".git/index".to_string()];
    if let Ok(head) = std::fs::read_to_string(".git/HEAD") {
        if let Some(branch) = head.trim().strip_prefix("ref: ") {
            watched.push(format!(".git/{branch}"));
        }
    }
    watched.push(".git/packed-refs".into());
    for f in watched {
        if std::path::Path::new(&f).exists() {
            println!("cargo:rerun-if-changed={f}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
