//! Windowed filters (`WINDOW`, `COMPACT WINDOW`) attacked as an outsider would: the primary's
//! clock thrown far ahead (years, `i64::MAX` ms) and far back, moved by less than a slot and by
//! exactly a window, inside `MULTI` and Lua scripts too, between writes, `BF.RETIRE`, `DEL`,
//! `RENAME`, `COPY`, `EXPIRE` and `PERSIST` by clients; a replica attached and every write in
//! the AOF. After every round the replica and, now and then, the primary restarted from its AOF
//! hold every key byte for byte with the same expiry; every expiry a write armed is the end of
//! the filter's window (never negative, never past `i64::MAX`); no key disappears before its
//! expiry; and every item added within the window reads present on both servers.
//!
//! Runs a few seconds; `BLOOMRS_ATTACK_SECS` runs longer (the `#[ignore]`d campaign takes 600
//! by default), `BLOOMRS_ATTACK_SEED` replays a run.
pub mod common;

use std::collections::BTreeMap;
use std::time::Instant;

use common::*;

const YEAR: i64 = 365 * DAY;
/// The longest window the module takes, in seconds (ten 365-day years).
const MAX_WINDOW_SECS: u64 = 3650 * 86_400;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Shape {
    window_ms: u64,
    generations: u64,
}

impl Shape {
    fn slot_at(&self, ms: u64) -> u64 {
        let slot = u128::from(ms) * u128::from(self.generations) / u128::from(self.window_ms);
        u64::try_from(slot).unwrap_or(u64::MAX)
    }
    fn slot_start(&self, slot: u64) -> i64 {
        let start =
            (u128::from(slot) * u128::from(self.window_ms)).div_ceil(u128::from(self.generations));
        i64::try_from(start).unwrap_or(i64::MAX)
    }
    fn slot_ms(&self) -> i64 {
        (self.window_ms / self.generations) as i64
    }
}

/// What the test knows of a key.
#[derive(Debug, Clone)]
struct KeyModel {
    /// None: a filter without a window (created by an add to a missing key).
    shape: Option<Shape>,
    /// Bounds of the filter's clock (its slot).
    lo: u64,
    hi: u64,
    /// Items added, each with the lowest slot it can have gone into.
    items: Vec<(String, u64)>,
    /// The expiry the last write must have armed, when the last thing to set it was a write.
    armed: Option<(i64, i64)>,
    /// The expiry last read (PEXPIRETIME).
    expiry: i64,
    /// A write armed an expiry that may have passed (the module's clock far behind the
    /// server's): what the key holds is unknown until the step ends, when it is deleted.
    doomed: bool,
}

/// One command of the workload.
#[derive(Debug, Clone)]
enum Action {
    Reserve {
        key: String,
        args: Vec<String>,
        shape: Option<Shape>,
    },
    Add {
        key: String,
        command: &'static str,
        items: Vec<String>,
    },
    Clock(i64),
    Retire(String, i64),
    Expire(String, Vec<String>),
    Del(String),
    Rename(String, String),
    Copy(String, String),
}

impl Action {
    fn args(&self) -> Vec<String> {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        match self {
            Action::Reserve { args, .. } => args.clone(),
            Action::Add {
                key,
                command,
                items,
            } => {
                let mut args = vec![command.to_string(), key.clone()];
                if *command == "BF.INSERT" {
                    args.push("ITEMS".into());
                }
                args.extend(items.iter().cloned());
                args
            }
            Action::Clock(offset) => s(&["BF.__FAULT", "CLOCK", &offset.to_string()]),
            Action::Retire(key, at) => s(&["BF.RETIRE", key, &at.to_string()]),
            Action::Expire(key, how) => {
                let mut args = vec![how[0].clone(), key.clone()];
                args.extend(how[1..].iter().cloned());
                args
            }
            Action::Del(key) => s(&["DEL", key]),
            Action::Rename(a, b) => s(&["RENAME", a, b]),
            Action::Copy(a, b) => s(&["COPY", a, b, "REPLACE"]),
        }
    }
}

struct Campaign {
    rig: Rig,
    rng: Rng,
    model: BTreeMap<String, KeyModel>,
    /// The primary's `BF.__FAULT CLOCK` offset.
    offset: i64,
    /// The replica's: where it reads (it never writes at its own clock).
    replica_offset: i64,
    next_item: u64,
    steps: u64,
    log: Vec<String>,
}

/// Commands sent alone, in a MULTI block or in one Lua script.
#[derive(Debug, Clone)]
enum Step {
    One(Action),
    Multi(Vec<Action>),
    Lua(Vec<Action>),
}

const KEYS: [&str; 6] = ["w0", "w1", "w2", "w3", "w4", "w5"];

/// The module's clock on the primary at local time `real` under `offset`.
fn module_ms(real: i64, offset: i64) -> u64 {
    u64::try_from(real.saturating_add(offset)).unwrap_or(0)
}

impl Campaign {
    fn new(seed: u64) -> Campaign {
        Campaign {
            rig: Rig::start(),
            rng: Rng(seed),
            model: BTreeMap::new(),
            offset: 0,
            replica_offset: 0,
            next_item: 0,
            steps: 0,
            log: Vec::new(),
        }
    }

    fn key(&mut self) -> String {
        self.rng.pick(&KEYS).to_string()
    }

    fn items(&mut self) -> Vec<String> {
        let most = if self.rng.chance(8) { 300 } else { 12 };
        let n = 1 + self.rng.below(most);
        (0..n)
            .map(|_| {
                self.next_item += 1;
                format!("item:{}", self.next_item)
            })
            .collect()
    }

    fn reserve(&mut self, key: String) -> Action {
        let windows = [1, 2, 60, 3600, 86_400, 2_592_000, MAX_WINDOW_SECS];
        let gens = [2u64, 3, 4, 7, 16, 32];
        let secs = self.rng.pick(&windows);
        let generations = self.rng.pick(&gens);
        let compact = self.rng.chance(2);
        let error = if compact && generations > 16 {
            "0.01"
        } else {
            self.rng.pick(&["0.01", "0.1", "0.001"])
        };
        let capacity = self.rng.pick(&["1", "10", "100", "1000"]).to_string();
        let g = generations.to_string();
        let s = secs.to_string();
        let mut args = vec!["BF.RESERVE", &key, error, &capacity];
        if compact {
            args.push("COMPACT");
        }
        args.extend(["WINDOW", &s, "GENERATIONS", &g]);
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let shape = Shape {
            window_ms: secs * 1000,
            generations,
        };
        Action::Reserve {
            key,
            args,
            shape: Some(shape),
        }
    }

    /// A clock offset: to an edge of time, far ahead or back, or a slot or a window away
    /// from where the clock is.
    fn clock(&mut self) -> Action {
        let real = local_ms();
        let now = module_ms(real, self.offset) as i64;
        let shape = self
            .model
            .values()
            .filter_map(|m| m.shape)
            .nth(self.rng.below(KEYS.len()))
            .unwrap_or(Shape {
                window_ms: 60_000,
                generations: 4,
            });
        let (slot, window) = (shape.slot_ms(), shape.window_ms as i64);
        let target = match self.rng.below(20) {
            0 => real,
            1 => real + YEAR,
            2 => real + 100 * YEAR,
            3 => real.saturating_add(10_000 * YEAR),
            4 => i64::MAX,
            5 => i64::MAX - 1,
            6 => i64::MAX / 2,
            7 => (u64::MAX / 2) as i64,
            8 => real - YEAR,
            9 => 0,
            10 => -1,
            11 => now + 1,
            12 => now + slot - 1,
            13 => now + slot,
            14 => now.saturating_add(window),
            15 => now.saturating_add(window - 1),
            16 => now - slot,
            17 => now - window,
            18 => now - 1,
            _ => return Action::Clock(self.rng.pick(&[i64::MIN, i64::MAX, 0])),
        };
        Action::Clock(target.saturating_sub(real))
    }

    fn action(&mut self) -> Action {
        let key = self.key();
        match self.rng.below(20) {
            0..=7 => {
                let command = self
                    .rng
                    .pick(&["BF.ADD", "BF.MADD", "BF.MADD", "BF.INSERT"]);
                let mut items = self.items();
                if command == "BF.ADD" {
                    items.truncate(1);
                }
                if !self.model.contains_key(&key) && !self.rng.chance(6) {
                    return self.reserve(key);
                }
                Action::Add {
                    key,
                    command,
                    items,
                }
            }
            8 | 9 => self.clock(),
            10 => self.reserve(key),
            11 => {
                let real = local_ms();
                let now = module_ms(real, self.offset) as i64;
                let at = self.rng.pick(&[now, now + 1000, now + HOUR, i64::MAX, 0]);
                Action::Retire(key, at)
            }
            12 | 13 => {
                let how = match self.rng.below(5) {
                    0 => vec!["EXPIRE", "100000"],
                    1 => vec!["PERSIST"],
                    2 => vec!["EXPIREAT", "4102444800"],
                    3 => vec!["PEXPIRE", "86400000"],
                    _ => vec!["EXPIRE", "0"],
                };
                Action::Expire(key, how.iter().map(|s| s.to_string()).collect())
            }
            14 => Action::Del(key),
            15 => Action::Rename(key, self.key()),
            _ => Action::Copy(key, self.key()),
        }
    }

    fn step(&mut self) -> Step {
        match self.rng.below(10) {
            0 => Step::Multi((0..2 + self.rng.below(4)).map(|_| self.action()).collect()),
            1 => {
                // A Lua function takes a few hundred literals at most.
                let mut actions: Vec<Action> =
                    (0..2 + self.rng.below(4)).map(|_| self.action()).collect();
                for action in &mut actions {
                    if let Action::Add { items, .. } = action {
                        items.truncate(20);
                    }
                }
                Step::Lua(actions)
            }
            _ => Step::One(self.action()),
        }
    }

    /// The model before an action says it must succeed.
    fn must_succeed(&self, action: &Action) -> bool {
        match action {
            _ if self.touches_doomed(action) => false,
            Action::Reserve { key, .. } => !self.model.contains_key(key),
            Action::Add { .. } | Action::Clock(_) | Action::Del(_) => true,
            Action::Retire(key, at) => {
                *at >= 0 && self.model.get(key).is_some_and(|m| m.shape.is_some())
            }
            Action::Rename(a, _) => self.model.contains_key(a),
            Action::Copy(a, b) => a != b,
            Action::Expire(..) => true,
        }
    }

    fn touches_doomed(&self, action: &Action) -> bool {
        let doomed = |key: &String| self.model.get(key).is_some_and(|m| m.doomed);
        match action {
            Action::Reserve { key, .. }
            | Action::Add { key, .. }
            | Action::Retire(key, _)
            | Action::Expire(key, _)
            | Action::Del(key) => doomed(key),
            Action::Rename(a, b) | Action::Copy(a, b) => doomed(a) || doomed(b),
            Action::Clock(_) => false,
        }
    }

    /// What an action did, applied to the model; `real` bounds the local times it ran at.
    fn apply(&mut self, action: &Action, real: (i64, i64)) {
        let (before, after) = (
            module_ms(real.0, self.offset),
            module_ms(real.1, self.offset),
        );
        match action {
            Action::Reserve { key, shape, .. } => {
                if self.model.contains_key(key) {
                    return;
                }
                let armed = shape.map(|s| {
                    let (lo, hi) = (s.slot_at(before), s.slot_at(after));
                    (
                        s.slot_start(lo + s.generations),
                        s.slot_start(hi + s.generations),
                    )
                });
                let model = KeyModel {
                    shape: *shape,
                    lo: 0,
                    hi: 0,
                    items: Vec::new(),
                    armed,
                    expiry: -1,
                    doomed: armed.is_some_and(|(lo, _)| lo <= real.1 + 5_000),
                };
                self.model.insert(key.clone(), model);
            }
            Action::Add { key, items, .. } => {
                let model = self.model.entry(key.clone()).or_insert(KeyModel {
                    shape: None,
                    lo: 0,
                    hi: 0,
                    items: Vec::new(),
                    armed: None,
                    expiry: -1,
                    doomed: false,
                });
                if let Some(s) = model.shape {
                    model.lo = model.lo.max(s.slot_at(before));
                    model.hi = model.hi.max(s.slot_at(after));
                    let g = s.generations;
                    model.armed = Some((
                        s.slot_start(model.lo.saturating_add(g)),
                        s.slot_start(model.hi.saturating_add(g)),
                    ));
                    model.doomed |= model.armed.is_some_and(|(lo, _)| lo <= real.1 + 5_000);
                }
                let slot = model.lo;
                model.items.extend(items.iter().map(|i| (i.clone(), slot)));
            }
            Action::Clock(offset) => self.offset = *offset,
            Action::Retire(key, at) => {
                if let (Some(m), Ok(at)) = (self.model.get_mut(key), u64::try_from(*at)) {
                    if let Some(s) = m.shape {
                        m.lo = m.lo.max(s.slot_at(at));
                        m.hi = m.hi.max(s.slot_at(at));
                    }
                }
            }
            Action::Expire(key, how) => {
                if how[0] == "EXPIRE" && how[1] == "0" {
                    self.model.remove(key);
                } else if let Some(m) = self.model.get_mut(key) {
                    m.armed = None;
                }
            }
            Action::Del(key) => {
                self.model.remove(key);
            }
            Action::Rename(a, b) => {
                let target_doomed = self.model.get(b).is_some_and(|m| m.doomed);
                if let Some(mut m) = self.model.remove(a) {
                    m.doomed |= target_doomed;
                    self.model.insert(b.clone(), m);
                }
            }
            Action::Copy(a, b) => {
                let target_doomed = self.model.get(b).is_some_and(|m| m.doomed);
                if let Some(mut m) = self.model.get(a).filter(|_| a != b).cloned() {
                    m.doomed |= target_doomed;
                    self.model.insert(b.clone(), m);
                }
            }
        }
    }

    /// Deletes the keys whose expiry comes within five seconds, so that none races a check.
    fn delete_expiring(&mut self) {
        let soon = local_ms() + 5_000;
        let expiring: Vec<String> = self
            .model
            .iter()
            .filter(|(_, m)| m.doomed || (m.expiry >= 0 && m.expiry < soon))
            .map(|(k, _)| k.clone())
            .collect();
        for key in expiring {
            self.rig.p.call(&["DEL", key.as_str()]);
            self.model.remove(&key);
        }
    }

    fn send(&mut self, step: &Step) -> Vec<Reply> {
        let c = &mut self.rig.p;
        match step {
            Step::One(action) => vec![c.call(&action.args())],
            Step::Multi(actions) => {
                assert_eq!(c.call(&["MULTI"]), ok());
                for action in actions {
                    assert_eq!(c.call(&action.args()), Simple("QUEUED".into()));
                }
                match c.call(&["EXEC"]) {
                    Array(replies) => replies,
                    other => panic!("EXEC: {other:?}"),
                }
            }
            Step::Lua(actions) => {
                let calls: Vec<String> = actions
                    .iter()
                    .map(|a| {
                        let args: Vec<String> = a.args().iter().map(|w| format!("'{w}'")).collect();
                        format!("redis.pcall({})", args.join(", "))
                    })
                    .collect();
                let script = format!("return {{{}}}", calls.join(", "));
                match c.call(&["EVAL", script.as_str(), "0"]) {
                    Array(replies) => replies,
                    other => panic!("EVAL: {other:?}"),
                }
            }
        }
    }

    fn run_step(&mut self) {
        self.delete_expiring();
        if self.rng.chance(40) {
            // The replica's clock anywhere: it reads by it, and must write by the primary's.
            let offsets = [0, -YEAR, YEAR, i64::MAX, i64::MIN, -HOUR, DAY];
            self.replica_offset = self.rng.pick(&offsets);
            let offset = self.replica_offset.to_string();
            let reply = self.rig.r.call(&["BF.__FAULT", "CLOCK", offset.as_str()]);
            assert_eq!(reply, ok());
        }
        let step = self.step();
        let actions = match &step {
            Step::One(a) => vec![a.clone()],
            Step::Multi(a) | Step::Lua(a) => a.clone(),
        };
        let before = local_ms();
        let replies = self.send(&step);
        let after = local_ms();
        self.log.push(format!("{step:?} -> {replies:?}"));
        if self.log.len() > 30 {
            self.log.remove(0);
        }
        self.rig.assert_alive(&self.context());
        for (action, reply) in actions.iter().zip(&replies) {
            let must = self.must_succeed(action);
            assert!(
                !must || !matches!(reply, Error(_)),
                "{}: {action:?} answered {reply:?}",
                self.context()
            );
            self.apply(action, (before, after));
        }
        self.steps += 1;
        self.delete_expiring();
        self.check_expiries();
    }

    fn context(&self) -> String {
        format!(
            "step {} (offset {} ms)\nlast steps:\n{}",
            self.steps,
            self.offset,
            self.log.join("\n")
        )
    }

    /// Every key the model holds exists with an expiry that is sane and, after a write, the
    /// end of the filter's window; a key is gone only once its expiry passed.
    fn check_expiries(&mut self) {
        let server: Vec<String> = sorted_keys(&mut self.rig.p);
        let now = local_ms();
        let keys: Vec<String> = self.model.keys().cloned().collect();
        for key in keys {
            let at = self.rig.p.call(&["PEXPIRETIME", key.as_str()]).int();
            let context = self.context();
            let model = self.model.get_mut(&key).unwrap();
            if at == -2 {
                let passed = |t: i64| t >= 0 && t <= now;
                let armed_passed = model.armed.is_some_and(|(_, hi)| passed(hi));
                assert!(
                    armed_passed || passed(model.expiry),
                    "{key} deleted before its expiry {:?} / {}: {}",
                    model.armed,
                    model.expiry,
                    context
                );
                self.model.remove(&key);
                continue;
            }
            assert!(at == -1 || at > 0, "{key}: PEXPIRETIME {at}");
            if let Some((lo, hi)) = model.armed {
                assert!(
                    (lo..=hi).contains(&at),
                    "{key}: expiry {at} outside the window's end {lo}..={hi}: {context}"
                );
            }
            model.expiry = at;
        }
        let unknown: Vec<&String> = server
            .iter()
            .filter(|k| !self.model.contains_key(*k))
            .collect();
        assert!(unknown.is_empty(), "keys {unknown:?}: {}", self.context());
    }

    /// Items added within the window read present on the primary and the replica, whose
    /// clocks are `offset` and `replica_offset`.
    fn check_members(&mut self) {
        let keys: Vec<String> = self.model.keys().cloned().collect();
        for key in keys {
            let model = self.model.get_mut(&key).unwrap();
            if let Some(s) = model.shape {
                let lo = model.lo;
                model
                    .items
                    .retain(|(_, slot)| slot.saturating_add(s.generations) > lo);
            }
            let model = self.model[&key].clone();
            if model.items.is_empty() {
                continue;
            }
            for (side, offset) in [("primary", self.offset), ("replica", self.replica_offset)] {
                let c = if side == "primary" {
                    &mut self.rig.p
                } else {
                    &mut self.rig.r
                };
                let names: Vec<String> = model.items.iter().map(|(i, _)| i.clone()).collect();
                let answers = mexists(c, &key, &names);
                let read = module_ms(local_ms(), offset);
                for ((item, slot), answer) in model.items.iter().zip(&answers) {
                    let live = match model.shape {
                        None => true,
                        Some(s) => {
                            let current = s.slot_at(read).max(model.hi);
                            slot.saturating_add(s.generations) > current
                        }
                    };
                    assert!(
                        !live || *answer == Int(1),
                        "{side}: {key} reads {item} (slot {slot}) {answer:?}; {model:?}: {}",
                        self.context()
                    );
                }
            }
        }
    }

    /// The primary's `DEBUG RELOAD` keeps every key as it was.
    fn check_reload(&mut self) {
        let before = dumps(&mut self.rig.p);
        assert_eq!(self.rig.p.call(&["DEBUG", "RELOAD"]), ok());
        let after = dumps(&mut self.rig.p);
        assert_same(
            &before,
            &after,
            &format!("DEBUG RELOAD: {}", self.context()),
        );
    }
}

fn run_campaign(default_secs: u64) {
    let seed = attack_seed("windowed clock and mixes", 0x4701);
    let duration = attack_duration(default_secs);
    let mut campaign = Campaign::new(seed);
    let started = Instant::now();
    let mut rounds = 0u64;
    while started.elapsed() < duration || rounds == 0 {
        for _ in 0..10 {
            campaign.run_step();
        }
        rounds += 1;
        let context = campaign.context();
        campaign.rig.assert_replica_identical(&context);
        campaign.check_members();
        if rounds % 15 == 0 {
            campaign.check_reload();
        }
        if rounds % 30 == 0 {
            match rounds / 30 % 3 {
                0 => campaign.rig.assert_aof_reloads(&context),
                1 => campaign.rig.assert_aof_rewrite_reloads("no", &context),
                _ => campaign.rig.assert_aof_rewrite_reloads("yes", &context),
            }
            let offset = campaign.offset.to_string();
            let reply = campaign
                .rig
                .p
                .call(&["BF.__FAULT", "CLOCK", offset.as_str()]);
            assert_eq!(reply, ok());
            campaign.rig.assert_replica_identical(&context);
        }
    }
    campaign.rig.assert_aof_reloads(&campaign.context());
    eprintln!(
        "{} steps in {:.0?}, {} keys at the end",
        campaign.steps,
        started.elapsed(),
        campaign.model.len()
    );
}

#[test]
fn clock_moves_and_client_commands_keep_copies_identical_and_items_present() {
    run_campaign(4);
}

#[test]
#[ignore = "a long campaign: BLOOMRS_ATTACK_SECS (600 by default)"]
fn clock_moves_and_client_commands_campaign() {
    run_campaign(600);
}
