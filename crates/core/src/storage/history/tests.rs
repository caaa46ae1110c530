use super::*;
use crate::history::index::Index;
use crate::history::lookup::ranked as ranked_in_memory;

fn text(key: u32, text: &str) -> Text {
    Text {
        key,
        role: Role::ToolResult,
        text: text.to_owned(),
    }
}

fn sample() -> Vec<Text> {
    vec![
        text(0, "Open src/parser/config.ts and fix parseConfigFile"),
        text(2, "error E0502: cannot borrow `items` as mutable"),
        text(3, "We decided to keep the retry limit at 3"),
        text(5, "The build passes; parseConfigFile now returns a Result"),
        text(6, "データベースの接続がタイムアウトしました"),
        text(9, "Never edit generated files under dist/"),
    ]
}

/// The records of `fills`, as a store reads them back for `query`.
fn search(fills: &[Fill], query: &str, limit: usize) -> Vec<Ranked> {
    let terms = search_terms(query, limit).unwrap();
    let stats: Vec<Vec<u8>> = fills.iter().map(|f| f.stats.clone()).collect();
    let postings: Vec<Vec<Vec<u8>>> = terms
        .iter()
        .map(|t| {
            (fills.iter())
                .filter_map(|f| f.buckets.iter().find(|(b, _)| *b == bucket(&t.text)))
                .map(|(_, record)| record.clone())
                .collect()
        })
        .collect();
    ranked(&stats, &terms, &postings, limit).unwrap()
}

#[test]
fn fills_rank_as_one_index_over_the_same_messages() {
    let all = sample();
    let first = fill(None, 4, all[..3].to_vec()).unwrap();
    let second = fill(Some(&first.meta), 10, all[3..].to_vec()).unwrap();
    assert_eq!(
        second.meta,
        Meta {
            count: 10,
            messages: 6,
            docs: 6,
            fills: 2
        }
    );
    let mut index = Index::new();
    for t in &all {
        index.add(t.key, &t.text).unwrap();
    }
    for query in [
        "parse config file",
        "E0502 borrow",
        "decision on retries",
        "タイムアウト",
        "dist",
    ] {
        let (_, expected) = ranked_in_memory(&mut index, query, 5).unwrap();
        assert!(!expected.is_empty(), "{query}");
        assert_eq!(
            search(&[first.clone(), second.clone()], query, 5),
            expected,
            "{query}"
        );
    }
}

#[test]
fn a_fill_keeps_the_texts_it_indexed() {
    let f = fill(None, 4, sample()[..3].to_vec()).unwrap();
    let keys: Vec<u32> = f.texts.iter().map(|t| t.key).collect();
    assert_eq!(keys, [0, 2, 3]);
    assert_eq!(f.number, 0);
    // A fill of messages without text still moves the covered count.
    let empty = fill(Some(&f.meta), 7, Vec::new()).unwrap();
    assert_eq!(
        (empty.meta.count, empty.meta.messages, empty.meta.fills),
        (7, 3, 2)
    );
    assert!(empty.buckets.is_empty());
    assert!(f.buckets.len() <= BUCKETS as usize && f.buckets.windows(2).all(|w| w[0].0 < w[1].0));
}

#[test]
fn the_meta_record_round_trips_and_refuses_another_version() {
    let meta = Meta {
        count: 70_000,
        messages: 12,
        docs: 300,
        fills: 4,
    };
    assert_eq!(Meta::decode(&meta.encode()), Ok(meta));
    let mut other = meta.encode();
    other[0] = VERSION + 1;
    assert!(matches!(
        Meta::decode(&other),
        Err(HistoryError::Version { .. })
    ));
    assert!(matches!(
        Meta::decode(&meta.encode()[..2]),
        Err(HistoryError::Corrupt { .. })
    ));
}

#[test]
fn records_out_of_order_are_refused_as_damaged() {
    let first = fill(None, 4, sample()[..3].to_vec()).unwrap();
    let terms = search_terms("config", 5).unwrap();
    let stats = vec![first.stats.clone(), first.stats.clone()];
    assert!(matches!(
        ranked(&stats, &terms, &[], 5),
        Err(HistoryError::Corrupt { .. })
    ));
    assert!(matches!(
        search_terms("config", 0),
        Err(HistoryError::Limit { .. })
    ));
}

#[test]
fn a_save_fills_what_a_new_summary_hides() {
    // A compaction: the summary moves from 10 to 40, inserted at 40.
    assert_eq!(
        on_save(Some(10), Some(40), Some(40), false),
        OnSave::Fill { from: 10, to: 40 }
    );
    // The first compaction.
    assert_eq!(
        on_save(None, Some(25), Some(25), false),
        OnSave::Fill { from: 0, to: 25 }
    );
    // A turn: appended messages only.
    assert_eq!(on_save(Some(10), Some(10), None, false), OnSave::Keep);
    assert_eq!(on_save(None, None, None, false), OnSave::Keep);
    // A failed attempt dropped after the summary.
    assert_eq!(on_save(Some(10), Some(10), Some(30), false), OnSave::Keep);
}

#[test]
fn a_save_that_touches_covered_messages_drops_the_index() {
    // An edit before the summary.
    assert_eq!(on_save(Some(10), Some(11), Some(3), false), OnSave::Drop);
    // An undo: the last summary removed, the one before is last again.
    assert_eq!(on_save(Some(40), Some(10), Some(40), false), OnSave::Drop);
    assert_eq!(on_save(Some(40), None, Some(40), false), OnSave::Drop);
    // A context array saved with replace: every record before it goes.
    assert_eq!(on_save(Some(10), Some(10), None, true), OnSave::Drop);
}

#[test]
fn the_save_step_follows_the_stored_meta() {
    let at = |count| {
        Ok(Meta {
            count,
            ..Meta::default()
        })
    };
    let fill = OnSave::Fill { from: 10, to: 40 };
    assert_eq!(
        save_step(fill, Some(&at(10)), true),
        SaveStep::Fill { from: 10, to: 40 }
    );
    // No index (an import, a session from before the index): the first
    // search builds it whole...
    assert_eq!(save_step(fill, None, true), SaveStep::Nothing);
    // ...unless nothing was hidden before: the first compaction's fill is
    // the whole index.
    let first = OnSave::Fill { from: 0, to: 25 };
    assert_eq!(
        save_step(first, None, true),
        SaveStep::Fill { from: 0, to: 25 }
    );
    // An index that does not end where the old summary was.
    assert_eq!(save_step(fill, Some(&at(7)), true), SaveStep::Drop);
    assert_eq!(save_step(OnSave::Drop, Some(&at(7)), true), SaveStep::Drop);
    assert_eq!(save_step(OnSave::Drop, None, true), SaveStep::Nothing);
    assert_eq!(
        save_step(OnSave::Keep, Some(&at(7)), true),
        SaveStep::Nothing
    );
    // A record this version does not read: dropped, whatever the save.
    let unreadable = Err(HistoryError::Version {
        what: "history index",
        got: 9,
        expected: VERSION,
    });
    assert_eq!(
        save_step(OnSave::Keep, Some(&unreadable), true),
        SaveStep::Drop
    );
    // Made again without its fill (the quota refused it): the fill is a drop.
    assert_eq!(save_step(fill, Some(&at(10)), false), SaveStep::Drop);
    assert_eq!(save_step(first, None, false), SaveStep::Drop);
    assert_eq!(
        save_step(OnSave::Keep, Some(&at(7)), false),
        SaveStep::Nothing
    );
}

#[test]
fn a_save_the_quota_refused_is_made_again_without_its_fill() {
    assert!(retry_without_index(true, true));
    // Without a fill, the index is not what did not fit.
    assert!(!retry_without_index(true, false));
    // Another failure is the save's own.
    assert!(!retry_without_index(false, true));
}

#[test]
fn a_fill_is_written_as_keyed_records_with_its_meta_last() {
    let first = fill(None, 10, sample()).unwrap();
    let second = fill(Some(&first.meta), 12, vec![text(11, "retry limit")]).unwrap();
    let records = second.records();
    let keys: Vec<&[u32]> = records.iter().map(|(k, _)| &k[..]).collect();
    // The statistics and every bucket are under the fill's number, a text
    // under its message's place in the session.
    assert_eq!(keys[0], [STATS, 1]);
    let buckets: Vec<&[u32]> = keys.iter().filter(|k| k[0] == BUCKET).copied().collect();
    assert_eq!(buckets.len(), second.buckets.len());
    assert!(buckets
        .iter()
        .all(|k| k.len() == 3 && k[2] == 1 && k[1] < BUCKETS));
    assert_eq!(keys[keys.len() - 2], [TEXT, 11]);
    assert_eq!(
        records[records.len() - 2].1,
        Value::Text("toolResult", "retry limit")
    );
    assert_eq!(keys[keys.len() - 1], [META]);
    let Value::Bytes(meta) = &records[records.len() - 1].1 else {
        panic!("the meta record is bytes");
    };
    assert_eq!(Meta::decode(meta), Ok(second.meta));
}

#[test]
fn records_read_back_as_they_were_written() {
    let meta = fill(None, 10, sample()).unwrap().meta;
    assert_eq!(read_meta(false, None), None);
    assert_eq!(read_meta(true, Some(&meta.encode())), Some(Ok(meta)));
    // A meta record that is not bytes is not this library's index.
    assert!(matches!(
        read_meta(true, None),
        Some(Err(HistoryError::Corrupt { .. }))
    ));
    assert_eq!(
        read_text(Some("assistant".into()), Some("done".into())),
        Some((Role::Assistant, "done".into()))
    );
    assert_eq!(read_text(Some("user".into()), None), None);
    assert_eq!(read_text(None, Some("text".into())), None);
}
