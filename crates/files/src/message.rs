//! What a message or report shows of text that came from outside (file
//! names, labels, command lines): control and bidi characters escaped, so
//! a name cannot drive the terminal; and an error with its causes on one
//! line, each cause once.

#![forbid(unsafe_code)]

use std::borrow::Cow;

/// `text` with every control character but newline and tab (ESC, CR) and
/// every bidi control written as `\uXXXX` (also a valid JSON escape).
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    let bad = |c: char| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.contains(bad) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if bad(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// An error and its causes on one line, `a: b: c`, each cause once: one
/// whose text the line already holds (an error that prints its source in
/// its own message) is not repeated. Control characters are escaped.
pub fn error_line(err: &(dyn std::error::Error + 'static)) -> String {
    let mut line = String::new();
    let mut cause = Some(err);
    while let Some(c) = cause {
        let text = c.to_string();
        if !line.contains(&text) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&text);
        }
        cause = c.source();
    }
    escape_controls(&line).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_are_escaped_and_plain_text_is_borrowed() {
        assert!(matches!(escape_controls("a b\tc\n"), Cow::Borrowed(_)));
        assert_eq!(escape_controls("x\u{1b}[2Jy\r"), "x\\u001b[2Jy\\u000d");
        assert_eq!(escape_controls("\u{202e}gpj.exe"), "\\u202egpj.exe");
    }

    #[derive(Debug)]
    struct E(&'static str, Option<Box<E>>);
    impl std::fmt::Display for E {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    impl std::error::Error for E {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as _)
        }
    }

    #[test]
    fn a_cause_the_line_already_holds_is_not_repeated() {
        let inner = E("no such file", None);
        let mid = E("table t.json: no such file", Some(Box::new(inner)));
        let top = E("loading", Some(Box::new(mid)));
        assert_eq!(error_line(&top), "loading: table t.json: no such file");
        let esc = E("bad \u{1b} name", Some(Box::new(E("io", None))));
        assert_eq!(error_line(&esc), "bad \\u001b name: io");
    }
}
