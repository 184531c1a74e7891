/*!
cannery-export: turns a [`Table`](cannery_codec::Table) into the artifacts
other systems load, and reads kernel headers back.

- [`c_header`]: a C header for the Linux `iaa_crypto` driver: the
  `ll_sym`/`d_sym` arrays in the kernel's `(length << 15) | code` format, the
  implied dynamic block header with its bit count and
  `gen_decomp_table_flags`, compile-time guards and a registration function
  for one of three `add_iaa_compression_mode()` eras ([`Api`]).
- [`import`]: parses such a header (ours, or the 2024 kernel patch's
  `canned_ll_iaa`/`canned_d_iaa`/`canned_header`) back into a table, checking
  that codes, lengths and header agree.
- [`qpl`]: the histogram route for Intel QPL: counts whose optimal code has
  exactly the table's lengths, plus a JSON sidecar with provenance.
- [`isal`]: an ISA-L `struct isal_hufftables` initializer for the stock
  library as distributions ship it (32 KiB history, `LONGER_HUFFTABLE` off).

Every exporter is deterministic: the same table gives byte-identical output
(no timestamps; the table's own `provenance.created` is printed if present).
The crate writes text and bytes only; files are the CLI's business.

```
use cannery_codec::Table;
use cannery_export::{c_header, Api, KernelOptions};

let header = c_header::kernel_header(&Table::kernel_2024(), &KernelOptions::new("canned"))?;
assert!(header.contains("static const u32 canned_ll_iaa[286]"));
assert!(header.contains("#define CANNED_HEADER_SIZE_IN_BITS"));
# Ok::<(), cannery_export::ExportError>(())
```
*/

#![warn(missing_docs)]
// Safe Rust throughout (ISA-L's compressor itself is cannery-engines').
#![forbid(unsafe_code)]

pub mod c_header;
mod comment;
pub mod error;
mod hexfmt;
pub mod import;
pub mod isal;
pub mod qpl;

pub use c_header::{Api, KernelOptions};
pub use error::ExportError;
pub use import::{table_from_kernel_header, ImportError};

/// The generator string written into every artifact by default:
/// `cannery <version of this crate>`.
pub fn default_generator() -> String {
    format!("cannery {}", env!("CARGO_PKG_VERSION"))
}
