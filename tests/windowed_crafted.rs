//! Genuine windowed values (`WINDOW` and `COMPACT WINDOW`, 2 to 32 generations, caught in
//! the middle of a rotation with empty slots, small and grown generations) with one field
//! changed, fed to `RESTORE` (checksum fixed) and `BF.LOADCHUNK`: each field of the window
//! (window length, generation count, capacity, error, growth, every flag bit, secret, clock,
//! generations held), each generation's slot stamp and its own header's fields (the chain's
//! options with the spread bit, link shapes; the compact filter's fields), generations swapped,
//! repeated, dropped or reversed, and random bytes. Every payload is refused, or loads into a
//! value that answers every command, reads what is added to it, dumps and loads again (DUMP,
//! SCANDUMP), survives `DEBUG RELOAD`, and reaches the replica and the AOF as it is.
//!
//! Runs a few seconds; `BLOOMRS_ATTACK_SECS` runs longer (the `#[ignore]`d campaign takes 600
//! by default), `BLOOMRS_ATTACK_SEED` replays a run.
pub mod common;

use std::time::Instant;

use common::*;

fn wide_values(v: u64, rng: &mut Rng) -> Vec<u64> {
    vec![
        0,
        1,
        v.wrapping_sub(1),
        v.wrapping_add(1),
        v.wrapping_mul(2),
        v / 2,
        u64::MAX,
        i64::MAX as u64,
        u64::from(u32::MAX),
        u64::from(u32::MAX) + 1,
        rng.word(),
        v ^ (1 << rng.below(64)),
    ]
}

fn narrow_values(v: u32, rng: &mut Rng) -> Vec<u32> {
    wide_values(u64::from(v), rng)
        .into_iter()
        .map(|w| w as u32)
        .chain([2, 3, 31, 32, 33, 0x10000])
        .collect()
}

fn float_values(v: f64, rng: &mut Rng) -> Vec<f64> {
    vec![
        0.0,
        -v,
        1.0,
        f64::NAN,
        f64::INFINITY,
        v * 2.0,
        v / 2.0,
        f64::from_bits(v.to_bits() + 1),
        f64::from_bits(v.to_bits() - 1),
        1e-300,
        1e-12,
        f64::from_bits(rng.word()),
    ]
}

/// Every one-change variant of a windowed header worth sending, with what was changed.
fn header_variants(h: &Header, rng: &mut Rng) -> Vec<(String, Header)> {
    let mut out = Vec::new();
    let mut push = |what: String, f: &dyn Fn(&mut Header)| {
        let mut c = h.clone();
        f(&mut c);
        out.push((what, c));
    };
    for v in wide_values(h.window_ms, rng).into_iter().chain([
        u64::from(h.generations),
        3650 * 86_400_000,
        3650 * 86_400_000 + 1,
    ]) {
        push(format!("window {v}"), &|c| c.window_ms = v);
    }
    for v in narrow_values(h.generations, rng) {
        push(format!("generations {v}"), &|c| c.generations = v);
    }
    for v in wide_values(h.capacity, rng) {
        push(format!("capacity {v}"), &|c| c.capacity = v);
    }
    for v in float_values(h.error, rng) {
        push(format!("error {v}"), &|c| c.error = v);
    }
    for v in narrow_values(h.growth, rng) {
        push(format!("growth {v}"), &|c| c.growth = v);
    }
    for bit in 0..32 {
        push(format!("flag bit {bit}"), &|c| c.flags ^= 1 << bit);
    }
    if let Some(secret) = h.secret {
        for v in wide_values(secret, rng) {
            push(format!("secret {v}"), &|c| c.secret = Some(v));
        }
    }
    let g = u64::from(h.generations);
    for v in wide_values(h.slot, rng).into_iter().chain([
        h.slot + g - 1,
        h.slot + g,
        h.slot.saturating_sub(g),
    ]) {
        push(format!("clock {v}"), &|c| c.slot = v);
    }
    for v in narrow_values(h.held, rng) {
        push(format!("held {v}"), &|c| c.held = v);
    }
    for i in 0..h.ring.len() {
        let s = h.ring[i].0;
        for v in wide_values(s, rng).into_iter().chain([
            h.slot,
            h.slot + 1,
            h.slot.wrapping_sub(g),
            s.wrapping_sub(g),
        ]) {
            push(format!("generation {i} slot {v}"), &|c| c.ring[i].0 = v);
        }
        push(format!("generation {i} dropped"), &|c| {
            c.ring.remove(i);
            c.held -= 1;
        });
        push(format!("generation {i} repeated"), &|c| {
            let copy = c.ring[i].clone();
            c.ring.insert(i, copy);
            c.held += 1;
        });
        push(format!("generation {i} dropped, held kept"), &|c| {
            c.ring.remove(i);
        });
        if i + 1 < h.ring.len() {
            push(format!("generations {i} and {} swapped", i + 1), &|c| {
                c.ring.swap(i, i + 1)
            });
            push(
                format!("generations {i} and {} bodies swapped", i + 1),
                &|c| {
                    let (a, b) = (c.ring[i].1.clone(), c.ring[i + 1].1.clone());
                    c.ring[i].1 = b;
                    c.ring[i + 1].1 = a;
                },
            );
        }
        for (what, own) in own_header_variants(&h.ring[i].1, rng) {
            push(format!("generation {i}: {what}"), &|c| {
                c.ring[i].1 = own.clone()
            });
        }
    }
    push("generations reversed".into(), &|c| c.ring.reverse());
    // Spread probes off (or on) in the window's flags and every chain's options together:
    // the form of a value written before spread probes.
    push("spread bit flipped everywhere".into(), &|c| {
        c.flags ^= 2;
        if c.secret.is_none() {
            for (_, own) in &mut c.ring {
                own[12] ^= 16;
            }
        }
    });
    for i in 0..h.ring.len() {
        push(format!("generation {i} emptied"), &|c| {
            let own = &mut c.ring[i].1;
            if own.starts_with(b"bloomrsP") {
                own[40..48].fill(0);
            } else {
                own[..8].fill(0);
                let links = (own.len() - 20) / 53;
                for l in 0..links {
                    own[20 + 53 * l + 16..20 + 53 * l + 24].fill(0);
                }
            }
        });
    }
    for n in 0..8 {
        let flips: Vec<(usize, u8)> = (0..1 + rng.below(4))
            .map(|_| (rng.below(1 << 20), 1 << rng.below(8)))
            .collect();
        push(format!("random bits {n}"), &|c| {
            let mut bytes = c.encode();
            for (at, bit) in &flips {
                let len = bytes.len();
                bytes[at % len] ^= bit;
            }
            // Parsed back only as far as it goes: sent raw below.
            c.magic = bytes;
            c.version = u32::MAX;
        });
    }
    out
}

/// Variants of one generation's own header: a chain's (size, links, options, growth, then
/// per link bytes, bits, items, error, bits per entry, hashes, entries, n2) or a compact
/// filter's (magic, version, error, flags, first level, level, pointer, items, secret).
fn own_header_variants(own: &[u8], rng: &mut Rng) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let fields: Vec<(&str, usize, usize)> = if own.starts_with(b"bloomrsP") {
        vec![
            ("version", 8, 4),
            ("error", 12, 8),
            ("flags", 20, 4),
            ("first level", 24, 4),
            ("level", 28, 4),
            ("pointer", 32, 8),
            ("items", 40, 8),
            ("secret", 48, 8),
        ]
    } else {
        let mut f = vec![
            ("size", 0, 8),
            ("links", 8, 4),
            ("options", 12, 4),
            ("growth", 16, 4),
        ];
        let links = (own.len() - 20) / 53;
        for l in 0..links.min(3) {
            let at = 20 + 53 * l;
            f.extend([
                ("link bytes", at, 8),
                ("link bits", at + 8, 8),
                ("link items", at + 16, 8),
                ("link error", at + 24, 8),
                ("link bpe", at + 32, 8),
                ("link hashes", at + 40, 4),
                ("link entries", at + 44, 8),
                ("link n2", at + 52, 1),
            ]);
        }
        f
    };
    for (name, at, len) in fields {
        let old = match len {
            8 => u64::from_le_bytes(own[at..at + 8].try_into().unwrap()),
            4 => u64::from(u32::from_le_bytes(own[at..at + 4].try_into().unwrap())),
            _ => u64::from(own[at]),
        };
        let mut values = wide_values(old, rng);
        if name == "options" {
            values = (0..32).map(|bit| old ^ (1 << bit)).collect();
        }
        if name.contains("error") || name.contains("bpe") {
            let f = f64::from_bits(old);
            values = float_values(f, rng).iter().map(|v| v.to_bits()).collect();
        }
        for v in values {
            let mut c = own.to_vec();
            c[at..at + len].copy_from_slice(&v.to_le_bytes()[..len]);
            out.push((format!("{name} {v:#x}"), c));
        }
    }
    out
}

struct Crafted {
    rig: Rig,
    rng: Rng,
    sent: u64,
    accepted: u64,
    accepted_keys: Vec<String>,
}

impl Crafted {
    /// Sends a crafted header (then the genuine data chunks) to BF.LOADCHUNK, and a
    /// crafted payload to RESTORE; exercises whatever loaded.
    fn loadchunk(&mut self, what: &str, header: Vec<u8>, data: &[(i64, Vec<u8>)]) {
        let key = format!("lc{}", self.sent);
        self.sent += 1;
        let c = &mut self.rig.p;
        let reply = call!(c, "BF.LOADCHUNK", key.as_str(), 1, header);
        if matches!(reply, Error(_)) {
            assert_eq!(call!(c, "EXISTS", key.as_str()), Int(0), "{what}");
            return;
        }
        // The data chunks, all or some: each accepted or refused cleanly.
        let keep = self.rng.below(3);
        for (n, (iter, bytes)) in data.iter().enumerate() {
            if keep == 1 && n % 2 == 1 || keep == 2 && self.rng.chance(3) {
                continue;
            }
            let _ = call!(c, "BF.LOADCHUNK", key.as_str(), *iter, bytes.clone());
        }
        self.accepted += 1;
        if std::env::var_os("BLOOMRS_ATTACK_VERBOSE").is_some() {
            eprintln!("accepted: {what}");
        }
        exercise(c, &key, what);
        self.accepted_keys.push(key);
        self.rig.assert_alive(what);
    }

    fn restore(&mut self, what: &str, payload: Vec<u8>) {
        let key = format!("rs{}", self.sent);
        self.sent += 1;
        let c = &mut self.rig.p;
        let reply = c.call(&[b"RESTORE".as_slice(), key.as_bytes(), b"0", &payload]);
        if matches!(reply, Error(_)) {
            assert_eq!(call!(c, "EXISTS", key.as_str()), Int(0), "{what}");
            return;
        }
        assert_eq!(reply, ok(), "{what}");
        self.accepted += 1;
        if std::env::var_os("BLOOMRS_ATTACK_VERBOSE").is_some() {
            eprintln!("accepted: {what}");
        }
        exercise(c, &key, what);
        self.accepted_keys.push(key);
        self.rig.assert_alive(what);
    }

    /// Everything loaded so far survives DEBUG RELOAD and reached the replica as it is.
    fn settle(&mut self, what: &str) {
        self.rig.assert_alive(what);
        let before = dumps(&mut self.rig.p);
        assert_eq!(self.rig.p.call(&["DEBUG", "RELOAD"]), ok(), "{what}");
        assert_same(&before, &dumps(&mut self.rig.p), what);
        self.rig.assert_replica_identical(what);
        self.accepted_keys.clear();
    }
}

/// A DUMP payload's fields with one changed, and generations swapped.
fn payload_variants(payload: &Payload, compact: bool, rng: &mut Rng) -> Vec<(String, Payload)> {
    let mut out = Vec::new();
    for (i, field) in payload.fields.iter().enumerate() {
        let values: Vec<RdbField> = match field {
            RdbField::Unsigned(v) => wide_values(*v, rng)
                .into_iter()
                .map(RdbField::Unsigned)
                .collect(),
            RdbField::Double(v) => float_values(*v, rng)
                .into_iter()
                .map(RdbField::Double)
                .collect(),
            RdbField::Buffer(b) if !b.is_empty() => {
                let mut flipped = b.clone();
                let at = rng.below(b.len());
                flipped[at] ^= 1 << rng.below(8);
                let mut short = b.clone();
                short.pop();
                vec![
                    RdbField::Buffer(flipped),
                    RdbField::Buffer(short),
                    RdbField::Unsigned(b.len() as u64),
                ]
            }
            RdbField::Buffer(_) => vec![RdbField::Unsigned(0)],
        };
        for v in values {
            out.push((format!("field {i} = {v:?}"), payload.with(i, v)));
        }
    }
    // Generations swapped, reversed, repeated or dropped (the count kept or fixed), and
    // their bodies swapped under the same slot stamps.
    let (held_at, blocks) = generation_blocks(payload, compact);
    let rebuilt = |order: &[usize], held: Option<usize>, slots_from: Option<&[usize]>| {
        let mut c = payload.clone();
        c.fields
            .truncate(blocks.first().map_or(payload.fields.len(), |b| b.start));
        for (n, &i) in order.iter().enumerate() {
            let mut block = payload.fields[blocks[i].clone()].to_vec();
            if let Some(slots) = slots_from {
                block[0] = payload.fields[blocks[slots[n]].start].clone();
            }
            c.fields.extend(block);
        }
        if let Some(held) = held {
            c.fields[held_at] = RdbField::Unsigned(held as u64);
        }
        c
    };
    let n = blocks.len();
    for i in 0..n {
        let mut order: Vec<usize> = (0..n).collect();
        if i + 1 < n {
            order.swap(i, i + 1);
            out.push((
                format!("generations {i}, {} swapped", i + 1),
                rebuilt(&order, None, None),
            ));
            let slots: Vec<usize> = (0..n).collect();
            out.push((
                format!("generations {i}, {} bodies swapped", i + 1),
                rebuilt(&order, None, Some(&slots)),
            ));
        }
        let mut repeated: Vec<usize> = (0..n).collect();
        repeated.insert(i, i);
        out.push((
            format!("generation {i} repeated"),
            rebuilt(&repeated, Some(n + 1), None),
        ));
        out.push((
            format!("generation {i} repeated, held kept"),
            rebuilt(&repeated, None, None),
        ));
        let dropped: Vec<usize> = (0..n).filter(|&j| j != i).collect();
        out.push((
            format!("generation {i} dropped"),
            rebuilt(&dropped, Some(n - 1), None),
        ));
    }
    let reversed: Vec<usize> = (0..n).rev().collect();
    out.push((
        "generations reversed".into(),
        rebuilt(&reversed, None, None),
    ));
    // Whole fields dropped or repeated.
    for _ in 0..6 {
        let i = rng.below(payload.fields.len());
        let mut dropped = payload.clone();
        dropped.fields.remove(i);
        out.push((format!("field {i} dropped"), dropped));
        let mut repeated = payload.clone();
        repeated.fields.insert(i, payload.fields[i].clone());
        out.push((format!("field {i} repeated"), repeated));
    }
    out
}

/// Where a windowed DUMP payload holds its generation count, and each generation's fields
/// (its slot stamp first).
fn generation_blocks(payload: &Payload, compact: bool) -> (usize, Vec<std::ops::Range<usize>>) {
    let f = &payload.fields;
    let unsigned = |i: usize| match f[i] {
        RdbField::Unsigned(v) => v as usize,
        ref other => panic!("field {i}: {other:?}"),
    };
    // window, generations, capacity, error, growth, flags, [secret], clock, held
    let held_at = if compact { 8 } else { 7 };
    let mut at = held_at + 1;
    let mut blocks = Vec::new();
    for _ in 0..unsigned(held_at) {
        let start = at;
        at += 1;
        if compact {
            // form, header, then (count, segments) runs until a 0 count
            at += 2;
            while unsigned(at) != 0 {
                at += 2;
            }
            at += 1;
        } else {
            // size, links, options, growth, then 8 fields a link
            at += 4 + 8 * unsigned(at + 1);
        }
        blocks.push(start..at);
    }
    assert_eq!(at, f.len());
    (held_at, blocks)
}

fn run_campaign(default_secs: u64) {
    let seed = attack_seed("windowed crafted payloads", 0x4702);
    let duration = attack_duration(default_secs);
    let mut run = Crafted {
        rig: Rig::start(),
        rng: Rng(seed),
        sent: 0,
        accepted: 0,
        accepted_keys: Vec::new(),
    };
    let started = Instant::now();
    let mut values = 0;
    while started.elapsed() < duration || values == 0 {
        let compact = run.rng.chance(2);
        let generations = [2, 3, 4, 5, 8, 16, 32][run.rng.below(7)];
        let key = format!("genuine{values}");
        values += 1;
        genuine(&mut run.rig.p, &key, compact, generations, &mut run.rng);
        let chunks = scandump(&mut run.rig.p, "BF.SCANDUMP", &key);
        let payload = run.rig.p.call(&["DUMP", key.as_str()]).bytes();
        let header = Header::parse(&chunks[0].1);
        assert_eq!(header.encode(), chunks[0].1);
        let context = format!("{key} (compact {compact}, {generations} generations)");
        // Header and payload variants in a random order, as many as the time allows.
        let mut variants: Vec<(bool, String, Vec<u8>)> = header_variants(&header, &mut run.rng)
            .into_iter()
            .map(|(what, crafted)| {
                let bytes = if crafted.version == u32::MAX {
                    crafted.magic.clone()
                } else {
                    crafted.encode()
                };
                (true, what, bytes)
            })
            .collect();
        let parsed = Payload::parse(&payload);
        variants.extend(
            payload_variants(&parsed, compact, &mut run.rng)
                .into_iter()
                .map(|(what, crafted)| (false, format!("RESTORE {what}"), crafted.encode())),
        );
        for i in (1..variants.len()).rev() {
            let j = run.rng.below(i + 1);
            variants.swap(i, j);
        }
        for (n, (header, what, bytes)) in variants.into_iter().enumerate() {
            if started.elapsed() > duration && n >= 100 {
                break;
            }
            let what = format!("{context}: {what}");
            if header {
                run.loadchunk(&what, bytes, &chunks[1..]);
            } else {
                run.restore(&what, bytes);
            }
        }
        // The genuine value loaded by both ways too.
        run.restore(&format!("{context}: genuine"), payload);
        run.loadchunk(
            &format!("{context}: genuine"),
            chunks[0].1.clone(),
            &chunks[1..],
        );
        run.settle(&context);
        if values % 10 == 0 {
            run.rig.assert_aof_reloads(&context);
        }
        if values % 10 == 5 {
            run.rig.assert_aof_rewrite_reloads("no", &context);
        }
        assert_eq!(run.rig.p.call(&["FLUSHALL"]), ok());
    }
    run.rig.assert_aof_rewrite_reloads("no", "the end");
    eprintln!(
        "{} payloads from {values} genuine values in {:.0?}: {} accepted",
        run.sent,
        started.elapsed(),
        run.accepted
    );
}

#[test]
fn crafted_windowed_payloads_are_refused_or_load_into_working_values() {
    run_campaign(3);
}

#[test]
#[ignore = "a long campaign: BLOOMRS_ATTACK_SECS (600 by default)"]
fn crafted_windowed_payloads_campaign() {
    run_campaign(600);
}

/// A compact window, and a compact filter, whose `BF.LOADCHUNK` chunks are still arriving
/// refuse adds as such, and take them once the last chunk arrived: the refusal does not send
/// the operator to raise a memory limit that had nothing to do with it.
#[test]
fn an_add_while_chunks_arrive_is_refused_for_that_and_not_for_memory() {
    let s = Server::start();
    let mut c = s.client();
    let loading = still_loading();
    let windowed: &[&str] = &["COMPACT", "WINDOW", "600"];
    for (key, options) in [("wc", windowed), ("cp", &["COMPACT"][..])] {
        let mut args = vec!["BF.RESERVE", key, "0.01", "100"];
        args.extend(options);
        assert_eq!(c.call(&args), ok());
        let items: Vec<String> = (0..2000).map(|i| format!("{key}:{i}")).collect();
        madd_in_batches(&mut c, key, &items);
        let chunks = scandump(&mut c, "BF.SCANDUMP", key);
        assert!(chunks.len() > 1, "{key}");
        let part = format!("{key}:part");
        load_chunks(&mut c, "BF.LOADCHUNK", &part, &chunks[..1]);
        assert_eq!(call!(c, "BF.ADD", part.as_str(), "new"), loading, "{key}");
        let madd = call!(c, "BF.MADD", part.as_str(), "new", "other");
        assert_eq!(madd, Array(vec![loading.clone(), loading.clone()]), "{key}");
        load_chunks(&mut c, "BF.LOADCHUNK", &part, &chunks[1..]);
        assert_eq!(call!(c, "BF.ADD", part.as_str(), "new"), Int(1), "{key}");
        assert_eq!(mexists(&mut c, &part, &items), mexists(&mut c, key, &items));
    }
}
