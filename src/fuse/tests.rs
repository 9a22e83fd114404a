use std::sync::Arc;

use super::set::SEGMENT_MAX;
use super::table::{Shape, MAX_SEGMENT_LENGTH};
use super::*;
use crate::rdb::MemoryRdb;
use crate::test_rng::Rng;

fn hashes(n: u64, seed: u64) -> Vec<u64> {
    let mut rng = Rng::new(seed);
    let mut set = std::collections::BTreeSet::new();
    while (set.len() as u64) < n {
        set.insert(rng.next());
    }
    set.into_iter().collect()
}

fn builder_of(items: &[u64], error: f64) -> StaticFilter {
    let mut filter = StaticFilter::new(100, error).unwrap();
    for &h in items {
        assert_eq!(filter.add_hash(h, &u64::MAX), Ok(true));
    }
    filter
}

fn frozen_of(items: &[u64], error: f64) -> StaticFilter {
    let mut filter = builder_of(items, error);
    let job = filter.freeze_job().unwrap();
    let frozen = job.run().unwrap();
    assert!(filter.adopt(&job, frozen));
    filter
}

#[test]
fn widths_are_the_ceiling_of_log2_of_the_inverse_rate() {
    assert_eq!(width_for(0.5), Some(1));
    assert_eq!(width_for(0.25), Some(2));
    assert_eq!(width_for(0.01), Some(7));
    assert_eq!(width_for(0.001), Some(10));
    assert_eq!(width_for(0.0001), Some(14));
    assert_eq!(width_for(2f64.powi(-32)), Some(32));
    assert_eq!(width_for(2f64.powi(-33)), None);
    assert_eq!(width_for(0.0), None);
    assert_eq!(width_for(1.0), None);
}

#[test]
fn the_set_holds_exactly_what_was_added() {
    let items = hashes(20_000, 1);
    let mut set = HashSet::default();
    for &h in &items {
        assert_eq!(set.insert(h, &u64::MAX), Ok(true));
    }
    for &h in &items {
        assert_eq!(set.insert(h, &u64::MAX), Ok(false));
        assert!(set.contains(h));
    }
    assert_eq!(set.len(), 20_000);
    assert!(hashes(1000, 2).iter().all(|h| !set.contains(*h)));
    let sorted: Vec<u64> = set.iter().collect();
    assert_eq!(sorted, items);
    assert_eq!(set.range(19_990, 100), items[19_990..].to_vec());
    assert_eq!(set.range(5, 3), items[5..8].to_vec());
}

#[test]
fn the_set_takes_at_most_nine_bytes_per_item() {
    let mut set = HashSet::default();
    let items = hashes(1_000_000, 3);
    let mut rng = Rng::new(3);
    let mut shuffled = items.clone();
    for i in (1..shuffled.len()).rev() {
        shuffled.swap(i, rng.below(i as u64 + 1) as usize);
    }
    for (i, h) in shuffled.iter().enumerate() {
        set.insert(*h, &u64::MAX).unwrap();
        if (i + 1) % 100_000 == 0 {
            let per_item = set.bytes() as f64 / (i + 1) as f64;
            assert!(per_item <= 9.0, "{per_item} bytes per item at {i}");
        }
    }
    assert!(items.iter().all(|h| set.contains(*h)));
    assert!(set.iter().eq(items.iter().copied()));
}

/// Hashes that crowd one corner of the hash space, in the orders that hurt a set indexed by
/// the hashes' top bits: sharing their top 22 bits, or all but the lowest, each added at the
/// front, the back or the middle of those added before (a crafted chunk or RESTORE payload
/// sends any hashes in any order). No run, and so no insert's move, grows past
/// `SEGMENT_MAX`, and memory stays at 8 to 10 bytes per hash.
#[test]
fn crowded_hashes_in_any_order_keep_runs_bounded_and_memory_proportional() {
    const N: u64 = 100_000;
    fn shared_22(i: u64) -> u64 {
        (0x2A5F17 << 42) | (i * 1_000_003)
    }
    type Order = (&'static str, fn(u64) -> u64);
    let orders: [Order; 6] = [
        ("top 22 bits shared, decreasing", |i| shared_22(N - i)),
        ("top 22 bits shared, increasing", shared_22),
        ("consecutive from the top, decreasing", |i| u64::MAX - i),
        ("consecutive from 0, increasing", |i| i),
        // 97 clusters spread over the hash space, each sharing 45 bits, in turn.
        ("97 clusters in turn, decreasing", |i| {
            ((i % 97) * (u64::MAX / 97)) + ((N - i) << 2)
        }),
        // 0, MAX, 1, MAX-1, ...: every hash lands between the two runs already held.
        ("from both ends toward the middle", |i| {
            if i % 2 == 0 {
                i / 2
            } else {
                u64::MAX - i / 2
            }
        }),
    ];
    let n = N;
    for (name, hash) in orders {
        let mut set = HashSet::default();
        for i in 0..n {
            assert_eq!(set.insert(hash(i), &u64::MAX), Ok(true), "{name}");
            if i % 1000 == 0 {
                assert!(set.largest_run() <= SEGMENT_MAX, "{name} at {i}");
            }
        }
        assert!(set.largest_run() <= SEGMENT_MAX, "{name}");
        assert_eq!(set.len(), n);
        let per_hash = set.bytes() as f64 / n as f64;
        // A run just split and grown once holds 513 hashes in room for 640: 10 bytes each.
        assert!(per_hash <= 10.0, "{name}: {per_hash} bytes per hash");
        let mut expected: Vec<u64> = (0..n).map(&hash).collect();
        expected.sort_unstable();
        assert!(set.iter().eq(expected.iter().copied()), "{name}");
        assert!(expected.iter().all(|h| set.contains(*h)), "{name}");
        assert_eq!(set.range(n - 5, 10), expected[n as usize - 5..].to_vec());
    }
}

/// Random hashes, and hashes sharing their top 40 bits in decreasing order (a crowded
/// segment's runs).
#[test]
fn the_set_grows_only_as_its_budget_allows() {
    let mut rng = Rng::new(4);
    let sources: [Box<dyn FnMut(u64) -> u64>; 2] = [
        Box::new(move |_| rng.next()),
        Box::new(|i| (0x005A_5A5A_5A5A << 24) | (0x00FF_FFFF - i)),
    ];
    for mut hash in sources {
        let mut set = HashSet::default();
        let limit = 40_000u64;
        let mut refused = false;
        for i in 0..10_000 {
            let before = set.clone();
            match set.insert(hash(i), &limit) {
                Ok(_) => assert!(set.bytes() <= limit),
                Err(_) => {
                    assert_eq!(set, before);
                    assert_eq!(set.bytes(), before.bytes());
                    refused = true;
                    break;
                }
            }
        }
        assert!(refused);
    }
}

#[test]
fn a_frozen_filter_has_no_false_negatives() {
    for n in [0u64, 1, 2, 3, 7, 10, 100, 1000, 50_000] {
        for error in [0.5, 0.01, 0.001, 0.0001, 2f64.powi(-32)] {
            let items = hashes(n, n + 10);
            let filter = frozen_of(&items, error);
            assert!(filter.is_frozen());
            assert_eq!(filter.card(), n);
            assert!(
                items.iter().all(|h| filter.contains_hash(*h)),
                "{n} {error}"
            );
        }
    }
}

#[test]
fn an_empty_frozen_filter_holds_nothing() {
    let filter = frozen_of(&[], 0.01);
    assert!(hashes(1000, 5).iter().all(|h| !filter.contains_hash(*h)));
}

/// The rate of w-bit fingerprints is 2^-w, at most the requested rate by the choice of w; the
/// measured rate of a million probes stays within 6 standard deviations of it (at 0.1 %,
/// 2^-10 is only 2.4 % below the request, so a single run may measure above 0.001).
#[test]
fn the_measured_rate_is_within_the_requested_one() {
    let items = hashes(100_000, 6);
    for (error, width) in [(0.01, 7), (0.001, 10)] {
        let filter = frozen_of(&items, error);
        let probes = hashes(1_000_000, 7 + width);
        let positives = probes.iter().filter(|h| filter.contains_hash(**h)).count();
        let rate = positives as f64 / probes.len() as f64;
        let expected = 2f64.powi(-(width as i32));
        let sd = (expected / probes.len() as f64).sqrt();
        assert!(expected <= error);
        assert!(
            (rate - expected).abs() < 6.0 * sd,
            "{rate} against {expected}"
        );
    }
}

#[test]
fn the_table_is_about_1_13_slots_per_item_at_a_million() {
    let shape = shape_for(1_000_000, 7).unwrap();
    let per_item = shape.slots() as f64 / 1e6;
    assert!((1.12..1.14).contains(&per_item), "{per_item}");
    let bits = shape.bytes() as f64 * 8.0 / 1e6;
    assert!(bits < 0.85 * 9.585, "{bits} bits per item");
}

#[test]
fn construction_is_deterministic_whatever_the_order() {
    let items = hashes(10_000, 8);
    let mut reversed = items.clone();
    reversed.reverse();
    let a = build(|| items.iter().copied(), 10_000, 9).unwrap();
    let b = build(|| reversed.iter().copied(), 10_000, 9).unwrap();
    assert_eq!(a, b);
}

#[test]
fn every_slot_a_valid_shape_names_lies_inside_its_table() {
    let mut rng = Rng::new(9);
    for _ in 0..2000 {
        let shape = Shape {
            width: 1 + (rng.next() % 32) as u32,
            segment_length: 1 << (rng.next() % 19),
            segment_count: 1 + (rng.next() % 5000) as u32,
            seed: rng.next(),
        };
        if shape.check().is_err() {
            continue;
        }
        let bytes = shape.bytes();
        for _ in 0..50 {
            for slot in shape.slots_of(rng.next()) {
                assert!(slot < shape.slots());
                assert!((slot * u64::from(shape.width)) / 8 + 8 <= bytes);
            }
        }
        let extreme = shape.slots_of(u64::MAX);
        assert!(extreme.iter().all(|s| *s < shape.slots()));
    }
    assert!(Shape {
        width: 7,
        segment_length: MAX_SEGMENT_LENGTH * 2,
        segment_count: 1,
        seed: 0
    }
    .check()
    .is_err());
}

#[test]
fn writes_are_refused_while_frozen_or_freezing() {
    let mut filter = builder_of(&hashes(10, 11), 0.01);
    let job = filter.freeze_job().unwrap();
    assert!(filter.is_freezing());
    assert!(filter.freeze_job().is_none());
    assert_eq!(filter.add_hash(1, &u64::MAX), Err(AddError::Freezing));
    // A copy is its own builder.
    let mut copy = filter.clone();
    assert!(!copy.is_freezing());
    assert_eq!(copy.add_hash(1, &u64::MAX), Ok(true));
    // A job whose builder went away is not adopted by another.
    let frozen = job.run().unwrap();
    assert!(!copy.adopt(&job, frozen.clone()));
    assert!(filter.adopt(&job, frozen));
    drop(job);
    assert_eq!(filter.add_hash(1, &u64::MAX), Err(AddError::Frozen));
}

#[test]
fn an_abandoned_freeze_leaves_a_writable_builder() {
    let mut filter = builder_of(&hashes(10, 12), 0.01);
    let job = filter.freeze_job().unwrap();
    drop(job);
    assert_eq!(filter.add_hash(1, &u64::MAX), Ok(true));
    let State::Building(set) = &filter.state else {
        panic!("not a builder");
    };
    assert_eq!(Arc::strong_count(set), 1);
}

fn through_rdb(filter: &StaticFilter) -> Result<StaticFilter, crate::rdb::LoadError> {
    let mut rdb = MemoryRdb::new();
    filter.save(&mut rdb);
    StaticFilter::load(&mut rdb, ENCODING_VERSION, u64::MAX)
}

fn through_chunks(filter: &StaticFilter) -> StaticFilter {
    let mut copy = StaticFilter::from_header(&filter.encode_header(), u64::MAX).unwrap();
    let mut iter = 1;
    while let Some((next, bytes)) = filter.chunk_at(iter) {
        copy.load_chunk(next, &bytes, u64::MAX).unwrap();
        iter = next;
    }
    copy
}

/// Chunks within a limit (what the AOF rewrite emits) load as SCANDUMP's do, in both states.
#[test]
fn chunks_within_a_limit_load_as_scandumps_do() {
    let items = hashes(5000, 13);
    for filter in [builder_of(&items, 0.001), frozen_of(&items, 0.001)] {
        for limit in [8u64, 1000, u64::MAX] {
            let mut copy = StaticFilter::from_header(&filter.encode_header(), u64::MAX).unwrap();
            let (mut iter, mut chunks) = (1, 0);
            while let Some((next, bytes)) = filter.chunk_within(iter, limit) {
                assert!(bytes.len() as u64 <= limit, "{limit}");
                copy.load_chunk(next, &bytes, u64::MAX).unwrap();
                (iter, chunks) = (next, chunks + 1);
            }
            assert_eq!(copy, filter, "{limit}");
            assert!(limit == u64::MAX || chunks > 1, "{limit}");
        }
    }
}

#[test]
fn both_states_survive_rdb_and_chunks() {
    for n in [0u64, 1, 5000] {
        let items = hashes(n, 13);
        for filter in [builder_of(&items, 0.001), frozen_of(&items, 0.001)] {
            assert_eq!(through_rdb(&filter).as_ref(), Ok(&filter));
            assert_eq!(through_chunks(&filter), filter);
        }
    }
}

#[test]
fn crafted_values_are_refused() {
    let filter = frozen_of(&hashes(100, 14), 0.01);
    let header = filter.encode_header();
    for cut in [0, 8, 59] {
        assert!(StaticFilter::from_header(&header[..cut], u64::MAX).is_err());
    }
    let mut bad_width = header.clone();
    bad_width[40] = 9;
    assert!(StaticFilter::from_header(&bad_width, u64::MAX).is_err());
    let mut bad_length = header.clone();
    bad_length[44] = 3;
    assert!(StaticFilter::from_header(&bad_length, u64::MAX).is_err());
    assert_eq!(
        StaticFilter::from_header(&header, 100),
        Err(crate::bloom::HeaderError::TooLarge)
    );
    // A builder holding a duplicate is refused.
    let builder = builder_of(&[1, 2, 3], 0.01);
    let mut rdb = MemoryRdb::new();
    builder.save(&mut rdb);
    let mut fields: Vec<_> = rdb.fields.into_iter().collect();
    if let Some(crate::rdb::Field::Buffer(bytes)) = fields.last_mut() {
        bytes[8..16].copy_from_slice(&1u64.to_le_bytes());
    }
    let mut rdb = MemoryRdb {
        fields: fields.into(),
    };
    assert!(StaticFilter::load(&mut rdb, ENCODING_VERSION, u64::MAX).is_err());
}

#[test]
fn the_header_magic_is_no_other_kinds() {
    let others = [
        crate::sparse::MAGIC,
        crate::windowed::MAGIC,
        crate::compact::MAGIC,
        crate::counting::MAGIC,
        crate::blocked::MAGIC,
    ];
    assert!(!others.contains(&MAGIC));
}

/// Bytes of a frozen value's table, padding left out (what its steps carry).
fn table_len(frozen: &StaticFilter) -> u64 {
    frozen.reported_bytes() - FILTER_OVERHEAD - table::PADDING as u64
}

/// The freeze's effects as a replica applies them: `STAGE`, the steps as `CHUNK`s (those in
/// `skip` left out), `COMMIT`.
fn staged(builder: &StaticFilter, frozen: &StaticFilter, skip: &[usize]) -> StaticFilter {
    let mut replica = builder.clone();
    let header = frozen.encode_header();
    replica.begin_stage(&header, u64::MAX).unwrap();
    let mut from = 0;
    let mut index = 0;
    while let Some(step) = frozen.step_at(from, STEP_BYTES) {
        if !skip.contains(&index) {
            let applied = replica.stage_chunk(step.iter, step.bytes).unwrap();
            assert_eq!(applied, replica.stage.is_some());
        }
        // Reads are the builder's until COMMIT.
        assert!(!replica.is_frozen());
        from = step.next;
        index += 1;
    }
    let hashes = replica.commit_stage(&header, u64::MAX).unwrap();
    assert_eq!(hashes.len(), builder.card());
    replica
}

#[test]
fn a_frozen_value_arrives_in_steps_and_replaces_the_builder() {
    // 5M items at 1 %: a table of about 4.9 MB, two steps.
    for (n, error) in [(0u64, 0.01), (1, 0.001), (3000, 0.01), (5_000_000, 0.01)] {
        let items = hashes(n, n + 7);
        let builder = builder_of(&items, error);
        let frozen = frozen_of(&items, error);
        let steps = std::iter::successors(frozen.step_at(0, STEP_BYTES), |s| {
            frozen.step_at(s.next, STEP_BYTES)
        })
        .count();
        assert_eq!(steps as u64, table_len(&frozen).div_ceil(STEP_BYTES));
        assert_eq!(staged(&builder, &frozen, &[]), frozen, "{n}");
        // A replica that resynced mid-way has no stage: COMMIT builds the same table.
        assert_eq!(staged(&builder, &frozen, &[0]), frozen, "{n}");
        let mut bare = builder.clone();
        bare.commit_stage(&frozen.encode_header(), u64::MAX)
            .unwrap();
        assert_eq!(bare, frozen);
    }
}

#[test]
fn freeze_effects_that_do_not_fit_are_refused() {
    let items = hashes(2000, 3);
    let builder = builder_of(&items, 0.01);
    let frozen = frozen_of(&items, 0.01);
    let header = frozen.encode_header();
    // Another item count, another rate, a builder's header, garbage.
    let fewer = frozen_of(&items[..1999], 0.01).encode_header();
    let rate = frozen_of(&items, 0.001).encode_header();
    for bad in [fewer, rate, builder.encode_header(), vec![7u8; 60]] {
        let mut b = builder.clone();
        assert_eq!(b.begin_stage(&bad, u64::MAX), Err(StageError::BadData));
        assert_eq!(b.commit_stage(&bad, u64::MAX), Err(StageError::BadData));
        assert_eq!(b, builder);
    }
    let mut b = builder.clone();
    assert_eq!(b.begin_stage(&header, 100), Err(StageError::TooLarge));
    // A chunk past the table drops the stage; one out of order is ignored and drops it too.
    b.begin_stage(&header, u64::MAX).unwrap();
    assert_eq!(b.stage_chunk(1 << 40, &[1, 2, 3]), Ok(false));
    assert!(b.stage.is_none());
    b.begin_stage(&header, u64::MAX).unwrap();
    let longer = vec![0u8; table_len(&frozen) as usize + 1];
    let past = longer.len() as i64 + 1;
    assert_eq!(b.stage_chunk(past, &longer), Err(StageError::BadData));
    assert!(b.stage.is_none());
    // A write drops the stage; a frozen filter takes no effects.
    b.begin_stage(&header, u64::MAX).unwrap();
    assert!(b.reported_bytes() > builder.reported_bytes());
    assert_eq!(b.add_hash(1, &u64::MAX), Ok(true));
    assert!(b.stage.is_none());
    let mut f = frozen.clone();
    assert_eq!(
        f.begin_stage(&header, u64::MAX),
        Err(StageError::NotBuilding)
    );
    assert_eq!(f.stage_chunk(2, &[0]), Err(StageError::NotBuilding));
    assert_eq!(
        f.commit_stage(&header, u64::MAX),
        Err(StageError::NotBuilding)
    );
}

/// The primary's side of a freeze: `frozen`'s table as the builder's stage, `steps` steps of
/// `step` bytes propagated.
fn primary_mid_freeze(
    builder: &StaticFilter,
    frozen: &StaticFilter,
    step: u64,
    steps: usize,
) -> StaticFilter {
    let mut primary = builder.clone();
    let State::Frozen(table) = frozen.clone().state else {
        panic!("not frozen");
    };
    assert_eq!(primary.stage_frozen(table), frozen.encode_header());
    for _ in 0..steps {
        assert!(primary.next_step(step).is_some());
    }
    primary
}

#[test]
fn a_snapshot_mid_freeze_holds_what_the_steps_after_it_complete() {
    let items = hashes(30_000, 21);
    let builder = builder_of(&items, 0.01);
    let frozen = frozen_of(&items, 0.01);
    let step = 4096;
    let total = table_len(&frozen).div_ceil(step) as usize;
    for steps in [0, 1, total / 2, total] {
        let mut primary = primary_mid_freeze(&builder, &frozen, step, steps);
        // RDB (and so DUMP and a full sync) carries the stage as far as it was propagated.
        let mut replica = through_rdb(&primary).unwrap();
        assert_eq!(replica.staged(), primary.staged(), "{steps}");
        assert!(!replica.is_frozen() && replica.contains_hash(items[0]));
        // The steps after the snapshot complete both; COMMIT takes the stage, no build.
        while let Some(next) = primary.next_step(step) {
            let (iter, bytes) = (next.iter, next.bytes.to_vec());
            assert_eq!(replica.stage_chunk(iter, &bytes), Ok(true));
        }
        let header = frozen.encode_header();
        assert!(primary.stage_is_whole(&header) && replica.stage_is_whole(&header));
        primary.commit_stage(&header, u64::MAX).unwrap();
        replica.commit_stage(&header, u64::MAX).unwrap();
        assert_eq!(primary, frozen);
        assert_eq!(replica, frozen);
    }
}

#[test]
fn a_held_item_keeps_the_stage_a_new_one_drops_it() {
    let items = hashes(2000, 22);
    let builder = builder_of(&items, 0.01);
    let frozen = frozen_of(&items, 0.01);
    let mut b = builder.clone();
    b.begin_stage(&frozen.encode_header(), u64::MAX).unwrap();
    assert_eq!(b.add_hash(items[5], &u64::MAX), Ok(false));
    assert!(b.stage.is_some());
    assert_eq!(b.add_hash(1, &u64::MAX), Ok(true));
    assert!(b.stage.is_none());
    // A copy has no stage; a builder without one saves as before (state 0).
    let staged = primary_mid_freeze(&builder, &frozen, 1024, 1);
    assert!(staged.clone().stage.is_none());
    let mut rdb = MemoryRdb::new();
    builder.save(&mut rdb);
    assert_eq!(rdb.fields.front(), Some(&crate::rdb::Field::Unsigned(0)));
}

/// A mid-freeze RDB value with its stage's fields changed by `edit` (on the fields after
/// the builder's: the header buffer, the byte count, the byte buffers).
fn crafted_stage(
    edit: impl FnOnce(&mut Vec<crate::rdb::Field>),
) -> Result<StaticFilter, crate::rdb::LoadError> {
    let items = hashes(3000, 23);
    let primary = primary_mid_freeze(&builder_of(&items, 0.01), &frozen_of(&items, 0.01), 512, 3);
    let mut rdb = MemoryRdb::new();
    primary.save(&mut rdb);
    let mut fields: Vec<_> = rdb.fields.into_iter().collect();
    edit(&mut fields);
    StaticFilter::load(
        &mut MemoryRdb {
            fields: fields.into(),
        },
        ENCODING_VERSION,
        u64::MAX,
    )
}

#[test]
fn crafted_mid_freeze_values_are_refused() {
    use crate::rdb::Field::{Buffer, Unsigned};
    assert!(crafted_stage(|_| {}).is_ok());
    let n = |f: &Vec<crate::rdb::Field>| f.len();
    // The stage's header: another item count, a builder's header, garbage.
    let other = frozen_of(&hashes(2999, 23), 0.01).encode_header();
    let builder = builder_of(&[], 0.01).encode_header();
    for header in [other, builder, vec![0u8; 60], vec![]] {
        let refused = crafted_stage(|f| {
            let at = n(f) - 3;
            f[at] = Buffer(header.clone());
        });
        assert!(refused.is_err());
    }
    // More bytes said than there are, or past the table; a buffer too long; a frozen value
    // or a builder whose state says a stage that is not there.
    assert!(crafted_stage(|f| {
        let at = n(f) - 2;
        f[at] = Unsigned(2048);
    })
    .is_err());
    assert!(crafted_stage(|f| {
        let at = n(f) - 2;
        f[at] = Unsigned(1 << 40);
        f.push(Buffer(vec![0; 1 << 20]));
    })
    .is_err());
    assert!(crafted_stage(|f| {
        let at = n(f) - 1;
        f[at] = Buffer(vec![0; 513]);
    })
    .is_err());
    assert!(crafted_stage(|f| {
        f[0] = Unsigned(3);
    })
    .is_err());
    assert!(crafted_stage(|f| {
        let len = n(f) - 3;
        f.truncate(len);
    })
    .is_err());
}
