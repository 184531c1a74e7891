//! Unit tests of `histogram.rs` (a file of their own to keep both under 650 lines).

use super::*;
use proptest::prelude::*;

fn hist(seed: u64, pages: u64) -> Histogram {
    let mut h = Histogram::zero(Settings::new(ParseModel::Fast));
    let mut rng = cannery_codec::rng::XorShift64::new(seed | 1);
    for _ in 0..pages {
        let mut toks = Vec::new();
        for _ in 0..50 {
            let x = rng.next_u64();
            if x % 3 == 0 {
                toks.push(Token::Match {
                    length: 3 + (x >> 8) as u16 % 256,
                    distance: 1 + (x >> 20) as u16 % 4096,
                });
            } else {
                toks.push(Token::Literal((x >> 16) as u8));
            }
        }
        h.add_page(&toks);
    }
    h
}

#[test]
fn json_round_trip_and_golden_file() {
    let h = hist(5, 3);
    let back = Histogram::from_json(&h.to_json()).unwrap();
    assert_eq!(back, h);
    // The golden file pins the serialized form: reading it must keep working.
    let golden = include_str!("../../tests/data/golden.histogram.json");
    let g = Histogram::from_json(golden).expect("golden histogram reads");
    assert_eq!(g.to_json(), golden, "serialized form changed");
    assert_eq!(g.settings().parse, ParseModel::Fast);
    // Files from before the fast parse had one name say "iaa".
    let old = golden.replace(r#""parse": "fast""#, r#""parse": "iaa""#);
    assert_ne!(old, golden);
    assert_eq!(Histogram::from_json(&old).unwrap(), g);
    assert_eq!(g.pages, 2);
    assert_eq!(g.same_filled_pages, 1);
}

#[test]
fn merge_refuses_other_settings() {
    let mut a = Histogram::zero(Settings::new(ParseModel::Fast));
    let b = Histogram::zero(Settings::new(ParseModel::Default));
    let e = a.merge(&b).unwrap_err();
    assert!(matches!(
        e,
        HistogramError::SettingsMismatch {
            field: "parse models",
            ..
        }
    ));
    assert!(e.to_string().contains("fast vs default"), "{e}");
    let mut c = Settings::new(ParseModel::Fast);
    c.window = 2048;
    assert!(a.merge(&Histogram::zero(c)).is_err());
    let mut d1 = Settings::new(ParseModel::Best);
    d1.cost_table = Some("aa".into());
    let mut d2 = d1.clone();
    d2.cost_table = Some("bb".into());
    assert!(Histogram::zero(d1).merge(&Histogram::zero(d2)).is_err());
}

#[test]
fn counts_that_wrap_around_are_refused() {
    let text = hist(9, 2).to_json();
    // 2^64-1 + 1 wraps to 0 in release builds: one more length symbol
    // than distances, hidden by the wrap.
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let l257 = v["litlen"][257].as_u64().unwrap();
    v["litlen"][257] = u64::MAX.into();
    v["litlen"][258] = (v["litlen"][258].as_u64().unwrap() + l257 + 1).into();
    let e = Histogram::from_json(&v.to_string()).unwrap_err();
    assert!(e.to_string().contains("overflow 64 bits"), "{e}");
    // More symbols than pages can hold.
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["litlen"][65] = 1_000_000u64.into();
    let e = Histogram::from_json(&v.to_string()).unwrap_err();
    assert!(e.to_string().contains("per page"), "{e}");
}

#[test]
fn damaged_files_are_typed_errors() {
    let h = hist(9, 2);
    let text = h.to_json();
    assert!(matches!(
        Histogram::from_json("not json"),
        Err(HistogramError::Malformed(_))
    ));
    assert!(matches!(
        Histogram::from_json(&text.replace("cannery-histogram", "cannery-table")),
        Err(HistogramError::WrongFormat(_))
    ));
    assert!(matches!(
        Histogram::from_json(&text.replace("\"version\": 1", "\"version\": 7")),
        Err(HistogramError::UnsupportedVersion(7))
    ));
    assert!(matches!(
        Histogram::from_json(&text.replace("\"pages\": 2", "\"pages\": 3")),
        Err(HistogramError::Inconsistent(_))
    ));
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["dist"].as_array_mut().unwrap().pop();
    assert!(matches!(
        Histogram::from_json(&v.to_string()),
        Err(HistogramError::Malformed(_))
    ));
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["dist"][0] = (v["dist"][0].as_u64().unwrap() + 1).into();
    assert!(matches!(
        Histogram::from_json(&v.to_string()),
        Err(HistogramError::Inconsistent(_))
    ));
}

proptest! {
    #[test]
    fn merge_is_associative_and_commutative_with_a_zero(
        s1 in 1u64..1000, s2 in 1u64..1000, s3 in 1u64..1000,
        n1 in 0u64..4, n2 in 0u64..4, n3 in 0u64..4,
    ) {
        let (a, b, c) = (hist(s1, n1), hist(s2, n2), hist(s3, n3));
        let zero = Histogram::zero(Settings::new(ParseModel::Fast));
        let ab_c = a.clone().merged(&b).unwrap().merged(&c).unwrap();
        let a_bc = a.clone().merged(&b.clone().merged(&c).unwrap()).unwrap();
        let cba = c.clone().merged(&b).unwrap().merged(&a).unwrap();
        prop_assert_eq!(&ab_c, &a_bc);
        prop_assert_eq!(&ab_c, &cba);
        prop_assert_eq!(zero.clone().merged(&a).unwrap(), a.clone());
        prop_assert_eq!(a.clone().merged(&zero).unwrap(), a);
        prop_assert!(ab_c.check().is_ok());
    }
}

#[test]
fn library_parses_are_recorded_and_never_merge_with_others() {
    for m in ParseModel::ALL {
        assert_eq!(m.name().parse::<ParseModel>(), Ok(m));
        if m == ParseModel::Best {
            continue;
        }
        let h = Histogram::zero(Settings::new(m));
        let text = h.to_json();
        assert!(
            text.contains(&format!("\"parse\": \"{}\"", m.name())),
            "{text}"
        );
        assert_eq!(Histogram::from_json(&text).unwrap().settings().parse, m);
    }
    assert_eq!("iaa".parse::<ParseModel>(), Ok(ParseModel::Fast));
    let mut qpl = Histogram::zero(Settings::new(ParseModel::QplDefault));
    let high = Histogram::zero(Settings::new(ParseModel::QplHigh));
    let e = qpl.merge(&high).unwrap_err().to_string();
    assert!(e.contains("qpl-default vs qpl-high"), "{e}");
    assert!(qpl
        .merge(&Histogram::zero(Settings::new(ParseModel::Fast)))
        .is_err());
}
