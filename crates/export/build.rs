//! Build script of cannery-export. Does nothing unless the `isal` feature
//! is on; then it finds ISA-L's installed header and library (`ISAL_DIR`,
//! an install prefix, or pkg-config's `libisal`), compiles the small C shim
//! in native/isal_shim.c against that header and links `-lisal`. Without
//! ISA-L the build fails with one message naming what to install. It never
//! downloads or builds ISA-L.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "isal")]
    isal::build();
}

#[cfg(feature = "isal")]
mod isal {
    use std::path::PathBuf;

    const HEADER: &str = "isa-l/igzip_lib.h";

    fn fail(msg: &str) -> ! {
        eprintln!("error: {msg}");
        std::process::exit(1);
    }

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
