//! The names shared by encoders and decoders: the coding [`Mode`] of a page
//! and the [`Format`] a canned page is framed in.

/// How a page's tokens are coded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// RFC 1951 fixed codes (BTYPE=01).
    Fixed,
    /// Per-page optimal codes sent in a dynamic block header (BTYPE=10).
    Dynamic,
    /// A table trained in advance, given out of band.
    Canned,
}

impl Mode {
    /// All modes.
    pub const ALL: [Mode; 3] = [Mode::Fixed, Mode::Dynamic, Mode::Canned];

    /// The mode's CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Fixed => "fixed",
            Mode::Dynamic => "dynamic",
            Mode::Canned => "canned",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fixed" => Ok(Mode::Fixed),
            "dynamic" => Ok(Mode::Dynamic),
            "canned" => Ok(Mode::Canned),
            _ => Err(format!(
                "unknown mode {s:?} (expected canned, fixed or dynamic)"
            )),
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a canned page is framed (fixed and dynamic are always standard deflate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// IAA canned wire format: body, end-of-block, zero padding; no header.
    Iaa,
    /// Standard raw deflate: the table's implied header, then the body.
    Deflate,
}

impl Format {
    /// The format's CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Format::Iaa => "iaa",
            Format::Deflate => "deflate",
        }
    }

    /// The format of `mode`'s streams when `asked` (if anything) is asked
    /// for: canned mode takes either (default IAA); fixed and dynamic
    /// streams are always deflate, and asking them for IAA is an error.
    pub fn for_mode(mode: Mode, asked: Option<Format>) -> Result<Format, String> {
        match (mode, asked) {
            (Mode::Canned, f) => Ok(f.unwrap_or(Format::Iaa)),
            (_, Some(Format::Iaa)) => Err(format!(
                "the iaa format is canned mode's framing; {mode} streams are raw deflate"
            )),
            (_, _) => Ok(Format::Deflate),
        }
    }
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "iaa" => Ok(Format::Iaa),
            "deflate" => Ok(Format::Deflate),
            _ => Err(format!("unknown format {s:?} (expected iaa or deflate)")),
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_follow_the_mode() {
        assert_eq!(Format::for_mode(Mode::Canned, None), Ok(Format::Iaa));
        assert_eq!(
            Format::for_mode(Mode::Canned, Some(Format::Deflate)),
            Ok(Format::Deflate)
        );
        assert_eq!(Format::for_mode(Mode::Fixed, None), Ok(Format::Deflate));
        assert!(Format::for_mode(Mode::Dynamic, Some(Format::Iaa)).is_err());
    }
}
