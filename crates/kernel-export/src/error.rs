//! Why an export was refused. Import errors live in [`crate::import`].
//!
//! Every refusal is about the input (a name, or a table some consumer cannot
//! load exactly); the exporters never fail for any other reason.

use cannery_codec::table::{Alphabet, IaaRule};

/// Why a table could not be exported in the requested form.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The name used for C identifiers is not a C identifier.
    #[error("{name:?} is not a valid C identifier: {reason}")]
    InvalidName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The table breaks a rule of IAA canned compression.
    #[error("table {id} cannot be used by IAA: {rule}")]
    NotIaaSafe {
        /// Table id.
        id: String,
        /// The first rule it breaks.
        rule: IaaRule,
    },
    /// QPL gives every symbol a code, so a table with an uncoded symbol
    /// cannot be reproduced through a QPL histogram.
    #[error(
        "QPL cannot load table {id}: {alphabet} symbol {symbol} has no code, but QPL codes every \
         symbol (it raises zero counts to 1); use a table with all 286 + 30 symbols coded"
    )]
    QplUncoded {
        /// Table id.
        id: String,
        /// Alphabet of the symbol.
        alphabet: Alphabet,
        /// The uncoded symbol.
        symbol: usize,
    },
    /// An incomplete code is never the optimal code of any histogram.
    #[error(
        "QPL cannot load table {id}: its {alphabet} code is incomplete (Kraft sum {kraft}/32768), \
         and QPL only builds complete codes"
    )]
    QplIncomplete {
        /// Table id.
        id: String,
        /// The incomplete alphabet.
        alphabet: Alphabet,
        /// Kraft sum scaled by 2^15.
        kraft: u64,
    },
    /// The stock ISA-L igzip (32 KiB history) could write a corrupt or
    /// undecodable stream with the table; the reason comes from
    /// [`crate::isal::isal_stock_violation`].
    #[error("ISA-L (stock build, 32 KiB history) cannot use table {id}: {reason}")]
    NotIsalStockSafe {
        /// Table id.
        id: String,
        /// Why, in words.
        reason: String,
    },
    /// The implied header does not fit ISA-L's `deflate_hdr[328]`.
    #[error("the table's block header is {bytes} bytes, more than ISA-L's deflate_hdr[328] holds")]
    IsalHeaderTooLong {
        /// Header size in bytes.
        bytes: usize,
    },
}
