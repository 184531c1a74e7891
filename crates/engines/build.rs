//! Build script of cannery-engines. Does nothing unless the `qpl`, `qat`
//! or `isal` feature is on. For QPL and QATzip it finds the installed
//! library (pkg-config, or the `QPL_DIR` / `QATZIP_DIR` install prefix),
//! generates Rust bindings for its C header with bindgen, and links it (QPL)
//! or records where it is for the run-time loader (QATzip). For ISA-L it
//! finds the header and library (`ISAL_DIR`, or pkg-config's `libisal`),
//! compiles the small C shim in native/isal_shim.c against that header and
//! links `-lisal`. Without the library the build fails with one message
//! naming what to install. It never downloads or builds QPL, QATzip or ISA-L.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "qpl")]
    qpl::build();
    #[cfg(feature = "qat")]
    qat::build();
    #[cfg(feature = "isal")]
    isal::build();
}

/// Where an installed C library lives.
#[cfg(any(feature = "qpl", feature = "qat"))]
struct Found {
    include: std::path::PathBuf,
    lib_dirs: Vec<std::path::PathBuf>,
}

/// Finds a library under `$<env_var>` (include/ and lib/ or lib64/) or
/// through pkg-config; `None` if neither has it.
#[cfg(any(feature = "qpl", feature = "qat"))]
fn find(env_var: &str, pkg: &str, header: &str) -> Option<Found> {
    use std::path::PathBuf;
    println!("cargo:rerun-if-env-changed={env_var}");
    if let Ok(dir) = std::env::var(env_var) {
        let dir = PathBuf::from(dir);
        let include = dir.join("include");
        if include.join(header).exists() {
            let lib_dirs = ["lib", "lib64"]
                .iter()
                .map(|l| dir.join(l))
                .filter(|p| p.exists())
                .collect();
            return Some(Found { include, lib_dirs });
        }
        fail(&format!(
            "{env_var}={} has no include/{header}",
            dir.display()
        ));
    }
    let lib = pkg_config::Config::new()
        .cargo_metadata(false)
        .probe(pkg)
        .ok()?;
    let include = lib
        .include_paths
        .iter()
        .find(|p| p.join(header).exists())
        .or(lib.include_paths.first())?
        .clone();
    Some(Found {
        include,
        lib_dirs: lib.link_paths.clone(),
    })
}

/// Runs bindgen on `header`; bindgen panics when it cannot load libclang,
/// so that and its errors become one message naming the fix.
#[cfg(any(feature = "qpl", feature = "qat"))]
fn generate(builder: bindgen::Builder, header: &std::path::Path) -> bindgen::Bindings {
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || builder.generate()));
    let _ = std::panic::take_hook();
    match result {
        Ok(Ok(bindings)) => bindings,
        Ok(Err(e)) => fail(&format!("bindgen failed on {}: {e}", header.display())),
        Err(panic) => {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            fail(&format!(
                "bindgen could not run on {} ({why}); it needs libclang: \
                 apt-get install libclang-dev (or set LIBCLANG_PATH)",
                header.display()
            ))
        }
    }
}

#[cfg(any(feature = "qpl", feature = "qat", feature = "isal"))]
fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1);
}

#[cfg(feature = "qpl")]
mod qpl {
    use std::path::PathBuf;

    pub fn build() {
        let Some(found) = super::find("QPL_DIR", "qpl", "qpl/qpl.h") else {
            super::fail(
                "the `qpl` feature needs Intel QPL (Query Processing Library, \
                 https://github.com/intel/qpl) installed: build and install it, then set \
                 QPL_DIR to its install prefix (the directory holding include/qpl/qpl.h and \
                 lib/libqpl.a) or add its lib/pkgconfig to PKG_CONFIG_PATH; bindgen also needs \
                 libclang (e.g. apt-get install libclang-dev)",
            );
        };
        for d in &found.lib_dirs {
            println!("cargo:rustc-link-search=native={}", d.display());
        }
        println!("cargo:rustc-link-lib=qpl");
        // libqpl is C++ and loads libaccel-config with dlopen.
        println!("cargo:rustc-link-lib=stdc++");
        println!("cargo:rustc-link-lib=dl");
        let header = found.include.join("qpl/qpl.h");
        println!("cargo:rerun-if-changed={}", header.display());
        let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
        let builder = bindgen::Builder::default()
            .header(header.to_string_lossy())
            .clang_arg(format!("-I{}", found.include.display()))
            .allowlist_function("qpl_.*")
            .allowlist_type("qpl_.*|allocator_t")
            .allowlist_var("QPL_.*")
            .prepend_enum_name(false)
            .layout_tests(false);
        super::generate(builder, &header)
            .write_to_file(out.join("qpl_bindings.rs"))
            .expect("write qpl_bindings.rs");
        write_status_names(
            &found.include.join("qpl/c_api/status.h"),
            &out.join("qpl_status.rs"),
        );
    }

    /// Turns the `QPL_STS_NAME = ..., /**< text */` lines of status.h into a
    /// lookup from status code to (name, text), so every status QPL can
    /// return reads as words.
    fn write_status_names(status_h: &std::path::Path, out: &std::path::Path) {
        let text = std::fs::read_to_string(status_h)
            .unwrap_or_else(|e| super::fail(&format!("cannot read {}: {e}", status_h.display())));
        let mut arms = String::new();
        for line in text.lines() {
            let line = line.trim();
            let Some(rest) = line.strip_prefix("QPL_STS_") else {
                continue;
            };
            let Some((name, tail)) = rest.split_once('=') else {
                continue;
            };
            let name = format!("QPL_STS_{}", name.trim());
            let doc = tail
                .split_once("/**<")
                .map(|(_, d)| d.trim_end_matches("*/").trim().to_string())
                .unwrap_or_default();
            arms.push_str(&format!(
                "        c if c == ffi::{name} as u32 => ({name:?}, {doc:?}),\n"
            ));
        }
        let src = format!(
            "/// (C name, QPL's description) of a QPL status code.\n\
             pub(super) fn status_name(code: u32) -> (&'static str, &'static str) {{\n    \
             match code {{\n{arms}        _ => (\"unknown\", \"a status this QPL header does not list\"),\n    }}\n}}\n"
        );
        std::fs::write(out, src).expect("write qpl_status.rs");
        println!("cargo:rerun-if-changed={}", status_h.display());
    }
}

#[cfg(feature = "qat")]
mod qat {
    use std::path::PathBuf;

    pub fn build() {
        let Some(found) = super::find("QATZIP_DIR", "qatzip", "qatzip.h") else {
            super::fail(
                "the `qat` feature needs QATzip (https://github.com/intel/QATzip) and qatlib \
                 (https://github.com/intel/qatlib) installed: install them, then set QATZIP_DIR \
                 to QATzip's install prefix (the directory holding include/qatzip.h and \
                 lib/libqatzip.so) or add its lib/pkgconfig to PKG_CONFIG_PATH; bindgen also \
                 needs libclang (e.g. apt-get install libclang-dev)",
            );
        };
        // Not linked: the backend loads libqatzip at run time. Where the
        // build found it is the last place the loader tries.
        let lib_dir = found
            .lib_dirs
            .iter()
            .find(|d| d.join("libqatzip.so").exists())
            .unwrap_or_else(|| {
                super::fail(&format!(
                    "QATzip's header is in {} but no libqatzip.so is in {:?}",
                    found.include.display(),
                    found.lib_dirs
                ))
            });
        println!(
            "cargo:rustc-env=CANNERY_QATZIP_LIB_DIR={}",
            lib_dir.display()
        );
        // The version its pkg-config file gives, for `cannery backends`.
        let version = std::fs::read_to_string(lib_dir.join("pkgconfig/qatzip.pc"))
            .ok()
            .and_then(|pc| {
                pc.lines()
                    .find_map(|l| l.strip_prefix("Version:").map(|v| v.trim().to_string()))
            })
            .unwrap_or_else(|| "(version unknown)".into());
        println!("cargo:rustc-env=CANNERY_QATZIP_VERSION={version}");
        let header = found.include.join("qatzip.h");
        println!("cargo:rerun-if-changed={}", header.display());
        let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
        let builder = bindgen::Builder::default()
            .header(header.to_string_lossy())
            .clang_arg(format!("-I{}", found.include.display()))
            // Only what the backend calls: the header also declares
            // functions some builds do not export (qzCompressCrc64), and
            // the loader resolves every function it is given.
            .allowlist_function(
                "qz(Init|SetupSessionDeflateExt|GetDefaultsDeflateExt|CompressExt\
                 |DecompressExt|GetDeflateEndOfStream|TeardownSession|Close|SetLogLevel)",
            )
            .allowlist_type("Qz.*")
            .allowlist_var("QZ_.*|LOG_.*")
            // QATzip's C comments would become rustdoc, their indented
            // lines doctests that do not compile.
            .generate_comments(false)
            .dynamic_library_name("QatZipLib")
            .dynamic_link_require_all(true)
            .prepend_enum_name(false)
            .layout_tests(false);
        super::generate(builder, &header)
            .write_to_file(out.join("qat_bindings.rs"))
            .expect("write qat_bindings.rs");
    }
}

#[cfg(feature = "isal")]
mod isal {
    use std::path::PathBuf;

    use super::fail;

    const HEADER: &str = "isa-l/igzip_lib.h";

    /// (include directories, library directories) of the installed ISA-L.
    fn find() -> Option<(Vec<PathBuf>, Vec<PathBuf>)> {
        println!("cargo:rerun-if-env-changed=ISAL_DIR");
        if let Ok(dir) = std::env::var("ISAL_DIR") {
            let dir = PathBuf::from(dir);
            let include = dir.join("include");
            if !include.join(HEADER).exists() {
                fail(&format!(
                    "ISAL_DIR={} has no include/{HEADER}",
                    dir.display()
                ));
            }
            let libs = ["lib", "lib64"].iter().map(|l| dir.join(l)).collect();
            return Some((vec![include], libs));
        }
        if let Ok(lib) = pkg_config::Config::new()
            .cargo_metadata(false)
            .probe("libisal")
        {
            let mut include = lib.include_paths.clone();
            include.push(PathBuf::from("/usr/include"));
            if include.iter().any(|d| d.join(HEADER).exists()) {
                return Some((include, lib.link_paths.clone()));
            }
        }
        let usr = PathBuf::from("/usr/include");
        usr.join(HEADER).exists().then(|| (vec![usr], Vec::new()))
    }

    pub fn build() {
        let Some((include, libs)) = find() else {
            fail(
                "the `isal` feature needs ISA-L's headers and library (include/isa-l/igzip_lib.h, \
                 libisal): on Debian or Ubuntu apt-get install libisal-dev; elsewhere install \
                 ISA-L (https://github.com/intel/isa-l) and set ISAL_DIR to its install prefix",
            );
        };
        println!("cargo:rerun-if-changed=native/isal_shim.c");
        let mut cc = cc::Build::new();
        cc.file("native/isal_shim.c").warnings(true);
        for d in &include {
            cc.include(d);
        }
        cc.compile("cannery_isal_shim");
        for d in &libs {
            println!("cargo:rustc-link-search=native={}", d.display());
        }
        println!("cargo:rustc-link-lib=isal");
    }
}
