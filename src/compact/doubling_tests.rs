//! Crafted values against the incremental doubling: what a value says about its doubling (cursor,
//! reserve) is checked against its tables, and a doubling finished at once is planned before
//! anything changes.

use super::*;
use crate::rdb::LoadError;

const NO_LIMIT: u64 = u64::MAX;

fn id(i: u64) -> Vec<u8> {
    format!("issue35-{i:012}").into_bytes()
}

/// A filter grown through doublings until one of a table of at least `slots` slots is a
/// quarter done; a counting one adds an item held before with every new one (repeats beside
/// old entries are what the reserve is for).
fn mid_doubling(error: f64, deletable: bool, slots: u64) -> Compact {
    let mut filter = Compact::new(1, error, deletable, NO_LIMIT).unwrap();
    for i in 0.. {
        filter.add(&id(i), NO_LIMIT).unwrap();
        if deletable {
            filter.add(&id(i / 3), NO_LIMIT).unwrap();
        }
        let quarter = filter
            .doubling
            .as_ref()
            .is_some_and(|d| d.old.slots() >= slots / 2 && d.cursor >= d.old.slots() / 4);
        if quarter {
            break;
        }
    }
    filter
}

/// The plan of a doubling finished at once is what finishing it leaves, at every state of
/// doublings in progress; its merges never exceed the reserve commands keep.
#[test]
fn the_plan_of_a_finished_doubling_is_what_finishing_leaves() {
    for (error, deletable) in [(0.01, false), (0.01, true), (0.5, true), (0.3, false)] {
        let mut filter = Compact::new(1, error, deletable, NO_LIMIT).unwrap();
        let mut checked = 0;
        for i in 0..6000u64 {
            filter.add(&id(i), NO_LIMIT).unwrap();
            if deletable && i % 3 == 0 {
                filter.add(&id(i / 2), NO_LIMIT).unwrap();
            }
            if filter.doubling.is_none() || i % 5 != 0 {
                continue;
            }
            let plan = filter.finish_plan().unwrap();
            let reserve = filter.doubling.as_ref().map_or(0, |d| d.reserve);
            assert!(plan.merges <= reserve, "{error} {i}: {plan:?} {reserve}");
            let mut finished = filter.clone();
            assert!(finished.migrate(u64::MAX));
            assert!(finished.doubling.is_none());
            assert_eq!(
                (plan.entries, plan.moved),
                (finished.entries, finished.moved),
                "{error} {deletable} {i}"
            );
            checked += 1;
        }
        assert!(checked > 50, "{error}: {checked}");
    }
}

/// The header bytes of a doubling's cursor and reserve (version 3).
const CURSOR: std::ops::Range<usize> = 52..60;
const RESERVE: std::ops::Range<usize> = 60..68;

/// Loads a filter's chunks with its header changed by `edit`: the last chunk's answer.
fn load_edited(filter: &Compact, edit: impl Fn(&mut Vec<u8>)) -> Result<Compact, LoadError> {
    let mut header = filter.encode_header();
    edit(&mut header);
    let mut loaded =
        Compact::from_header(&header, NO_LIMIT).map_err(|_| LoadError::Invalid("header"))?;
    for (iter, bytes) in filter.chunks() {
        loaded
            .load_chunk(iter, bytes, NO_LIMIT)
            .map_err(|_| LoadError::Invalid("chunk"))?;
    }
    Ok(loaded)
}

fn put(header: &mut [u8], at: std::ops::Range<usize>, value: u64) {
    if let Some(field) = header.get_mut(at) {
        field.copy_from_slice(&value.to_le_bytes());
    }
}

/// Finding 1: a genuine SCANDUMP whose reserve is understated, or whose cursor is set back
/// over quotients already moved, is refused by LOADCHUNK (before: accepted, and items read
/// absent a few writes later); unchanged, it loads identical.
#[test]
fn a_misstated_reserve_or_a_rewound_cursor_is_refused() {
    // Merges happen in the first doubling (new fingerprints are one bit shorter than the
    // first generation's): repeats then reserve room that moves take back.
    let first = mid_doubling(0.01, true, 128);
    let plan = first.finish_plan().unwrap();
    let reserve = first.doubling.as_ref().map_or(0, |d| d.reserve);
    assert!(
        plan.merges > 0 && reserve >= plan.merges,
        "{plan:?} {reserve}"
    );
    assert_eq!(load_edited(&first, |_| {}).unwrap(), first);
    let short = plan.merges - 1;
    assert!(load_edited(&first, |h| put(h, RESERVE, short)).is_err());
    for deletable in [true, false] {
        let filter = mid_doubling(0.01, deletable, 4096);
        let d = filter.doubling.as_ref().unwrap();
        assert_eq!(load_edited(&filter, |_| {}).unwrap(), filter);
        // Set back to the last quotient moved that had entries (over empty ones a cursor
        // set back moves nothing again), then by a quarter of the moved.
        let last = (0..d.cursor)
            .rev()
            .find(|x| d.old.run(*x).is_some())
            .unwrap();
        for back in [d.cursor - last, d.cursor / 4] {
            let rewound = d.cursor - back;
            // A reserve that covers the merges (repeats reserved it) keeps the moves made
            // again harmless: counts added twice, nothing lost, every later write leaves a
            // valid value.
            if let Ok(mut loaded) = load_edited(&filter, |h| put(h, CURSOR, rewound)) {
                assert!(deletable && back < d.cursor / 4, "{deletable} back {back}");
                for i in 0..20_000 {
                    loaded.add(&id(1 << 40 | i), NO_LIMIT).unwrap();
                }
                loaded.validate(NO_LIMIT).unwrap();
                assert!((0..400).all(|i| loaded.contains(&id(i))));
            }
        }
    }
}

/// Finding 2: a value whose reserve claims all the room left sends the next add into
/// finishing the doubling at once: the add leaves what finishing and then adding leaves,
/// and the value is kept valid.
#[test]
fn a_doubling_finished_at_once_is_the_same_as_finished_step_by_step() {
    for deletable in [true, false] {
        let mut filter = mid_doubling(0.01, deletable, 4096);
        let limit = max_entries(filter.table.slots());
        let committed = filter.committed();
        if let Some(d) = filter.doubling.as_mut() {
            d.reserve += limit - committed;
        }
        filter.validate(NO_LIMIT).unwrap();
        let mut stepwise = filter.clone();
        assert!(stepwise.migrate(u64::MAX));
        stepwise.add(b"x", NO_LIMIT).unwrap();
        meter::take();
        filter.add(b"x", NO_LIMIT).unwrap();
        assert!(meter::take().1 > 0, "finished at once");
        assert_eq!(filter, stepwise);
        filter.validate(NO_LIMIT).unwrap();
    }
}

/// Between LOADCHUNK calls a value in the middle of a doubling is valid as far as it came
/// (its reserve is checked once its tables are whole).
#[test]
fn a_doubling_half_loaded_is_valid_until_its_tables_are_whole() {
    let filter = mid_doubling(0.01, true, 4096);
    let mut loaded = Compact::from_header(&filter.encode_header(), NO_LIMIT).unwrap();
    let chunks: Vec<(i64, &[u8])> = filter.chunks().collect();
    let (last, before) = chunks.split_last().unwrap();
    for (iter, bytes) in before {
        loaded.load_chunk(*iter, bytes, NO_LIMIT).unwrap();
        assert!(!loaded.is_loaded());
        loaded.validate(NO_LIMIT).unwrap();
    }
    loaded.load_chunk(last.0, last.1, NO_LIMIT).unwrap();
    assert_eq!(loaded, filter);
}
