//! Native tests of the postings and statistics records.

use super::*;
use proptest::prelude::*;

fn postings(docs: &[(u32, u32)]) -> Postings {
    let mut p = Postings::default();
    for &(doc, tf) in docs {
        assert!(p.push(doc, tf));
    }
    p
}

fn stats(docs: &[(u32, u32, u32, u32)]) -> Stats {
    let mut s = Stats::default();
    for &(doc, key, passage, length) in docs {
        assert!(s.push(
            doc,
            Doc {
                key,
                passage,
                length
            }
        ));
    }
    s
}

#[test]
fn postings_keep_increasing_documents_in_a_few_bytes() {
    let mut p = postings(&[(0, 1), (5, 3), (6, 1), (1000, 200)]);
    assert_eq!(
        p.iter().collect::<Vec<_>>(),
        [(0, 1), (5, 3), (6, 1), (1000, 200)]
    );
    assert_eq!(p.len(), 4);
    // Not after the last one: refused.
    assert!(!p.push(1000, 1));
    assert!(!p.push(7, 1));
    assert_eq!(p.len(), 4);
    // 8 varints, two of them two bytes long.
    assert_eq!(p.encode().len(), 1 + 1 + 10);
    let kept = p.retain(|doc| doc.is_multiple_of(2));
    assert_eq!(
        kept.iter().collect::<Vec<_>>(),
        [(0, 1), (6, 1), (1000, 200)]
    );
}

#[test]
fn records_round_trip() {
    let p = postings(&[(3, 1), (4, 2), (u32::MAX, u32::MAX)]);
    assert_eq!(Postings::decode(&p.encode()), Ok(p));
    assert_eq!(
        Postings::decode(&Postings::default().encode()),
        Ok(Postings::default())
    );
    let s = stats(&[(0, 7, 0, 120), (1, 7, 1, 40), (9, 12, 0, 3)]);
    let decoded = Stats::decode(&s.encode()).unwrap();
    assert_eq!(decoded, s);
    assert_eq!(decoded.total_length(), 163);
    assert_eq!(
        decoded.get(9),
        Some(&Doc {
            key: 12,
            passage: 0,
            length: 3
        })
    );
    assert_eq!(decoded.get(2), None);
}

#[test]
fn bad_records_are_errors() {
    let p = postings(&[(3, 1), (300, 2)]).encode();
    let s = stats(&[(0, 7, 0, 120), (1, 7, 1, 40)]).encode();
    // Another version.
    let mut v2 = p.clone();
    v2[0] = 2;
    assert_eq!(
        Postings::decode(&v2),
        Err(HistoryError::Version {
            what: "postings",
            got: 2,
            expected: VERSION
        })
    );
    assert!(matches!(
        Stats::decode(&[9]),
        Err(HistoryError::Version { got: 9, .. })
    ));
    // Empty, cut short anywhere, or with bytes after its end.
    assert!(matches!(
        Postings::decode(&[]),
        Err(HistoryError::Corrupt { .. })
    ));
    for cut in 1..p.len() {
        assert!(
            matches!(
                Postings::decode(&p[..cut]),
                Err(HistoryError::Corrupt { .. })
            ),
            "{cut}"
        );
    }
    for cut in 1..s.len() {
        assert!(
            matches!(Stats::decode(&s[..cut]), Err(HistoryError::Corrupt { .. })),
            "{cut}"
        );
    }
    let mut long = p.clone();
    long.push(0);
    assert!(matches!(
        Postings::decode(&long),
        Err(HistoryError::Corrupt {
            why: "it has bytes after its end",
            ..
        })
    ));
    // A number past u32, and documents past u32 once added up.
    assert!(matches!(
        Postings::decode(&[VERSION, 1, 0x80, 0x80, 0x80, 0x80, 0x10, 0]),
        Err(HistoryError::Corrupt {
            why: "a number is out of range",
            ..
        })
    ));
    assert!(matches!(
        Postings::decode(&[VERSION, 2, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0, 0, 0]),
        Err(HistoryError::Corrupt {
            why: "a number is out of range",
            ..
        })
    ));
    // A varint longer than a u64.
    assert!(matches!(
        Postings::decode(&[VERSION, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]),
        Err(HistoryError::Corrupt { .. })
    ));
    // A total that is not the sum.
    let mut wrong = vec![VERSION, 1, 5];
    wrong.extend([0, 7, 0, 4]);
    assert!(matches!(
        Stats::decode(&wrong),
        Err(HistoryError::Corrupt {
            what: "statistics",
            why: "the total length is not the sum of the lengths"
        })
    ));
}

proptest! {
    #[test]
    fn any_postings_round_trip(gaps in proptest::collection::vec((0u32..5000, 1u32..100), 0..100)) {
        let mut p = Postings::default();
        let mut doc = 0u32;
        let mut want = Vec::new();
        for (i, (gap, tf)) in gaps.into_iter().enumerate() {
            doc = if i == 0 { gap } else { doc + gap + 1 };
            prop_assert!(p.push(doc, tf));
            want.push((doc, tf));
        }
        prop_assert_eq!(p.iter().collect::<Vec<_>>(), want);
        prop_assert_eq!(Postings::decode(&p.encode()), Ok(p));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
        let mut record = vec![VERSION];
        record.extend(bytes);
        let _ = Postings::decode(&record);
        let _ = Stats::decode(&record);
    }
}
