//! The little C a kernel header needs, scanned in time linear in its
//! length: comments stripped and string literals blanked, `#define NAME
//! <integer>` lines, and `NAME[...] = { <integer literals> }` initializers.
//! It does not evaluate expressions or macros; [`super`] cross-checks what
//! it finds.

use std::collections::BTreeMap;

use super::ImportError;

/// An array initializer found in the text.
#[derive(Debug)]
pub(super) struct Array {
    pub(super) name: String,
    pub(super) values: Vec<u64>,
}

/// What the scanner found.
#[derive(Debug, Default)]
pub(super) struct Parsed {
    pub(super) arrays: Vec<Array>,
    pub(super) defines: BTreeMap<String, u64>,
}

/// Removes comments (keeping newlines) and blanks string and character
/// literals, so later stages see only code. Works on bytes: every byte it
/// looks for is ASCII, which never occurs inside a UTF-8 multi-byte
/// sequence, so the output stays valid UTF-8.
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    if b[i] == b'\n' {
                        out.push(b'\n');
                    }
                    i += 1;
                }
                i += 2;
                out.push(b' ');
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            q @ (b'"' | b'\'') => {
                out.push(q);
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                out.push(q);
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    // Only whole comments and literal contents were dropped, so this is
    // valid UTF-8; the lossy branch never runs.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Parses a C integer literal (decimal, octal, hex; `u`/`l` suffixes).
fn int_literal(tok: &str) -> Option<u64> {
    let t = tok.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if t.len() > 1 && t.starts_with('0') {
        u64::from_str_radix(&t[1..], 8).ok()
    } else {
        t.parse().ok()
    }
}

/// A token: slices of the stripped text, so a large header costs a few
/// words per token and no allocation.
#[derive(Debug, PartialEq)]
enum Tok<'a> {
    Ident(&'a str),
    Number(&'a str),
    Punct(u8),
    Other,
}

fn tokenize<'a>(line: &'a str, out: &mut Vec<(Tok<'a>, u32)>, lineno: u32) {
    let c = line.as_bytes();
    let word = |i: usize, dot: bool| {
        let mut j = i;
        while j < c.len() && (c[j].is_ascii_alphanumeric() || c[j] == b'_' || (dot && c[j] == b'.'))
        {
            j += 1;
        }
        j
    };
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_ascii_whitespace() {
            i += 1;
        } else if ch.is_ascii_alphabetic() || ch == b'_' {
            let j = word(i, false);
            out.push((Tok::Ident(&line[i..j]), lineno));
            i = j;
        } else if ch.is_ascii_digit() {
            let j = word(i, true);
            out.push((Tok::Number(&line[i..j]), lineno));
            i = j;
        } else if b"[]{}=,;()".contains(&ch) {
            out.push((Tok::Punct(ch), lineno));
            i += 1;
        } else {
            // One token per character: skip UTF-8 continuation bytes.
            out.push((Tok::Other, lineno));
            i += 1;
            while i < c.len() && c[i] & 0xc0 == 0x80 {
                i += 1;
            }
        }
    }
}

/// Finds `#define`s with integer values and array initializers, in time
/// linear in the text's length.
pub(super) fn scan(text: &str) -> Result<Parsed, ImportError> {
    let code = strip(text);
    let mut parsed = Parsed::default();
    let mut toks = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let lineno = u32::try_from(n + 1).unwrap_or(u32::MAX);
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix('#') {
            let rest = rest.trim_start();
            if let Some(def) = rest.strip_prefix("define") {
                let mut parts = def.split_whitespace();
                if let (Some(name), Some(value)) = (parts.next(), parts.next()) {
                    let v = value.trim_start_matches('(').trim_end_matches(')');
                    if parts.next().is_none() {
                        if let Some(v) = int_literal(v) {
                            parsed.defines.insert(name.to_string(), v);
                        }
                    }
                }
            }
            continue;
        }
        tokenize(line, &mut toks, lineno);
    }
    // The index of the first ']' at or after each token (toks.len() if
    // none), so finding a subscript's end never rescans: text such as
    // `a[a[a[...` would otherwise take quadratic time.
    let mut next_close = vec![toks.len(); toks.len() + 1];
    for i in (0..toks.len()).rev() {
        next_close[i] = if toks[i].0 == Tok::Punct(b']') {
            i
        } else {
            next_close[i + 1]
        };
    }
    let line_of = |i: usize| toks[i].1 as usize;
    let mut i = 0;
    while i < toks.len() {
        // IDENT '[' ... ']' '=' '{'
        if let (Tok::Ident(name), Some((Tok::Punct(b'['), _))) = (&toks[i].0, toks.get(i + 1)) {
            let j = next_close[(i + 2).min(toks.len())];
            if toks.get(j + 1).map(|t| &t.0) == Some(&Tok::Punct(b'='))
                && toks.get(j + 2).map(|t| &t.0) == Some(&Tok::Punct(b'{'))
            {
                let mut k = j + 3;
                let mut values = Vec::new();
                loop {
                    let Some((tok, _)) = toks.get(k) else {
                        return Err(ImportError::Syntax {
                            line: line_of(i),
                            message: format!("initializer of {name} does not end"),
                        });
                    };
                    match tok {
                        Tok::Punct(b'}') => break,
                        Tok::Number(s) => {
                            let v = int_literal(s).ok_or_else(|| ImportError::Syntax {
                                line: line_of(k),
                                message: format!("{s:?} in {name} is not an integer literal"),
                            })?;
                            values.push(v);
                            match toks.get(k + 1).map(|t| &t.0) {
                                Some(Tok::Punct(b',')) => k += 2,
                                Some(Tok::Punct(b'}')) => k += 1,
                                _ => {
                                    return Err(ImportError::Syntax {
                                        line: line_of(k),
                                        message: format!(
                                            "element {} of {name} is not a plain integer literal",
                                            values.len() - 1
                                        ),
                                    })
                                }
                            }
                        }
                        _ => {
                            return Err(ImportError::Syntax {
                                line: line_of(k),
                                message: format!(
                                    "element {} of {name} is not an integer literal",
                                    values.len()
                                ),
                            })
                        }
                    }
                }
                parsed.arrays.push(Array {
                    name: name.to_string(),
                    values,
                });
                i = k + 1;
                continue;
            }
        }
        i += 1;
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(int_literal("0x7fff"), Some(0x7fff));
        assert_eq!(int_literal("0X1Au"), Some(0x1a));
        assert_eq!(int_literal("656"), Some(656));
        assert_eq!(int_literal("010"), Some(8));
        assert_eq!(int_literal("0"), Some(0));
        assert_eq!(int_literal("12UL"), Some(12));
        assert_eq!(int_literal("0x"), None);
        assert_eq!(int_literal("9q"), None);
    }

    #[test]
    fn scanner_ignores_comments_strings_and_other_code() {
        let text = "/* a[] = { 1 }; */\n#define X_HEADER_SIZE_IN_BITS (12)\n#define S \"a[]={\"\n\
                    // b[] = { 2 };\nstatic const u32 c_ll_iaa[2] = { 0x1, 2u, };\n\
                    int f(void) { return g(a[1]); }\n";
        let p = scan(text).unwrap();
        assert_eq!(p.arrays.len(), 1);
        assert_eq!(p.arrays[0].name, "c_ll_iaa");
        assert_eq!(p.arrays[0].values, vec![1, 2]);
        assert_eq!(p.defines.get("X_HEADER_SIZE_IN_BITS"), Some(&12));
        assert!(!p.defines.contains_key("S"));
    }

    #[test]
    fn unclosed_subscripts_and_large_headers_scan_in_linear_time() {
        // 300 KB of `a[ `: every identifier starts a subscript that never
        // closes (17 s when each one rescanned to the end).
        let text = "a[ ".repeat(100_000);
        assert!(scan(&text).unwrap().arrays.is_empty());
        // A 10 MB array of the kind a header holds parses whole.
        let mut big = String::from("static const u32 x_ll_iaa[] = {\n");
        while big.len() < 10 << 20 {
            big.push_str("0x1234, 0x5678, 0x9abc, 0xdef0,\n");
        }
        big.push_str("};\n");
        let p = scan(&big).unwrap();
        assert_eq!(p.arrays.len(), 1);
        assert!(p.arrays[0].values.len() > 1_000_000);
        // Non-ASCII text outside literals is one token per character.
        let p = scan("/* é */ u32 é_ll_iaa[] = { 1 }; \"ü\" ").unwrap();
        assert!(p.arrays.is_empty() || p.arrays[0].values == [1]);
    }

    #[test]
    fn non_literal_elements_are_syntax_errors() {
        let e = scan("u32 x_ll_iaa[] = {\n 1, FOO, 3 };").unwrap_err();
        assert_eq!(
            e,
            ImportError::Syntax {
                line: 2,
                message: "element 1 of x_ll_iaa is not an integer literal".into()
            }
        );
        assert!(matches!(
            scan("u32 x_ll_iaa[] = { 1, 2"),
            Err(ImportError::Syntax { .. })
        ));
    }
}
