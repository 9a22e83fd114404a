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
