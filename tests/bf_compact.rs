//! Compact Bloom filters (deviation D17): `COMPACT` on BF.RESERVE / BF.INSERT and
//! the `bf-compact` setting make one fingerprint table that doubles instead of a chain of
//! links. The same BF.* replies, no false negatives, the error rate held while it grows, and
//! every way a value is saved, copied, dumped or replicated keeps it byte for byte.
pub mod common;

use common::*;

/// BF.INFO as (field, value) pairs.
fn info(c: &mut Client, key: &str) -> Vec<(String, Reply)> {
    info_fields(call!(c, "BF.INFO", key))
}

fn ids(prefix: &str, range: std::ops::Range<u64>) -> Vec<String> {
    range.map(|i| format!("{prefix}:{i:016x}")).collect()
}

/// Sends `command key items...` for every batch of 500 items at once, then reads all the
/// answers, in order.
fn pipelined(c: &mut Client, command: &str, key: &str, items: &[String]) -> Vec<Reply> {
    let batches: Vec<&[String]> = items.chunks(500).collect();
    for batch in &batches {
        let mut args = vec![command.to_string(), key.to_string()];
        args.extend(batch.iter().cloned());
        c.send(&args);
    }
    batches.iter().flat_map(|_| c.read().array()).collect()
}

/// Adds the items in pipelined batches of BF.MADD; returns how many answered 1.
fn add_all(c: &mut Client, key: &str, items: &[String]) -> i64 {
    let answers = pipelined(c, "BF.MADD", key, items);
    answers
        .into_iter()
        .map(|reply| match reply {
            Int(v) => v,
            other => panic!("{key}: {other:?}"),
        })
        .sum()
}

/// How many of the items read present, in pipelined batches of BF.MEXISTS.
fn present(c: &mut Client, key: &str, items: &[String]) -> i64 {
    let answers = pipelined(c, "BF.MEXISTS", key, items);
    answers.iter().map(Reply::int).sum()
}

#[test]
fn replies_as_clients_parse_them() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(call!(c, "BF.RESERVE", "k", "0.01", "1000", "COMPACT"), ok());
    assert_eq!(call!(c, "TYPE", "k"), Simple("bloomrsCP".into()));
    assert_eq!(call!(c, "BF.MADD", "k", "a", "b", "c"), ints(&[1, 1, 1]));
    assert_eq!(call!(c, "BF.ADD", "k", "a"), Int(0));
    assert_eq!(call!(c, "BF.MEXISTS", "k", "a", "zz"), ints(&[1, 0]));
    assert_eq!(call!(c, "BF.CARD", "k"), Int(3));
    // RedisBloom's five fields: the items before the next split (one segment at first,
    // whatever the hint, of 784 at 1 %: what generation 0 fills at 20 bits), one filter,
    // expansion 2.
    let fields = info(&mut c, "k");
    let names: Vec<&str> = fields.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, BF_INFO_FIELDS);
    assert_eq!(fields[0].1, Int(784));
    assert_eq!(fields[2].1, Int(1));
    assert_eq!(fields[3].1, Int(3));
    assert_eq!(fields[4].1, Int(2));
    assert_eq!(call!(c, "BF.INFO", "k", "EXPANSION"), Array(vec![Int(2)]));
    let debug = call!(c, "BF.DEBUG", "k").array();
    assert_eq!(debug[0], bulk("size:3"));
    assert!(debug[1].text().starts_with("compact items:3"), "{debug:?}");
    // Not deletable without COUNTING.
    assert_eq!(
        call!(c, "BF.DEL", "k", "a"),
        err("ERR not a counting filter: only filters created with COUNTING can delete items")
    );
    // A compact filter grows: NONSCALING is refused; with a window it is a compact windowed
    // filter.
    assert_eq!(
        call!(c, "BF.RESERVE", "n", "0.01", "100", "NONSCALING", "COMPACT"),
        err("ERR COMPACT filters grow: NONSCALING cannot be combined")
    );
    assert_eq!(
        call!(c, "BF.INSERT", "w", "COMPACT", "WINDOW", "60", "ITEMS", "a"),
        ints(&[1])
    );
    assert_eq!(call!(c, "TYPE", "w"), Simple("bloomrsWC".into()));
    assert_eq!(
        call!(
            c,
            "BF.INSERT",
            "i",
            "ERROR",
            "0.001",
            "COMPACT",
            "ITEMS",
            "a",
            "b"
        ),
        ints(&[1, 1])
    );
    assert_eq!(call!(c, "TYPE", "i"), Simple("bloomrsCP".into()));
    assert_eq!(
        call!(c, "BF.RESERVE", "k", "0.01", "10", "COMPACT"),
        err("ERR item exists")
    );
}

#[test]
fn counting_compact_filters_delete_what_was_added() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(
        call!(c, "BF.RESERVE", "d", "0.01", "100", "COMPACT", "COUNTING"),
        ok()
    );
    assert_eq!(call!(c, "BF.ADD", "d", "a"), Int(1));
    assert_eq!(call!(c, "BF.ADD", "d", "a"), Int(0));
    assert_eq!(call!(c, "BF.ADD", "d", "b"), Int(1));
    assert_eq!(call!(c, "BF.DEL", "d", "a"), Int(1));
    assert_eq!(call!(c, "BF.EXISTS", "d", "a"), Int(1));
    assert_eq!(call!(c, "BF.MDEL", "d", "a", "never"), ints(&[1, 0]));
    assert_eq!(call!(c, "BF.EXISTS", "d", "a"), Int(0));
    assert_eq!(call!(c, "BF.EXISTS", "d", "b"), Int(1));
    // Deleting added items never costs another added item its presence, through doublings.
    let items = ids("d", 0..20_000);
    add_all(&mut c, "d", &items);
    for chunk in items[..10_000].chunks(500) {
        let mut args = vec!["BF.MDEL".to_string(), "d".to_string()];
        args.extend(chunk.iter().cloned());
        let deleted = c.call(&args).array();
        assert!(deleted.iter().all(|r| *r == Int(1)), "{deleted:?}");
    }
    assert_eq!(present(&mut c, "d", &items[10_000..]), 10_000);
}

/// Grown from the smallest table to 200,000 items: no false negative, and the measured rate
/// within the requested one at several sizes (200,000 absent probes each: at 1% the standard
/// deviation of the measured rate is 0.022 points, so 1% + 0.1 points is a 4.5σ margin).
#[test]
fn no_false_negatives_and_the_rate_holds_while_it_grows() {
    let s = Server::start();
    let mut c = s.client();
    for (key, error) in [("e2", 0.01), ("e3", 0.001)] {
        assert_eq!(
            call!(c, "BF.RESERVE", key, error.to_string(), "100", "COMPACT"),
            ok()
        );
        let absent = ids("absent", 0..200_000);
        let mut held = 0u64;
        for size in [1_000u64, 10_000, 200_000] {
            let items = ids(key, held..size);
            add_all(&mut c, key, &items);
            held = size;
            let all = ids(key, 0..size);
            assert_eq!(present(&mut c, key, &all), size as i64, "{key} at {size}");
            let rate = present(&mut c, key, &absent) as f64 / absent.len() as f64;
            let margin = 4.5 * (error * (1.0 - error) / absent.len() as f64).sqrt();
            println!("{key}: {size} items, false positives {rate:.5} (requested {error})");
            assert!(rate <= error + margin, "{key} at {size}: {rate}");
        }
        let tables = info(&mut c, key)[2].1.clone();
        assert_eq!(tables, Int(1), "one table however far it grew");
    }
}

#[test]
fn saved_copied_dumped_and_restored_byte_for_byte() {
    let s = Server::build(
        &[],
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
    );
    let mut c = s.client();
    assert_eq!(call!(c, "BF.RESERVE", "k", "0.001", "10", "COMPACT"), ok());
    add_all(&mut c, "k", &ids("k", 0..5_000));
    assert_eq!(
        call!(c, "BF.RESERVE", "d", "0.01", "10", "COMPACT", "COUNTING"),
        ok()
    );
    add_all(&mut c, "d", &ids("d", 0..700));
    let digest = |c: &mut Client, key: &str| call!(c, "DEBUG", "DIGEST-VALUE", key);
    let (k, d) = (digest(&mut c, "k"), digest(&mut c, "d"));

    assert_eq!(call!(c, "COPY", "k", "copy"), Int(1));
    assert_eq!(digest(&mut c, "copy"), k);
    let dump = call!(c, "DUMP", "d").bytes();
    assert_eq!(call!(c, "RESTORE", "restored", "0", dump.as_slice()), ok());
    assert_eq!(digest(&mut c, "restored"), d);
    let chunks = scandump(&mut c, "BF.SCANDUMP", "k");
    load_chunks(&mut c, "BF.LOADCHUNK", "loaded", &chunks);
    assert_eq!(digest(&mut c, "loaded"), k);
    assert_eq!(call!(c, "TYPE", "loaded"), Simple("bloomrsCP".into()));

    // Half a dump is a value too: saved and reloaded between its chunks, it completes.
    assert_eq!(
        call!(c, "BF.LOADCHUNK", "half", "1", chunks[0].1.as_slice()),
        ok()
    );
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    load_chunks(&mut c, "BF.LOADCHUNK", "half", &chunks[1..]);
    assert_eq!(digest(&mut c, "half"), k);

    assert_eq!(digest(&mut c, "k"), k, "after DEBUG RELOAD");
    assert!(!call!(c, "BGREWRITEAOF").text().is_empty());
    wait_for_persistence(&mut c);
    assert_eq!(call!(c, "DEBUG", "LOADAOF"), ok());
    assert_eq!(
        (digest(&mut c, "k"), digest(&mut c, "d")),
        (k.clone(), d.clone())
    );
    drop(c);
    let mut s = s;
    s.restart();
    let mut c = s.client();
    assert_eq!((digest(&mut c, "k"), digest(&mut c, "d")), (k, d));
    assert_eq!(present(&mut c, "k", &ids("k", 0..5_000)), 5_000);
}

/// `bf-compact` on the primary only: its implicit creations are propagated as
/// `BF.RESERVE ... COMPACT`, and the replica holds the same bytes.
#[test]
fn replicas_hold_the_primarys_compact_filters() {
    let primary = Server::build(&[], &["--bf.bf-compact", "yes"]);
    let replica = Server::replica_of(&primary, module_path(), &[]);
    let (mut p, mut r) = (primary.client(), replica.client());
    wait_replica_linked(&mut r);
    assert_eq!(call!(p, "BF.ADD", "auto", "x"), Int(1));
    assert_eq!(call!(p, "TYPE", "auto"), Simple("bloomrsCP".into()));
    add_all(&mut p, "auto", &ids("auto", 0..3_000));
    assert_eq!(
        call!(p, "BF.INSERT", "ins", "ITEMS", "a", "b"),
        ints(&[1, 1])
    );
    // Anything else asked of a filter wins over the setting.
    assert_eq!(
        call!(p, "BF.INSERT", "plain", "NONSCALING", "ITEMS", "a"),
        ints(&[1])
    );
    assert_eq!(call!(p, "TYPE", "plain"), Simple("MBbloom--".into()));
    wait_replica_synced(&mut p, &mut r);
    for key in ["auto", "ins", "plain"] {
        assert_eq!(call!(r, "TYPE", key), call!(p, "TYPE", key), "{key}");
        assert_eq!(call!(r, "DUMP", key), call!(p, "DUMP", key), "{key}");
    }
}

/// Growth is an allocation like any other (no add copies the filter or allocates outside
/// admission): an add whose segment, or the split it
/// brings, would pass the limit is refused, leaving the filter as it was.
#[test]
fn growth_over_the_limit_is_refused() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(call!(c, "BF.RESERVE", "k", "0.01", "10", "COMPACT"), ok());
    add_all(&mut c, "k", &ids("k", 0..1000));
    let size = info(&mut c, "k")[1].1.int();
    let cap = (size + 64).max(1024).to_string();
    assert_eq!(call!(c, "CONFIG", "SET", "bf.max-filter-bytes", cap), ok());
    let mut refused = None;
    for i in 0..2000 {
        let before = call!(c, "DEBUG", "DIGEST-VALUE", "k");
        let reply = call!(c, "BF.ADD", "k", format!("more:{i}"));
        if let Error(text) = reply {
            assert_eq!(call!(c, "DEBUG", "DIGEST-VALUE", "k"), before, "changed");
            refused = Some(text);
            break;
        }
    }
    let refused = refused.expect("an add refused");
    assert!(
        refused.starts_with("ERR problem inserting into filter: ")
            && refused.contains("bf.max-filter-bytes ("),
        "{refused}"
    );
    assert_eq!(
        call!(c, "BF.RESERVE", "big", "0.01", "1000", "COMPACT"),
        ok(),
        "a new filter is one segment, whatever the hint"
    );
}

/// A fixed pseudo-random sequence (xorshift), so every run sends the same commands.
struct Draws(u64);

impl Draws {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Every key's digest on a client, sorted by key.
fn digests(c: &mut Client, keys: &[&str]) -> Vec<Reply> {
    keys.iter()
        .map(|key| call!(c, "DEBUG", "DIGEST-VALUE", *key))
        .collect()
}

/// A `COMPACT COUNTING` filter `k` at `error`, and `thousands` pipelined BF.MADD of 1000
/// adds of the item `dup`; returns those 1000 arguments.
fn counted_with_duplicates(c: &mut Client, error: &str, thousands: usize) -> Vec<String> {
    assert_eq!(
        call!(c, "BF.RESERVE", "k", error, "1", "COMPACT", "COUNTING"),
        ok()
    );
    let dup = vec!["dup".to_string(); 1000];
    for _ in 0..thousands {
        c.send(&[&["BF.MADD".to_string(), "k".to_string()], dup.as_slice()].concat());
    }
    for _ in 0..thousands {
        c.read();
    }
    dup
}

/// Many adds of one item: `0.5 COMPACT COUNTING`, 100,000 adds of one item by BF.MADD of 1000, then
/// pipelined batches of BF.ADD of new items and BF.DEL of items with adds outstanding (half
/// of them of the first item). No item with adds outstanding reads absent; DUMP/RESTORE,
/// DEBUG RELOAD and a replica that panics on any propagation error keep the value byte for
/// byte (a broken value would read an item added once as absent, answer RESTORE with `Bad
/// data format` or lose the key on DEBUG RELOAD).
#[test]
fn heavy_duplicates_then_adds_and_deletes_keep_every_item() {
    let panic = ["--propagation-error-behavior", "panic"];
    let primary = Server::build(&[], &panic);
    let mut replica = Server::replica_of(&primary, module_path(), &panic);
    let (mut c, mut r) = (primary.client(), replica.client());
    wait_replica_linked(&mut r);
    counted_with_duplicates(&mut c, "0.5", 100);
    let mut draws = Draws(0x005e_edf4);
    let (mut outstanding, mut dups) = (Vec::<String>::new(), 100_000u64);
    let mut next = 0u64;
    for _ in 0..30 {
        let mut sent = Vec::new();
        for _ in 0..500 {
            let dice = draws.below(6);
            let (command, item) = if dice >= 3 || (outstanding.is_empty() && dups == 0) {
                next += 1;
                outstanding.push(format!("item:{next}"));
                ("BF.ADD", format!("item:{next}"))
            } else if dice > 0 && dups > 0 {
                dups -= 1;
                ("BF.DEL", "dup".to_string())
            } else if let Some(item) = outstanding
                .len()
                .checked_sub(1)
                .map(|last| outstanding.swap_remove(draws.below(last as u64 + 1) as usize))
            {
                ("BF.DEL", item)
            } else {
                dups -= 1;
                ("BF.DEL", "dup".to_string())
            };
            c.send(&[command, "k", item.as_str()]);
            sent.push(command);
        }
        for command in sent {
            // A new item may read present at 0.5 (BF.ADD answers 0); every delete finds its item.
            let reply = c.read().int();
            assert!(reply == 1 || command == "BF.ADD", "{command}: {reply}");
        }
        assert_eq!(present(&mut c, "k", &outstanding), outstanding.len() as i64);
    }
    assert_eq!(call!(c, "BF.EXISTS", "k", "dup"), Int(i64::from(dups > 0)));
    let digest = digests(&mut c, &["k"]);
    let dump = call!(c, "DUMP", "k").bytes();
    assert_eq!(call!(c, "RESTORE", "restored", "0", dump.as_slice()), ok());
    assert_eq!(digests(&mut c, &["restored"]), digest);
    wait_replica_synced(&mut c, &mut r);
    assert!(replica.alive(), "replica died");
    assert_eq!(
        digests(&mut r, &["k", "restored"]),
        digests(&mut c, &["k", "restored"])
    );
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(digests(&mut c, &["k"]), digest);
    assert_eq!(present(&mut c, "k", &outstanding), outstanding.len() as i64);
}

/// F2: 1000-item BF.MADD, BF.MEXISTS and BF.MDEL on a filter holding 1,000,000 adds of one
/// item answer as they do without it (counted, not stored: the item is one entry).
#[test]
fn a_million_adds_of_one_item_cost_one_entry() {
    let s = Server::start();
    let mut c = s.client();
    let dup = counted_with_duplicates(&mut c, "0.01", 1000);
    let size = info(&mut c, "k")[1].1.int();
    assert!(size < 2000, "a million adds of one item take {size} bytes");
    c.set_reply_timeout(std::time::Duration::from_secs(2));
    let items = ids("n", 0..1000);
    let command =
        |name: &str, items: &[String]| [&[name.to_string(), "k".to_string()], items].concat();
    assert_eq!(c.call(&command("BF.MADD", &items)).array().len(), 1000);
    assert_eq!(present(&mut c, "k", &items), 1000);
    let dels = c.call(&command("BF.MDEL", &dup)).array();
    assert!(dels.iter().all(|r| *r == Int(1)));
    assert_eq!(call!(c, "BF.CARD", "k"), Int(1_000_000 - 1000 + 1000));
}

/// F5: an error rate a compact filter cannot hold up to its largest size is refused when
/// the filter is created, with an error that names the limit.
#[test]
fn an_error_rate_tighter_than_the_slots_hold_is_refused() {
    let s = Server::start();
    let mut c = s.client();
    let refusal = err("ERR COMPACT filters take error rates from 1e-12: a tighter one outgrows its fingerprints before the largest filter");
    assert_eq!(
        call!(c, "BF.RESERVE", "k", "9.9e-13", "1", "COMPACT"),
        refusal
    );
    assert_eq!(
        call!(
            c,
            "BF.INSERT",
            "k",
            "ERROR",
            "1e-15",
            "COMPACT",
            "ITEMS",
            "a"
        ),
        refusal
    );
    assert_eq!(call!(c, "BF.RESERVE", "k", "1e-12", "1", "COMPACT"), ok());
}

/// A compact LOADCHUNK header (version 1) and the table of `log2` slots whose slots
/// `0..voids` each hold a void entry of their own quotient (as far as the voids go, when
/// that is less than the whole table).
fn voids_value(
    log2: u32,
    width: u32,
    generation: u32,
    voids: u64,
    whole: bool,
) -> (Vec<u8>, Vec<u8>) {
    let slots = 1u64 << log2;
    let block = 16 + 8 * width as usize;
    // The whole table, or (for a first chunk) as far as the voids go.
    let blocks = if whole {
        slots / 64
    } else {
        voids.div_ceil(64)
    };
    let mut table = vec![0u8; blocks as usize * block + 7];
    for i in 0..voids {
        let base = (i / 64) as usize * block;
        for vector in 0..2 {
            table[base + 8 * vector + (i % 64 / 8) as usize] |= 1 << (i % 8);
        }
        let bit = 8 * (base + 16) + (i % 64) as usize * width as usize + (width as usize - 1);
        table[bit / 8] |= 1 << (bit % 8);
    }
    let mut header = b"bloomrsP".to_vec();
    header.extend_from_slice(&1u32.to_le_bytes());
    header.extend_from_slice(&0.01f64.to_le_bytes());
    for field in [log2, generation, width, 1] {
        header.extend_from_slice(&field.to_le_bytes());
    }
    header.extend_from_slice(&voids.to_le_bytes());
    header.extend_from_slice(&voids.to_le_bytes());
    (header, table)
}

/// F1 against the new growth: an older value the loader accepts (2048 slots, slots 0..1842
/// each a void entry: the table's maximum, which would have doubled into a table as full)
/// converts to segments when its last chunk arrives, takes adds, and saves, reloads and
/// restores. (Before the segments: the add doubled it to `entries:3687 capacity:3686`, and
/// DEBUG RELOAD lost the key.)
#[test]
fn an_older_value_full_of_voids_converts_and_takes_adds() {
    let s = Server::start();
    let mut c = s.client();
    // Error 0.01 at generation 5: 11-bit fields.
    let (header, table) = voids_value(11, 11, 5, 1843, true);
    assert_eq!(call!(c, "BF.LOADCHUNK", "k", "1", header.as_slice()), ok());
    let iter = (table.len() + 1).to_string();
    assert_eq!(call!(c, "BF.LOADCHUNK", "k", iter, table.as_slice()), ok());
    let debug = call!(c, "BF.DEBUG", "k").array();
    assert!(
        debug[1]
            .text()
            .starts_with("compact items:1843 entries:1843 "),
        "{debug:?}"
    );
    assert!(debug[2].text().starts_with("segments:"), "{debug:?}");
    let items = ids("v", 0..2000);
    add_all(&mut c, "k", &items);
    assert_eq!(present(&mut c, "k", &items), 2000);
    let digest = digests(&mut c, &["k"]);
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(digests(&mut c, &["k"]), digest);
    let dump = call!(c, "DUMP", "k").bytes();
    assert_eq!(call!(c, "RESTORE", "r", "0", dump.as_slice()), ok());
    assert_eq!(digests(&mut c, &["r"]), digest);
    assert_eq!(present(&mut c, "r", &items), 2000);
}

/// F3: between LOADCHUNK calls a compact filter reads nothing. A header for 2^26 slots
/// and a first chunk of void entries (each matches any item of its slot): 20,000 lookups
/// answer at once, every item absent (before: items of those slots read present, from bytes
/// never validated), and writes are refused until the last chunk.
#[test]
fn a_half_loaded_filter_answers_at_once() {
    let s = Server::start();
    let mut c = s.client();
    let (header, chunk) = voids_value(26, 11, 10, 40_000, false);
    assert_eq!(call!(c, "BF.LOADCHUNK", "k", "1", header.as_slice()), ok());
    let chunk = &chunk[..chunk.len() - 7];
    let iter = (chunk.len() + 1).to_string();
    assert_eq!(call!(c, "BF.LOADCHUNK", "k", iter, chunk), ok());
    c.set_reply_timeout(std::time::Duration::from_secs(5));
    let items = ids("q", 0..20_000);
    assert_eq!(present(&mut c, "k", &items), 0);
    assert_eq!(call!(c, "BF.ADD", "k", "x"), still_loading());
}

/// BF.DEBUG's segment line as (segments, split pointer).
fn split(c: &mut Client, key: &str) -> (u64, u64) {
    let debug = call!(c, "BF.DEBUG", key).array();
    let line = debug
        .iter()
        .map(Reply::text)
        .find(|l| l.starts_with("segments:"))
        .unwrap_or_default();
    let field = |name: &str| -> u64 {
        line.split(' ')
            .find_map(|f| f.strip_prefix(name))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("segments:"), field("split:"))
}

/// Adds items `key:i` by BF.MADD of 10 until the filter has at least `segments` segments
/// with its split pointer in the middle of a level; returns the items added.
fn grow_until_split(c: &mut Client, key: &str, segments: u64) -> Vec<String> {
    let mut items = Vec::new();
    for batch in 0u64.. {
        let more = ids(key, batch * 10..batch * 10 + 10);
        let mut args = vec!["BF.MADD".to_string(), key.to_string()];
        args.extend(more.iter().cloned());
        c.send(&args);
        let _ = c.read().array();
        items.extend(more);
        let (count, pointer) = split(c, key);
        let level = 1u64 << (63 - count.leading_zeros());
        if count >= segments && pointer > 0 && pointer < level / 2 {
            return items;
        }
        assert!(batch < 100_000, "{key}: no split seen");
    }
    items
}

/// A filter caught with its split pointer in the middle of
/// a level (BF.DEBUG says where) survives COPY, DUMP/RESTORE, SCANDUMP/LOADCHUNK, DEBUG
/// RELOAD, an AOF rewrite and a restart, and a replica, byte for byte; it splits only with
/// writes (lookups and time leave it), and every copy given the same writes reaches the same
/// digest. No item reads absent.
#[test]
fn a_filter_in_the_middle_of_a_level_is_kept_exactly() {
    let mut s = Server::build(
        &[],
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
    );
    let replica = Server::replica_of(&s, module_path(), &[]);
    let (mut c, mut r) = (s.client(), replica.client());
    wait_replica_linked(&mut r);
    let digest = |c: &mut Client, key: &str| call!(c, "DEBUG", "DIGEST-VALUE", key);
    assert_eq!(
        call!(c, "BF.RESERVE", "k", "0.01", "1", "COMPACT", "COUNTING"),
        ok()
    );
    assert_eq!(call!(c, "BF.RESERVE", "p", "0.001", "1", "COMPACT"), ok());
    let mut held = grow_until_split(&mut c, "k", 8);
    let plain = grow_until_split(&mut c, "p", 8);
    let at = split(&mut c, "k");
    let (k, p) = (digest(&mut c, "k"), digest(&mut c, "p"));
    // Lookups and time do not move it.
    assert_eq!(present(&mut c, "k", &held), held.len() as i64);
    assert_eq!(present(&mut c, "p", &plain), plain.len() as i64);
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!((split(&mut c, "k"), digest(&mut c, "k")), (at, k.clone()));

    assert_eq!(call!(c, "COPY", "k", "copy"), Int(1));
    let dump = call!(c, "DUMP", "k").bytes();
    assert_eq!(call!(c, "RESTORE", "restored", "0", dump.as_slice()), ok());
    let chunks = scandump(&mut c, "BF.SCANDUMP", "k");
    load_chunks(&mut c, "BF.LOADCHUNK", "loaded", &chunks);
    for key in ["copy", "restored", "loaded"] {
        assert_eq!(digest(&mut c, key), k, "{key}");
        assert_eq!(split(&mut c, key), at, "{key}");
    }
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(
        (digest(&mut c, "k"), digest(&mut c, "p")),
        (k.clone(), p.clone())
    );
    assert!(!call!(c, "BGREWRITEAOF").text().is_empty());
    wait_for_persistence(&mut c);
    assert_eq!(call!(c, "DEBUG", "LOADAOF"), ok());
    assert_eq!(
        (digest(&mut c, "k"), digest(&mut c, "p")),
        (k.clone(), p.clone())
    );
    wait_replica_synced(&mut c, &mut r);
    assert_eq!((digest(&mut r, "k"), digest(&mut r, "p")), (k, p));

    // The same writes on every copy: the same bytes, the split pointer moved on.
    let keys = ["k", "copy", "restored", "loaded"];
    for round in 0..5u64 {
        let more = ids("more", round * 200..round * 200 + 200);
        for key in keys {
            let mut args = vec!["BF.MADD".to_string(), key.to_string()];
            args.extend(more.iter().cloned());
            c.send(&args);
            assert_eq!(c.read().array().len(), 200);
            assert_eq!(
                call!(c, "BF.DEL", key, held[round as usize].as_str()),
                Int(1)
            );
        }
        held.extend(more);
    }
    held.drain(..5);
    let k = digest(&mut c, "k");
    assert_ne!(split(&mut c, "k"), at, "writes moved it");
    for key in keys {
        assert_eq!(digest(&mut c, key), k, "{key}");
        assert_eq!(present(&mut c, key, &held), held.len() as i64, "{key}");
    }
    wait_replica_synced(&mut c, &mut r);
    assert_eq!(digest(&mut r, "k"), k);
    // Writes until the next level is under way: nothing reads absent.
    let rest = grow_until_split(&mut c, "k", 2 * at.0);
    assert_eq!(present(&mut c, "k", &rest), rest.len() as i64);
    assert_eq!(present(&mut c, "k", &held), held.len() as i64);
    let k = digest(&mut c, "k");
    wait_replica_synced(&mut c, &mut r);
    assert_eq!(digest(&mut r, "k"), k);
    drop(c);
    s.restart();
    let mut c = s.client();
    assert_eq!(digest(&mut c, "k"), k, "after a restart");
    assert_eq!(present(&mut c, "k", &held), held.len() as i64);
}

/// A genuine SCANDUMP with only its split
/// pointer or level changed never becomes a filter (LOADCHUNK refuses a chunk, or the value
/// stays arriving: every item absent, writes refused); nor, with `COUNTING`, do more items
/// than the entries count (a plain filter's item count is only what `BF.CARD` answers: a full
/// segment takes adds into entries it has). Unchanged, the same chunks load.
#[test]
fn a_misstated_split_position_is_refused() {
    let s = Server::start();
    let mut c = s.client();
    for (key, counting) in [("k", true), ("p", false)] {
        let mut reserve = vec!["BF.RESERVE", key, "0.01", "1", "COMPACT"];
        if counting {
            reserve.push("COUNTING");
        }
        assert_eq!(c.call(&reserve), ok());
        let held = grow_until_split(&mut c, key, 8);
        let chunks = scandump(&mut c, "BF.SCANDUMP", key);
        let copy = format!("{key}-copy");
        load_chunks(&mut c, "BF.LOADCHUNK", &copy, &chunks);
        let digest = |c: &mut Client, key: &str| call!(c, "DEBUG", "DIGEST-VALUE", key);
        assert_eq!(digest(&mut c, &copy), digest(&mut c, key));

        let (segments, pointer) = split(&mut c, key);
        let level = 63 - segments.leading_zeros();
        let edits: [(usize, Vec<u8>); 4] = [
            (32, (pointer + 1).to_le_bytes().to_vec()),
            (32, (pointer - 1).to_le_bytes().to_vec()),
            (28, (level + 1).to_le_bytes().to_vec()),
            (40, (held.len() as u64 * 4).to_le_bytes().to_vec()),
        ];
        let edits = if counting { &edits[..] } else { &edits[..3] };
        for (n, (at, value)) in edits.iter().enumerate() {
            let mut edited = chunks.clone();
            let header = &mut edited[0].1;
            assert_eq!((&header[..8], header.len()), (&b"bloomrsP"[..], 56));
            header[*at..*at + value.len()].copy_from_slice(value);
            let bad = format!("{key}-edited-{n}");
            let replies: Vec<Reply> = edited
                .iter()
                .map(|(iter, bytes)| {
                    c.call(&[
                        b"BF.LOADCHUNK".as_slice(),
                        bad.as_bytes(),
                        iter.to_string().as_bytes(),
                        bytes,
                    ])
                })
                .collect();
            let refused = replies.iter().any(|r| *r != ok());
            if !refused {
                // Still arriving: nothing reads present, writes are refused.
                assert_eq!(present(&mut c, &bad, &held[..100]), 0, "{key} {n}");
                assert_eq!(
                    call!(c, "BF.ADD", bad.as_str(), "x"),
                    still_loading(),
                    "{key} {n}"
                );
            } else {
                assert!(
                    replies.contains(&err("ERR received bad data"))
                        || replies.contains(&err("ERR invalid offset - no link found"))
                        || replies.contains(&err("ERR invalid chunk - Too big for current filter")),
                    "{key} {n}: {replies:?}"
                );
            }
        }
    }
}

/// The placement is keyed by a secret drawn on
/// the primary, different for every filter, carried in the value and in what the creation
/// propagates (a replica's and a reload's are the same).
#[test]
fn every_filter_has_its_own_secret_and_replicas_share_it() {
    let s = Server::start();
    let replica = Server::replica_of(&s, module_path(), &[]);
    let (mut c, mut r) = (s.client(), replica.client());
    wait_replica_linked(&mut r);
    let secret = |c: &mut Client, key: &str| -> Vec<u8> {
        let header = call!(c, "BF.SCANDUMP", key, "0").array()[1].bytes();
        header[48..56].to_vec()
    };
    assert_eq!(call!(c, "BF.RESERVE", "a", "0.01", "100", "COMPACT"), ok());
    assert_eq!(call!(c, "BF.RESERVE", "b", "0.01", "100", "COMPACT"), ok());
    assert_eq!(
        call!(c, "BF.INSERT", "i", "COMPACT", "ITEMS", "x"),
        ints(&[1])
    );
    let secrets: Vec<Vec<u8>> = ["a", "b", "i"].iter().map(|k| secret(&mut c, k)).collect();
    assert!(
        secrets.iter().all(|s| s.as_slice() != [0u8; 8]),
        "{secrets:?}"
    );
    assert_ne!(secrets[0], secrets[1]);
    wait_replica_synced(&mut c, &mut r);
    for (key, secret_of) in ["a", "b", "i"].iter().zip(&secrets) {
        assert_eq!(&secret(&mut r, key), secret_of, "{key}");
        assert_eq!(
            call!(r, "DUMP", *key).bytes(),
            call!(c, "DUMP", *key).bytes(),
            "{key}"
        );
    }
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(secret(&mut c, "a"), secrets[0]);
}

/// A genuine segment's words in a LOADCHUNK chunk (encoding 4: each segment its word count,
/// then its words), as `(count, words)` lists.
fn chunk_segments(chunk: &[u8]) -> Vec<Vec<u64>> {
    let mut segments = Vec::new();
    let mut rest = chunk;
    while let Some((count, after)) = rest.split_first_chunk::<4>() {
        let count = u32::from_le_bytes(*count) as usize;
        let words = after[..8 * count]
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
            .collect();
        segments.push(words);
        rest = &after[8 * count..];
    }
    segments
}

fn segments_chunk(segments: &[Vec<u64>]) -> Vec<u8> {
    let mut out = Vec::new();
    for words in segments {
        out.extend_from_slice(&(words.len() as u32).to_le_bytes());
        words
            .iter()
            .for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
    }
    out
}

/// A segment is held by two thin pointers whose allocations' lengths are read from its header
/// word, so a header that disagrees with the words held would read or free past them. Every
/// edit of a genuine segment's header word (each field one up and one down, each bit of the
/// head's words in its top 16 bits flipped) or of its length (a word cut off, a word added) is
/// refused as bad data,
/// for every segment of a counting filter at 1 % and a plain one at 1e-9; the arrival stays as
/// its header left it, and the genuine chunk then completes it to the source's value.
#[test]
fn a_segment_whose_header_disagrees_with_its_words_is_refused() {
    let s = Server::start();
    let mut c = s.client();
    for (error, counting, n) in [("0.01", true, 3000u64), ("1e-9", false, 2000)] {
        call!(c, "DEL", "src", "m");
        let mut reserve = vec!["BF.RESERVE", "src", error, "100", "COMPACT"];
        if counting {
            reserve.push("COUNTING");
        }
        assert_eq!(c.call(&reserve), ok());
        let items = ids("i", 0..n);
        add_all(&mut c, "src", &items);
        if counting {
            add_all(&mut c, "src", &items[..50]);
        }
        let chunks = scandump(&mut c, "BF.SCANDUMP", "src");
        assert_eq!(chunks.len(), 2, "one header and one chunk of segments");
        let (iter, chunk) = &chunks[1];
        let segments = chunk_segments(chunk);
        assert!(segments.len() > 1 && segments.iter().all(|w| w.len() > 2));
        assert_eq!(segments_chunk(&segments), *chunk);
        load_chunks(&mut c, "BF.LOADCHUNK", "m", &chunks[..1]);
        let arriving = call!(c, "DUMP", "m").bytes();
        for (at, words) in segments.iter().enumerate() {
            let header = words[0];
            let mut edits: Vec<Vec<u64>> = Vec::new();
            // Entries, counters, shortest and longest length; then every bit of the head's
            // length, the void's flag and depth, and the zero top.
            for (shift, bits) in [(0, 13), (13, 13), (26, 6), (32, 6)] {
                let field = header >> shift & ((1 << bits) - 1);
                for value in [field.wrapping_add(1), field.wrapping_sub(1)] {
                    if value >> bits == 0 {
                        let cleared = header & !(((1 << bits) - 1) << shift);
                        edits.push([&[cleared | value << shift], &words[1..]].concat());
                    }
                }
            }
            edits.extend((38..64).map(|bit| [&[header ^ 1 << bit], &words[1..]].concat()));
            edits.push(words[..words.len() - 1].to_vec());
            edits.push([words.as_slice(), &[0]].concat());
            for edited in edits {
                let mut crafted = segments.clone();
                crafted[at] = edited;
                let reply = c.call(&[
                    b"BF.LOADCHUNK".as_slice(),
                    b"m",
                    iter.to_string().as_bytes(),
                    &segments_chunk(&crafted),
                ]);
                assert_eq!(reply, err("ERR received bad data"), "{error}: segment {at}");
            }
        }
        assert_eq!(call!(c, "DUMP", "m").bytes(), arriving);
        load_chunks(&mut c, "BF.LOADCHUNK", "m", &chunks[1..]);
        assert_eq!(
            call!(c, "DUMP", "m").bytes(),
            call!(c, "DUMP", "src").bytes()
        );
        assert_eq!(call!(c, "PING"), Reply::Simple("PONG".into()));
    }
}
