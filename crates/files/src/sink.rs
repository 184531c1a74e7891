//! A command's main output: standard output (`-`) or a file written as an
//! [`AtomicFile`] and put in place by [`Sink::finish`]. An existing file is
//! kept unless replacing; an input is never the output (checked when the
//! sink opens, before the work, and again at the commit).

#![forbid(unsafe_code)]

use crate::error::{Error, ErrorKind, Result};
use crate::output::{refuse_same_file, AtomicFile, Existing, Privacy};
use std::io::{self, BufWriter, Stdout, Write};
use std::path::Path;

/// Where a command's main output goes.
pub enum Sink {
    /// Standard output.
    Stdout(BufWriter<Stdout>),
    /// A file being written.
    File(BufWriter<AtomicFile>),
}

impl Sink {
    /// Opens `path` (`-` for standard output) for a command reading `inputs`.
    pub fn open(
        path: &Path,
        existing: Existing,
        inputs: &[&Path],
        privacy: Privacy,
    ) -> Result<Sink> {
        if path == Path::new("-") {
            return Ok(Sink::Stdout(BufWriter::new(io::stdout())));
        }
        refuse_same_file(inputs, path)?;
        let f = AtomicFile::create_with(path, existing, privacy)?;
        Ok(Sink::File(BufWriter::new(f)))
    }

    /// Flushes, and puts a file at its path.
    pub fn finish(self) -> Result<()> {
        match self {
            Sink::Stdout(mut w) => w.flush().map_err(|e| stdout_error(&e)),
            Sink::File(w) => {
                let f = w.into_inner().map_err(|e| {
                    let (err, w) = e.into_parts();
                    Error::io(w.get_ref().path(), "writing", err)
                })?;
                let path = f.path().to_path_buf();
                f.commit()
                    .map_err(|e| e.prefixed(&format!("writing {}", path.display())))
            }
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Stdout(w) => w.write(buf),
            Sink::File(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Stdout(w) => w.flush(),
            Sink::File(w) => w.flush(),
        }
    }
}

/// Writes `bytes` to standard output and flushes; a failure is an error
/// naming standard output.
pub fn write_stdout(bytes: &[u8]) -> Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| stdout_error(&e))
}

fn stdout_error(err: &io::Error) -> Error {
    Error::new(
        ErrorKind::Io,
        format!("cannot write to standard output: {err}"),
    )
}
