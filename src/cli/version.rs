//! `--version` (with the build's features and commit), `cannery
//! completions SHELL` and `cannery man`: what the CLI says about itself.
//! The commit comes from `build.rs` (`git` at build time, when there is a
//! repository); nothing here reads the network or the environment.

use anyhow::Context;
use cannery_cli::version::{CompletionsArgs, ManArgs};
use clap::CommandFactory;

/// `cannery 0.1.0 (abc1234)`: the version and the commit, when known.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("CANNERY_COMMIT"), ")");

/// `--version` in full: the commit, the optional backends built in, and
/// the lzo model.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\ncommit: ",
    env!("CANNERY_COMMIT"),
    "\nfeatures: ",
    env!("CANNERY_FEATURES"),
    "\n(`cannery backends` says which backends run on this machine)"
);

/// Prints the completion script for `args.shell` to stdout.
pub fn completions<C: CommandFactory>(args: CompletionsArgs) -> anyhow::Result<()> {
    let mut cmd = C::command();
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "cannery", &mut buf);
    Ok(super::write_stdout(&buf)?)
}

/// Prints the manual page, or writes one page per command into a directory.
pub fn man<C: CommandFactory>(args: ManArgs) -> anyhow::Result<()> {
    let cmd = C::command();
    match args.out {
        None => {
            let mut buf = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut buf)?;
            super::write_stdout(&buf)?;
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create directory {}", dir.display()))?;
            let mut pages = Vec::new();
            collect_pages(cmd, "cannery", &mut pages)?;
            let files: Vec<_> = (pages.iter())
                .map(|(name, bytes)| (dir.join(format!("{name}.1")), bytes.clone()))
                .collect();
            let existing = cannery_files::output::Existing::replace_if(args.force);
            cannery_files::output::write_files(&files, existing)?;
            super::out::status(format!(
                "wrote {} manual pages to {}",
                pages.len(),
                dir.display()
            ));
        }
    }
    Ok(())
}

/// One rendered page for `cmd` named `name`, then one for each subcommand.
fn collect_pages(
    cmd: clap::Command,
    name: &str,
    pages: &mut Vec<(String, Vec<u8>)>,
) -> anyhow::Result<()> {
    let cmd = cmd.name(name.to_string());
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut buf)?;
    pages.push((name.to_string(), buf));
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        collect_pages(sub.clone(), &format!("{name}-{}", sub.get_name()), pages)?;
    }
    Ok(())
}
