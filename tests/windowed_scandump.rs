//! `BF.SCANDUMP` of a windowed filter (`WINDOW`, `COMPACT WINDOW`) interleaved with what
//! changes it: adds, the clock moved within a slot, across one or past the whole window,
//! `BF.RETIRE`, the key deleted and made again; and `BF.LOADCHUNK` of the chunks so taken,
//! with writes and clock moves on the key being loaded between them. Each chunk is accepted
//! or refused cleanly; whatever value results answers every command, dumps and loads again,
//! survives `DEBUG RELOAD`, and reaches the replica and the AOF as it is.
//!
//! Runs a few seconds; `BLOOMRS_ATTACK_SECS` runs longer (the `#[ignore]`d campaign takes 600
//! by default), `BLOOMRS_ATTACK_SEED` replays a run.
pub mod common;

use std::time::Instant;

use common::*;

struct Run {
    rig: Rig,
    rng: Rng,
    /// The primary's clock (module ms) the run moves.
    now: i64,
    window_ms: i64,
    generations: i64,
    compact: bool,
    next_item: u64,
    chunks_sent: u64,
    refused: u64,
}

impl Run {
    fn reserve(&mut self, key: &str) {
        let g = self.generations.to_string();
        let secs = (self.window_ms / 1000).to_string();
        let mut args = vec!["BF.RESERVE", key, "0.01", "20"];
        if self.compact {
            args.push("COMPACT");
        }
        args.extend(["WINDOW", secs.as_str(), "GENERATIONS", g.as_str()]);
        assert_eq!(self.rig.p.call(&args), ok(), "{args:?}");
    }

    fn add(&mut self, key: &str) {
        let n = [1, 10, 100, 600][self.rng.below(4)];
        let items: Vec<String> = (0..n)
            .map(|_| {
                self.next_item += 1;
                format!("i{}", self.next_item)
            })
            .collect();
        madd_in_batches(&mut self.rig.p, key, &items);
    }

    /// Moves the primary's clock: within the slot, to the next, a few on, past the window.
    fn tick(&mut self) {
        let slot = self.window_ms / self.generations;
        self.now += match self.rng.below(5) {
            0 => 1,
            1 => slot / 2,
            2 => slot,
            3 => slot * (1 + self.rng.below(self.generations as usize)) as i64,
            _ => self.window_ms,
        };
        travel_to(&mut self.rig.p, self.now);
    }

    /// Something that changes `key` between two chunks.
    fn disturb(&mut self, key: &str) {
        match self.rng.below(8) {
            0..=2 => self.add(key),
            3 | 4 => self.tick(),
            5 => {
                self.tick();
                self.add(key);
            }
            6 => {
                let at = (self.now + self.window_ms / self.generations).to_string();
                let _ = self.rig.p.call(&["BF.RETIRE", key, at.as_str()]);
            }
            _ => {
                self.rig.p.call(&["DEL", key]);
                self.reserve(key);
                self.add(key);
            }
        }
    }

    /// A SCANDUMP of `key` with changes between its chunks: the chunks it gave.
    fn disturbed_scandump(&mut self, key: &str) -> Vec<(i64, Vec<u8>)> {
        let mut chunks = Vec::new();
        let mut iter = 0i64;
        for _ in 0..10_000 {
            if self.rng.chance(2) {
                self.disturb(key);
            }
            let iter_arg = iter.to_string();
            let reply = self.rig.p.call(&["BF.SCANDUMP", key, iter_arg.as_str()]);
            let Array(parts) = reply else {
                panic!("SCANDUMP {key} {iter}: {reply:?}");
            };
            let next = parts[0].int();
            if next == 0 {
                break;
            }
            chunks.push((next, parts[1].bytes()));
            iter = next;
        }
        chunks
    }

    /// LOADCHUNKs `chunks` into `target`, with changes to it between them.
    fn disturbed_load(&mut self, target: &str, chunks: &[(i64, Vec<u8>)]) {
        for (n, (iter, bytes)) in chunks.iter().enumerate() {
            if n > 0 && self.rng.chance(4) {
                match self.rng.below(3) {
                    0 => self.add(target),
                    1 => self.tick(),
                    _ => {
                        let at = (self.now + self.window_ms).to_string();
                        let _ = self.rig.p.call(&["BF.RETIRE", target, at.as_str()]);
                    }
                }
            }
            let reply = call!(self.rig.p, "BF.LOADCHUNK", target, *iter, bytes.clone());
            self.chunks_sent += 1;
            if matches!(reply, Error(_)) {
                self.refused += 1;
            }
            self.rig.assert_alive(target);
        }
    }
}

fn run_campaign(default_secs: u64) {
    let seed = attack_seed("windowed SCANDUMP interleaved", 0x4703);
    let duration = attack_duration(default_secs);
    let rig = Rig::start();
    let mut run = Run {
        rig,
        rng: Rng(seed),
        now: 0,
        window_ms: 0,
        generations: 0,
        compact: false,
        next_item: 0,
        chunks_sent: 0,
        refused: 0,
    };
    run.now = noon(&mut run.rig.p);
    let started = Instant::now();
    let mut rounds = 0u64;
    while started.elapsed() < duration || rounds == 0 {
        rounds += 1;
        run.compact = run.rng.chance(2);
        run.generations = [2, 3, 4, 8, 32][run.rng.below(5)];
        run.window_ms = [60_000, 3_600_000, 86_400_000][run.rng.below(3)];
        let source = format!("src{rounds}");
        run.reserve(&source);
        for _ in 0..1 + run.rng.below(5) {
            run.add(&source);
            run.tick();
        }
        let chunks = run.disturbed_scandump(&source);
        let context = format!(
            "round {rounds} (compact {}, {} generations, {} ms)",
            run.compact, run.generations, run.window_ms
        );
        let plain = format!("plain{rounds}");
        run.disturbed_load(&plain, &chunks);
        let copy = format!("copy{rounds}");
        // The same chunks loaded undisturbed.
        for (iter, bytes) in &chunks {
            let reply = call!(
                run.rig.p,
                "BF.LOADCHUNK",
                copy.as_str(),
                *iter,
                bytes.clone()
            );
            run.chunks_sent += 1;
            if matches!(reply, Error(_)) {
                run.refused += 1;
            }
        }
        for key in [&source, &plain, &copy] {
            if call!(run.rig.p, "EXISTS", key.as_str()) == Int(1) {
                exercise(&mut run.rig.p, key, &format!("{context}: {key}"));
            }
        }
        if rounds % 5 == 0 {
            let before = dumps(&mut run.rig.p);
            assert_eq!(run.rig.p.call(&["DEBUG", "RELOAD"]), ok(), "{context}");
            assert_same(&before, &dumps(&mut run.rig.p), &context);
            run.rig.assert_replica_identical(&context);
        }
        if rounds % 40 == 0 {
            run.rig.assert_aof_reloads(&context);
            travel_to(&mut run.rig.p, run.now);
            assert_eq!(run.rig.p.call(&["FLUSHALL"]), ok());
        }
    }
    run.rig.assert_replica_identical("the end");
    run.rig.assert_aof_rewrite_reloads("no", "the end");
    eprintln!(
        "{rounds} rounds in {:.0?}: {} chunks loaded, {} refused",
        started.elapsed(),
        run.chunks_sent,
        run.refused
    );
}

#[test]
fn scandump_interleaved_with_rotation_gives_values_that_load_or_clean_errors() {
    run_campaign(3);
}

#[test]
#[ignore = "a long campaign: BLOOMRS_ATTACK_SECS (600 by default)"]
fn scandump_interleaved_campaign() {
    run_campaign(600);
}
