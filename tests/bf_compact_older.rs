//! Older compact values (the doubling table of encodings 1 to 3) on this build: one whose
//! conversion to segments would take more than one command's bound, or cannot be done (one
//! quotient crowded past a segment's 4,096 entries), is kept as it is and answers as the
//! table it is, through LOADCHUNK, RDB (DEBUG RELOAD, a replica's sync) and RESTORE.
pub mod common;

use common::*;

/// The fixture's header and chunks (`compact::filter_tests` builds it: a plain value at
/// 1e-6 whose 5,000 entries all lie in quotient 0 of its 8,192 slots).
fn crowded_older() -> (Vec<u8>, Vec<(i64, Vec<u8>)>) {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/compact-crowded-older.bin"
    ))
    .unwrap();
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let header_len = u32_at(0);
    let header = bytes[4..4 + header_len].to_vec();
    let mut chunks = Vec::new();
    let mut at = 4 + header_len;
    while at < bytes.len() {
        let iter = i64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        let len = u32_at(at + 8);
        chunks.push((iter, bytes[at + 12..at + 12 + len].to_vec()));
        at += 12 + len;
    }
    (header, chunks)
}

fn digest(c: &mut Client, key: &str) -> Reply {
    call!(c, "DEBUG", "DIGEST-VALUE", key)
}

fn present(c: &mut Client, key: &str, items: &[String]) -> usize {
    items
        .iter()
        .filter(|item| call!(c, "BF.EXISTS", key, item.as_str()) == Reply::Int(1))
        .count()
}

/// The crowded value loads whole by LOADCHUNK (it was refused: `received bad data`), is
/// kept as the older table it is (BF.DEBUG says its slots), answers and takes adds, and
/// stays the same value through DEBUG RELOAD (the RDB file was refused whole at start-up),
/// DUMP and RESTORE, and a replica's full sync.
#[test]
fn a_crowded_older_value_is_kept_and_answers() {
    let s = Server::start();
    let mut c = s.client();
    let (header, chunks) = crowded_older();
    assert_eq!(call!(c, "BF.LOADCHUNK", "k", "1", header.as_slice()), ok());
    for (iter, bytes) in &chunks {
        let iter = iter.to_string();
        assert_eq!(
            call!(c, "BF.LOADCHUNK", "k", iter.as_str(), bytes.as_slice()),
            ok()
        );
    }
    // The items the header states (after magic, version, error and four 32-bit fields).
    let items = i64::from_le_bytes(header[36..44].try_into().unwrap());
    assert!(items > 4096);
    assert_eq!(call!(c, "BF.CARD", "k"), Reply::Int(items));
    let debug = call!(c, "BF.DEBUG", "k").array();
    assert!(!debug[2].text().starts_with("segments:"), "{debug:?}");
    let items: Vec<String> = (0..2000).map(|i| format!("older-{i}")).collect();
    assert!(
        present(&mut c, "k", &items) < 20,
        "absent items read absent"
    );
    for item in &items {
        call!(c, "BF.ADD", "k", item.as_str());
    }
    assert_eq!(present(&mut c, "k", &items), 2000);
    let kept = digest(&mut c, "k");
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(digest(&mut c, "k"), kept);
    let dump = call!(c, "DUMP", "k").bytes();
    assert_eq!(call!(c, "RESTORE", "r", "0", dump.as_slice()), ok());
    assert_eq!(digest(&mut c, "r"), kept);
    assert_eq!(present(&mut c, "r", &items), 2000);
    let replica = Server::replica_of(&s, module_path(), &[]);
    let mut r = replica.client();
    wait_replica_linked(&mut r);
    wait_replica_synced(&mut c, &mut r);
    assert_eq!(digest(&mut r, "k"), kept);
    assert_eq!(digest(&mut r, "r"), kept);
}

/// The server's own time (µs, from SLOWLOG) of each `BF.LOADCHUNK` of `chunks` into `key`, in
/// order.
fn chunk_times(c: &mut Client, key: &str, header: &[u8], chunks: &[(i64, Vec<u8>)]) -> Vec<i64> {
    assert_eq!(call!(c, "SLOWLOG", "RESET"), ok());
    assert_eq!(call!(c, "BF.LOADCHUNK", key, "1", header), ok());
    for (iter, bytes) in chunks {
        let iter = iter.to_string();
        assert_eq!(
            call!(c, "BF.LOADCHUNK", key, iter.as_str(), bytes.as_slice()),
            ok()
        );
    }
    let log = call!(c, "SLOWLOG", "GET", "-1").array();
    chunks
        .iter()
        .map(|(iter, _)| {
            let iter = iter.to_string();
            log.iter()
                .map(Reply::array)
                .find(|entry| {
                    let args = entry[3].array();
                    args[0].text().eq_ignore_ascii_case("BF.LOADCHUNK")
                        && args[1].text() == key
                        && args[2].text() == iter
                })
                .map(|entry| entry[2].int())
                .expect("every chunk in the slow log")
        })
        .collect()
}

/// Each `BF.LOADCHUNK` of an older value walks its own bytes: of a value grown on the server
/// (the crowded fixture, kept, grown by adds to 2^20 slots and caught late in its doubling to
/// 2^21), in its genuine SCANDUMP chunks, the chunk that completes it (its old table) takes
/// no longer than a few times the chunk of its new table, twice its slots. (It walked the
/// whole value, about 50 times the time of the chunk before it.) Server-side times from
/// SLOWLOG, the fastest of three loads.
#[test]
fn each_chunk_of_an_older_value_walks_its_own_bytes() {
    let s = Server::start();
    let mut c = s.client();
    let (header, chunks) = crowded_older();
    assert_eq!(call!(c, "BF.LOADCHUNK", "k", "1", header.as_slice()), ok());
    for (iter, bytes) in &chunks {
        let iter = iter.to_string();
        assert_eq!(
            call!(c, "BF.LOADCHUNK", "k", iter.as_str(), bytes.as_slice()),
            ok()
        );
    }
    // Grown until its doubling into 2^21 slots has moved three quarters of the old table.
    let mut added = 0u64;
    loop {
        let debug = call!(c, "BF.DEBUG", "k").array();
        // "size:", the counts, then "table slots:" and a doubling's line.
        let slots: u64 = debug[2].text()["table slots:".len()..]
            .split(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("table slots: {debug:?}"));
        let doubling = debug.get(3).map(Reply::text);
        let late = doubling.as_deref().and_then(|line| {
            let (moved, of) = line.strip_prefix("doubling moved:")?.split_once(" of:")?;
            Some(4 * moved.parse::<u64>().ok()? >= 3 * of.parse::<u64>().ok()?)
        });
        if slots == 1 << 21 && late == Some(true) {
            break;
        }
        assert!(slots <= 1 << 21 && added < 3_000_000, "{debug:?}");
        let batch = if doubling.is_some() && slots == 1 << 21 {
            2_000
        } else {
            20_000
        };
        let mut args = vec![b"BF.MADD".to_vec(), b"k".to_vec()];
        args.extend((added..added + batch).map(|i| format!("grown-{i}").into_bytes()));
        assert_eq!(c.call(&args).array().len() as u64, batch);
        added += batch;
    }
    let (mut iter, mut dump) = (0i64, Vec::new());
    loop {
        let reply = call!(c, "BF.SCANDUMP", "k", iter.to_string().as_str()).array();
        iter = reply[0].int();
        if iter == 0 {
            break;
        }
        dump.push((iter, reply[1].bytes()));
    }
    let (header, chunks) = dump
        .split_first()
        .map(|(h, rest)| (h.1.clone(), rest))
        .unwrap();
    assert!(chunks.len() >= 2, "{} chunks", chunks.len());
    assert_eq!(
        call!(c, "CONFIG", "SET", "slowlog-log-slower-than", "0"),
        ok()
    );
    assert_eq!(call!(c, "CONFIG", "SET", "slowlog-max-len", "1024"), ok());
    let mut fastest = vec![i64::MAX; chunks.len()];
    for round in 0..3 {
        let key = format!("copy-{round}");
        let times = chunk_times(&mut c, &key, &header, chunks);
        fastest = fastest.iter().zip(&times).map(|(a, b)| *a.min(b)).collect();
    }
    assert_eq!(digest(&mut c, "copy-0"), digest(&mut c, "k"));
    let (first, last) = (fastest[0], fastest[chunks.len() - 1]);
    eprintln!("chunk times (µs, fastest of three): {fastest:?}");
    assert!(
        last <= 4 * first,
        "the completing chunk took {last} µs, the first {first} µs"
    );
}
