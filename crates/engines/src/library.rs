//! QPL's and ISA-L's compressors as training targets, next to their FFI:
//! the symbols each compressor emits for a page (its parse, [`Parser`]),
//! each library's own statistics function ([`statistics`]: what the
//! library's own training workflow sees), and a table inside each
//! compressor ([`Loaded`]: cannery's table loaded unchanged, or the table
//! the library builds from training counts) giving a page's bytes. The
//! trainer maps its parse models onto [`Library`], builds the tables and
//! measures; it calls no FFI itself.
//!
//! Without the `qpl` or `isal` feature the library's calls return
//! [`LibraryError`] saying which feature to build with.

use cannery_codec::Table;

use crate::backend::LibraryCounts;

/// A library compressor tables can be trained for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Library {
    /// QPL's canned compressor at its default level (software path;
    /// feature `qpl`).
    QplDefault,
    /// QPL's canned compressor at its high level (feature `qpl`).
    QplHigh,
    /// ISA-L's level-0 compressor (feature `isal`).
    Isal,
}

/// A library call that failed, or a library this build lacks.
#[derive(Debug, thiserror::Error)]
#[error("{library}: {message}")]
pub struct LibraryError {
    /// `qpl` or `isal`.
    pub library: &'static str,
    /// What went wrong.
    pub message: String,
}

impl Library {
    /// The library's name: `qpl` or `isal` (also its cargo feature).
    pub fn name(self) -> &'static str {
        match self {
            Library::QplDefault | Library::QplHigh => "qpl",
            Library::Isal => "isal",
        }
    }

    /// An error of this library.
    #[cfg_attr(not(any(feature = "qpl", feature = "isal")), allow(dead_code))]
    fn error(self, e: impl std::fmt::Display) -> LibraryError {
        LibraryError {
            library: self.name(),
            message: e.to_string(),
        }
    }

    /// The error for a library this build lacks.
    #[cfg_attr(all(feature = "qpl", feature = "isal"), allow(dead_code))]
    fn unavailable(self) -> LibraryError {
        self.error(format!(
            "cannery was built without the `{}` feature",
            self.name()
        ))
    }

    #[cfg(feature = "qpl")]
    fn qpl_level(self) -> crate::backend::qpl::QplLevel {
        use crate::backend::qpl::QplLevel;
        if self == Library::QplHigh {
            QplLevel::High
        } else {
            QplLevel::Default
        }
    }
}

/// One page's counts from the library's own statistics function
/// (`qpl_gather_deflate_statistics`, `isal_update_histogram`).
#[cfg_attr(not(any(feature = "qpl", feature = "isal")), allow(unused_variables))]
pub fn statistics(library: Library, page: &[u8]) -> Result<LibraryCounts, LibraryError> {
    match library {
        #[cfg(feature = "qpl")]
        Library::QplDefault | Library::QplHigh => {
            crate::backend::qpl::gather_page_statistics(page, library.qpl_level())
                .map_err(|e| library.error(e))
        }
        #[cfg(feature = "isal")]
        Library::Isal => Ok(crate::isal::update_histogram(page)),
        #[allow(unreachable_patterns)]
        _ => Err(library.unavailable()),
    }
}

/// A library's compressor as a parser: the symbols it emits for each page.
pub enum Parser {
    /// QPL's canned compressor at a level.
    #[cfg(feature = "qpl")]
    Qpl(Box<crate::backend::qpl::QplParser>),
    /// ISA-L's level-0 compressor (with the fixed code as its table: its
    /// parse does not depend on the table).
    #[cfg(feature = "isal")]
    Isal(crate::isal::Hufftables),
}

impl Parser {
    /// The parser of `library`.
    pub fn new(library: Library) -> Result<Parser, LibraryError> {
        match library {
            #[cfg(feature = "qpl")]
            Library::QplDefault | Library::QplHigh => {
                crate::backend::qpl::QplParser::new(library.qpl_level())
                    .map(|p| Parser::Qpl(Box::new(p)))
                    .map_err(|e| library.error(e))
            }
            #[cfg(feature = "isal")]
            Library::Isal => crate::isal::Hufftables::exported(&Table::fixed())
                .map(Parser::Isal)
                .map_err(|e| library.error(e)),
            #[allow(unreachable_patterns)]
            _ => Err(library.unavailable()),
        }
    }

    /// One page's symbols (with its end-of-block).
    #[cfg_attr(not(any(feature = "qpl", feature = "isal")), allow(unused_variables))]
    pub fn count(&mut self, page: &[u8]) -> Result<LibraryCounts, LibraryError> {
        match *self {
            #[cfg(feature = "qpl")]
            Parser::Qpl(ref mut p) => p.count(page).map_err(|e| Library::QplDefault.error(e)),
            #[cfg(feature = "isal")]
            Parser::Isal(ref t) => {
                crate::isal::compressor_counts(t, page).map_err(|e| Library::Isal.error(e))
            }
        }
    }
}

/// Which table a library's compressor is given.
#[derive(Clone, Copy, Debug)]
pub enum TableSource<'a> {
    /// A cannery table, loaded unchanged (or refused).
    Table(&'a Table),
    /// The library's own table from these training counts.
    Trained(&'a LibraryCounts),
}

/// A table inside a library's compressor.
pub enum Loaded {
    /// QPL's canned compressor with a loaded table, at a level.
    #[cfg(feature = "qpl")]
    Qpl(
        Box<crate::backend::qpl::Qpl>,
        crate::backend::qpl::QplTable,
        crate::backend::qpl::QplLevel,
    ),
    /// ISA-L's compressor with its tables.
    #[cfg(feature = "isal")]
    Isal(crate::isal::Hufftables),
}

impl Loaded {
    /// `source`'s table in `library`'s compressor.
    #[cfg_attr(not(any(feature = "qpl", feature = "isal")), allow(unused_variables))]
    pub fn new(library: Library, source: TableSource<'_>) -> Result<Loaded, LibraryError> {
        match library {
            #[cfg(feature = "qpl")]
            Library::QplDefault | Library::QplHigh => {
                let mut q =
                    crate::backend::qpl::Qpl::open_software().map_err(|e| library.error(e))?;
                let t = match source {
                    TableSource::Table(t) => q.loaded_table(t),
                    TableSource::Trained(c) => {
                        // As QPL's statistics function hands it over: no zero counts.
                        let mut h = c.clone();
                        for n in h.litlen.iter_mut().chain(h.dist.iter_mut()) {
                            *n = (*n).max(1);
                        }
                        q.trained_table(&h)
                    }
                }
                .map_err(|e| library.error(e))?;
                Ok(Loaded::Qpl(Box::new(q), t, library.qpl_level()))
            }
            #[cfg(feature = "isal")]
            Library::Isal => {
                use crate::isal::Hufftables;
                let t = match source {
                    TableSource::Table(t) => Hufftables::exported(t),
                    TableSource::Trained(c) => Hufftables::trained(c),
                }
                .map_err(|e| library.error(e))?;
                Ok(Loaded::Isal(t))
            }
            #[allow(unreachable_patterns)]
            _ => Err(library.unavailable()),
        }
    }

    /// Bytes of one page (4096 when the compressor finds it incompressible;
    /// under ISA-L, every byte `isal_deflate_stateless` writes, the header
    /// included) and the header bits among them (0 where none travels).
    #[cfg_attr(not(any(feature = "qpl", feature = "isal")), allow(unused_variables))]
    pub fn size(&mut self, page: &[u8]) -> Result<(u64, u64), LibraryError> {
        match *self {
            #[cfg(feature = "qpl")]
            Loaded::Qpl(ref mut q, ref t, ref level) => {
                let whole = cannery_codec::constants::PAGE_SIZE as u64;
                let n = q
                    .canned_stream(t, *level, page)
                    .map_err(|e| Library::QplDefault.error(e))?
                    .map_or(whole, |s| s.len() as u64);
                Ok((n.min(whole), 0))
            }
            #[cfg(feature = "isal")]
            Loaded::Isal(ref t) => {
                let n = t.compress(page).map_err(|e| Library::Isal.error(e))?.len();
                Ok((n as u64, u64::from(t.header_bits())))
            }
        }
    }
}
