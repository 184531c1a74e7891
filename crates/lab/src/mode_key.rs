//! The name of one measured codec configuration in every report: a typed
//! key with one text form, used as the key of report maps, in JSON, in the
//! text renderers and in Python. The forms:
//!
//! | key | form | what |
//! |---|---|---|
//! | [`ModeKey::Canned`] | `canned-fast`, `canned-default`, `canned-best` | the evaluated table, really encoded at that parse level |
//! | [`ModeKey::CannedTable`] | `canned:<name>`, `canned:<name>@default`, `canned:<name>@best` | a named table (`fleet`, `kernel-2024`, a workload's, `cluster-<i>`) at the fast parse, or at the parse after `@` |
//! | [`ModeKey::BestOf`] | `best-of-<K>` | per page, the smallest of K tables at the fast parse |
//! | [`ModeKey::Fixed`] | `fixed` | RFC 1951 fixed codes at the fast parse |
//! | [`ModeKey::Dynamic`] | `dynamic-fast`, `dynamic-best` | per-page dynamic codes at that parse level |
//! | [`ModeKey::Peer`] | `zstd-1`, `zstd-1-dict`, `lz4`, `libdeflate-6`, … | an outside compressor ([`PeerKind`]) |
//!
//! Keys sort by their text form, so maps keyed by them list modes as they
//! always have. The same forms name modes in `train`, `eval`, `bench`,
//! `zswap-sim`, `zswap-kernel` and Python (README, "Mode names"). This
//! module only names; it measures nothing.

use std::fmt;
use std::str::FromStr;

use cannery_codec::Level;
use cannery_engines::peer::PeerKind;

/// One measured codec configuration (see the module doc for the forms).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ModeKey {
    /// The evaluated table at a parse level.
    Canned(Level),
    /// A named table at a parse level (the fast parse unless said).
    CannedTable(String, Level),
    /// Per page the smallest of this many tables.
    BestOf(usize),
    /// Fixed codes.
    Fixed,
    /// Per-page dynamic codes at a parse level.
    Dynamic(Level),
    /// An outside compressor.
    Peer(PeerKind),
    /// Intel QPL's software path (`cannery bench` built with `qpl`).
    Qpl(QplMode),
}

/// A mode of QPL: `qpl:fixed`, `qpl:dynamic`, `qpl:canned@default`,
/// `qpl:canned@high` (canned with the workload's table trained for that
/// QPL level, `--target qpl-default|qpl-high`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QplMode {
    /// Fixed codes (BTYPE=01).
    Fixed,
    /// Per-page dynamic codes.
    Dynamic,
    /// Canned at QPL's default level.
    CannedDefault,
    /// Canned at QPL's high level.
    CannedHigh,
}

impl QplMode {
    /// Every QPL mode, in report order.
    pub const ALL: [QplMode; 4] = [
        QplMode::CannedDefault,
        QplMode::CannedHigh,
        QplMode::Fixed,
        QplMode::Dynamic,
    ];

    /// Its name after `qpl:`.
    pub fn name(self) -> &'static str {
        match self {
            QplMode::Fixed => "fixed",
            QplMode::Dynamic => "dynamic",
            QplMode::CannedDefault => "canned@default",
            QplMode::CannedHigh => "canned@high",
        }
    }
}

impl ModeKey {
    /// `canned:<name>`: a named table at the fast parse.
    pub fn table(name: impl Into<String>) -> ModeKey {
        ModeKey::CannedTable(name.into(), Level::Fast)
    }

    /// `canned:<name>@<level>` (`canned:<name>` at the fast parse).
    pub fn table_at(name: impl Into<String>, level: Level) -> ModeKey {
        ModeKey::CannedTable(name.into(), level)
    }

    /// Whether this is one of cannery's own deflate modes (not a peer).
    pub fn is_cannery(&self) -> bool {
        !matches!(self, ModeKey::Peer(_) | ModeKey::Qpl(_))
    }
}

impl fmt::Display for ModeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModeKey::Canned(l) => write!(f, "canned-{l}"),
            ModeKey::CannedTable(n, Level::Fast) => write!(f, "canned:{n}"),
            ModeKey::CannedTable(n, l) => write!(f, "canned:{n}@{l}"),
            ModeKey::BestOf(k) => write!(f, "best-of-{k}"),
            ModeKey::Fixed => f.write_str("fixed"),
            ModeKey::Dynamic(l) => write!(f, "dynamic-{l}"),
            ModeKey::Peer(p) => write!(f, "{p}"),
            ModeKey::Qpl(q) => write!(f, "qpl:{}", q.name()),
        }
    }
}

impl FromStr for ModeKey {
    type Err = String;

    fn from_str(s: &str) -> Result<ModeKey, String> {
        if let Some(rest) = s.strip_prefix("canned:") {
            let (name, level) = match rest.rsplit_once('@') {
                Some((name, l)) => (name, l.parse::<Level>()?),
                None => (rest, Level::Fast),
            };
            if name.is_empty() {
                return Err("canned: needs a table name".into());
            }
            return Ok(ModeKey::CannedTable(name.into(), level));
        }
        if let Some(l) = s.strip_prefix("canned-") {
            return l.parse().map(ModeKey::Canned);
        }
        if let Some(l) = s.strip_prefix("dynamic-") {
            return l.parse().map(ModeKey::Dynamic);
        }
        if let Some(k) = s.strip_prefix("best-of-") {
            return k
                .parse()
                .map(ModeKey::BestOf)
                .map_err(|_| format!("{s:?}: best-of needs a number of tables"));
        }
        if s == "fixed" {
            return Ok(ModeKey::Fixed);
        }
        if let Some(q) = s.strip_prefix("qpl:") {
            return QplMode::ALL
                .into_iter()
                .find(|m| m.name() == q)
                .map(ModeKey::Qpl)
                .ok_or_else(|| {
                    format!("unknown QPL mode {s:?} (qpl:fixed, qpl:dynamic, qpl:canned@default or qpl:canned@high)")
                });
        }
        s.parse::<PeerKind>()
            .map(ModeKey::Peer)
            .map_err(|_| format!("unknown mode {s:?} (canned-LEVEL, canned:TABLE, best-of-K, fixed, dynamic-LEVEL or a peer such as zstd-1, lz4, libdeflate-6)"))
    }
}

impl PartialOrd for ModeKey {
    fn partial_cmp(&self, other: &ModeKey) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ModeKey {
    /// By text form (reports have always listed modes in that order).
    fn cmp(&self, other: &ModeKey) -> std::cmp::Ordering {
        self.to_string().cmp(&other.to_string())
    }
}

impl serde::Serialize for ModeKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for ModeKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ModeKey, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A mode key from its text form (tests name modes as reports print them).
#[cfg(test)]
pub(crate) fn key(s: &str) -> ModeKey {
    s.parse().expect("a mode key")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_parses_back_to_its_key() {
        let keys = [
            ModeKey::Canned(Level::Fast),
            ModeKey::Canned(Level::Best),
            ModeKey::table("kernel-2024"),
            ModeKey::table("w-1"),
            ModeKey::table_at("kernel-2024", Level::Default),
            ModeKey::table_at("redis", Level::Best),
            ModeKey::BestOf(4),
            ModeKey::Fixed,
            ModeKey::Dynamic(Level::Fast),
            ModeKey::Dynamic(Level::Best),
            ModeKey::Peer(PeerKind::Zstd(1)),
            ModeKey::Peer(PeerKind::ZstdDict(1)),
            ModeKey::Peer(PeerKind::Lz4),
            ModeKey::Peer(PeerKind::Lz4Flex),
            ModeKey::Peer(PeerKind::Libdeflate(6)),
            ModeKey::Peer(PeerKind::Zlib(6)),
            ModeKey::Peer(PeerKind::Miniz(1)),
            ModeKey::Qpl(QplMode::Fixed),
            ModeKey::Qpl(QplMode::Dynamic),
            ModeKey::Qpl(QplMode::CannedDefault),
            ModeKey::Qpl(QplMode::CannedHigh),
        ];
        for k in keys {
            let s = k.to_string();
            assert_eq!(s.parse::<ModeKey>().unwrap(), k, "{s}");
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<ModeKey>(&json).unwrap(), k);
        }
        assert_eq!(ModeKey::Canned(Level::Fast).to_string(), "canned-fast");
        assert_eq!(ModeKey::table("fleet").to_string(), "canned:fleet");
        assert_eq!(
            ModeKey::table_at("fleet", Level::Best).to_string(),
            "canned:fleet@best"
        );
        assert_eq!(
            "canned:fleet@fast".parse::<ModeKey>(),
            Ok(ModeKey::table("fleet"))
        );
        for bad in [
            "",
            "canned:",
            "canned:@best",
            "canned:x@max",
            "canned-max",
            "best-of-x",
            "gzip-9",
        ] {
            assert!(bad.parse::<ModeKey>().is_err(), "{bad}");
        }
    }

    #[test]
    fn keys_sort_by_their_text() {
        let mut keys = [
            ModeKey::Fixed,
            ModeKey::Peer(PeerKind::Lz4),
            ModeKey::table("kernel-2024"),
            ModeKey::Canned(Level::Best),
            ModeKey::Canned(Level::Fast),
        ];
        keys.sort();
        let text: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        let mut sorted = text.clone();
        sorted.sort();
        assert_eq!(text, sorted);
    }
}
