//! The driver: plays a sequence of operations on a value and the model side by side, and after
//! every step checks what the kind promises:
//! - no item with adds outstanding reads absent (for a windowed filter: none whose last add
//!   is within what the window remembers), so no delete made another such item absent;
//! - a delete of an item with adds outstanding takes one add back where the kind says it
//!   always does, and a declined delete or refused add changes nothing;
//! - the value saves and loads back identical through the RDB loader, and its SCANDUMP loads
//!   back identical through LOADCHUNK;
//! - the work of the step stays within its bound, where the kind meters it.
//!
//! Checking everything after every step costs time in proportion to the value and to the
//! items, so [`Limits`] says where the driver checks at a cadence instead: values whose checks
//! walk at most `small_bytes` get the round trips and the no-change check after every step, larger ones
//! every `cadence` steps and at the end; every item is looked up after every step while at
//! most `scan_items` have adds outstanding, beyond that the step's own item and a rotating
//! window of `scan_items` are, and all of them every `cadence` steps and at the end.

use super::codec::Frames;
use super::multiset::{item, Multiset};
use super::ops::{Op, Ops, Pick};
use super::{Deletes, Kind, Params};

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The memory cap the value grows under (a refused add must change nothing).
    pub max_bytes: u64,
    pub small_bytes: u64,
    pub cadence: u64,
    pub scan_items: usize,
    /// Most steps one sequence runs.
    pub max_steps: u64,
}

impl Limits {
    /// What a fuzz input runs under: small values, up to 1500 steps (a sanitized build runs
    /// a few thousand steps a second on the values of these sizes).
    pub const FUZZ: Limits = Limits {
        max_bytes: 1 << 20,
        small_bytes: 2 << 10,
        cadence: 128,
        scan_items: 32,
        max_steps: 1500,
    };
}

/// What a sequence did, for tests to check they reached what they meant to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Report {
    pub steps: u64,
    pub adds: u64,
    pub deletes: u64,
    /// Adds the value refused and deletes it declined.
    pub refused: u64,
    pub round_trips: u64,
    pub most_bytes: u64,
    /// Most distinct items with adds outstanding at once.
    pub most_items: usize,
    /// Steps whose work the kind metered.
    pub metered: u64,
}

/// One step of a sequence, its items resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Add(u32),
    Delete(u32),
    Lookup(u32),
    Save,
    Scandump,
    Tick(u64),
}

struct Driver<'l, K> {
    value: K,
    model: Multiset,
    now_ms: u64,
    limits: &'l Limits,
    report: Report,
    /// Where the next rotating window of lookups starts.
    rotation: usize,
    /// The operation being played, for the failure message.
    op: Option<Op>,
}

/// Plays `ops` on `value` (created empty or decoded by the loader) and checks after every
/// step; panics naming the kind, the step and the operation at the first broken promise.
pub fn run<K: Kind>(value: K, ops: impl IntoIterator<Item = Op>, limits: &Limits) -> Report {
    let mut driver = Driver {
        now_ms: value.clock_start(),
        value,
        model: Multiset::new(),
        limits,
        report: Report::default(),
        rotation: 0,
        op: None,
    };
    driver.check_stored();
    if !driver.value.is_ready() {
        driver.half_loaded();
        return driver.report;
    }
    'ops: for op in ops {
        driver.op = Some(op);
        for step in driver.steps(op) {
            if driver.report.steps >= limits.max_steps {
                break 'ops;
            }
            driver.play(step);
        }
    }
    driver.op = None;
    driver.check_presence(true);
    driver.check_stored();
    driver.report
}

/// A fuzz input: a byte saying where the value comes from (even: created from the next two
/// bytes as [`Params`]; odd: a length-prefixed value the loader decodes, see
/// `codec::decode_value`), then the operations.
pub fn fuzz<K: Kind>(data: &[u8]) -> Option<Report> {
    let (value, ops) = start::<K>(data, Limits::FUZZ.max_bytes)?;
    Some(run(value, Ops::new(ops), &Limits::FUZZ))
}

/// The value a fuzz input starts from, and the bytes of its operations.
pub fn start<K: Kind>(data: &[u8], max_bytes: u64) -> Option<(K, &[u8])> {
    let (&origin, rest) = data.split_first()?;
    if origin & 1 == 0 {
        let (shape, rest) = rest.split_first()?;
        let (variant, ops) = rest.split_first()?;
        let value = K::create(&Params::from_bytes(*shape, *variant), max_bytes)?;
        return Some((value, ops));
    }
    let mut frames = Frames(rest);
    let value = K::decode(frames.blob()?, max_bytes)?;
    Some((value, frames.0))
}

impl<K: Kind> Driver<'_, K> {
    fn fail(&self, what: &str) -> ! {
        panic!(
            "{}: step {} ({:?}): {what}",
            K::NAME,
            self.report.steps,
            self.op
        )
    }

    /// The steps of an operation, its items resolved against the model now.
    fn steps(&mut self, op: Op) -> Vec<Step> {
        let deletes = self.value.deletes() != Deletes::None;
        match op {
            Op::Add(pick) => self.resolve(pick).map(Step::Add).into_iter().collect(),
            Op::Repeat(pick, n) => self
                .resolve(pick)
                .map(|id| vec![Step::Add(id); n as usize])
                .unwrap_or_default(),
            Op::Fill(n) => (0..n).map(|_| Step::Add(self.model.fresh())).collect(),
            Op::Delete(pick) if !deletes => self.lookup(pick),
            Op::Delete(Pick::New) => Vec::new(),
            Op::Delete(pick) => self
                .resolve(pick)
                .filter(|id| self.model.outstanding(*id) > 0)
                .map(Step::Delete)
                .into_iter()
                .collect(),
            Op::Lookup(pick) => self.lookup(pick),
            Op::Save => vec![Step::Save],
            Op::Scandump => vec![Step::Scandump],
            Op::Tick(n) => vec![Step::Tick(
                u64::from(n).saturating_mul(self.value.tick_ms()),
            )],
        }
    }

    fn lookup(&mut self, pick: Pick) -> Vec<Step> {
        self.resolve(pick).map(Step::Lookup).into_iter().collect()
    }

    fn resolve(&mut self, pick: Pick) -> Option<u32> {
        match pick {
            Pick::Hot(k) => Some(u32::from(k)),
            Pick::New => Some(self.model.fresh()),
            Pick::Live(n) => self.model.nth_live(usize::from(n)),
        }
    }

    fn play(&mut self, step: Step) {
        self.report.steps += 1;
        let writes = matches!(step, Step::Add(_) | Step::Delete(_));
        if writes {
            self.value.advance(self.now_ms);
        }
        let small = self.value.check_cost() <= self.limits.small_bytes;
        let before = (writes && small).then(|| self.value.clone());
        self.value.take_work();
        let changed = match step {
            Step::Add(id) => self.add(id),
            Step::Delete(id) => self.delete(id),
            Step::Lookup(id) => {
                let present = self.value.contains(&item(id), self.now_ms);
                self.check_work();
                if !present && self.must_hold(id) {
                    self.fail(&format!("item {id} with adds outstanding reads absent"));
                }
                true
            }
            Step::Save => self.replace(K::reload(&self.value, self.limits.max_bytes)),
            Step::Scandump => self.replace(K::redump(&self.value, self.limits.max_bytes)),
            Step::Tick(ms) => {
                self.now_ms = self.now_ms.saturating_add(ms);
                true
            }
        };
        if let (false, Some(before)) = (changed, before) {
            if before != self.value {
                self.fail("a refused operation changed the value");
            }
        }
        self.note_size();
        let cadence = self.report.steps % self.limits.cadence.max(1) == 0;
        self.check_presence(cadence);
        if small || cadence {
            self.check_stored();
        }
    }

    /// Whether the add was taken.
    fn add(&mut self, id: u32) -> bool {
        let bytes = item(id);
        let added = self.value.add(&bytes, self.now_ms, self.limits.max_bytes);
        self.check_work();
        if !added {
            self.report.refused += 1;
            return false;
        }
        self.report.adds += 1;
        self.model.add(id, self.now_ms);
        if !self.value.contains(&bytes, self.now_ms) {
            self.fail(&format!("item {id} reads absent right after its add"));
        }
        true
    }

    /// Whether the delete was taken.
    fn delete(&mut self, id: u32) -> bool {
        let deleted = self.value.delete(&item(id));
        self.check_work();
        if !deleted {
            if self.value.deletes() == Deletes::Always {
                self.fail(&format!(
                    "a delete of item {id} with adds outstanding declined"
                ));
            }
            self.report.refused += 1;
            return false;
        }
        self.report.deletes += 1;
        self.model.delete(id);
        true
    }

    fn replace(&mut self, loaded: Result<K, String>) -> bool {
        match loaded {
            Ok(value) if value == self.value => self.value = value,
            Ok(_) => self.fail("a round trip loaded a different value"),
            Err(e) => self.fail(&e),
        }
        true
    }

    fn must_hold(&self, id: u32) -> bool {
        self.model
            .last_add_ms(id)
            .is_some_and(|added| self.value.remembers(added, self.now_ms))
    }

    /// The work of the operation just done (read before any check looks the value up).
    fn check_work(&mut self) {
        if let Some(work) = self.value.take_work() {
            self.report.metered += 1;
            if work.done > work.bound {
                self.fail(&format!("work {} over its bound {}", work.done, work.bound));
            }
        }
    }

    fn note_size(&mut self) {
        let r = &mut self.report;
        r.most_bytes = r.most_bytes.max(self.value.bytes());
        r.most_items = r.most_items.max(self.model.len());
    }

    /// Every item with adds outstanding (that the value must remember) reads present: all of
    /// them when `all` or few enough, else a rotating window.
    fn check_presence(&mut self, all: bool) {
        let n = self.limits.scan_items;
        let len = self.model.len();
        let missing = if all || len <= n {
            self.first_absent(self.model.live())
        } else {
            self.rotation = (self.rotation + n) % len;
            self.first_absent(self.model.window(self.rotation, n))
        };
        if let Some(id) = missing {
            self.fail(&format!(
                "item {id} with {} adds outstanding reads absent",
                self.model.outstanding(id)
            ));
        }
    }

    fn first_absent(&self, mut items: impl Iterator<Item = (u32, u64)>) -> Option<u32> {
        items
            .find(|&(id, added)| {
                self.value.remembers(added, self.now_ms)
                    && !self.value.contains(&item(id), self.now_ms)
            })
            .map(|(id, _)| id)
    }

    /// The value saves and loads back identical, through RDB and through SCANDUMP, and keeps
    /// the kind's own promises.
    fn check_stored(&mut self) {
        let max = self.limits.max_bytes;
        for (how, loaded) in [
            ("RDB", self.value.reload(max)),
            ("SCANDUMP", self.value.redump(max)),
        ] {
            match loaded {
                Ok(copy) if copy == self.value => {}
                Ok(_) => self.fail(&format!("{how} loaded back a different value")),
                Err(e) => self.fail(&format!("{how}: {e}")),
            }
        }
        if let Err(e) = self.value.check(max) {
            self.fail(&e);
        }
        self.report.round_trips += 1;
    }

    /// A value still waiting for LOADCHUNK chunks takes no writes: an add or a delete is
    /// refused and changes nothing (reads answer; what they answer is the kind's to check).
    fn half_loaded(&mut self) {
        let before = self.value.clone();
        let probe = item(0);
        let _ = self.value.contains(&probe, self.now_ms);
        if self.value.add(&probe, self.now_ms, self.limits.max_bytes) {
            self.fail("a half-loaded value took an add");
        }
        if self.value.delete(&probe) {
            self.fail("a half-loaded value took a delete");
        }
        if before != self.value {
            self.fail("a refused write changed a half-loaded value");
        }
    }
}
