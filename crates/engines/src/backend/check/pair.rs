//! One page through one (compressor, decompressor) pair, and token-level
//! re-encoding of canned streams: the unit check `cannery validate` and
//! `cannery fuzz` repeat over a matrix ([`super::matrix`]).
//!
//! Which tables a backend accepts is not decided here: each backend states
//! its rules in its [`Capabilities`](crate::backend::Capabilities), and the
//! rules live in [`cannery_codec::table::rules`]. Nothing here prints or writes files.

use serde::Serialize;

use crate::backend::{Engine, EngineError, ExecPath};
use cannery_codec::bitio::BitWriter;
use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::decode::CannedDecoder;
use cannery_codec::encode::{write_tokens, Outcome};
use cannery_codec::mode::Mode;
use cannery_codec::table::Table;

pub use cannery_codec::constants::QPL_SW_TAIL;

/// What re-encoding a canned stream's tokens with our Huffman stage gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reencode {
    /// Tokens + end-of-block + zero padding: identical bytes.
    Exact,
    /// Tokens + end-of-block + QPL's 10-bit empty fixed block + zero
    /// padding: identical bytes (QPL's software path).
    ExactWithQplTail,
}

/// Re-encodes the tokens of canned stream `stream` with `table` and our bit
/// writer and compares bytes, trying both framings: end-of-block + zero
/// padding (IAA hardware, ours) and end-of-block + QPL's 10-bit empty fixed
/// block + zero padding (QPL's software path; accounted for, not stripped).
/// `Err` if our decoder rejects the stream; `Ok(Err(at))` if it decodes
/// but neither framing reproduces it (`at` = first differing byte of the
/// plain framing); `Ok(Ok(_))` says which framing matched.
pub fn reencode_canned(
    table: &Table,
    stream: &[u8],
) -> Result<Result<Reencode, usize>, EngineError> {
    reencode_canned_with(&CannedDecoder::new(table), table, stream)
}

/// [`reencode_canned`] with `table`'s decoder already built (`decoder` must
/// be `CannedDecoder::new(table)`): for callers that check many streams of
/// one table, such as the fuzz targets.
pub fn reencode_canned_with(
    decoder: &CannedDecoder,
    table: &Table,
    stream: &[u8],
) -> Result<Result<Reencode, usize>, EngineError> {
    let tokens = decoder.tokens(stream, PAGE_SIZE)?;
    let mut plain = Vec::with_capacity(stream.len());
    let mut w = BitWriter::new(&mut plain);
    write_tokens(&mut w, &tokens, table, usize::MAX);
    w.finish();
    if plain == stream {
        return Ok(Ok(Reencode::Exact));
    }
    let mut tailed = Vec::with_capacity(stream.len());
    let mut w = BitWriter::new(&mut tailed);
    write_tokens(&mut w, &tokens, table, usize::MAX);
    w.put(QPL_SW_TAIL.0, QPL_SW_TAIL.1);
    w.finish();
    if tailed == stream {
        return Ok(Ok(Reencode::ExactWithQplTail));
    }
    let first = plain
        .iter()
        .zip(stream)
        .position(|(a, b)| a != b)
        .unwrap_or(plain.len().min(stream.len()));
    Ok(Err(first))
}

/// How one page fared through one (compressor, decompressor) pair.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum PairOutcome {
    /// Decompressed bytes equal the page (and, for canned, the stream
    /// re-encodes exactly).
    Pass {
        /// Compressed size.
        bytes: usize,
        /// Re-encoding result (canned only).
        #[serde(skip_serializing_if = "Option::is_none")]
        reencode: Option<Reencode>,
    },
    /// The compressor declined the page (output would be ≥ 4096 bytes).
    Incompressible,
    /// A mismatch or failure: what went wrong.
    Fail {
        /// Which stage failed: "compress", "decompress", "compare", "reencode".
        stage: &'static str,
        /// Readable detail.
        detail: String,
    },
}

/// One page through one pair, with the stream kept for reproducers.
#[derive(Clone, Debug)]
pub struct PairResult {
    /// The outcome.
    pub outcome: PairOutcome,
    /// The compressed stream (empty if compression failed).
    pub stream: Vec<u8>,
    /// Paths the compressor and decompressor ran on.
    pub paths: (ExecPath, ExecPath),
}

/// Compresses `page` with `comp`, decompresses with `decomp`, compares
/// bit-exactly, and for canned mode re-encodes the stream's tokens.
/// Incompressible pages pass through as [`PairOutcome::Incompressible`].
pub fn check_pair(
    comp: &mut dyn Engine,
    decomp: &mut dyn Engine,
    mode: Mode,
    table: Option<&Table>,
    page: &[u8],
) -> PairResult {
    let mut stream = Vec::new();
    let outcome = match comp.compress(mode, table, page, &mut stream) {
        Err(e) => PairOutcome::Fail {
            stage: "compress",
            detail: e.to_string(),
        },
        Ok(Outcome::Incompressible) => {
            stream.clear();
            PairOutcome::Incompressible
        }
        Ok(Outcome::Compressed(n)) => check_stream(decomp, mode, table, page, &stream[..n]),
    };
    PairResult {
        outcome,
        stream,
        paths: (comp.last_path(), decomp.last_path()),
    }
}

/// Decompresses `stream` with `decomp` and checks it against `page` (and,
/// for canned mode, re-encodes it).
pub fn check_stream(
    decomp: &mut dyn Engine,
    mode: Mode,
    table: Option<&Table>,
    page: &[u8],
    stream: &[u8],
) -> PairOutcome {
    let mut out = [0u8; PAGE_SIZE];
    match decomp.decompress(mode, table, stream, &mut out) {
        Err(e) => PairOutcome::Fail {
            stage: "decompress",
            detail: e.to_string(),
        },
        Ok(n) if out[..n] != *page => {
            let at = out[..n]
                .iter()
                .zip(page)
                .position(|(a, b)| a != b)
                .unwrap_or(n.min(page.len()));
            PairOutcome::Fail {
                stage: "compare",
                detail: format!(
                    "decompressed {n} bytes, page has {}; first difference at byte {at}",
                    page.len()
                ),
            }
        }
        Ok(_) => {
            let reencode = match (mode, table) {
                (Mode::Canned, Some(t)) => match reencode_canned(t, stream) {
                    Ok(Ok(r)) => Some(r),
                    Ok(Err(at)) => {
                        return PairOutcome::Fail {
                            stage: "reencode",
                            detail: format!(
                            "re-encoding the stream's tokens differs from the stream at byte {at}"
                        ),
                        }
                    }
                    Err(e) => {
                        return PairOutcome::Fail {
                            stage: "reencode",
                            detail: format!("our canned decoder rejects the stream: {e}"),
                        }
                    }
                },
                _ => None,
            };
            PairOutcome::Pass {
                bytes: stream.len(),
                reencode,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cannery_codec::encode::encode_canned_tokens;
    use cannery_codec::token::Token;

    #[test]
    fn reencoding_recognises_both_framings_and_rejects_others() {
        let t = Table::kernel_2024();
        let toks = [
            Token::Literal(1),
            Token::Literal(2),
            Token::Match {
                length: 10,
                distance: 2,
            },
        ];
        let plain = encode_canned_tokens(&toks, &t);
        assert_eq!(reencode_canned(&t, &plain).unwrap(), Ok(Reencode::Exact));
        let mut tailed = Vec::new();
        let mut w = BitWriter::new(&mut tailed);
        write_tokens(&mut w, &toks, &t, usize::MAX);
        w.put(QPL_SW_TAIL.0, QPL_SW_TAIL.1);
        w.finish();
        assert_eq!(
            reencode_canned(&t, &tailed).unwrap(),
            Ok(Reencode::ExactWithQplTail)
        );
        // Length 258 sent as symbol 284 + extra 31 (legal, and decoders accept
        // it) instead of symbol 285: same bytes out, different bits.
        let (l, ll, d) = (
            t.lengths(),
            t.litlen_codes_reversed(),
            t.dist_codes_reversed(),
        );
        let mut odd = Vec::new();
        let mut w = BitWriter::new(&mut odd);
        w.put(ll[1] as u32, l.litlen[1] as u32);
        w.put(
            ll[284] as u32 | 31 << l.litlen[284],
            l.litlen[284] as u32 + 5,
        );
        w.put(d[0] as u32, l.dist[0] as u32);
        w.put(ll[256] as u32, l.litlen[256] as u32);
        w.finish();
        let mut out = [0u8; PAGE_SIZE];
        assert_eq!(CannedDecoder::new(&t).decompress(&odd, &mut out), Ok(259));
        assert!(reencode_canned(&t, &odd).unwrap().is_err());
    }
}
