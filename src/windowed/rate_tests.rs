//! The rate a window holds at every moment, whatever the feed: never-added items, and items
//! older than the window, read present at most at the requested rate. Measured over fixed
//! items, against the rate plus three standard deviations of the probes' count.

use super::*;
use crate::bloom::{Link, OPT_SPREAD};
use crate::rdb::MemoryRdb;

const NO_LIMIT: u64 = u64::MAX;
const T0: u64 = 1_795_000_123_457;
const SECRET: u64 = 0x1234_5678_9abc_def1;

fn params(spread: bool) -> WindowParams {
    WindowParams {
        window_ms: 8_000,
        generations: 4,
        capacity: 100,
        error: 0.01,
        growth: 2,
        scaling: true,
        spread,
    }
}

/// `rate` plus three standard deviations of a share measured over `probes` items.
fn bound(rate: f64, probes: u64) -> f64 {
    rate + 3.0 * (rate * (1.0 - rate) / probes as f64).sqrt()
}

/// Share of `probes` items named `{prefix}{i}` the window reads present at `now`.
fn present_share<G: Generation>(w: &Window<G>, now: u64, prefix: &str, probes: u64) -> f64 {
    let hits = (0..probes)
        .filter(|i| w.contains(now, format!("{prefix}{i}").as_bytes()))
        .count();
    hits as f64 / probes as f64
}

/// `BF.MADD` of `batch` new items every 100 ms for `steps` steps from `T0`; the time of the
/// last batch.
fn feed<G: Generation>(w: &mut Window<G>, batch: u64, steps: u64) -> u64 {
    for step in 0..steps {
        for i in 0..batch {
            let item = format!("feed:{}", step * batch + i);
            w.add(T0 + step * 100, item.as_bytes(), NO_LIMIT).unwrap();
        }
    }
    T0 + (steps - 1) * 100
}

/// Never-added items and the items older than the window, after a feed far above capacity.
fn holds_its_rate<G: Generation>(mut w: Window<G>) {
    // 5,000 items/s into a window reserved for 100 per 8 s, for 20 s.
    let now = feed(&mut w, 500, 200);
    let never = present_share(&w, now, "never:", 60_000);
    assert!(never <= bound(0.01, 60_000), "never-added: {never}");
    // Added before now - 8 s: the first 116 batches.
    let old_batches = (now - 8_000 - T0) / 100 + 1;
    let old_items = old_batches * 500 - 1;
    let old = present_share(&w, now, "feed:", old_items);
    assert!(
        old <= bound(0.01, old_items),
        "older than the window: {old}"
    );
}

#[test]
fn a_plain_window_holds_its_rate_above_capacity() {
    holds_its_rate(Windowed::new(params(true), 0, NO_LIMIT).unwrap());
}

#[test]
fn a_compact_window_holds_its_rate_above_capacity() {
    let p = WindowParams {
        spread: false,
        ..params(true)
    };
    holds_its_rate(CompactWindowed::new(p, SECRET, NO_LIMIT).unwrap());
}

#[test]
fn one_generation_holds_its_share_however_many_items_it_takes() {
    let mut w = Windowed::new(params(true), 0, NO_LIMIT).unwrap();
    for i in 0..100_000u64 {
        w.add(T0, format!("feed:{i}").as_bytes(), NO_LIMIT).unwrap();
    }
    assert_eq!(w.ring.len(), 1);
    let share = present_share(&w, T0, "never:", 200_000);
    assert!(share <= bound(0.01 / 4.0, 200_000), "{share}");
}

#[test]
fn a_window_written_before_spread_probes_keeps_redisbloom_links() {
    // Its generations are exactly the chains RedisBloom builds of the same items.
    let mut w = Windowed::new(params(false), 0, NO_LIMIT).unwrap();
    let mut chain = Chain::new(25, 0.0025, 2, true, NO_LIMIT).unwrap();
    for i in 0..2_000u64 {
        let item = format!("feed:{i}");
        w.add(T0, item.as_bytes(), NO_LIMIT).unwrap();
        chain.add(item.as_bytes(), NO_LIMIT).unwrap();
    }
    assert_eq!(w.ring[0].filter, chain);
    assert!(chain.links.iter().all(|link: &Link| !link.spread));
    // A new generation of it probes the same way.
    w.add(T0 + 2_000, b"later", NO_LIMIT).unwrap();
    assert_eq!(w.ring.len(), 2);
    assert!(w.ring.iter().all(|g| g.filter.options & OPT_SPREAD == 0));
}

#[test]
fn spread_values_round_trip_and_say_so() {
    let mut w = Windowed::new(params(true), 0, NO_LIMIT).unwrap();
    feed(&mut w, 50, 100);
    assert!(w.ring.iter().all(
        |g| g.filter.options & OPT_SPREAD != 0 && g.filter.links.iter().all(|link| link.spread)
    ));
    let mut rdb = MemoryRdb::new();
    w.save(&mut rdb);
    assert_eq!(
        Windowed::load(&mut rdb, ENCODING_VERSION, NO_LIMIT).unwrap(),
        w
    );
    let mut copy = Windowed::from_header(&w.encode_header(), NO_LIMIT).unwrap();
    for (next, bytes) in w.chunks() {
        copy.load_chunk(next, &bytes, NO_LIMIT).unwrap();
    }
    assert_eq!(copy, w);
}

/// The header's flags field: after the magic, version, window, generations, capacity,
/// error and growth.
const FLAGS_AT: usize = 8 + 4 + 8 + 4 + 8 + 8 + 4;

#[test]
fn the_window_flag_and_its_generations_agree_or_are_refused() {
    let mut w = Windowed::new(params(true), 0, NO_LIMIT).unwrap();
    feed(&mut w, 50, 30);
    let header = w.encode_header();
    assert_eq!(header[FLAGS_AT], 2);
    // Spread generations in a window that says RedisBloom's probing, and the reverse.
    let mut cleared = header.clone();
    cleared[FLAGS_AT] = 0;
    assert!(Windowed::from_header(&cleared, NO_LIMIT).is_err());
    let old = Windowed::new(params(false), 0, NO_LIMIT).unwrap();
    let mut old = old;
    feed(&mut old, 50, 30);
    let mut set = old.encode_header();
    set[FLAGS_AT] = 2;
    assert!(Windowed::from_header(&set, NO_LIMIT).is_err());
    // Unknown flag bits.
    let mut unknown = header;
    unknown[FLAGS_AT] = 6;
    assert!(Windowed::from_header(&unknown, NO_LIMIT).is_err());
    // RedisBloom's own chains never take the bit.
    let chain = w.ring[0].filter.clone();
    assert!(Chain::from_header(&chain.encode_header(), NO_LIMIT).is_err());
    // A compact window has no spread probes to ask for.
    assert!(CompactWindowed::new(params(true), SECRET, NO_LIMIT).is_err());
}

#[test]
fn spread_probes_take_the_memory_of_redisbloom_probes() {
    // The same sizing: the same bytes for the same feed, at every size.
    for per_batch in [1, 10, 100, 1_000] {
        let mut spread = Windowed::new(params(true), 0, NO_LIMIT).unwrap();
        let mut redisbloom = Windowed::new(params(false), 0, NO_LIMIT).unwrap();
        feed(&mut spread, per_batch, 100);
        feed(&mut redisbloom, per_batch, 100);
        let (new, old) = (spread.reported_bytes(), redisbloom.reported_bytes());
        eprintln!("{per_batch} items per 0.1 s: {new} bytes, {old} with RedisBloom's probes");
        assert_eq!(new, old, "{per_batch}");
    }
}
