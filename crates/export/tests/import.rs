//! `table_from_kernel_header`: our headers and the 2024 kernel patch's arrays
//! import back to the same table, and every kind of disagreement is an error
//! that names what disagrees.

mod common;

use cannery_codec::table::builtin::{KERNEL_2024_HEADER, KERNEL_2024_HEADER_BITS};
use cannery_codec::table::header::write_header_shortest;
use cannery_codec::table::{Alphabet, BlockHeader};
use cannery_codec::Table;
use cannery_export::c_header::{kernel_entries, kernel_header};
use cannery_export::{table_from_kernel_header, Api, ImportError, KernelOptions};
use common::{kernel_patch_style, tables};

fn patch_2024() -> String {
    let (ll, d) = kernel_entries(&Table::kernel_2024());
    kernel_patch_style(&ll, &d, KERNEL_2024_HEADER, KERNEL_2024_HEADER_BITS)
}

#[test]
fn the_2024_patch_arrays_import_to_the_kernel_table() {
    let text = patch_2024();
    // The rebuilt text has the patch's own first rows (lore
    // f59789265e79701d021ecc45bc50252d8d2a5981.1710969449.git.andre.glover@linux.intel.com).
    assert!(text.contains(
        "static const u32 canned_ll_iaa[286] = {\n0x28002,  0x38024,  0x40066,  0x40067,  \
         0x40068,  0x48144,  0x40069,  0x48145,\n"
    ));
    assert!(text.contains("0x2000a,  0x2801a,  0x2801b,  0x2801c,  0x2801d,  0x3003d,  0x3003e,  0x481ff,\n0x0,  0x0,  0x0,  0x0,  0x0,  0x0,\n};"));
    assert!(text.contains("#define HEADER_SIZE_IN_BITS 656\nstatic const u8 canned_header[] = {\n0xed, 0xfd, 0x05, 0x5c,"));
    let t = table_from_kernel_header(&text).unwrap();
    assert_eq!(t, Table::kernel_2024());
    assert_eq!(t.id(), Table::kernel_2024().id());
    assert_eq!(t.name.as_deref(), Some("canned"));
    assert_eq!(
        t.provenance.source.as_deref(),
        Some("imported from a kernel header (arrays canned_ll_iaa, canned_d_iaa, canned_header)")
    );
}

#[test]
fn our_headers_round_trip_in_every_form() {
    for (label, table) in tables() {
        for api in Api::ALL {
            let h = kernel_header(&table, &KernelOptions::new("rt").with_api(api)).unwrap();
            let back =
                table_from_kernel_header(&h).unwrap_or_else(|e| panic!("{label}/{api}: {e}"));
            assert_eq!(back, table, "{label}/{api}");
            assert_eq!(back.name.as_deref(), Some("rt"));
        }
    }
}

/// `text` (ours, NAME `rt`) with its header array, bit count and flags
/// replaced by `h`.
fn with_header(text: &str, h: &BlockHeader) -> String {
    let start = text.find("static const u8 rt_header[").unwrap();
    let end = start + text[start..].find("};\n").unwrap() + 3;
    let bytes: Vec<String> = h.bytes.iter().map(|b| format!("0x{b:02x},")).collect();
    let array = format!(
        "static const u8 rt_header[{}] = {{\n{}\n}};\n",
        h.bytes.len(),
        bytes.join(" ")
    );
    let mut out = String::new();
    for line in [&text[..start], &array, &text[end..]].concat().lines() {
        if line.starts_with("#define RT_HEADER_SIZE_IN_BITS ") {
            out += &format!("#define RT_HEADER_SIZE_IN_BITS {}", h.bits);
        } else if line.starts_with("#define RT_GEN_DECOMP_TABLE_FLAGS ") {
            out += &format!(
                "#define RT_GEN_DECOMP_TABLE_FLAGS 0x{:04x}",
                h.gen_decomp_table_flags()
            );
        } else {
            out += line;
        }
        out.push('\n');
    }
    out
}

#[test]
fn aligned_and_exact_bit_headers_both_import() {
    for (label, table) in tables() {
        if table.is_fixed_code() {
            continue; // no header array
        }
        let ours = kernel_header(&table, &KernelOptions::new("rt")).unwrap();
        // The exported header is the aligned one: no bits to ignore.
        assert!(table.header().is_byte_aligned(), "{label}");
        assert!(ours.contains(&format!(
            "#define RT_HEADER_SIZE_IN_BITS {}\n",
            table.header().bytes.len() * 8
        )));
        assert!(
            ours.contains("#define RT_GEN_DECOMP_TABLE_FLAGS 0x0201 /* 0x1 | 1 << 9 | 0 << 6 */")
        );
        assert!(ours.contains("Byte-aligned (no bits to ignore)"), "{label}");
        assert_eq!(table_from_kernel_header(&ours).unwrap(), table, "{label}");
        // The greedy exact-bit header, with its pad bits to ignore, in the
        // same file imports to the same table.
        let exact = write_header_shortest(table.lengths());
        let text = with_header(&ours, &exact);
        assert!(text.contains(&format!("#define RT_HEADER_SIZE_IN_BITS {}\n", exact.bits)));
        let back = table_from_kernel_header(&text).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(back, table, "{label}");
        if label == "kernel-2024" {
            assert_eq!((exact.bits, exact.pad_bits()), (613, 3));
            assert!(text.contains("#define RT_GEN_DECOMP_TABLE_FLAGS 0x02c1\n"));
        }
        // Declaring the aligned size for the exact-bit bytes is caught.
        let wrong = text.replace(
            &format!("#define RT_HEADER_SIZE_IN_BITS {}\n", exact.bits),
            &format!("#define RT_HEADER_SIZE_IN_BITS {}\n", exact.bytes.len() * 8),
        );
        assert!(
            matches!(
                table_from_kernel_header(&wrong),
                Err(ImportError::HeaderBits { .. })
            ),
            "{label}"
        );
    }
}

#[test]
fn a_flipped_code_is_named() {
    // canned_ll_iaa[39] = 0x48160: length 9, code 0x160.
    let text = patch_2024().replace("0x4815f,  0x48160,", "0x4815f,  0x48161,");
    assert_eq!(
        table_from_kernel_header(&text),
        Err(ImportError::CodeMismatch {
            alphabet: Alphabet::LitLen,
            symbol: 39,
            code: 0x161,
            length: 9,
            canonical: 0x160
        })
    );
    let e = table_from_kernel_header(&text).unwrap_err().to_string();
    assert_eq!(
        e,
        "literal/length symbol 39: code 0x161 but canonical code for length 9 is 0x160"
    );

    // The same in our own header, in the distance array.
    let h = kernel_header(&Table::kernel_2024(), &KernelOptions::new("c")).unwrap();
    let flipped = h.replacen("0x3807e,", "0x3807f,", 1);
    assert_ne!(flipped, h);
    assert_eq!(
        table_from_kernel_header(&flipped).unwrap_err().to_string(),
        "distance symbol 0: code 0x7f but canonical code for length 7 is 0x7e"
    );
}

#[test]
fn a_changed_length_that_stays_valid_is_caught_by_the_header() {
    // Swap the lengths (and codes) of two literals of different lengths in the
    // arrays only: still a valid canonical table, but not the header's.
    let t = Table::kernel_2024();
    let (mut ll, d) = kernel_entries(&t);
    let (mut lens, dl) = (t.lengths().litlen, t.lengths().dist);
    lens.swap(0, 1); // 5 and 7 bits
    let swapped = Table::from_lengths(&lens, &dl).unwrap();
    ll.copy_from_slice(&kernel_entries(&swapped).0);
    let text = kernel_patch_style(&ll, &d, KERNEL_2024_HEADER, KERNEL_2024_HEADER_BITS);
    assert_eq!(
        table_from_kernel_header(&text),
        Err(ImportError::HeaderLengthMismatch {
            alphabet: Alphabet::LitLen,
            symbol: 0,
            header: 5,
            arrays: 7
        })
    );
}

#[test]
fn header_bit_count_size_and_flags_are_checked() {
    let text = patch_2024().replace(
        "#define HEADER_SIZE_IN_BITS 656",
        "#define HEADER_SIZE_IN_BITS 655",
    );
    assert_eq!(
        table_from_kernel_header(&text).unwrap_err().to_string(),
        "header ends at bit 656 but HEADER_SIZE_IN_BITS is 655"
    );
    // An extra byte after the header.
    let text = patch_2024().replace("0x7c, 0x3e,\n};", "0x7c, 0x3e, 0x00,\n};");
    assert_eq!(
        table_from_kernel_header(&text),
        Err(ImportError::HeaderSize {
            array: "canned_header".into(),
            bytes: 83,
            bits: 656
        })
    );
    // Our flags define must match the header's pad bits.
    let t = Table::kernel_2024();
    let h = kernel_header(&t, &KernelOptions::new("c")).unwrap();
    let flags = format!("0x{:04x}", t.header().gen_decomp_table_flags());
    // Our header is byte-aligned: 0 bits to ignore. Claiming 3 is an error.
    assert_eq!(flags, "0x0201");
    let bad = h.replace(
        &format!("#define C_GEN_DECOMP_TABLE_FLAGS {flags}"),
        "#define C_GEN_DECOMP_TABLE_FLAGS 0x02c1",
    );
    assert_ne!(bad, h);
    assert!(matches!(
        table_from_kernel_header(&bad),
        Err(ImportError::FlagsMismatch {
            declared: 0x2c1,
            expected: 0x201,
            ..
        })
    ));
    // A damaged header byte: either it no longer parses or gives other lengths.
    let bad = patch_2024().replace("0x8c, 0xcf, 0x02, 0x22,", "0x8c, 0xcf, 0x03, 0x22,");
    assert!(matches!(
        table_from_kernel_header(&bad),
        Err(ImportError::BadHeader { .. } | ImportError::HeaderLengthMismatch { .. })
    ));
}

#[test]
fn our_comment_id_must_match_the_arrays() {
    let t = Table::kernel_2024();
    let h = kernel_header(&t, &KernelOptions::new("c")).unwrap();
    let bad = h.replace(
        &format!("Table id:     {}", t.id()),
        "Table id:     0000000000000000",
    );
    assert_eq!(
        table_from_kernel_header(&bad),
        Err(ImportError::IdMismatch {
            stated: "0000000000000000".into(),
            computed: t.id()
        })
    );
}

#[test]
fn structural_errors() {
    assert_eq!(
        table_from_kernel_header("int x;").unwrap_err().to_string(),
        "no literal/length array found (expected an array whose name ends in ll_iaa or ll_sym)"
    );
    let text = patch_2024().replace("0x7fffe,  0x7ffff,  0x73ffa,\n", "0x7fffe,  0x7ffff,\n");
    assert_eq!(
        table_from_kernel_header(&text),
        Err(ImportError::WrongLength {
            array: "canned_ll_iaa".into(),
            expected: 286,
            found: 285
        })
    );
    let text = patch_2024().replace("0x28002,  0x38024,", "0x80028002,  0x38024,");
    assert_eq!(
        table_from_kernel_header(&text).unwrap_err().to_string(),
        "literal/length symbol 0: entry 0x80028002 has bits above bit 18 set"
    );
    let text = patch_2024().replace(
        "0x0,  0x0,  0x0,  0x0,  0x0,  0x0,",
        "0x0,  0x0,  0x0,  0x0,  0x0,  0x1,",
    );
    assert_eq!(
        table_from_kernel_header(&text).unwrap_err().to_string(),
        "distance symbol 29: length 0 (no code) but code bits 0x1"
    );
    let two = format!(
        "{}\nstatic const u32 other_ll_iaa[1] = {{ 0 }};\n",
        patch_2024()
    );
    assert!(matches!(
        table_from_kernel_header(&two),
        Err(ImportError::Ambiguous { .. })
    ));
    // Without the header array the bit count define has nothing to describe.
    let no_header = patch_2024().replace("canned_header[]", "canned_hdr_bytes[]");
    assert_eq!(
        table_from_kernel_header(&no_header)
            .unwrap_err()
            .to_string(),
        "HEADER_SIZE_IN_BITS is defined but there is no header array"
    );
}

#[test]
fn garbage_and_mutations_never_panic() {
    // Random edits of a valid file (digits, braces, commas, comment markers,
    // deletions) must give Ok or a typed error, never a panic.
    let base = patch_2024().into_bytes();
    let ours = kernel_header(&Table::kernel_2024(), &KernelOptions::new("c"))
        .unwrap()
        .into_bytes();
    let mut rng = cannery_codec::rng::XorShift64::new(0x9e37_79b9_7f4a_7c15);
    let mut next = move || rng.next_u64();
    const ALPHABET: &[u8] = b"0123456789abcdefxX{}[],;=/*\"' \n#u";
    for round in 0..3000 {
        let mut t = if round % 2 == 0 {
            base.clone()
        } else {
            ours.clone()
        };
        for _ in 0..(1 + next() % 4) {
            let at = (next() as usize) % t.len();
            match next() % 3 {
                0 => t[at] = ALPHABET[(next() as usize) % ALPHABET.len()],
                1 => {
                    t.remove(at);
                }
                _ => t.insert(at, ALPHABET[(next() as usize) % ALPHABET.len()]),
            }
        }
        let text = String::from_utf8_lossy(&t);
        let _ = table_from_kernel_header(&text);
    }
    for s in [
        "",
        "{",
        "x[",
        "x[] = {",
        "x_ll_iaa[] = { 0x",
        "/*",
        "\"",
        "#define",
        "a[]={1,}",
    ] {
        let _ = table_from_kernel_header(s);
    }
}
