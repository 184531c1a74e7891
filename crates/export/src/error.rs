//! Why an export was refused. Import errors live in [`crate::import`].
//!
//! Every refusal is about the input (a name, or a table some consumer cannot
//! load exactly); the exporters never fail for any other reason.

use cannery_codec::table::rules::Rule;
use cannery_codec::table::IaaRule;

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
    /// The table breaks a rule of the export's consumer
    /// ([`cannery_codec::table::rules`]): QPL would load another table, or
    /// ISA-L would write corrupt streams.
    #[error("{consumer} cannot use table {id} unchanged: {reason}")]
    BreaksRule {
        /// Table id.
        id: String,
        /// Who would load the export ("QPL", "ISA-L").
        consumer: &'static str,
        /// The rule broken.
        rule: Rule,
        /// Every reason, from the rule.
        reason: String,
    },
    /// The implied header does not fit ISA-L's `deflate_hdr[328]`.
    #[error("the table's block header is {bytes} bytes, more than ISA-L's deflate_hdr[328] holds")]
    IsalHeaderTooLong {
        /// Header size in bytes.
        bytes: usize,
    },
    /// A call into a C library (ISA-L, through cannery-engines) failed.
    #[error("{0}")]
    Library(String),
}
