//! Fixed-width hex in fixed columns for C array initializers, so generated
//! files diff cleanly and golden tests are stable.
//!
//! Only formatting lives here; what the values mean is the caller's business.

/// Writes `values` as `0x`-prefixed lower-case hex of `digits` digits,
/// `per_row` to a line, each line indented by one tab. With `index_width`
/// set, each line starts with a comment holding the index of its first
/// value (e.g. `/* 256 */`). Every value is followed by a comma.
pub(crate) fn rows(
    out: &mut String,
    values: &[u64],
    digits: usize,
    per_row: usize,
    index_width: Option<usize>,
) {
    for (r, chunk) in values.chunks(per_row).enumerate() {
        out.push('\t');
        if let Some(w) = index_width {
            out.push_str(&format!("/* {:>w$} */ ", r * per_row));
        }
        let items: Vec<String> = chunk.iter().map(|v| format!("0x{v:0digits$x},")).collect();
        out.push_str(&items.join(" "));
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_width_and_columns() {
        let mut s = String::new();
        rows(&mut s, &[0x40030, 0x3, 0x7ffff], 5, 2, Some(3));
        assert_eq!(s, "\t/*   0 */ 0x40030, 0x00003,\n\t/*   2 */ 0x7ffff,\n");
        let mut s = String::new();
        rows(&mut s, &[1, 0xab], 2, 8, None);
        assert_eq!(s, "\t0x01, 0xab,\n");
    }
}
